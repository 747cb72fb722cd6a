//! `/scim/v2` (provisioning.md sections 8 to 10): SCIM 2.0 over HTTP, translated into
//! `lms.v1.ScimService` calls. The core maps, validates and authorizes; here is only HTTP:
//!
//! - routing: the resource segments (`Users`, `Groups`, `Schemas`, `ResourceTypes`,
//!   `ServiceProviderConfig`) match in any letter case, so one handler takes every path
//!   under `/scim/v2` and picks the operation itself (unknown: 404, wrong method: 405 with
//!   `Allow`), all with SCIM error bodies;
//! - the token: `Authorization: Bearer <token>` (the scheme in any case) or the raw token,
//!   passed to the core as metadata; none: 401 with `WWW-Authenticate: Bearer`;
//! - bodies: `application/scim+json`, `application/json` or no `Content-Type` (415
//!   otherwise), at most 1 MiB (413), passed on as text;
//! - answers: `application/scim+json; charset=utf-8`, `Location` on a create;
//! - `POST /.search`, `/Users/.search`, `/Groups/.search`: a `SearchRequest` body read as
//!   the list parameters of `GET` (the root one lists users, then groups);
//! - [`discovery`]: `ServiceProviderConfig`, `ResourceTypes` and `Schemas`, which need no
//!   token.

mod discovery;

use axum::body::Body;
use axum::extract::{FromRequestParts as _, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use lms_proto::v1::{ScimListRequest, ScimListResponse, ScimResource, ScimResourceRequest};
use serde_json::{Value, json};

use crate::body::read_body;
use crate::core_client::CoreClient;
use crate::error::GatewayError;
use crate::request_id::RequestId;

/// The SCIM media type of every answer.
const SCIM_JSON: &str = "application/scim+json; charset=utf-8";

/// What the SCIM routes need: the core, and the public base URL when one is configured.
#[derive(Debug, Clone)]
pub(crate) struct ScimState {
    pub(crate) core: CoreClient,
    pub(crate) public_url: Option<String>,
}

/// A SCIM answer: status, JSON body (none for 204) and extra headers.
struct ScimAnswer {
    status: StatusCode,
    body: Option<Value>,
    headers: HeaderMap,
}

impl ScimAnswer {
    fn json(status: StatusCode, body: Value) -> Self {
        Self {
            status,
            body: Some(body),
            headers: HeaderMap::new(),
        }
    }

    /// An RFC 7644 error: `status` as a string, `scimType` when given, `detail`.
    fn error(status: StatusCode, scim_type: Option<&str>, detail: &str) -> Self {
        let mut body = json!({
            "schemas": ["urn:ietf:params:scim:api:messages:2.0:Error"],
            "status": status.as_u16().to_string(),
            "detail": detail,
        });
        if let Some(scim_type) = scim_type {
            body["scimType"] = json!(scim_type);
        }
        Self::json(status, body)
    }

    fn with_header(mut self, name: header::HeaderName, value: HeaderValue) -> Self {
        self.headers.insert(name, value);
        self
    }
}

impl IntoResponse for ScimAnswer {
    fn into_response(self) -> Response {
        let body = match &self.body {
            Some(body) => Body::from(body.to_string()),
            None => Body::empty(),
        };
        let mut response = (self.status, body).into_response();
        if self.body.is_some() {
            response
                .headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(SCIM_JSON));
        }
        response.headers_mut().extend(self.headers);
        response
    }
}

