//! Recording (results.md section 6): `POST /statistics/course` (an administrator sets the
//! status of named results) and `DELETE /statistics/module` (named results start over), each
//! answered with the id of its task, already complete; `GET /task/{taskId}/status`.
//!
//! The fields of `POST /statistics/course` come in an XML or JSON body, or, when the body is
//! empty, in the query string (iSpring's own sample sends them so); never both. Fields go to
//! the core as given, a missing one as empty, for the core to name; only `awardedScore`,
//! which travels as a number, is read here. What the gateway refuses itself (a malformed body,
//! an unknown parameter, a score that is not a number, a task id that is not one) is still
//! answered 403 first to a caller who may not make the call at all.

use axum::extract::{RawQuery, State};
use lms_proto::v1::{
    GetTaskStatusRequest, ResetModuleStatisticsRequest, UpdateCourseStatusRequest,
};

use crate::body::{BodyRejection, MaybeBody};
use crate::clip::clip;
use crate::core_client::{Caller, CoreClient};
use crate::error::GatewayError;
use crate::json::{FromJson, JsonError, JsonObject};
use crate::listing::{Admin, QueryFields, parse_fields, xml_list};
use crate::representation::{Answer, Document, push_json};
use crate::routes::{NoQuery, PathId, permission_first};
use crate::xml::writer::XmlWriter;
use crate::xml::{Element, FromXml, XmlError};

/// The fields of `POST /statistics/course`, as given.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct CourseStatus {
    course_id: Option<String>,
    enrollment_ids: Option<Vec<String>>,
    status: Option<String>,
    date: Option<String>,
    awarded_score: Option<String>,
    reason: Option<String>,
}

/// The list field, then the single fields of `POST /statistics/course` in the order
/// [`CourseStatus::from_query`] reads them.
const COURSE_STATUS_LISTS: [&str; 1] = ["enrollmentIds"];
const COURSE_STATUS_SINGLES: [&str; 5] = ["courseId", "status", "date", "awardedScore", "reason"];

impl CourseStatus {
    fn from_query(query: &str) -> Result<Self, GatewayError> {
        let QueryFields { lists, singles } =
            parse_fields(query, &COURSE_STATUS_LISTS, &COURSE_STATUS_SINGLES)?;
        let [enrollment_ids] = <[_; 1]>::try_from(lists).unwrap_or_default();
        let [course_id, status, date, awarded_score, reason] =
            <[_; 5]>::try_from(singles).unwrap_or_default();
        Ok(Self {
            course_id,
            enrollment_ids,
            status,
            date,
            awarded_score,
            reason,
        })
    }

    fn into_request(self) -> Result<UpdateCourseStatusRequest, GatewayError> {
        Ok(UpdateCourseStatusRequest {
            course_id: self.course_id.unwrap_or_default(),
            enrollment_ids: self.enrollment_ids.unwrap_or_default(),
            status: self.status.unwrap_or_default(),
            date: self.date,
            reason: self.reason,
            awarded_score: self.awarded_score.as_deref().map(score).transpose()?,
        })
    }
}

/// `<request><courseId/><enrollmentIds><id/>…</enrollmentIds><status/><date/><awardedScore/>
/// <reason/></request>`
impl FromXml for CourseStatus {
    const ROOT: &'static str = "request";

    fn from_root(root: &Element) -> Result<Self, XmlError> {
        Ok(Self {
            course_id: root.optional_text("courseId")?,
            enrollment_ids: xml_list(root, "enrollmentIds")?,
            status: root.optional_text("status")?,
            date: root.optional_text("date")?,
            awarded_score: root.optional_text("awardedScore")?,
            reason: root.optional_text("reason")?,
        })
    }
}

/// The same keys; `awardedScore` a number or a string holding one.
impl FromJson for CourseStatus {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        Ok(Self {
            course_id: object.optional_text("courseId")?,
            enrollment_ids: object.optional_text_list("enrollmentIds")?,
            status: object.optional_text("status")?,
            date: object.optional_text("date")?,
            awarded_score: object.optional_text("awardedScore")?,
            reason: object.optional_text("reason")?,
        })
    }
}

/// `awardedScore` as the number it travels as: decimal digits with an optional sign and
/// fraction (the core judges the range and rounds). Exponents, `NaN` and `inf`, which a float
/// parser would take, are not scores.
fn score(text: &str) -> Result<f64, GatewayError> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, "0"));
    let decimal = !whole.is_empty()
        && !fraction.is_empty()
        && whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit());
    decimal
        .then(|| text.parse::<f64>().ok())
        .flatten()
        .ok_or_else(|| {
            GatewayError::BadRequest(format!(
                "awardedScore must be a number from 0 to 100; got \"{}\".",
                clip(text)
            ))
        })
}

