//! `GET /gamification/points?userIds=...` and `POST /gamification/points` (the same filter as
//! a body, `<request><userIds><id>..</id>..</userIds></request>`, for lists longer than a URI
//! holds: up to the core's 10,000 ids; a URI ends at 65,534 bytes, about 1,700 ids): the
//! points of every user asked for, or of every user the caller may see when none is, streamed
//! by the core one user a message.

use lms_proto::v1::{GetPointsRequest, UserPoints};
use tonic::Streaming;

use crate::listing::{Admin, Filters, Form, Listing, Streamed, Whole};
use crate::representation::push_json;
use crate::xml::writer::XmlWriter;

/// `<userPointsInfo>` per user, or `[{"userId": .., "points": ..}]`.
pub(crate) struct Points;

impl Listing for Points {
    type Item = UserPoints;
    const NAME: &'static str = "points";
    const FILTERS: &'static [&'static str] = &["userIds"];

    fn write_xml(xml: &mut XmlWriter, points: &UserPoints, _: Form) {
        xml.open("userPointsInfo")
            .text_element("userId", &points.user_id)
            .text_element("points", &points.points.to_string())
            .close("userPointsInfo");
    }

    fn write_json(out: &mut String, points: &UserPoints, _: Form) {
        push_json(
            out,
            &PointsJson {
                user_id: &points.user_id,
                points: points.points,
            },
        );
    }
}

impl Streamed for Points {
    type Message = UserPoints;
    type StreamRequest = GetPointsRequest;

    async fn open(
        mut admin: Admin,
        request: tonic::Request<GetPointsRequest>,
    ) -> Result<tonic::Response<Streaming<UserPoints>>, tonic::Status> {
        admin.get_points(request).await
    }

    fn rows(message: UserPoints) -> Vec<UserPoints> {
        vec![message]
    }
}

impl Whole for Points {
    fn stream_request(filters: Filters) -> GetPointsRequest {
        let [user_ids] = filters.into_lists();
        GetPointsRequest { user_ids }
    }
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct PointsJson<'a> {
    user_id: &'a str,
    points: i64,
}

/// The body writer over real gRPC-framed bytes (no core involved): document shape, batching of
/// ready results, and aborting on a failure midway.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::listing::testing::{joined, whole_chunks, whole_text};
    use crate::representation::Format;

    fn users(count: usize) -> Vec<UserPoints> {
        (0..count)
            .map(|n| UserPoints {
                user_id: format!("u-{n:05}"),
                points: i64::try_from(n).unwrap() * 10 - 5,
            })
            .collect()
    }

    #[tokio::test]
    async fn results_are_written_in_order_inside_one_response_element() {
        assert_eq!(
            whole_text::<Points>(&users(3), Format::Xml).await,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response>\
             <userPointsInfo><userId>u-00000</userId><points>-5</points></userPointsInfo>\
             <userPointsInfo><userId>u-00001</userId><points>5</points></userPointsInfo>\
             <userPointsInfo><userId>u-00002</userId><points>15</points></userPointsInfo>\
             </response>"
        );
    }

    #[tokio::test]
    async fn in_json_the_results_are_one_top_level_array() {
        assert_eq!(
            whole_text::<Points>(&users(2), Format::Json).await,
            r#"[{"userId":"u-00000","points":-5},{"userId":"u-00001","points":5}]"#
        );
        assert_eq!(whole_text::<Points>(&[], Format::Json).await, "[]");
        let parsed: serde_json::Value =
            serde_json::from_str(&whole_text::<Points>(&users(5_000), Format::Json).await).unwrap();
        assert_eq!(parsed.as_array().unwrap().len(), 5_000);
        let (chunks, error) =
            whole_chunks::<Points>(&users(3), tonic::Code::Unavailable, Format::Json).await;
        assert!(error.is_some());
        assert!(!joined(&chunks).ends_with(']'));
    }

    #[tokio::test]
    async fn no_results_give_an_empty_response_element() {
        assert_eq!(
            whole_text::<Points>(&[], Format::Xml).await,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response/>"
        );
    }

    #[tokio::test]
    async fn many_results_are_sent_in_bounded_chunks() {
        let (chunks, error) =
            whole_chunks::<Points>(&users(5_000), tonic::Code::Ok, Format::Xml).await;
        assert_eq!(error, None);
        assert!(chunks.len() > 1, "one chunk for 5000 results");
        assert!(
            chunks
                .iter()
                .all(|chunk| chunk.len() < crate::listing::testing::CHUNK_BYTES + 256)
        );
        let document = joined(&chunks);
        assert_eq!(document.matches("<userPointsInfo>").count(), 5_000);
        assert!(document.ends_with("<points>49985</points></userPointsInfo></response>"));
    }

    #[tokio::test]
    async fn a_failure_midway_aborts_the_body_without_closing_the_document() {
        let (chunks, error) =
            whole_chunks::<Points>(&users(3), tonic::Code::Unavailable, Format::Xml).await;
        assert!(error.is_some(), "the body ended cleanly");
        let document = joined(&chunks);
        assert!(document.contains("<userId>u-00002</userId>"), "{document}");
        assert!(!document.contains("</response>"), "{document}");
    }
}
