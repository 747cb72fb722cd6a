//! A list's query string: its filters, each in any of the spellings clients use
//! (`name=a,b`, repeated `name=a&name=b`, `name[]=a` or `name[0]=a`, brackets plain or
//! percent-encoded), and on a paged list `pageSize` and `pageToken`, passed to the core as
//! they are. The core owns the page rules (default and range of `pageSize`) and the token
//! format; here a token is an opaque string. Any other parameter is refused naming it: a
//! misspelt filter must not widen the answer (contract section 8).

use lms_proto::v1::PageRequest;

use super::Filters;
use crate::clip::clip;
use crate::error::GatewayError;
use crate::routes::unknown_query_parameter;

/// The filters `names` of `query` and, when `paged`, its page (the first page at the default
/// size when neither is given). Empty values are dropped.
pub(crate) fn parse_query(
    query: &str,
    names: &[&str],
    paged: bool,
) -> Result<(Filters, PageRequest), GatewayError> {
    let (mut size, mut token) = (None, None);
    let mut filters = Filters::of(names.len());
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        if let Some(filter) = names.iter().position(|filter| is_list_name(&name, filter)) {
            filters.0[filter].extend(split_values(&value));
            continue;
        }
        let slot = match name.as_ref() {
            "pageSize" if paged => &mut size,
            "pageToken" if paged => &mut token,
            other => return Err(unknown_query_parameter(other)),
        };
        if slot.replace(value.into_owned()).is_some() {
            return Err(GatewayError::BadRequest(format!(
                "Query parameter \"{name}\" is given more than once."
            )));
        }
    }
    Ok((filters, page_request(size.as_deref(), token.as_deref())?))
}

/// `pageSize` and `pageToken` as given, either absent; the token is trimmed.
pub(crate) fn page_request(
    size: Option<&str>,
    token: Option<&str>,
) -> Result<PageRequest, GatewayError> {
    Ok(PageRequest {
        page_size: whole_number("pageSize", size)?,
        page_token: token.map(str::trim).unwrap_or_default().to_owned(),
    })
}

/// A count the caller gives (`pageSize`, `page`): absent or empty means the default; anything
/// but decimal digits (a sign, a space, a fraction) is a 400 naming `name`. Values in bodies
/// arrive trimmed by the XML and JSON readers; a query value is taken as it is.
pub(crate) fn whole_number(name: &str, text: Option<&str>) -> Result<Option<u64>, GatewayError> {
    let text = match text {
        None | Some("") => return Ok(None),
        Some(text) => text,
    };
    text.bytes()
        .all(|byte| byte.is_ascii_digit())
        .then(|| text.parse::<u64>().ok())
        .flatten()
        .map(Some)
        .ok_or_else(|| {
            GatewayError::BadRequest(format!(
                "{name} must be a whole number; got \"{}\".",
                clip(text)
            ))
        })
}

