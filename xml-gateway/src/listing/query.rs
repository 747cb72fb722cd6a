//! A list's query string: its filters, each in any of the spellings clients use
//! (`name=a,b`, repeated `name=a&name=b`, `name[]=a` or `name[0]=a`, brackets plain or
//! percent-encoded), its date windows (`name[startDate]`, `name[endDate]`, either alone), and
//! on a paged list `pageSize` and `pageToken`, passed to the core as they are. The core owns
//! the page rules (default and range of `pageSize`), the token format and what a date bound
//! may be; here a token and a bound are opaque strings. Any other parameter is refused naming
//! it: a misspelt filter must not widen the answer (contract section 8).

use lms_proto::v1::PageRequest;

use super::{Filters, Window};
use crate::clip::clip;
use crate::error::GatewayError;
use crate::routes::unknown_query_parameter;

/// What a list's query may hold besides its page.
#[derive(Debug, Clone, Copy)]
pub(crate) struct QueryShape<'a> {
    pub(crate) lists: &'a [&'a str],
    pub(crate) windows: &'a [&'a str],
    pub(crate) paged: bool,
}

impl QueryShape<'static> {
    /// The query of listing `L`'s pages (`paged`) or whole list.
    pub(crate) fn of<L: super::Listing>(paged: bool) -> Self {
        Self {
            lists: L::FILTERS,
            windows: L::WINDOWS,
            paged,
        }
    }
}

/// The filters and windows `shape` names of `query` and, when paged, its page (the first
/// page at the default size when neither is given). Empty values are dropped: an empty bound
/// or list value counts as absent.
pub(crate) fn parse_query(
    query: &str,
    shape: QueryShape<'_>,
) -> Result<(Filters, PageRequest), GatewayError> {
    let (mut size, mut token) = (None, None);
    let mut filters = Filters::of(shape.lists.len(), shape.windows.len());
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        if let Some(filter) = shape
            .lists
            .iter()
            .position(|list| is_list_name(&name, list))
        {
            filters.lists[filter].extend(split_values(&value));
            continue;
        }
        if let Some((window, bound)) = window_bound(&name, shape.windows) {
            if !value.is_empty() {
                let window = &mut filters.windows[window];
                set_once(&name, bound.of(window), bound_value(&value))?;
            }
            continue;
        }
        let slot = match name.as_ref() {
            "pageSize" if shape.paged => &mut size,
            "pageToken" if shape.paged => &mut token,
            other => return Err(unknown_query_parameter(other)),
        };
        set_once(&name, slot, value.into_owned())?;
    }
    Ok((filters, page_request(size.as_deref(), token.as_deref())?))
}

/// A write's fields given in the query string rather than a body (iSpring's own samples send
/// them so): each of `lists` in every list spelling, `None` when not given; each of `singles`
/// at most once, an empty value counting as absent. Anything else is refused naming it.
pub(crate) fn parse_fields(
    query: &str,
    lists: &[&str],
    singles: &[&str],
) -> Result<QueryFields, GatewayError> {
    let mut fields = QueryFields {
        lists: vec![None; lists.len()],
        singles: vec![None; singles.len()],
    };
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        if let Some(list) = lists.iter().position(|list| is_list_name(&name, list)) {
            fields.lists[list]
                .get_or_insert_with(Vec::new)
                .extend(split_values(&value));
        } else if let Some(single) = singles.iter().position(|single| *single == name) {
            if !value.is_empty() {
                set_once(&name, &mut fields.singles[single], value.into_owned())?;
            }
        } else {
            return Err(unknown_query_parameter(&name));
        }
    }
    Ok(fields)
}

/// The fields [`parse_fields`] read, in the order it was asked for them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct QueryFields {
    pub(crate) lists: Vec<Option<Vec<String>>>,
    pub(crate) singles: Vec<Option<String>>,
}

/// Puts `value` in `slot`, which must be empty: a single-valued parameter given twice is
/// refused naming it, since which one was meant cannot be known.
fn set_once(name: &str, slot: &mut Option<String>, value: String) -> Result<(), GatewayError> {
    match slot.replace(value) {
        None => Ok(()),
        Some(_) => Err(GatewayError::BadRequest(format!(
            "Query parameter \"{}\" is given more than once.",
            clip(name)
        ))),
    }
}