#[tracing::instrument(skip_all)]
pub(crate) async fn set_course_status(
    State(core): State<CoreClient>,
    caller: Caller,
    RawQuery(query): RawQuery,
    body: Result<MaybeBody<CourseStatus>, BodyRejection>,
) -> Result<Answer, GatewayError> {
    let call = |mut admin: Admin, request| async move { admin.update_course_status(request).await };
    let request = match course_status(query.as_deref().unwrap_or_default(), body) {
        Ok(request) => request,
        Err(refusal) => {
            let probe = core.unary(&caller, UpdateCourseStatusRequest::default(), call);
            return Err(permission_first(refusal, probe).await);
        }
    };
    let answer = core.unary(&caller, request, call).await?;
    Ok(Answer::ok(TaskId(answer.task_id)))
}

/// The request a status change asks for: from the body, or from the query string when the
/// body is empty.
fn course_status(
    query: &str,
    body: Result<MaybeBody<CourseStatus>, BodyRejection>,
) -> Result<UpdateCourseStatusRequest, GatewayError> {
    let fields = match body? {
        MaybeBody(None) => CourseStatus::from_query(query)?,
        MaybeBody(Some(fields)) => {
            if let Some((name, _)) = form_urlencoded::parse(query.as_bytes()).next() {
                return Err(GatewayError::BadRequest(format!(
                    "Query parameter \"{}\" cannot be given beside a request body: send every \
                     field in the body, or every field in the query string with an empty body.",
                    clip(&name)
                )));
            }
            fields
        }
    };
    fields.into_request()
}

