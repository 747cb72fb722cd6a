//! SCIM 2.0 (provisioning.md sections 8 to 10): the `/scim/v2` Users and Groups of the
//! caller's whole account, as SCIM JSON in and out. The gateway passes the request body as
//! text and answers with the JSON made here; it knows HTTP, this module knows the mapping.
//!
//! - [`users`]: the User resource, its filter, and the six operations, through the user
//!   service's own writes (`users::add_user`, `users::apply_profile_changes`,
//!   `users::change_statuses`, `users::set_password_hash`) inside one [`write()`](super::write());
//! - [`groups`]: the Group resource and its six operations;
//! - [`filter`]: the filter grammar of section 10.2 (`attr eq "value"` joined by `and`);
//! - [`patch`]: PatchOp bodies, their operations and paths;
//! - here: the SCIM error (status, `scimType`, `detail`), list paging and the
//!   `attributes`/`excludedAttributes` projection.
//!
//! The caller is the SCIM token's user, an active owner or administrator (checked by
//! `auth::tokens`), so every grant is the whole account.

mod filter;
pub mod groups;
mod patch;
pub mod users;

use std::collections::HashMap;

use sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter as _, QuerySelect as _, Select,
    prelude::Uuid,
};
use serde_json::{Map, Value};

use crate::entities::group_member;
use crate::error::ServiceError;

pub const USER_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:User";
pub const GROUP_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:Group";
pub const ENTERPRISE_SCHEMA: &str = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

/// Most resources one list answers (`ServiceProviderConfig` `filter.maxResults`).
pub const MAX_RESULTS: u64 = 1_000;
/// Resources a list answers unless `count` says otherwise.
const DEFAULT_COUNT: u64 = 100;
/// Longest `externalId` and group `displayName`.
const MAX_TEXT_CHARS: usize = 255;

/// Why a SCIM request failed: the HTTP status, the RFC 7644 `scimType` (when the table of
/// section 8 gives one) and a `detail` naming the attribute, path or parameter; or a service
/// error that is no fault of the request (authentication, database), answered as the rest of
/// the interface answers it.
#[derive(Debug)]
pub enum ScimError {
    Refused {
        status: u16,
        scim_type: Option<&'static str>,
        detail: String,
    },
    Service(ServiceError),
}

pub type ScimResult<T> = Result<T, ScimError>;

impl ScimError {
    fn refused(status: u16, scim_type: Option<&'static str>, detail: impl Into<String>) -> Self {
        Self::Refused {
            status,
            scim_type,
            detail: detail.into(),
        }
    }

    pub fn invalid_value(detail: impl Into<String>) -> Self {
        Self::refused(400, Some("invalidValue"), detail)
    }

    pub fn invalid_syntax(detail: impl Into<String>) -> Self {
        Self::refused(400, Some("invalidSyntax"), detail)
    }

    pub fn invalid_filter(detail: impl Into<String>) -> Self {
        Self::refused(400, Some("invalidFilter"), detail)
    }

    pub fn invalid_path(detail: impl Into<String>) -> Self {
        Self::refused(400, Some("invalidPath"), detail)
    }

    pub fn mutability(detail: impl Into<String>) -> Self {
        Self::refused(400, Some("mutability"), detail)
    }

    pub fn uniqueness(detail: impl Into<String>) -> Self {
        Self::refused(409, Some("uniqueness"), detail)
    }

    pub fn not_found(what: &str, id: &str) -> Self {
        Self::refused(
            404,
            None,
            format!("{what} \"{}\" not found", crate::domain::ids::clip(id)),
        )
    }
}

/// The services' refusals keep their status (a value breaking a rule is `invalidValue`);
/// anything else is answered as the rest of the interface answers it.
impl From<ServiceError> for ScimError {
    fn from(err: ServiceError) -> Self {
        match err {
            ServiceError::InvalidArgument(detail) => Self::invalid_value(detail),
            ServiceError::NotFound(detail) => Self::refused(404, None, detail),
            ServiceError::Conflict(detail) => Self::refused(409, None, detail),
            ServiceError::PermissionDenied(detail) => Self::refused(403, None, detail),
            other => Self::Service(other),
        }
    }
}

impl From<DbErr> for ScimError {
    fn from(err: DbErr) -> Self {
        ServiceError::from(err).into()
    }
}

impl From<crate::domain::Invalid> for ScimError {
    fn from(invalid: crate::domain::Invalid) -> Self {
        Self::invalid_value(invalid.to_string())
    }
}

/// What a list asks for, each as sent (the core judges them).
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    pub filter: Option<String>,
    pub start_index: Option<String>,
    pub count: Option<String>,
}

/// A page of a list: `startIndex` (1-based) and `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Page {
    start_index: u64,
    count: u64,
}