/// A gateway or core failure as a SCIM error: the core's SCIM refusals keep their status and
/// `scimType` (metadata `scim-status`, `scim-type`), anything else goes through the
/// gateway's one mapping table.
impl From<GatewayError> for ScimAnswer {
    fn from(error: GatewayError) -> Self {
        if let GatewayError::Core(status) = &error {
            let metadata = status.metadata();
            let http = metadata
                .get(lms_proto::metadata::SCIM_STATUS)
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.parse::<u16>().ok())
                .and_then(|value| StatusCode::from_u16(value).ok());
            if let Some(http) = http {
                let scim_type = metadata
                    .get(lms_proto::metadata::SCIM_TYPE)
                    .and_then(|value| value.to_str().ok());
                return Self::error(http, scim_type, status.message());
            }
        }
        let unauthenticated = matches!(&error, GatewayError::Core(status) if status.code() == tonic::Code::Unauthenticated)
            || matches!(error, GatewayError::Unauthenticated);
        let (status, message, retry_after) = error.status_message();
        let mut answer = Self::error(status, None, &message);
        if let Some(retry_after) = retry_after {
            answer = answer.with_header(header::RETRY_AFTER, retry_after);
        }
        if unauthenticated {
            answer =
                answer.with_header(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        answer
    }
}

/// The resource kinds of `/Users` and `/Groups`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Users,
    Groups,
}

/// Every request under `/scim/v2`.
pub(crate) async fn serve(State(state): State<ScimState>, request: Request) -> Response {
    let (mut parts, body) = request.into_parts();
    let Ok(request_id) = RequestId::from_request_parts(&mut parts, &state).await;
    let path = parts.uri.path();
    let rest = path
        .strip_prefix("/scim/v2")
        .unwrap_or_default()
        .trim_matches('/');
    let segments: Vec<&str> = if rest.is_empty() {
        Vec::new()
    } else {
        rest.split('/').collect()
    };
    let decoded: Vec<String> = segments
        .iter()
        .map(|segment| percent_decoded(segment))
        .collect();
    let first = decoded.first().map(|segment| segment.to_ascii_lowercase());
    let method = parts.method.clone();
    let call = Call {
        state: &state,
        request_id: &request_id,
        headers: &parts.headers,
        base: location_base(&state, &parts.headers),
        query: parts.uri.query().unwrap_or_default().to_owned(),
    };
    let base = &call.base;
    let answer = match (first.as_deref(), decoded.get(1), decoded.len()) {
        (Some("serviceproviderconfig"), None, 1) => {
            only_get(&method).unwrap_or_else(|| discovery::service_provider_config(base))
        }
        (Some("resourcetypes"), name, 1 | 2) => only_get(&method)
            .unwrap_or_else(|| discovery::resource_types(base, name.map(String::as_str))),
        (Some("schemas"), urn, 1 | 2) => {
            only_get(&method).unwrap_or_else(|| discovery::schemas(base, urn.map(String::as_str)))
        }
        (Some(".search"), None, 1) => call.search(None, &method, body).await,
        (Some(resources @ ("users" | "groups")), id, 1 | 2) => {
            let kind = if resources == "users" {
                Kind::Users
            } else {
                Kind::Groups
            };
            match id {
                Some(id) if id.eq_ignore_ascii_case(".search") => {
                    call.search(Some(kind), &method, body).await
                }
                _ => {
                    call.resource(kind, id.map(String::as_str), &method, body)
                        .await
                }
            }
        }
        _ => ScimAnswer::error(
            StatusCode::NOT_FOUND,
            None,
            &format!("{} is not a SCIM endpoint", crate::clip::clip(path)),
        ),
    };
    answer.into_response()
}

/// 405 unless `method` is GET (discovery is read-only).
fn only_get(method: &Method) -> Option<ScimAnswer> {
    (method != Method::GET).then(|| not_allowed(method, "GET"))
}

fn not_allowed(method: &Method, allow: &'static str) -> ScimAnswer {
    ScimAnswer::error(
        StatusCode::METHOD_NOT_ALLOWED,
        None,
        &format!(
            "method {} is not allowed here; see the Allow header",
            crate::clip::clip(method.as_str())
        ),
    )
    .with_header(header::ALLOW, HeaderValue::from_static(allow))
}

