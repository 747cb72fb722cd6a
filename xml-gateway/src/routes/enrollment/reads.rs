//! `GET /enrollment` (every enrollment the caller may see), `GET /enrollments` and
//! `POST /enrollments` (one page), each optionally narrowed by `learnerIds`, `courseIds` and
//! `enrollmentIds` (neighbours.md sections 5.2 and 5.3).

use axum::extract::{RawQuery, State};
use lms_proto::v1::{ListEnrollmentsRequest, PageRequest};

use super::render::{EnrollmentList, EnrollmentPage};
use crate::body::Body;
use crate::core_client::{Caller, CoreClient};
use crate::error::GatewayError;
use crate::json::{FromJson, JsonError, JsonObject};
use crate::representation::Answer;
use crate::routes::NoQuery;
use crate::routes::paging::parse_listing;
use crate::xml::{Element, FromXml, XmlError};

const LISTS: [&str; 3] = ["learnerIds", "courseIds", "enrollmentIds"];

/// The listing's filters and page as the core takes them.
fn request(page: Option<PageRequest>, lists: Vec<Vec<String>>) -> ListEnrollmentsRequest {
    let [learner_ids, course_ids, enrollment_ids]: [Vec<String>; 3] =
        lists.try_into().unwrap_or_default();
    ListEnrollmentsRequest {
        page,
        learner_ids,
        course_ids,
        enrollment_ids,
    }
}

async fn list(
    core: &CoreClient,
    caller: &Caller,
    message: ListEnrollmentsRequest,
) -> Result<lms_proto::v1::ListEnrollmentsResponse, GatewayError> {
    core.unary(caller, message, |mut admin, request| async move {
        admin.list_enrollments(request).await
    })
    .await
}

/// `<response><enrollment/>…</response>` or a top-level JSON array.
#[tracing::instrument(skip_all)]
pub(crate) async fn list_enrollments(
    State(core): State<CoreClient>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer, GatewayError> {
    let (_, lists) = parse_listing(query.as_deref().unwrap_or_default(), &LISTS, false)?;
    let answer = list(&core, &caller, request(None, lists)).await?;
    Ok(Answer::ok(EnrollmentList(answer.enrollments)))
}

/// `<response><enrollments>…</enrollments><nextPageToken/></response>` or
/// `{"enrollments":[…],"nextPageToken":"…"}`, the token only while more pages follow.
#[tracing::instrument(skip_all)]
pub(crate) async fn page_enrollments(
    State(core): State<CoreClient>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer, GatewayError> {
    let (page, lists) = parse_listing(query.as_deref().unwrap_or_default(), &LISTS, true)?;
    let answer = list(&core, &caller, request(Some(page), lists)).await?;
    Ok(Answer::ok(EnrollmentPage {
        enrollments: answer.enrollments,
        next_page_token: answer.next_page_token,
    }))
}

/// The same page asked in a body, for id lists longer than a URI holds.
#[tracing::instrument(skip_all)]
pub(crate) async fn page_enrollments_by_post(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(query): Body<EnrollmentQuery>,
) -> Result<Answer, GatewayError> {
    let page = PageRequest {
        page_size: parse_page_size(query.page_size.as_deref())?,
        page_token: query.page_token.unwrap_or_default(),
    };
    let message = ListEnrollmentsRequest {
        page: Some(page),
        learner_ids: query.learner_ids,
        course_ids: query.course_ids,
        enrollment_ids: query.enrollment_ids,
    };
    let answer = list(&core, &caller, message).await?;
    Ok(Answer::ok(EnrollmentPage {
        enrollments: answer.enrollments,
        next_page_token: answer.next_page_token,
    }))
}

/// A body's `pageSize`: empty or absent means the default.
pub(crate) fn parse_page_size(text: Option<&str>) -> Result<Option<u64>, GatewayError> {
    match text.map(str::trim) {
        None | Some("") => Ok(None),
        Some(text) => text.parse::<u64>().map(Some).map_err(|_| {
            GatewayError::BadRequest(format!(
                "pageSize must be a whole number; got \"{}\".",
                crate::clip::clip(text)
            ))
        }),
    }
}

/// `<request>` with optional `pageSize`, `pageToken` and the id lists
/// (`<learnerIds><id>…</id></learnerIds>`).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct EnrollmentQuery {
    pub(crate) page_size: Option<String>,
    pub(crate) page_token: Option<String>,
    pub(crate) learner_ids: Vec<String>,
    pub(crate) course_ids: Vec<String>,
    pub(crate) enrollment_ids: Vec<String>,
}

/// The `<id>` texts of the list `name`, none when absent.
pub(crate) fn xml_ids(root: &Element, name: &str) -> Result<Vec<String>, XmlError> {
    let Some(list) = root.single_child(name)? else {
        return Ok(Vec::new());
    };
    list.children_named("id")
        .map(|id| id.text_value().map(str::to_owned))
        .filter(|id| id.as_ref().map_or(true, |id| !id.is_empty()))
        .collect()
}

impl FromXml for EnrollmentQuery {
    const ROOT: &'static str = "request";

    fn from_root(root: &Element) -> Result<Self, XmlError> {
        Ok(Self {
            page_size: root.optional_text("pageSize")?,
            page_token: root.optional_text("pageToken")?,
            learner_ids: xml_ids(root, "learnerIds")?,
            course_ids: xml_ids(root, "courseIds")?,
            enrollment_ids: xml_ids(root, "enrollmentIds")?,
        })
    }
}

impl FromJson for EnrollmentQuery {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        let list = |name| {
            object
                .optional_text_list(name)
                .map(Option::unwrap_or_default)
        };
        Ok(Self {
            page_size: object.optional_text("pageSize")?,
            page_token: object.optional_text("pageToken")?,
            learner_ids: list("learnerIds")?,
            course_ids: list("courseIds")?,
            enrollment_ids: list("enrollmentIds")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xml::reader::parse_document;

    #[test]
    fn a_body_query_reads_page_and_lists() {
        let root = parse_document(
            b"<request><pageSize>2</pageSize><pageToken/><learnerIds><id> a </id><id/></learnerIds>\
              <courseIds><id>c</id></courseIds></request>",
            "request",
        )
        .unwrap();
        let query = EnrollmentQuery::from_root(&root).unwrap();
        assert_eq!(
            query,
            EnrollmentQuery {
                page_size: Some("2".into()),
                page_token: Some(String::new()),
                learner_ids: vec!["a".into()],
                course_ids: vec!["c".into()],
                enrollment_ids: vec![],
            }
        );
    }

    #[test]
    fn a_body_page_size_must_be_a_whole_number() {
        assert_eq!(parse_page_size(Some(" ")).unwrap(), None);
        assert_eq!(parse_page_size(Some("7")).unwrap(), Some(7));
        assert!(parse_page_size(Some("x")).is_err());
    }
}