/// `DELETE /statistics/module?courseId=…&enrollmentIds[]=…&contentItemIds[]=…`
#[tracing::instrument(skip_all)]
pub(crate) async fn reset_module_statistics(
    State(core): State<CoreClient>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer, GatewayError> {
    let call =
        |mut admin: Admin, request| async move { admin.reset_module_statistics(request).await };
    let message = match reset_request(query.as_deref().unwrap_or_default()) {
        Ok(message) => message,
        Err(refusal) => {
            let probe = core.unary(&caller, ResetModuleStatisticsRequest::default(), call);
            return Err(permission_first(refusal, probe).await);
        }
    };
    let answer = core.unary(&caller, message, call).await?;
    Ok(Answer::ok(TaskId(answer.task_id)))
}

fn reset_request(query: &str) -> Result<ResetModuleStatisticsRequest, GatewayError> {
    let QueryFields { lists, singles } =
        parse_fields(query, &["enrollmentIds", "contentItemIds"], &["courseId"])?;
    let [enrollment_ids, content_item_ids] = <[_; 2]>::try_from(lists).unwrap_or_default();
    let [course_id] = <[_; 1]>::try_from(singles).unwrap_or_default();
    Ok(ResetModuleStatisticsRequest {
        course_id: course_id.unwrap_or_default(),
        enrollment_ids: enrollment_ids.unwrap_or_default(),
        content_item_ids: content_item_ids.unwrap_or_default(),
    })
}

/// Task ids are positive integers below 2^53 (results.md section 6), so that JSON numbers
/// carry them exactly.
const TASK_ID_LIMIT: u64 = 1 << 53;

#[tracing::instrument(skip_all, fields(task_id = %task_id))]
pub(crate) async fn task_status(
    State(core): State<CoreClient>,
    caller: Caller,
    query: Result<NoQuery, GatewayError>,
    PathId(task_id): PathId,
) -> Result<Answer, GatewayError> {
    let call = |mut admin: Admin, request| async move { admin.get_task_status(request).await };
    let task_id = match query.and_then(|_| task_id_of(&task_id)) {
        Ok(task_id) => task_id,
        Err(refusal) => {
            // No task has id 0: the core refuses it for want of the right, or finds nothing.
            let probe = core.unary(&caller, GetTaskStatusRequest { task_id: 0 }, call);
            return Err(permission_first(refusal, probe).await);
        }
    };
    let answer = core
        .unary(&caller, GetTaskStatusRequest { task_id }, call)
        .await?;
    Ok(Answer::ok(TaskStatus(answer.status)))
}

/// A task id of the path: anything but a positive integer below 2^53 in plain decimal names
/// no task (404, as an unknown one does).
fn task_id_of(text: &str) -> Result<u64, GatewayError> {
    text.bytes()
        .all(|byte| byte.is_ascii_digit())
        .then(|| text.parse::<u64>().ok())
        .flatten()
        .filter(|id| (1..TASK_ID_LIMIT).contains(id))
        .ok_or_else(|| {
            GatewayError::NotFound(format!(
                "Task \"{}\" not found: a task id is a positive whole number.",
                clip(text)
            ))
        })
}

/// `<response><taskId>1234</taskId></response>`, or `{"taskId":1234}`.
struct TaskId(u64);

impl Document for TaskId {
    fn write_xml(&self, xml: &mut XmlWriter) {
        xml.text_element("taskId", &self.0.to_string());
    }

    fn to_json(&self) -> String {
        let mut out = String::new();
        push_json(&mut out, &serde_json::json!({ "taskId": self.0 }));
        out
    }
}

/// `<response><status>complete</status></response>`, or `{"status":"complete"}`.
struct TaskStatus(String);

impl Document for TaskStatus {
    fn write_xml(&self, xml: &mut XmlWriter) {
        xml.text_element("status", &self.0);
    }

    fn to_json(&self) -> String {
        let mut out = String::new();
        push_json(&mut out, &serde_json::json!({ "status": self.0 }));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse_json;
    use crate::xml::reader::parse_document;

    fn xml(body: &str) -> Result<CourseStatus, XmlError> {
        CourseStatus::from_root(&parse_document(body.as_bytes(), CourseStatus::ROOT)?)
    }

    fn message(result: Result<impl std::fmt::Debug, GatewayError>) -> String {
        match result.unwrap_err() {
            GatewayError::BadRequest(message) | GatewayError::NotFound(message) => message,
            other => panic!("{other:?}"),
        }
    }

    fn expected(score: Option<f64>) -> UpdateCourseStatusRequest {
        UpdateCourseStatusRequest {
            course_id: "c".into(),
            enrollment_ids: vec!["e1".into(), "e2".into()],
            status: "passed".into(),
            date: Some("2025-12-31".into()),
            reason: Some("Offline exam".into()),
            awarded_score: score,
        }
    }

    #[test]
    fn the_three_forms_of_a_status_change_read_alike() {
        let from_xml = xml(
            "<request><courseId> c </courseId><enrollmentIds><id>e1</id><id>e2</id></enrollmentIds>\
             <status>passed</status><date>2025-12-31</date><awardedScore>80</awardedScore>\
             <reason>Offline exam</reason></request>",
        )
        .unwrap();
        let from_json: CourseStatus = parse_json(
            br#"{"request":{"courseId":"c","enrollmentIds":["e1","e2"],"status":"passed","date":"2025-12-31","awardedScore":80,"reason":"Offline exam"}}"#,
        )
        .unwrap();
        let from_query = CourseStatus::from_query(
            "courseId=c&enrollmentIds[]=e1&enrollmentIds[]=e2&status=passed&date=2025-12-31\
             &awardedScore=80&reason=Offline+exam",
        )
        .unwrap();
        for fields in [from_xml, from_json, from_query] {
            assert_eq!(fields.into_request().unwrap(), expected(Some(80.0)));
        }
    }

    #[test]
    fn missing_fields_reach_the_core_empty_for_it_to_name() {
        let request = CourseStatus::from_query("")
            .unwrap()
            .into_request()
            .unwrap();
        assert_eq!(request, UpdateCourseStatusRequest::default());
        let request = parse_json::<CourseStatus>(br#"{"awardedScore":null,"date":null}"#)
            .unwrap()
            .into_request()
            .unwrap();
        assert_eq!(request, UpdateCourseStatusRequest::default());
    }

    #[test]
    fn a_score_is_a_plain_decimal_given_as_a_number_or_text() {
        for (text, value) in [
            ("80", 80.0),
            ("92.5", 92.5),
            ("-1", -1.0),
            ("100.004", 100.004),
        ] {
            assert_eq!(score(text).unwrap(), value, "{text}");
        }
        let from_json: CourseStatus = parse_json(br#"{"awardedScore":"92.5"}"#).unwrap();
        assert_eq!(from_json.into_request().unwrap().awarded_score, Some(92.5));
        for text in [
            "", "abc", "1e2", "NaN", "inf", ".5", "5.", "+5", "8 0", "0x10",
        ] {
            assert!(
                message(score(text)).starts_with("awardedScore must be a number"),
                "{text}"
            );
        }
    }

    #[test]
    fn unknown_and_repeated_query_fields_are_refused_naming_them() {
        assert!(message(CourseStatus::from_query("courseID=c")).contains("\"courseID\""));
        assert!(
            message(CourseStatus::from_query("status=passed&status=failed"))
                .contains("\"status\" is given more than once")
        );
    }

    #[test]
    fn task_ids_are_positive_integers_below_two_to_the_53() {
        assert_eq!(task_id_of("1").unwrap(), 1);
        assert_eq!(task_id_of("9007199254740991").unwrap(), (1 << 53) - 1);
        for text in [
            "0",
            "-1",
            "+1",
            "1.0",
            "abc",
            "",
            "9007199254740992",
            "01x",
            " 1",
        ] {
            assert!(message(task_id_of(text)).contains("not found"), "{text}");
        }
    }

    #[tokio::test]
    async fn a_task_is_written_as_a_number_and_its_status_as_text() {
        use crate::representation::{Format, Representation};
        use http_body_util::BodyExt as _;
        async fn text(document: impl Document, format: Format) -> String {
            let body = Box::new(document).into_body(format);
            String::from_utf8(body.collect().await.unwrap().to_bytes().to_vec()).unwrap()
        }
        assert_eq!(
            text(TaskId(1234), Format::Xml).await,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response><taskId>1234</taskId></response>"
        );
        assert_eq!(text(TaskId(1234), Format::Json).await, r#"{"taskId":1234}"#);
        assert_eq!(
            text(TaskStatus("complete".into()), Format::Xml).await,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response><status>complete</status></response>"
        );
        assert_eq!(
            text(TaskStatus("complete".into()), Format::Json).await,
            r#"{"status":"complete"}"#
        );
    }
}