/// One side of a date window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    Start,
    End,
}

impl Bound {
    fn of(self, window: &mut Window) -> &mut Option<String> {
        match self {
            Self::Start => &mut window.start,
            Self::End => &mut window.end,
        }
    }
}

/// Which window and side `name` is: `accessDate[startDate]` or `accessDate[endDate]` of a
/// window named in `windows`. Any other key (`accessDate[from]`, a bare `accessDate`) is
/// not a bound, and so an unknown parameter.
fn window_bound(name: &str, windows: &[&str]) -> Option<(usize, Bound)> {
    let (window, key) = name.strip_suffix(']')?.split_once('[')?;
    let bound = match key {
        "startDate" => Bound::Start,
        "endDate" => Bound::End,
        _ => return None,
    };
    Some((windows.iter().position(|known| *known == window)?, bound))
}

/// A bound as the core reads it. An unencoded `+` before an offset
/// (`2025-02-01T12:30:00+02:00`) arrives as a space, as form decoding reads `+`: a space
/// followed by nothing but `HH:MM` is that `+`.
fn bound_value(value: &str) -> String {
    match value.rsplit_once(' ') {
        Some((date_time, offset)) if date_time.contains(':') && is_offset_digits(offset) => {
            format!("{date_time}+{offset}")
        }
        _ => value.to_owned(),
    }
}

