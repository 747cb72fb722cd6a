//! The Enrollment object (neighbours.md section 5.1) in XML and JSON, alone in a list or in a
//! page.

use lms_proto::v1::Enrollment;

use crate::representation::{Document, json_text};
use crate::xml::writer::XmlWriter;

/// `<enrollment>`: the ids, `accessDate`, `dueDate` and `expirationDate` only when set (absent
/// rather than empty, as iSpring leaves them out), then the two flags as `0`/`1`, as captured.
fn write_enrollment(xml: &mut XmlWriter, e: &Enrollment) {
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

/// About how many XML bytes `enrollments` take.
fn bytes_hint(enrollments: &[Enrollment]) -> usize {
    enrollments.len() * 420 + 128
}

/// `GET /enrollment`: repeated `<enrollment>` directly under `<response>`; a JSON array.
pub(crate) struct EnrollmentList(pub(crate) Vec<Enrollment>);

impl Document for EnrollmentList {
    fn xml_bytes_hint(&self) -> usize {
        bytes_hint(&self.0)
    }

    fn write_xml(&self, xml: &mut XmlWriter) {
        for enrollment in &self.0 {
            write_enrollment(xml, enrollment);
        }
    }

    fn to_json(&self) -> String {
        json_text(&self.0.iter().map(EnrollmentJson::of).collect::<Vec<_>>())
    }
}

/// `GET|POST /enrollments`: one page and, while more follow, the next page's token.
pub(crate) struct EnrollmentPage {
    pub(crate) enrollments: Vec<Enrollment>,
    /// Empty on the last page: then the element (and the JSON key) is left out.
    pub(crate) next_page_token: String,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct EnrollmentPageJson<'a> {
    enrollments: Vec<EnrollmentJson<'a>>,
    #[serde(skip_serializing_if = "str::is_empty")]
    next_page_token: &'a str,
}

impl Document for EnrollmentPage {
    fn xml_bytes_hint(&self) -> usize {
        bytes_hint(&self.enrollments)
    }

    fn write_xml(&self, xml: &mut XmlWriter) {
        if self.enrollments.is_empty() {
            xml.empty("enrollments");
        } else {
            xml.open("enrollments");
            for enrollment in &self.enrollments {
                write_enrollment(xml, enrollment);
            }
            xml.close("enrollments");
        }
        if !self.next_page_token.is_empty() {
            xml.text_element("nextPageToken", &self.next_page_token);
        }
    }

    fn to_json(&self) -> String {
        json_text(&EnrollmentPageJson {
            enrollments: self.enrollments.iter().map(EnrollmentJson::of).collect(),
            next_page_token: &self.next_page_token,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn an_enrollment_without_due_date_has_no_date_elements_and_flags_as_digits() {
        let mut xml = XmlWriter::fragment();
        write_enrollment(&mut xml, &enrollment(None, false));
        assert_eq!(
            xml.finish(),
            "<enrollment><enrollmentId>e-1</enrollmentId><courseId>c-1</courseId>\
             <learnerId>u-1</learnerId><accessDate>2022-07-14</accessDate>\
             <enrollmentTypeGroup>0</enrollmentTypeGroup>\
             <shouldLockAfterDueDate>0</shouldLockAfterDueDate></enrollment>"
        );
        assert_eq!(
            EnrollmentList(vec![enrollment(None, false)]).to_json(),
            r#"[{"enrollmentId":"e-1","courseId":"c-1","learnerId":"u-1","accessDate":"2022-07-14","enrollmentTypeGroup":0,"shouldLockAfterDueDate":0}]"#
        );
    }

    #[test]
    fn a_locking_due_date_is_written_with_its_expiration() {
        let page = EnrollmentPage {
            enrollments: vec![enrollment(Some("2022-09-01"), true)],
            next_page_token: String::new(),
        };
        assert_eq!(
            page.to_json(),
            r#"{"enrollments":[{"enrollmentId":"e-1","courseId":"c-1","learnerId":"u-1","accessDate":"2022-07-14","dueDate":"2022-09-01","expirationDate":"2022-09-01","enrollmentTypeGroup":0,"shouldLockAfterDueDate":1}]}"#
        );
    }
}