/// `{public URL}/scim/v2`, or `http://{Host}/scim/v2` without one.
fn location_base(state: &ScimState, headers: &HeaderMap) -> String {
    let base = match &state.public_url {
        Some(url) => url.trim_end_matches('/').to_owned(),
        None => {
            let host = headers
                .get(header::HOST)
                .and_then(|host| host.to_str().ok())
                .unwrap_or("localhost");
            format!("http://{host}")
        }
    };
    format!("{base}/scim/v2")
}

/// One `lms.v1.ScimService` call `$method` of the [`Call`] `$call`, with its request id and
/// token; a failure returns from the function.
macro_rules! scim_call {
    ($call:expr, $token:expr, $message:expr, $method:ident) => {
        $call
            .state
            .core
            .scim(
                $call.request_id,
                $token,
                $message,
                |mut scim, request| async move { scim.$method(request).await },
            )
            .await?
    };
}

/// One call of `/Users` or `/Groups`, with what every such call carries.
struct Call<'a> {
    state: &'a ScimState,
    request_id: &'a RequestId,
    headers: &'a HeaderMap,
    base: String,
    query: String,
}

impl Call<'_> {
    async fn resource(
        &self,
        kind: Kind,
        id: Option<&str>,
        method: &Method,
        body: Body,
    ) -> ScimAnswer {
        let allow = if id.is_some() {
            "GET, PUT, PATCH, DELETE"
        } else {
            "GET, POST"
        };
        let allowed = match id {
            None => matches!(*method, Method::GET | Method::POST),
            Some(_) => matches!(
                *method,
                Method::GET | Method::PUT | Method::PATCH | Method::DELETE
            ),
        };
        if !allowed {
            return not_allowed(method, allow);
        }
        let Some(token) = bearer_token(self.headers) else {
            return ScimAnswer::from(GatewayError::Unauthenticated);
        };
        let text = match *method {
            Method::POST | Method::PUT | Method::PATCH => match self.body_text(body).await {
                Ok(text) => text,
                Err(refusal) => return refusal,
            },
            _ => String::new(),
        };
        let result = match (id, method.clone()) {
            (None, Method::GET) => self.list(kind, &self.query_list(), &token).await,
            (None, _) => self.write(kind, Write::Create, "", text, &token).await,
            (Some(id), Method::GET) => self.write(kind, Write::Get, id, text, &token).await,
            (Some(id), Method::PUT) => self.write(kind, Write::Replace, id, text, &token).await,
            (Some(id), Method::PATCH) => self.write(kind, Write::Patch, id, text, &token).await,
            (Some(id), _) => self.delete(kind, id, &token).await,
        };
        result.unwrap_or_else(ScimAnswer::from)
    }

    /// The body as text: its media type SCIM JSON, JSON or none (415 otherwise), at most
    /// 1 MiB (413). A request without a body is never judged by its `Content-Type`.
    async fn body_text(&self, body: Body) -> Result<String, ScimAnswer> {
        let bytes = read_body(Request::new(body))
            .await
            .map_err(|rejection| ScimAnswer::from(GatewayError::from(rejection)))?;
        if !bytes.is_empty()
            && let Some(content_type) = self.headers.get(header::CONTENT_TYPE)
        {
            let media = content_type
                .to_str()
                .unwrap_or_default()
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase();
            if media != "application/scim+json" && media != "application/json" {
                return Err(ScimAnswer::error(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    None,
                    &format!(
                        "Content-Type {} is not accepted; send application/scim+json or application/json",
                        crate::clip::clip(content_type.to_str().unwrap_or("(not text)"))
                    ),
                ));
            }
        }
        String::from_utf8(bytes.to_vec()).map_err(|_| {
            ScimAnswer::error(
                StatusCode::BAD_REQUEST,
                Some("invalidSyntax"),
                "the request body is not UTF-8",
            )
        })
    }

    /// The query parameter `name` (any case), as sent.
    fn parameter(&self, name: &str) -> Option<String> {
        form_urlencoded::parse(self.query.as_bytes())
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.into_owned())
    }

    /// The list parameters of a `GET` query string.
    fn query_list(&self) -> ListParameters {
        ListParameters {
            filter: self.parameter("filter"),
            start_index: self.parameter("startIndex"),
            count: self.parameter("count"),
            attributes: self.parameter("attributes"),
            excluded_attributes: self.parameter("excludedAttributes"),
        }
    }

    /// One page of `kind`, as the core answers it.
    async fn page(
        &self,
        kind: Kind,
        parameters: &ListParameters,
        token: &str,
    ) -> Result<ScimListResponse, GatewayError> {
        let message = ScimListRequest {
            filter: parameters.filter.clone(),
            start_index: parameters.start_index.clone(),
            count: parameters.count.clone(),
            location_base: self.base.clone(),
            attributes: parameters.attributes.clone(),
            excluded_attributes: parameters.excluded_attributes.clone(),
        };
        Ok(match kind {
            Kind::Users => scim_call!(self, token, message, list_users),
            Kind::Groups => scim_call!(self, token, message, list_groups),
        })
    }

    async fn list(
        &self,
        kind: Kind,
        parameters: &ListParameters,
        token: &str,
    ) -> Result<ScimAnswer, GatewayError> {
        let page = self.page(kind, parameters, token).await?;
        Ok(list_response(page.total_results, page.start_index, &[page]))
    }

    /// `POST /.search`, `/Users/.search` and `/Groups/.search` (RFC 7644 section 3.4.3): the
    /// `SearchRequest` body read as the query parameters of `GET`, with the same filter,
    /// paging and projection.
    async fn search(&self, kind: Option<Kind>, method: &Method, body: Body) -> ScimAnswer {
        if *method != Method::POST {
            return not_allowed(method, "POST");
        }
        let Some(token) = bearer_token(self.headers) else {
            return ScimAnswer::from(GatewayError::Unauthenticated);
        };
        let text = match self.body_text(body).await {
            Ok(text) => text,
            Err(refusal) => return refusal,
        };
        let parameters = match search_parameters(&text) {
            Ok(parameters) => parameters,
            Err((scim_type, detail)) => {
                return ScimAnswer::error(StatusCode::BAD_REQUEST, Some(scim_type), &detail);
            }
        };
        let result = match kind {
            Some(kind) => self.list(kind, &parameters, &token).await,
            None => self.search_everything(&parameters, &token).await,
        };
        result.unwrap_or_else(ScimAnswer::from)
    }

    /// A search at the root covers both resource types as one list: the users, then the
    /// groups, each ascending by id, paged as one. A filter naming an attribute one type lacks
    /// (`userName`) matches none of that type, as RFC 7644 section 3.4.2.2 has it; a filter
    /// neither type understands is `invalidFilter`.
    async fn search_everything(
        &self,
        parameters: &ListParameters,
        token: &str,
    ) -> Result<ScimAnswer, GatewayError> {
        let users = self.page(Kind::Users, parameters, token).await;
        let (users, users_total) = match users {
            Ok(page) => {
                let total = page.total_results;
                (Some(page), total)
            }
            Err(error) if is_invalid_filter(&error) => (None, 0),
            Err(error) => return Err(error),
        };
        // The core accepted (or both types will refuse) startIndex and count; read them as
        // it does (provisioning.md 10.2) to know where the groups' part of the page begins.
        let start_index = users.as_ref().map_or_else(
            || effective_start_index(parameters.start_index.as_deref()),
            |page| page.start_index,
        );
        let count = effective_count(parameters.count.as_deref());
        let shown = users.as_ref().map_or(0, |page| page.resources.len() as u64);
        let groups_parameters = ListParameters {
            start_index: Some(start_index.saturating_sub(users_total).max(1).to_string()),
            count: Some(count.saturating_sub(shown).to_string()),
            ..parameters.clone()
        };
        let groups = match self.page(Kind::Groups, &groups_parameters, token).await {
            Ok(page) => Some(page),
            Err(error) if is_invalid_filter(&error) && users.is_some() => None,
            Err(error) => return Err(error),
        };
        let total = users_total + groups.as_ref().map_or(0, |page| page.total_results);
        let pages: Vec<ScimListResponse> = users.into_iter().chain(groups).collect();
        Ok(list_response(total, start_index, &pages))
    }

    async fn write(
        &self,
        kind: Kind,
        write: Write,
        id: &str,
        body: String,
        token: &str,
    ) -> Result<ScimAnswer, GatewayError> {
        let message = ScimResourceRequest {
            id: id.to_owned(),
            body,
            location_base: self.base.clone(),
            attributes: self.parameter("attributes"),
            excluded_attributes: self.parameter("excludedAttributes"),
        };
        let resource: ScimResource = match (kind, write) {
            (Kind::Users, Write::Get) => scim_call!(self, token, message, get_user),
            (Kind::Users, Write::Create) => scim_call!(self, token, message, create_user),
            (Kind::Users, Write::Replace) => scim_call!(self, token, message, replace_user),
            (Kind::Users, Write::Patch) => scim_call!(self, token, message, patch_user),
            (Kind::Groups, Write::Get) => scim_call!(self, token, message, get_group),
            (Kind::Groups, Write::Create) => scim_call!(self, token, message, create_group),
            (Kind::Groups, Write::Replace) => scim_call!(self, token, message, replace_group),
            (Kind::Groups, Write::Patch) => scim_call!(self, token, message, patch_group),
        };
        let body = serde_json::from_str(&resource.json).map_err(|error| {
            GatewayError::Internal(anyhow::anyhow!("the core's SCIM JSON: {error}"))
        })?;
        if write != Write::Create {
            return Ok(ScimAnswer::json(StatusCode::OK, body));
        }
        let answer = ScimAnswer::json(StatusCode::CREATED, body);
        Ok(match HeaderValue::from_str(&resource.location) {
            Ok(location) => answer.with_header(header::LOCATION, location),
            Err(_) => answer,
        })
    }

    async fn delete(&self, kind: Kind, id: &str, token: &str) -> Result<ScimAnswer, GatewayError> {
        let message = ScimResourceRequest {
            id: id.to_owned(),
            location_base: self.base.clone(),
            ..ScimResourceRequest::default()
        };
        match kind {
            Kind::Users => scim_call!(self, token, message, delete_user),
            Kind::Groups => scim_call!(self, token, message, delete_group),
        };
        Ok(ScimAnswer {
            status: StatusCode::NO_CONTENT,
            body: None,
            headers: HeaderMap::new(),
        })
    }
}