/// `HH:MM`, `HHMM` or `HH`: the digits of a numeric UTC offset after its sign.
fn is_offset_digits(text: &str) -> bool {
    let digits = text.replacen(':', "", 1);
    matches!(digits.len(), 2 | 4)
        && digits.bytes().all(|byte| byte.is_ascii_digit())
        && (text.len() == digits.len() || text.find(':') == Some(2))
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

    fn shape<'a>(lists: &'a [&'a str], paged: bool) -> QueryShape<'a> {
        QueryShape {
            lists,
            windows: &[],
            paged,
        }
    }

    fn page(query: &str) -> Result<PageRequest, GatewayError> {
        parse_query(query, shape(&[], true)).map(|(_, page)| page)
    }

    fn lists(query: &str, names: &[&str]) -> Vec<Vec<String>> {
        parse_query(query, shape(names, false)).unwrap().0.lists
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
            shape(&ENROLLMENT_FILTERS, true),
        )
        .unwrap();
        assert_eq!(page.page_size, Some(2));
        assert_eq!(filters.lists, [vec!["a", "b"], vec!["c", "d", "e"], vec![]]);
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
            let message = refusal(parse_query(query, shape(&["learnerIds"], false)));
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
            let message = refusal(parse_query(query, shape(&["userIds"], true)));
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

    const WINDOWS: [&str; 2] = ["accessDate", "completionDate"];

    fn windows(query: &str) -> Result<Vec<Window>, GatewayError> {
        let shape = QueryShape {
            lists: &["userIds"],
            windows: &WINDOWS,
            paged: true,
        };
        parse_query(query, shape).map(|(filters, _)| filters.windows)
    }

    fn window(start: Option<&str>, end: Option<&str>) -> Window {
        Window {
            start: start.map(str::to_owned),
            end: end.map(str::to_owned),
        }
    }

    #[test]
    fn window_bounds_are_read_with_brackets_plain_or_encoded_and_either_alone() {
        assert_eq!(
            windows(
                "accessDate[startDate]=2025-01-01&completionDate%5BendDate%5D=2025-02-01T12:30:00Z\
                 &userIds=u&pageSize=5"
            )
            .unwrap(),
            [
                window(Some("2025-01-01"), None),
                window(None, Some("2025-02-01T12:30:00Z"))
            ]
        );
        assert_eq!(
            windows("accessDate%5bstartDate%5d=a&accessDate[endDate]=b").unwrap()[0],
            window(Some("a"), Some("b"))
        );
    }

    #[test]
    fn an_empty_bound_counts_as_absent_even_beside_a_given_one() {
        assert_eq!(
            windows("accessDate[startDate]=&completionDate[endDate]=").unwrap(),
            [Window::default(), Window::default()]
        );
        assert_eq!(
            windows("accessDate[endDate]=&accessDate[endDate]=2025-01-01").unwrap()[0],
            window(None, Some("2025-01-01"))
        );
        assert!(Window::default().is_open());
    }

    #[test]
    fn a_plus_before_an_offset_read_as_a_space_is_a_plus_again() {
        for (query, expected) in [
            ("2025-02-01T12:30:00+02:00", "2025-02-01T12:30:00+02:00"),
            ("2025-02-01T12:30:00%2B02:00", "2025-02-01T12:30:00+02:00"),
            ("2025-02-01T12:30:00%2002:00", "2025-02-01T12:30:00+02:00"),
            (
                "2025-02-01T12:30:00.250+0530",
                "2025-02-01T12:30:00.250+0530",
            ),
            ("2025-02-01T12:30:00-02:00", "2025-02-01T12:30:00-02:00"),
            ("2025-02-01", "2025-02-01"),
            ("2025-02-01+12:30:00", "2025-02-01 12:30:00"),
            ("2025-02-01T12:30:00+2:00", "2025-02-01T12:30:00 2:00"),
        ] {
            assert_eq!(
                windows(&format!("accessDate[startDate]={query}")).unwrap()[0]
                    .start
                    .as_deref(),
                Some(expected),
                "{query}"
            );
        }
    }

    #[test]
    fn a_bound_given_twice_is_refused_naming_it() {
        for query in [
            "accessDate[startDate]=a&accessDate[startDate]=b",
            "accessDate[startDate]=a&accessDate%5BstartDate%5D=a",
        ] {
            let message = refusal(windows(query));
            assert!(
                message.contains("\"accessDate[startDate]\" is given more than once"),
                "{query}: {message}"
            );
        }
    }

    #[test]
    fn a_window_without_a_known_key_is_an_unknown_parameter() {
        for (query, name) in [
            ("accessDate=2025-01-01", "accessDate"),
            ("accessDate[from]=2025-01-01", "accessDate[from]"),
            ("accessDate[]=2025-01-01", "accessDate[]"),
            ("accessDate[0]=2025-01-01", "accessDate[0]"),
            ("accessDate[startdate]=2025-01-01", "accessDate[startdate]"),
            (
                "accessDate[startDate][x]=2025-01-01",
                "accessDate[startDate][x]",
            ),
            ("dueDate[startDate]=2025-01-01", "dueDate[startDate]"),
            ("userIds[startDate]=a", "userIds[startDate]"),
        ] {
            let message = refusal(windows(query));
            assert!(
                message.contains(&format!("\"{name}\" is not known")),
                "{query}: {message}"
            );
        }
    }

    #[test]
    fn write_fields_in_the_query_are_read_in_every_list_spelling_and_once_each() {
        let fields = parse_fields(
            "courseId=c&enrollmentIds[]=a&enrollmentIds%5B1%5D=b,c&status=passed&date=",
            &["enrollmentIds", "contentItemIds"],
            &["courseId", "status", "date"],
        )
        .unwrap();
        assert_eq!(
            fields.lists,
            [Some(vec!["a".into(), "b".into(), "c".into()]), None]
        );
        assert_eq!(
            fields.singles,
            [Some("c".into()), Some("passed".into()), None]
        );
        let given_empty = parse_fields("enrollmentIds=", &["enrollmentIds"], &[]).unwrap();
        assert_eq!(given_empty.lists, [Some(vec![])]);
        for (query, needle) in [
            (
                "courseId=a&courseId=b",
                "\"courseId\" is given more than once",
            ),
            ("courseid=a", "\"courseid\" is not known"),
            ("pageSize=1", "\"pageSize\" is not known"),
        ] {
            let message = refusal(parse_fields(query, &["enrollmentIds"], &["courseId"]));
            assert!(message.contains(needle), "{query}: {message}");
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
                let parsed = parse_query(&query, shape(&["userIds"], true));
                for value in parsed.map(|(filters, _)| filters.lists).unwrap_or_default().concat() {
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
