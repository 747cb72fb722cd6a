//! The query of a paged listing (neighbours.md section 0.5): `pageSize` and `pageToken`,
//! passed to the core as they are. The core owns the page rules (default and range of
//! `pageSize`) and the token format; here a token is an opaque string.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use lms_proto::v1::PageRequest;

use crate::clip::clip;
use crate::error::GatewayError;
use crate::routes::unknown_query_parameter;

/// `?pageSize=N&pageToken=T`, both optional; an empty value counts as absent (clients send
/// `pageToken=` for the first page). Any other parameter is a 400 naming it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct PageQuery(pub(crate) PageRequest);

impl<S: Send + Sync> FromRequestParts<S> for PageQuery {
    type Rejection = GatewayError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        parse(parts.uri.query().unwrap_or_default()).map(Self)
    }
}

fn parse(query: &str) -> Result<PageRequest, GatewayError> {
    let (mut size, mut token) = (None, None);
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        let slot = match name.as_ref() {
            "pageSize" => &mut size,
            "pageToken" => &mut token,
            other => return Err(unknown_query_parameter(other)),
        };
        if slot.replace(value.trim().to_owned()).is_some() {
            return Err(GatewayError::BadRequest(format!(
                "Query parameter \"{name}\" is given more than once."
            )));
        }
    }
    page_request(size, token)
}

/// `pageSize` and `pageToken` as given (either absent), checked for form: an empty value
/// counts as absent.
pub(crate) fn page_request(
    size: Option<String>,
    token: Option<String>,
) -> Result<PageRequest, GatewayError> {
    let page_size = match size.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(text) => Some(text.parse::<u64>().map_err(|_| {
            GatewayError::BadRequest(format!(
                "pageSize must be a whole number; got \"{}\".",
                clip(text)
            ))
        })?),
    };
    Ok(PageRequest {
        page_size,
        page_token: token
            .map(|token| token.trim().to_owned())
            .unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(query: &str) -> String {
        match parse(query).unwrap_err() {
            GatewayError::BadRequest(message) => message,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn absent_and_empty_values_mean_the_first_page_at_the_default_size() {
        for query in ["", "pageToken=", "pageSize=&pageToken="] {
            assert_eq!(parse(query).unwrap(), PageRequest::default(), "{query}");
        }
    }

    #[test]
    fn size_and_token_pass_through_as_given() {
        let page = parse("pageSize=50&pageToken=djE6ZGVw").unwrap();
        assert_eq!(page.page_size, Some(50));
        assert_eq!(page.page_token, "djE6ZGVw");
    }

    #[test]
    fn a_size_that_is_no_whole_number_is_refused_naming_page_size() {
        for size in ["-1", "ten", "1.5", "99999999999999999999999"] {
            assert!(bad(&format!("pageSize={size}")).starts_with("pageSize must be"));
        }
    }

    #[test]
    fn unknown_and_repeated_parameters_are_refused_naming_them() {
        assert!(bad("page_size=5").contains("\"page_size\""));
        assert!(bad("pageSize=5&pageSize=6").contains("\"pageSize\" is given more than once"));
    }
}
