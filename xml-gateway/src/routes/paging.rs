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
    Ok(parse_listing(query, &[], true)?.0)
}

/// A listing's query: `pageSize` and `pageToken` when `paged`, and the id lists `lists`, each
/// in any of the spellings clients use (neighbours.md section 0.5): `name=a,b`, repeated
/// `name=a&name=b`, `name[]=a` or `name[0]=a` (brackets may be percent-encoded). List parts
/// are trimmed and empty ones dropped; the lists come back in the order of `lists`.
pub(crate) fn parse_listing(
    query: &str,
    lists: &[&str],
    paged: bool,
) -> Result<(PageRequest, Vec<Vec<String>>), GatewayError> {
    let (mut size, mut token) = (None, None);
    let mut values = vec![Vec::new(); lists.len()];
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        if let Some(list) = lists.iter().position(|list| is_list_name(&name, list)) {
            values[list].extend(
                value
                    .split(',')
                    .map(str::trim)
                    .filter(|part| !part.is_empty())
                    .map(str::to_owned),
            );
            continue;
        }
        let slot = match name.as_ref() {
            "pageSize" if paged => &mut size,
            "pageToken" if paged => &mut token,
            other => return Err(unknown_query_parameter(other)),
        };
        if slot.replace(value.trim().to_owned()).is_some() {
            return Err(GatewayError::BadRequest(format!(
                "Query parameter \"{name}\" is given more than once."
            )));
        }
    }
    Ok((page_request(size, token)?, values))
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

/// `list`, `list[]` or `list[N]` (PHP's `http_build_query`, Guzzle, qs).
fn is_list_name(name: &str, list: &str) -> bool {
    let Some(rest) = name.strip_prefix(list) else {
        return false;
    };
    rest.is_empty()
        || rest
            .strip_prefix('[')
            .and_then(|inner| inner.strip_suffix(']'))
            .is_some_and(|index| index.bytes().all(|byte| byte.is_ascii_digit()))
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
    fn every_spelling_of_a_list_is_read_beside_the_page() {
        let (page, lists) = parse_listing(
            "learnerIds[]=a&learnerIds%5B%5D=b&courseIds[0]=c&courseIds=d,%20e,&pageSize=2",
            &["learnerIds", "courseIds", "enrollmentIds"],
            true,
        )
        .unwrap();
        assert_eq!(page.page_size, Some(2));
        assert_eq!(lists, [vec!["a", "b"], vec!["c", "d", "e"], vec![]]);
    }

    #[test]
    fn an_unpaged_listing_refuses_page_parameters_and_unknown_lists() {
        for query in ["pageSize=5", "pageToken=", "userIds[]=a", "learnerIds[x]=a"] {
            let error = parse_listing(query, &["learnerIds"], false).unwrap_err();
            assert!(
                matches!(&error, GatewayError::BadRequest(m) if m.contains("is not known")),
                "{query}: {error:?}"
            );
        }
    }

    #[test]
    fn unknown_and_repeated_parameters_are_refused_naming_them() {
        assert!(bad("page_size=5").contains("\"page_size\""));
        assert!(bad("pageSize=5&pageSize=6").contains("\"pageSize\" is given more than once"));
    }
}
