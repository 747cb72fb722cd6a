//! `GET /gamification/points?userIds=...` and `POST /gamification/points` (the same filter as
//! a body, `<request><userIds><id>..</id>..</userIds></request>`, for lists longer than a URI
//! holds: up to the core's 10,000 ids; a URI ends at 65,534 bytes, about 1,700 ids).
//!
//! The first result (or error) of the RPC is awaited before answering, so an error status still
//! becomes a proper error response; [`super::stream`] then writes the body as results arrive.

use axum::extract::{RawQuery, State};
use lms_proto::v1::GetPointsRequest;
use tracing::Span;

use super::stream::PointsStream;
use crate::body::Body;
use crate::core_client::{Caller, CoreClient};
use crate::error::GatewayError;
use crate::json::{FromJson, JsonError, JsonObject};
use crate::representation::Answer;
use crate::routes::{NoQuery, unknown_query_parameter};
use crate::xml::{Element, FromXml, XmlError};

/// The `userIds` filter, from any of `userIds=a,b`, `userIds=a&userIds=b`,
/// `userIds[]=a&userIds[]=b` or `userIds[0]=a&userIds[1]=b` (brackets may be percent-encoded).
/// Parts are trimmed; empty parts are dropped, so an empty filter means "every user the caller
/// may see". Any other parameter is refused, naming it: ignoring a misspelt filter would answer
/// every user instead of the few asked for.
pub(crate) fn parse_user_ids(query: Option<&str>) -> Result<Vec<String>, GatewayError> {
    let Some(query) = query else {
        return Ok(Vec::new());
    };
    let mut ids = Vec::new();
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        if !is_user_ids_name(&name) {
            return Err(unknown_query_parameter(&name));
        }
        ids.extend(
            value
                .split(',')
                .map(str::trim)
                .filter(|part| !part.is_empty())
                .map(str::to_owned),
        );
    }
    Ok(ids)
}

/// `userIds`, `userIds[]` or `userIds[N]` (PHP's `http_build_query`, Guzzle, qs).
fn is_user_ids_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("userIds") else {
        return false;
    };
    rest.is_empty()
        || rest
            .strip_prefix('[')
            .and_then(|inner| inner.strip_suffix(']'))
            .is_some_and(|index| index.bytes().all(|byte| byte.is_ascii_digit()))
}

/// The body of `POST /gamification/points`: `userIds` with one `id` per user, or no `userIds`
/// (every user the caller may see). Empty `id` elements are dropped, as empty query parts are.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct PointsFilter(pub(crate) Vec<String>);

impl FromXml for PointsFilter {
    const ROOT: &'static str = "request";

    fn from_root(root: &Element) -> Result<Self, XmlError> {
        let Some(user_ids) = root.single_child("userIds")? else {
            return Ok(Self(Vec::new()));
        };
        let mut ids = Vec::new();
        for id in user_ids.children_named("id") {
            let id = id.text_value()?;
            if !id.is_empty() {
                ids.push(id.to_owned());
            }
        }
        Ok(Self(ids))
    }
}

/// `{"userIds": ["..", ..]}`, or no `userIds` (or `null`): every user the caller may see.
impl FromJson for PointsFilter {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        let ids = object.optional_text_list("userIds")?.unwrap_or_default();
        Ok(Self(ids.into_iter().filter(|id| !id.is_empty()).collect()))
    }
}