/// What a list asks for, each as sent: the core judges them.
#[derive(Debug, Clone, Default)]
struct ListParameters {
    filter: Option<String>,
    start_index: Option<String>,
    count: Option<String>,
    attributes: Option<String>,
    excluded_attributes: Option<String>,
}

/// An RFC 7644 `ListResponse` of the resources of `pages`, in order.
fn list_response(total: u64, start_index: u64, pages: &[ScimListResponse]) -> ScimAnswer {
    let resources: Vec<Value> = pages
        .iter()
        .flat_map(|page| &page.resources)
        .map(|text| serde_json::from_str(text).unwrap_or(Value::Null))
        .collect();
    ScimAnswer::json(
        StatusCode::OK,
        json!({
            "schemas": ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
            "totalResults": total,
            "startIndex": start_index,
            "itemsPerPage": resources.len(),
            "Resources": resources,
        }),
    )
}

/// A `SearchRequest` body as list parameters, or the `scimType` and detail of its refusal:
/// `filter` a string, `startIndex` and `count` passed on as sent (the core refuses what is
/// no integer), `attributes` and `excludedAttributes` lists of names (or one comma-separated
/// string); keys in any case, `schemas`, `sortBy` and `sortOrder` ignored. An empty body asks
/// for everything.
fn search_parameters(text: &str) -> Result<ListParameters, (&'static str, String)> {
    if text.trim().is_empty() {
        return Ok(ListParameters::default());
    }
    let Ok(Value::Object(body)) = serde_json::from_str::<Value>(text) else {
        return Err((
            "invalidSyntax",
            "the SearchRequest body is not a JSON object".to_owned(),
        ));
    };
    let mut parameters = ListParameters::default();
    for (key, value) in &body {
        let scalar = match value {
            Value::Null => Some(None),
            Value::String(text) => Some(Some(text.clone())),
            Value::Number(number) => Some(Some(number.to_string())),
            _ => None,
        };
        let names = match value {
            Value::Array(items) => items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .map(|names| Some(names.join(","))),
            Value::Number(_) => None,
            _ => scalar.clone(),
        };
        let filter = match value {
            Value::Null => Some(None),
            Value::String(text) => Some(Some(text.clone())),
            _ => None,
        };
        let (slot, value) = match key.to_ascii_lowercase().as_str() {
            "filter" => (&mut parameters.filter, filter),
            "startindex" => (&mut parameters.start_index, scalar),
            "count" => (&mut parameters.count, scalar),
            "attributes" => (&mut parameters.attributes, names),
            "excludedattributes" => (&mut parameters.excluded_attributes, names),
            _ => continue,
        };
        *slot = value.ok_or_else(|| {
            (
                "invalidValue",
                format!(
                    "{} has the wrong type in the SearchRequest",
                    crate::clip::clip(key)
                ),
            )
        })?;
    }
    Ok(parameters)
}

