//! `POST /enrollment` (neighbours.md section 5.4): every learner in every course; 201 with no
//! body, as the OpenAPI documents and clients check only the status.

use axum::extract::State;
use axum::http::StatusCode;
use lms_proto::v1::EnrollLearnersRequest;

use crate::body::Body;
use crate::clip::clip;
use crate::core_client::{Caller, CoreClient};
use crate::error::GatewayError;
use crate::json::{FromJson, JsonError, JsonObject};
use crate::listing::xml_list;
use crate::routes::NoQuery;
use crate::xml::{Element, FromXml, XmlError};

/// `<request>` with `courseIds` and `learnerIds` (`<id>` each), and optional `accessDate`,
/// `dueDateType`, `dueDate`, `duePeriod`, `lockAfterDueDate`. Values go to the core as written;
/// the core checks them and names the field.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Enroll {
    pub(crate) course_ids: Vec<String>,
    pub(crate) learner_ids: Vec<String>,
    pub(crate) access_date: Option<String>,
    pub(crate) due_date_type: Option<String>,
    pub(crate) due_date: Option<String>,
    pub(crate) due_period: Option<String>,
    pub(crate) lock_after_due_date: Option<String>,
}

impl FromXml for Enroll {
    const ROOT: &'static str = "request";

    fn from_root(root: &Element) -> Result<Self, XmlError> {
        Ok(Self {
            course_ids: xml_list(root, "courseIds")?.unwrap_or_default(),
            learner_ids: xml_list(root, "learnerIds")?.unwrap_or_default(),
            access_date: root.optional_text("accessDate")?,
            due_date_type: root.optional_text("dueDateType")?,
            due_date: root.optional_text("dueDate")?,
            due_period: root.optional_text("duePeriod")?,
            lock_after_due_date: root.optional_text("lockAfterDueDate")?,
        })
    }
}

impl FromJson for Enroll {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        let list = |name| {
            object
                .optional_text_list(name)
                .map(Option::unwrap_or_default)
        };
        Ok(Self {
            course_ids: list("courseIds")?,
            learner_ids: list("learnerIds")?,
            access_date: object.optional_text("accessDate")?,
            due_date_type: object.optional_text("dueDateType")?,
            due_date: object.optional_text("dueDate")?,
            due_period: object.optional_text("duePeriod")?,
            lock_after_due_date: object.optional_text("lockAfterDueDate")?,
        })
    }
}

/// `true`/`false` as documented, `1`/`0` as iSpring writes its flags; empty means absent.
fn parse_flag(text: Option<&str>) -> Result<Option<bool>, GatewayError> {
    match text.map(str::trim) {
        None | Some("") => Ok(None),
        Some("true" | "1") => Ok(Some(true)),
        Some("false" | "0") => Ok(Some(false)),
        Some(other) => Err(GatewayError::BadRequest(format!(
            "lockAfterDueDate must be true or false; got \"{}\".",
            clip(other)
        ))),
    }
}

#[tracing::instrument(skip_all, fields(courses = body.course_ids.len(), learners = body.learner_ids.len()))]
pub(crate) async fn enroll_learners(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(body): Body<Enroll>,
) -> Result<StatusCode, GatewayError> {
    let message = EnrollLearnersRequest {
        lock_after_due_date: parse_flag(body.lock_after_due_date.as_deref())?,
        course_ids: body.course_ids,
        learner_ids: body.learner_ids,
        access_date: body.access_date,
        due_date_type: body.due_date_type,
        due_date: body.due_date,
        due_period: body.due_period,
    };
    core.unary(&caller, message, |mut admin, request| async move {
        admin.enroll_learners(request).await
    })
    .await?;
    Ok(StatusCode::CREATED)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xml::reader::parse_document;

    #[test]
    fn the_documented_body_is_read_whole() {
        let root = parse_document(
            b"<request><courseIds><id>c</id></courseIds><learnerIds><id>a</id><id>b</id></learnerIds>\
              <accessDate>2019-09-26 10:30:00</accessDate><dueDateType>due_period</dueDateType>\
              <duePeriod>3</duePeriod><lockAfterDueDate>true</lockAfterDueDate></request>",
            "request",
        )
        .unwrap();
        let body = Enroll::from_root(&root).unwrap();
        assert_eq!(body.course_ids, ["c"]);
        assert_eq!(body.learner_ids, ["a", "b"]);
        assert_eq!(body.access_date.as_deref(), Some("2019-09-26 10:30:00"));
        assert_eq!(body.due_period.as_deref(), Some("3"));
        assert_eq!(
            parse_flag(body.lock_after_due_date.as_deref()).unwrap(),
            Some(true)
        );
    }

    #[test]
    fn flags_are_true_false_one_or_zero() {
        assert_eq!(parse_flag(Some("0")).unwrap(), Some(false));
        assert_eq!(parse_flag(Some(" ")).unwrap(), None);
        assert!(parse_flag(Some("yes")).is_err());
    }
}
