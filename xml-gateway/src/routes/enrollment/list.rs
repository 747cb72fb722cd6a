//! `GET /enrollment` (every enrollment the caller may see), `GET /enrollments` and
//! `POST /enrollments` (one page), each optionally narrowed by `learnerIds`, `courseIds` and
//! `enrollmentIds` (neighbours.md sections 5.2 and 5.3); the Enrollment object (section 5.1)
//! in XML and JSON.

use lms_proto::v1::{
    Enrollment, ListEnrollmentsRequest, ListEnrollmentsResponse, PageRequest,
    StreamEnrollmentsRequest, StreamEnrollmentsResponse,
};

use crate::error::GatewayError;
use crate::listing::{Filters, Form, Listing, Paged, Streamed, Whole, paged_rpc, streamed_rpc};
use crate::representation::push_json;
use crate::xml::writer::XmlWriter;

/// Every enrollment that matches the filters.
pub(crate) struct Enrollments;

impl Listing for Enrollments {
    type Item = Enrollment;
    const NAME: &'static str = "enrollments";
    const FILTERS: &'static [&'static str] = &["learnerIds", "courseIds", "enrollmentIds"];

    /// `<enrollment>`: the ids, `accessDate`, `dueDate` and `expirationDate` only when set
    /// (absent rather than empty, as iSpring leaves them out), then the two flags as `0`/`1`,
    /// as captured.
    fn write_xml(xml: &mut XmlWriter, e: &Enrollment, _: Form) {
        xml.open("enrollment")
            .text_element("enrollmentId", &e.enrollment_id)
            .text_element("courseId", &e.course_id)
            .text_element("learnerId", &e.learner_id)
            .text_element("accessDate", &e.access_date);
        if let Some(due) = &e.due_date {
            xml.text_element("dueDate", due);
        }
        if let Some(expiration) = &e.expiration_date {
            xml.text_element("expirationDate", expiration);
        }
        xml.text_element("enrollmentTypeGroup", flag(e.enrollment_type_group))
            .text_element("shouldLockAfterDueDate", flag(e.should_lock_after_due_date))
            .close("enrollment");
    }

    fn write_json(out: &mut String, enrollment: &Enrollment, _: Form) {
        push_json(out, &EnrollmentJson::of(enrollment));
    }

    fn xml_bytes_hint(_: &Enrollment) -> usize {
        420
    }
}

impl Streamed for Enrollments {
    streamed_rpc!(
        stream_enrollments(StreamEnrollmentsRequest) -> StreamEnrollmentsResponse.enrollments
    );
}

impl Whole for Enrollments {
    fn stream_request(filters: Filters) -> StreamEnrollmentsRequest {
        let [learner_ids, course_ids, enrollment_ids] = filters.into_lists();
        StreamEnrollmentsRequest {
            learner_ids,
            course_ids,
            enrollment_ids,
        }
    }
}

impl Paged for Enrollments {
    const PAGE_ELEMENT: &'static str = "enrollments";

    fn list_request(
        filters: Filters,
        page: PageRequest,
    ) -> Result<ListEnrollmentsRequest, GatewayError> {
        let StreamEnrollmentsRequest {
            learner_ids,
            course_ids,
            enrollment_ids,
        } = Self::stream_request(filters);
        Ok(ListEnrollmentsRequest {
            page: Some(page),
            learner_ids,
            course_ids,
            enrollment_ids,
        })
    }

    paged_rpc!(list_enrollments(ListEnrollmentsRequest) -> ListEnrollmentsResponse.enrollments);
}

fn flag(value: bool) -> &'static str {
    if value { "1" } else { "0" }
}

/// The same keys; the flags are the numbers 0 and 1, as the XML writes them and as
/// `isSmart` is in JSON (contract section 11).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct EnrollmentJson<'a> {
    enrollment_id: &'a str,
    course_id: &'a str,
    learner_id: &'a str,
    access_date: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    due_date: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expiration_date: Option<&'a str>,
    enrollment_type_group: u8,
    should_lock_after_due_date: u8,
}

impl<'a> EnrollmentJson<'a> {
    fn of(e: &'a Enrollment) -> Self {
        Self {
            enrollment_id: &e.enrollment_id,
            course_id: &e.course_id,
            learner_id: &e.learner_id,
            access_date: &e.access_date,
            due_date: e.due_date.as_deref(),
            expiration_date: e.expiration_date.as_deref(),
            enrollment_type_group: e.enrollment_type_group.into(),
            should_lock_after_due_date: e.should_lock_after_due_date.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listing::testing::{page_text, whole_text};
    use crate::representation::Format;

    fn enrollment(due: Option<&str>, lock: bool) -> Enrollment {
        Enrollment {
            enrollment_id: "e-1".into(),
            course_id: "c-1".into(),
            learner_id: "u-1".into(),
            access_date: "2022-07-14".into(),
            due_date: due.map(str::to_owned),
            expiration_date: due.filter(|_| lock).map(str::to_owned),
            should_lock_after_due_date: lock,
            enrollment_type_group: false,
        }
    }

    #[tokio::test]
    async fn an_enrollment_without_due_date_has_no_date_elements_and_flags_as_digits() {
        let messages = [StreamEnrollmentsResponse {
            enrollments: vec![enrollment(None, false)],
        }];
        assert_eq!(
            whole_text::<Enrollments>(&messages, Format::Xml).await,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response>\
             <enrollment><enrollmentId>e-1</enrollmentId><courseId>c-1</courseId>\
             <learnerId>u-1</learnerId><accessDate>2022-07-14</accessDate>\
             <enrollmentTypeGroup>0</enrollmentTypeGroup>\
             <shouldLockAfterDueDate>0</shouldLockAfterDueDate></enrollment></response>"
        );
        assert_eq!(
            whole_text::<Enrollments>(&messages, Format::Json).await,
            r#"[{"enrollmentId":"e-1","courseId":"c-1","learnerId":"u-1","accessDate":"2022-07-14","enrollmentTypeGroup":0,"shouldLockAfterDueDate":0}]"#
        );
    }

    #[tokio::test]
    async fn a_locking_due_date_is_written_with_its_expiration() {
        let page = vec![enrollment(Some("2022-09-01"), true)];
        assert_eq!(
            page_text::<Enrollments>(page, "", Format::Json).await,
            r#"{"enrollments":[{"enrollmentId":"e-1","courseId":"c-1","learnerId":"u-1","accessDate":"2022-07-14","dueDate":"2022-09-01","expirationDate":"2022-09-01","enrollmentTypeGroup":0,"shouldLockAfterDueDate":1}]}"#
        );
    }

    #[test]
    fn the_filters_reach_the_core_in_their_places() {
        let (filters, page) = crate::listing::testing::query::<Enrollments>(
            "courseIds=c&learnerIds[]=l&enrollmentIds=e1,e2&pageSize=3",
        );
        let request = Enrollments::list_request(filters, page).unwrap();
        assert_eq!(
            (
                request.learner_ids,
                request.course_ids,
                request.enrollment_ids
            ),
            (
                vec!["l".into()],
                vec!["c".into()],
                vec!["e1".into(), "e2".into()]
            )
        );
        assert_eq!(request.page.unwrap().page_size, Some(3));
    }
}