/// The values of one list parameter or element: split at commas, trimmed, empty ones dropped.
pub(crate) fn split_values(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(str::to_owned)
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

    const ENROLLMENT_FILTERS: [&str; 3] = ["learnerIds", "courseIds", "enrollmentIds"];

    fn page(query: &str) -> Result<PageRequest, GatewayError> {
        parse_query(query, &[], true).map(|(_, page)| page)
    }

    fn lists(query: &str, names: &[&str]) -> Vec<Vec<String>> {
        parse_query(query, names, false).unwrap().0.0
    }

    fn refusal(result: Result<impl std::fmt::Debug, GatewayError>) -> String {
        match result.unwrap_err() {
            GatewayError::BadRequest(message) => message,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn absent_and_empty_values_mean_the_first_page_at_the_default_size() {
        for query in ["", "pageToken=", "pageSize=&pageToken="] {
            assert_eq!(page(query).unwrap(), PageRequest::default(), "{query}");
        }
    }

    #[test]
    fn size_and_token_pass_through_as_given() {
        let page = page("pageSize=50&pageToken=%20djE6ZGVw").unwrap();
        assert_eq!(page.page_size, Some(50));
        assert_eq!(page.page_token, "djE6ZGVw");
    }

    #[test]
    fn a_size_that_is_not_only_digits_is_refused_naming_page_size() {
        for size in [
            "-1",
            "ten",
            "1.5",
            "1e3",
            "99999999999999999999999",
            "%2B5",
            "+5",
            "%205",
            "5%20",
            "%20",
        ] {
            let message = refusal(page(&format!("pageSize={size}")));
            assert!(
                message.starts_with("pageSize must be a whole number"),
                "{size}: {message}"
            );
        }
    }

    #[test]
    fn the_same_count_rule_holds_for_every_name() {
        assert_eq!(whole_number("page", Some("12")).unwrap(), Some(12));
        assert_eq!(whole_number("page", None).unwrap(), None);
        assert!(refusal(whole_number("page", Some("+1"))).starts_with("page must be"));
    }

    #[test]
    fn every_spelling_of_a_list_is_read_beside_the_page() {
        let (filters, page) = parse_query(
            "learnerIds[]=a&learnerIds%5B%5D=b&courseIds[0]=c&courseIds=d,%20e,&pageSize=2",
            &ENROLLMENT_FILTERS,
            true,
        )
        .unwrap();
        assert_eq!(page.page_size, Some(2));
        assert_eq!(filters.0, [vec!["a", "b"], vec!["c", "d", "e"], vec![]]);
        let [learners, courses, enrollments] = filters.into_lists();
        assert_eq!(
            (learners.len(), courses.len(), enrollments.len()),
            (2, 3, 0)
        );
    }

    #[test]
    fn user_filters_are_kept_apart_in_every_spelling() {
        let names = ["departments", "groups", "logins", "emails"];
        for query in [
            "departments[]=a&departments[]=b",
            "departments%5B%5D=a&departments%5B%5D=b",
            "departments[0]=a&departments[1]=b",
            "departments=a&departments=b",
            "departments=a,b",
        ] {
            assert_eq!(lists(query, &names)[0], ["a", "b"], "{query}");
        }
        assert_eq!(
            lists("groups[]=g&logins[]=L&emails[]=e@x&departments[]=d", &names),
            [vec!["d"], vec!["g"], vec!["L"], vec!["e@x"]]
        );
    }

    #[test]
    fn a_whole_list_refuses_page_parameters_and_unknown_lists() {
        for query in ["pageSize=5", "pageToken=", "userIds[]=a", "learnerIds[x]=a"] {
            let message = refusal(parse_query(query, &["learnerIds"], false));
            assert!(message.contains("is not known"), "{query}: {message}");
        }
    }

    #[test]
    fn unknown_and_repeated_parameters_are_refused_naming_them() {
        for (query, name) in [
            ("page_size=5", "page_size"),
            ("userids=a", "userids"),
            ("UserIds=b", "UserIds"),
            ("userIds=a&userId=d", "userId"),
            ("userIds[x]=a", "userIds[x]"),
            ("userIds[0][1]=a", "userIds[0][1]"),
        ] {
            let message = refusal(parse_query(query, &["userIds"], true));
            assert!(
                message.contains(&format!("\"{name}\"")),
                "{query}: {message}"
            );
        }
        assert!(
            refusal(page("pageSize=5&pageSize=6")).contains("\"pageSize\" is given more than once")
        );
    }

    #[test]
    fn no_query_or_only_empty_values_filter_nothing() {
        for query in ["", "userIds=", "userIds=,%20,"] {
            assert_eq!(
                lists(query, &["userIds"]),
                [Vec::<String>::new()],
                "{query}"
            );
        }
    }

    #[test]
    fn comma_separated_and_repeated_values_are_joined_and_trimmed() {
        for (query, expected) in [
            ("userIds=a,b", &["a", "b"][..]),
            ("userIds=%20a%20,,b+,", &["a", "b"]),
            ("userIds=a%2Cb", &["a", "b"]),
            ("userIds=a,b&userIds=c", &["a", "b", "c"]),
            ("userIds%5B%5D=a&userIds%5b%5d=b", &["a", "b"]),
            ("userIds%5B0%5D=a&userIds%5B12%5D=b,c", &["a", "b", "c"]),
            (
                "userIds=0190F6C2-AAAA-7BBB-8CCC-123456789ABC",
                &["0190F6C2-AAAA-7BBB-8CCC-123456789ABC"],
            ),
        ] {
            assert_eq!(lists(query, &["userIds"])[0], expected, "{query}");
        }
    }

    mod fuzz {
        use proptest::prelude::*;

        use super::*;
        use crate::fuzz::config;

        fn encoded(text: &str) -> String {
            form_urlencoded::byte_serialize(text.as_bytes()).collect()
        }

        proptest! {
            #![proptest_config(config(2_000))]

            #[test]
            fn fuzz_any_query_gives_trimmed_non_empty_values(query in "\\PC{0,200}") {
                let parsed = parse_query(&query, &["userIds"], true);
                for value in parsed.map(|(filters, _)| filters.0).unwrap_or_default().concat() {
                    prop_assert!(!value.is_empty());
                    prop_assert_eq!(value.trim(), value.as_str());
                    prop_assert!(!value.contains(','));
                }
            }

            #[test]
            fn fuzz_every_spelling_of_a_list_gives_the_same_values(
                ids in proptest::collection::vec("[^,\\s]{1,12}", 0..20)
            ) {
                let spell = |key: &str| {
                    ids.iter()
                        .map(|id| format!("{key}={}", encoded(id)))
                        .collect::<Vec<_>>()
                        .join("&")
                };
                let comma = format!(
                    "userIds={}",
                    ids.iter().map(|id| encoded(id)).collect::<Vec<_>>().join(",")
                );
                let indexed = ids
                    .iter()
                    .enumerate()
                    .map(|(index, id)| format!("userIds%5B{index}%5D={}", encoded(id)))
                    .collect::<Vec<_>>()
                    .join("&");
                for query in [
                    comma,
                    spell("userIds"),
                    spell("userIds[]"),
                    spell("userIds%5B%5D"),
                    indexed,
                ] {
                    prop_assert_eq!(&lists(&query, &["userIds"])[0], &ids, "{}", query);
                }
            }
        }
    }
}