#[tracing::instrument(skip_all, fields(filter = tracing::field::Empty))]
pub(crate) async fn get_points(
    State(core): State<CoreClient>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer, GatewayError> {
    let user_ids = parse_user_ids(query.as_deref())?;
    stream_points(core, caller, user_ids).await
}

#[tracing::instrument(skip_all, fields(filter = tracing::field::Empty))]
pub(crate) async fn post_points(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(PointsFilter(user_ids)): Body<PointsFilter>,
) -> Result<Answer, GatewayError> {
    stream_points(core, caller, user_ids).await
}

async fn stream_points(
    core: CoreClient,
    caller: Caller,
    user_ids: Vec<String>,
) -> Result<Answer, GatewayError> {
    Span::current().record("filter", user_ids.len());
    // No grpc-timeout: a long list may take longer than one deadline to stream. The gateway
    // bounds the wait for the first result and for each next one instead.
    let message = GetPointsRequest { user_ids };
    let opened = tokio::time::timeout(
        core.timeout(),
        core.on_a_replica(|mut admin| {
            let request = caller.request(message.clone(), None);
            async move {
                let mut stream = admin.get_points(request).await?.into_inner();
                let first = stream.message().await?;
                Ok::<_, tonic::Status>((stream, first))
            }
        }),
    )
    .await;
    let (stream, first) = match opened {
        Ok(result) => core.settle(result)?,
        Err(_elapsed) => return Err(GatewayError::CoreTimeout),
    };
    Ok(Answer::ok(PointsStream::new(
        stream,
        first,
        core.timeout(),
        core.outage(),
        Span::current(),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(body: &str) -> Result<PointsFilter, XmlError> {
        let root = crate::xml::reader::parse_document(body.as_bytes(), PointsFilter::ROOT)?;
        PointsFilter::from_root(&root)
    }

    #[test]
    fn a_body_filter_lists_its_ids_in_order_and_drops_empty_ones() {
        assert_eq!(
            filter("<request><userIds><id> b </id><id/><id>a</id></userIds></request>").unwrap(),
            PointsFilter(vec!["b".to_owned(), "a".to_owned()])
        );
        assert_eq!(filter("<request/>").unwrap(), PointsFilter(Vec::new()));
        assert!(filter("<request><userIds/><userIds/></request>").is_err());
    }

    mod fuzz {
        use proptest::prelude::*;

        use super::super::parse_user_ids;
        use crate::fuzz::config;

        fn encoded(text: &str) -> String {
            form_urlencoded::byte_serialize(text.as_bytes()).collect()
        }

        proptest! {
            #![proptest_config(config(2_000))]

            #[test]
            fn fuzz_any_query_gives_trimmed_non_empty_ids(query in "\\PC{0,200}") {
                for id in parse_user_ids(Some(&query)).unwrap_or_default() {
                    prop_assert!(!id.is_empty());
                    prop_assert_eq!(id.trim(), id.as_str());
                    prop_assert!(!id.contains(','));
                }
            }

            #[test]
            fn fuzz_every_spelling_of_a_list_gives_the_same_ids(
                ids in proptest::collection::vec("[^,\\s]{1,12}", 0..20)
            ) {
                let comma = format!(
                    "userIds={}",
                    ids.iter().map(|id| encoded(id)).collect::<Vec<_>>().join(",")
                );
                let spell = |key: &str| {
                    ids.iter()
                        .map(|id| format!("{key}={}", encoded(id)))
                        .collect::<Vec<_>>()
                        .join("&")
                };
                let expected = if ids.is_empty() { Vec::new() } else { ids.clone() };
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
                    prop_assert_eq!(
                        parse_user_ids(Some(&query)).unwrap(),
                        expected.clone(),
                        "{}",
                        query
                    );
                }
            }
        }
    }

    fn ids(query: &str) -> Vec<String> {
        parse_user_ids(Some(query)).unwrap()
    }

    #[test]
    fn no_query_or_no_user_ids_means_no_filter() {
        assert!(parse_user_ids(None).unwrap().is_empty());
        assert!(ids("").is_empty());
        assert!(ids("userIds=").is_empty());
        assert!(ids("userIds=,%20,").is_empty());
    }

    #[test]
    fn comma_separated_ids_are_split_and_trimmed() {
        assert_eq!(ids("userIds=a,b"), ["a", "b"]);
        assert_eq!(ids("userIds=%20a%20,,b+,"), ["a", "b"]);
        assert_eq!(ids("userIds=a%2Cb"), ["a", "b"]);
    }

    #[test]
    fn repeated_parameters_are_joined() {
        assert_eq!(ids("userIds=a&userIds=b"), ["a", "b"]);
        assert_eq!(ids("userIds=a,b&userIds=c"), ["a", "b", "c"]);
    }

    #[test]
    fn bracketed_parameters_plain_or_percent_encoded_are_accepted() {
        assert_eq!(ids("userIds[]=a&userIds[]=b"), ["a", "b"]);
        assert_eq!(ids("userIds%5B%5D=a&userIds%5b%5d=b"), ["a", "b"]);
        assert_eq!(ids("userIds[]=a&userIds=b,c"), ["a", "b", "c"]);
    }

    #[test]
    fn indexed_parameters_are_accepted() {
        assert_eq!(ids("userIds[0]=a&userIds[1]=b"), ["a", "b"]);
        assert_eq!(ids("userIds%5B0%5D=a&userIds%5B12%5D=b,c"), ["a", "b", "c"]);
    }

    #[test]
    fn any_other_parameter_is_refused_naming_it() {
        for (query, name) in [
            ("userids=a", "userids"),
            ("UserIds=b", "UserIds"),
            ("userIds=a&userId=d", "userId"),
            ("userIds[x]=a", "userIds[x]"),
            ("userIds[0][1]=a", "userIds[0][1]"),
            ("other=1", "other"),
        ] {
            let error = parse_user_ids(Some(query)).unwrap_err();
            assert!(
                matches!(&error, GatewayError::BadRequest(message) if message.contains(&format!("\"{name}\""))),
                "{query}: {error:?}"
            );
        }
    }

    #[test]
    fn upper_case_uuids_are_passed_on_as_given() {
        assert_eq!(
            ids("userIds=0190F6C2-AAAA-7BBB-8CCC-123456789ABC"),
            ["0190F6C2-AAAA-7BBB-8CCC-123456789ABC"]
        );
    }
}