impl Page {
    /// `startIndex` below 1 reads as 1; `count` above [`MAX_RESULTS`] as that, negative as 0;
    /// anything but an integer is `invalidValue` naming the parameter.
    fn parse(query: &ListQuery) -> ScimResult<Self> {
        let integer = |name: &str, raw: &Option<String>| -> ScimResult<Option<i64>> {
            raw.as_deref()
                .map(str::trim)
                .filter(|raw| !raw.is_empty())
                .map(|raw| {
                    raw.parse::<i64>().map_err(|_| {
                        ScimError::invalid_value(format!(
                            "{name} must be an integer, not \"{}\"",
                            crate::domain::ids::clip(raw)
                        ))
                    })
                })
                .transpose()
        };
        let start_index = integer("startIndex", &query.start_index)?
            .unwrap_or(1)
            .max(1);
        let count = integer("count", &query.count)?.map_or(DEFAULT_COUNT, |count| {
            count.clamp(0, MAX_RESULTS as i64) as u64
        });
        Ok(Self {
            start_index: start_index as u64,
            count,
        })
    }

    fn offset(self) -> u64 {
        self.start_index - 1
    }
}

/// A page of resources and the number of every match.
#[derive(Debug, Clone, PartialEq)]
pub struct ListPage {
    pub total_results: u64,
    pub start_index: u64,
    pub resources: Vec<Value>,
}

/// Where resources live and which of their attributes the answer shows.
#[derive(Debug, Clone, Default)]
pub struct View {
    /// `{base}/scim/v2`, for `meta.location`.
    pub location_base: String,
    /// `attributes`, as sent.
    pub attributes: Option<String>,
    /// `excludedAttributes`, as sent.
    pub excluded_attributes: Option<String>,
}

impl View {
    /// `resource` with only the attributes asked for: `attributes` keeps those named,
    /// `excludedAttributes` drops those named; `id`, `schemas` and `meta` always stay. Names
    /// are top-level (a sub-attribute or a schema-qualified name counts for its top-level
    /// attribute), in any case.
    pub fn project(&self, resource: Value) -> Value {
        let Value::Object(object) = resource else {
            return resource;
        };
        let names = |raw: &Option<String>| -> Vec<String> {
            raw.as_deref()
                .unwrap_or_default()
                .split(',')
                .map(top_level_name)
                .filter(|name| !name.is_empty())
                .collect()
        };
        let (kept, dropped) = (names(&self.attributes), names(&self.excluded_attributes));
        let always = |key: &str| matches!(key, "id" | "schemas" | "meta");
        let object: Map<String, Value> = object
            .into_iter()
            .filter(|(key, _)| {
                let key_name = key.to_ascii_lowercase();
                always(key)
                    || ((kept.is_empty() || kept.contains(&key_name))
                        && !dropped.contains(&key_name))
            })
            .collect();
        Value::Object(object)
    }
}

/// The top-level attribute `raw` names, lower-case: `name.givenName` is `name`, an
/// extension's attribute is the extension's URN, a core schema's prefix is dropped.
fn top_level_name(raw: &str) -> String {
    let name = raw.trim().to_ascii_lowercase();
    let enterprise = ENTERPRISE_SCHEMA.to_ascii_lowercase();
    if name.starts_with(&enterprise) {
        return enterprise;
    }
    let name = strip_core_schema(&name);
    name.split(['.', '[']).next().unwrap_or_default().to_owned()
}

/// `name` (lower-case) without a core schema's `urn:…:User:` or `urn:…:Group:` prefix.
fn strip_core_schema(name: &str) -> &str {
    for schema in [USER_SCHEMA, GROUP_SCHEMA] {
        let prefix = format!("{}:", schema.to_ascii_lowercase());
        if let Some(rest) = name.strip_prefix(&prefix) {
            return rest;
        }
    }
    name
}

/// `meta` of a resource.
fn meta(
    resource_type: &str,
    created: chrono::DateTime<chrono::Utc>,
    modified: chrono::DateTime<chrono::Utc>,
    location: &str,
) -> Value {
    let time =
        |at: chrono::DateTime<chrono::Utc>| at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    serde_json::json!({
        "resourceType": resource_type,
        "created": time(created),
        "lastModified": time(modified),
        "location": location,
    })
}

/// The row of `select` whose `id` column is the id `raw` names; 404 naming `what` when it
/// is malformed or names nothing `select` sees.
async fn find_by_raw_id<E: EntityTrait>(
    conn: &impl ConnectionTrait,
    select: Select<E>,
    id: impl ColumnTrait,
    raw: &str,
    what: &str,
) -> ScimResult<E::Model> {
    let found = match crate::domain::ids::parse_uuid(raw) {
        Some(parsed) => select.filter(id.eq(parsed)).one(conn).await?,
        None => None,
    };
    found.ok_or_else(|| ScimError::not_found(what, raw))
}