/// `startIndex` as the core reads it (provisioning.md 10.2): below 1 or none is 1.
fn effective_start_index(raw: Option<&str>) -> u64 {
    raw.and_then(|raw| raw.trim().parse::<i64>().ok())
        .map_or(1, |start| start.max(1) as u64)
}

/// `count` as the core reads it (provisioning.md 10.2): 100 when absent, at most 1000
/// (`ServiceProviderConfig` `filter.maxResults`), negative as 0.
fn effective_count(raw: Option<&str>) -> u64 {
    raw.map(str::trim)
        .filter(|raw| !raw.is_empty())
        .and_then(|raw| raw.parse::<i64>().ok())
        .map_or(100, |count| count.clamp(0, 1_000) as u64)
}

/// Whether the core refused a list's filter (`invalidFilter`).
fn is_invalid_filter(error: &GatewayError) -> bool {
    matches!(error, GatewayError::Core(status)
        if status.metadata().get(lms_proto::metadata::SCIM_TYPE)
            .and_then(|value| value.to_str().ok()) == Some("invalidFilter"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Write {
    Get,
    Create,
    Replace,
    Patch,
}

/// A path segment with its `%XX` escapes decoded (a schema URN's colons may come escaped).
fn percent_decoded(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let escaped = (bytes[at] == b'%')
            .then(|| segment.get(at + 1..at + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                decoded.push(byte);
                at += 3;
            }
            None => {
                decoded.push(bytes[at]);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

/// The token of `Authorization: Bearer <token>` (the scheme in any case), or of a raw
/// `Authorization: <token>`; `None` without one.
fn bearer_token(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let token = match value.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token.trim(),
        Some(_) => return None,
        // The scheme without a token is no token.
        None if value.eq_ignore_ascii_case("bearer") => return None,
        None => value,
    };
    (!token.is_empty()).then(|| token.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_comes_as_bearer_in_any_case_or_raw() {
        let token = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
            bearer_token(&headers)
        };
        assert_eq!(token("Bearer abc").as_deref(), Some("abc"));
        assert_eq!(token("bEaReR  abc ").as_deref(), Some("abc"));
        assert_eq!(token("abc").as_deref(), Some("abc"));
        assert_eq!(token("Basic abc"), None);
        assert_eq!(token("Bearer "), None);
        assert_eq!(bearer_token(&HeaderMap::new()), None);
    }
}
