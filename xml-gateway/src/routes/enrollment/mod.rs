//! Enrollments: `POST /enrollment/delete` here; the list and the Enrollment object in
//! [`list`]; `POST /enrollment` in [`writes`].

mod list;
mod writes;

pub(crate) use list::Enrollments;
pub(crate) use writes::enroll_learners;

use axum::extract::State;
use axum::http::StatusCode;
use lms_proto::v1::DeleteEnrollmentsRequest;

use crate::body::Body;
use crate::core_client::{Caller, CoreClient};
use crate::error::GatewayError;
use crate::json::{FromJson, JsonError, JsonObject};
use crate::routes::NoQuery;
use crate::xml::{Element, FromXml, XmlError};

/// `<DeleteEnrollments><enrollmentIds><id>..</id>...</enrollmentIds></DeleteEnrollments>` (or a
/// `<request>` root, as every write accepts)
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct EnrollmentIds(pub(crate) Vec<String>);

impl FromXml for EnrollmentIds {
    const ROOT: &'static str = "DeleteEnrollments";

    /// `enrollmentIds` must be there exactly once; the core checks the count and each id.
    fn from_root(root: &Element) -> Result<Self, XmlError> {
        root.required_child("enrollmentIds")?
            .children_named("id")
            .map(|id| id.text_value().map(str::to_owned))
            .collect::<Result<_, _>>()
            .map(Self)
    }
}

/// `{"enrollmentIds": ["..", ..]}`
impl FromJson for EnrollmentIds {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        object.required_text_list("enrollmentIds").map(Self)
    }
}

#[tracing::instrument(skip_all, fields(count = ids.len()))]
pub(crate) async fn delete_enrollments(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(EnrollmentIds(ids)): Body<EnrollmentIds>,
) -> Result<StatusCode, GatewayError> {
    let message = DeleteEnrollmentsRequest {
        enrollment_ids: ids,
    };
    core.unary(&caller, message, |mut admin, request| async move {
        admin.delete_enrollments(request).await
    })
    .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xml::reader::parse_document;

    fn ids(body: &str) -> Result<EnrollmentIds, XmlError> {
        EnrollmentIds::from_root(&parse_document(body.as_bytes(), EnrollmentIds::ROOT)?)
    }

    #[test]
    fn ids_are_read_in_order_and_trimmed() {
        assert_eq!(
            ids(
                "<DeleteEnrollments><enrollmentIds>\n  <id> e-1 </id>\n  <id>e-2</id>\n\
                 </enrollmentIds></DeleteEnrollments>"
            )
            .unwrap(),
            EnrollmentIds(vec!["e-1".into(), "e-2".into()])
        );
    }

    #[test]
    fn an_empty_list_goes_to_the_core_which_refuses_it() {
        assert_eq!(
            ids("<DeleteEnrollments><enrollmentIds/></DeleteEnrollments>").unwrap(),
            EnrollmentIds(vec![])
        );
    }

    #[test]
    fn a_missing_list_is_named() {
        let error = ids("<DeleteEnrollments><ids/></DeleteEnrollments>").unwrap_err();
        assert_eq!(error.to_string(), "Element <enrollmentIds> is required.");
    }

    #[test]
    fn a_list_given_twice_is_refused() {
        let error = ids(
            "<DeleteEnrollments><enrollmentIds><id>a</id></enrollmentIds>\
             <enrollmentIds><id>b</id></enrollmentIds></DeleteEnrollments>",
        )
        .unwrap_err();
        assert_eq!(error.to_string(), "Element <enrollmentIds> is given twice.");
    }

    #[test]
    fn the_root_is_delete_enrollments_or_request() {
        assert_eq!(
            ids("<request><enrollmentIds><id>e-1</id></enrollmentIds></request>").unwrap(),
            EnrollmentIds(vec!["e-1".into()])
        );
        let error = ids("<Delete><enrollmentIds/></Delete>").unwrap_err();
        assert_eq!(
            error.to_string(),
            "Root element must be <DeleteEnrollments> or <request>, found <Delete>."
        );
    }
}