/// What `group_members` joins each of `keys` (a user's or a group's id, in column `key`) to:
/// the `(id, name)` of the rows of `E` (a user's groups, a group's members) that `visible`
/// keeps, ascending, per key.
///
/// Two reads, each by primary key: the memberships of the keys, then the rows they name. As
/// one join, PostgreSQL may hash every user of the database for a group of a hundred members.
async fn memberships<E>(
    conn: &impl ConnectionTrait,
    keys: &[Uuid],
    key: group_member::Column,
    (id, name): (E::Column, E::Column),
    visible: sea_orm::Condition,
) -> ScimResult<HashMap<Uuid, Vec<(Uuid, String)>>>
where
    E: EntityTrait,
{
    let other = match key {
        group_member::Column::GroupId => group_member::Column::UserId,
        _ => group_member::Column::GroupId,
    };
    let mut links: Vec<(Uuid, Uuid)> = Vec::new();
    for chunk in crate::db::bulk::in_chunks(keys) {
        links.extend(
            group_member::Entity::find()
                .select_only()
                .column(key)
                .column(other)
                .filter(key.is_in(chunk.iter().copied()))
                .into_tuple::<(Uuid, Uuid)>()
                .all(conn)
                .await?,
        );
    }
    let mut ids: Vec<Uuid> = links.iter().map(|(_, id)| *id).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut names: HashMap<Uuid, String> = HashMap::with_capacity(ids.len());
    for chunk in crate::db::bulk::in_chunks(&ids) {
        let rows: Vec<(Uuid, String)> = E::find()
            .select_only()
            .column(id)
            .column(name)
            .filter(id.is_in(chunk.iter().copied()))
            .filter(visible.clone())
            .into_tuple()
            .all(conn)
            .await?;
        names.extend(rows);
    }
    let mut lists: HashMap<Uuid, Vec<(Uuid, String)>> = HashMap::new();
    for (key, other) in links {
        if let Some(name) = names.get(&other) {
            lists.entry(key).or_default().push((other, name.clone()));
        }
    }
    for list in lists.values_mut() {
        list.sort_unstable();
    }
    Ok(lists)
}

/// The request body as a JSON object; anything else is `invalidSyntax`.
fn body_object(body: &str) -> ScimResult<Map<String, Value>> {
    match serde_json::from_str::<Value>(body) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(ScimError::invalid_syntax(
            "the request body must be a JSON object",
        )),
        Err(err) => Err(ScimError::invalid_syntax(format!(
            "the request body is not JSON: {err}"
        ))),
    }
}

/// A text attribute: a JSON string, or `null`/absent for none; another type is
/// `invalidValue` naming it.
fn optional_text(name: &str, value: &Value) -> ScimResult<Option<String>> {
    match value {
        Value::Null => Ok(None),
        Value::String(text) => Ok(Some(text.clone())),
        _ => Err(ScimError::invalid_value(format!("{name} must be a string"))),
    }
}

/// An `externalId`: at most 255 characters; empty counts as none.
fn external_id(name: &str, value: &Value) -> ScimResult<Option<String>> {
    let text = optional_text(name, value)?.filter(|text| !text.is_empty());
    if let Some(text) = &text
        && text.chars().count() > MAX_TEXT_CHARS
    {
        return Err(ScimError::invalid_value(format!(
            "{name} must be at most {MAX_TEXT_CHARS} characters long"
        )));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(start_index: Option<&str>, count: Option<&str>) -> ListQuery {
        ListQuery {
            filter: None,
            start_index: start_index.map(str::to_owned),
            count: count.map(str::to_owned),
        }
    }

    #[test]
    fn paging_reads_out_of_range_numbers_into_range_and_refuses_words() {
        let page = |start, count| Page::parse(&query(start, count)).unwrap();
        assert_eq!(
            page(None, None),
            Page {
                start_index: 1,
                count: 100
            }
        );
        assert_eq!(
            page(Some("0"), Some("-5")),
            Page {
                start_index: 1,
                count: 0
            }
        );
        assert_eq!(
            page(Some("7"), Some("5000")),
            Page {
                start_index: 7,
                count: 1000
            }
        );
        for (start, count, named) in [
            (Some("x"), None, "startIndex"),
            (None, Some("1.5"), "count"),
        ] {
            let ScimError::Refused {
                status,
                scim_type,
                detail,
            } = Page::parse(&query(start, count)).unwrap_err()
            else {
                panic!("a refusal");
            };
            assert_eq!((status, scim_type), (400, Some("invalidValue")));
            assert!(detail.starts_with(named), "{detail}");
        }
    }

    #[test]
    fn projection_keeps_id_schemas_and_meta_and_reads_names_in_any_case() {
        let resource = serde_json::json!({
            "schemas": [], "id": "1", "meta": {}, "userName": "a", "name": {"givenName": "A"},
            ENTERPRISE_SCHEMA: {"department": "Sales"}, "members": []
        });
        let view = |attributes: Option<&str>, excluded: Option<&str>| View {
            location_base: String::new(),
            attributes: attributes.map(str::to_owned),
            excluded_attributes: excluded.map(str::to_owned),
        };
        let kept = view(Some("USERNAME,name.givenName"), None).project(resource.clone());
        let keys: Vec<&String> = kept.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["id", "meta", "name", "schemas", "userName"]);
        let dropped = view(
            None,
            Some("members, urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department"),
        )
        .project(resource);
        assert!(dropped.get("members").is_none());
        assert!(dropped.get(ENTERPRISE_SCHEMA).is_none());
        assert!(dropped.get("userName").is_some());
    }
}
