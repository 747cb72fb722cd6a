//! `GET /content/{contentItemId}/final_statuses` (results.md section 5): the result of every
//! active learner of one content item the caller may see, streamed from the core as the rows
//! arrive, each `<status>` directly under `<response>` (or a top-level JSON array). It takes
//! no query parameter; one is refused, after the permission.

use axum::extract::State;
use lms_proto::v1::{
    ContentItemFinalStatus, GetContentItemFinalStatusesRequest, GetContentItemFinalStatusesResponse,
};

use crate::core_client::{Caller, CoreClient};
use crate::error::GatewayError;
use crate::listing::{self, Form, Listing, Streamed, streamed_rpc};
use crate::representation::{Answer, push_json};
use crate::routes::{NoQuery, PathId, permission_first};
use crate::xml::writer::XmlWriter;

#[tracing::instrument(name = "whole_list", skip_all, fields(list = FinalStatuses::NAME, content_item_id = %content_item_id))]
pub(crate) async fn final_statuses(
    State(core): State<CoreClient>,
    caller: Caller,
    query: Result<NoQuery, GatewayError>,
    PathId(content_item_id): PathId,
) -> Result<Answer, GatewayError> {
    let message = GetContentItemFinalStatusesRequest { content_item_id };
    if let Err(refusal) = query {
        let probe = listing::stream::<FinalStatuses>(core, caller, message);
        return Err(permission_first(refusal, probe).await);
    }
    listing::stream::<FinalStatuses>(core, caller, message).await
}

/// The final statuses of one content item.
pub(crate) struct FinalStatuses;

impl Listing for FinalStatuses {
    type Item = ContentItemFinalStatus;
    const NAME: &'static str = "final statuses";
    const FILTERS: &'static [&'static str] = &[];

    /// `<status>`: `userId`, the effective `status`, `progress`, the two dates when there are
    /// any, then `enrollmentId` (a learner may have several enrollments in one item).
    fn write_xml(xml: &mut XmlWriter, entry: &ContentItemFinalStatus, _: Form) {
        xml.open("status")
            .text_element("userId", &entry.user_id)
            .text_element("status", &entry.status)
            .text_element("progress", &entry.progress.to_string());
        if let Some(date) = &entry.completion_date {
            xml.text_element("completionDate", date);
        }
        if let Some(date) = &entry.last_view_date {
            xml.text_element("lastViewDate", date);
        }
        xml.text_element("enrollmentId", &entry.enrollment_id)
            .close("status");
    }

    fn write_json(out: &mut String, entry: &ContentItemFinalStatus, _: Form) {
        push_json(
            out,
            &FinalStatusJson {
                user_id: &entry.user_id,
                status: &entry.status,
                progress: entry.progress,
                completion_date: entry.completion_date.as_deref(),
                last_view_date: entry.last_view_date.as_deref(),
                enrollment_id: &entry.enrollment_id,
            },
        );
    }

    fn xml_bytes_hint(_: &ContentItemFinalStatus) -> usize {
        300
    }
}

impl Streamed for FinalStatuses {
    streamed_rpc!(
        get_content_item_final_statuses(GetContentItemFinalStatusesRequest) -> GetContentItemFinalStatusesResponse.statuses
    );
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct FinalStatusJson<'a> {
    user_id: &'a str,
    status: &'a str,
    progress: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    completion_date: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_view_date: Option<&'a str>,
    enrollment_id: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listing::testing::whole_text;
    use crate::representation::Format;

    fn entry(n: u32, finished: bool) -> ContentItemFinalStatus {
        ContentItemFinalStatus {
            user_id: format!("u-{n}"),
            status: if finished { "passed" } else { "in_progress" }.into(),
            progress: if finished { 100 } else { 40 },
            completion_date: finished.then(|| "2025-02-01T12:30:00+00:00".into()),
            last_view_date: Some("2025-02-01T12:30:00+00:00".into()),
            enrollment_id: format!("e-{n}"),
        }
    }

    #[tokio::test]
    async fn entries_stand_under_the_response_in_the_specs_order() {
        let messages = [
            GetContentItemFinalStatusesResponse {
                statuses: vec![entry(1, true)],
            },
            GetContentItemFinalStatusesResponse {
                statuses: vec![entry(2, false)],
            },
        ];
        assert_eq!(
            whole_text::<FinalStatuses>(&messages, Format::Xml).await,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response><status><userId>u-1</userId>\
             <status>passed</status><progress>100</progress>\
             <completionDate>2025-02-01T12:30:00+00:00</completionDate>\
             <lastViewDate>2025-02-01T12:30:00+00:00</lastViewDate>\
             <enrollmentId>e-1</enrollmentId></status><status><userId>u-2</userId>\
             <status>in_progress</status><progress>40</progress>\
             <lastViewDate>2025-02-01T12:30:00+00:00</lastViewDate>\
             <enrollmentId>e-2</enrollmentId></status></response>"
        );
        assert_eq!(
            whole_text::<FinalStatuses>(&messages, Format::Json).await,
            r#"[{"userId":"u-1","status":"passed","progress":100,"completionDate":"2025-02-01T12:30:00+00:00","lastViewDate":"2025-02-01T12:30:00+00:00","enrollmentId":"e-1"},{"userId":"u-2","status":"in_progress","progress":40,"lastViewDate":"2025-02-01T12:30:00+00:00","enrollmentId":"e-2"}]"#
        );
    }

    #[tokio::test]
    async fn no_entries_is_an_empty_response_or_array() {
        assert_eq!(
            whole_text::<FinalStatuses>(&[], Format::Xml).await,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response/>"
        );
        assert_eq!(whole_text::<FinalStatuses>(&[], Format::Json).await, "[]");
    }
}
