//! Scheduled deactivation and termination (provisioning.md section 6): `POST|DELETE
//! /user/{userId}/scheduled_deactivation` and `/scheduled_termination`, 200 with no body.
//!
//! The body is `<request><date>2026-12-31</date></request>`, JSON `{"date": "2026-12-31"}`.
//! The date goes to the core as sent (an absent one, or no body at all, as empty), which judges
//! it once it has judged the caller's right: a caller without the right gets 403 whatever it
//! sent, and every other gets the one message naming `date`.

use axum::extract::State;
use axum::http::StatusCode;
use lms_proto::v1::{CancelScheduledUserStatusRequest, ScheduleKind, ScheduleUserStatusRequest};

use crate::body::MaybeBody;
use crate::core_client::{Caller, CoreClient};
use crate::error::GatewayError;
use crate::json::{FromJson, JsonError, JsonObject};
use crate::routes::{NoQuery, PathId};
use crate::xml::{Element, FromXml, XmlError};

/// `KIND` of the routes: [`ScheduleKind`] as the number the const parameter carries.
pub(crate) const DEACTIVATION: i32 = ScheduleKind::Deactivation as i32;
pub(crate) const TERMINATION: i32 = ScheduleKind::Termination as i32;

/// `<request><date>…</date></request>` / `{"date": "…"}`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct DateBody(Option<String>);

impl FromXml for DateBody {
    const ROOT: &'static str = "request";

    fn from_root(root: &Element) -> Result<Self, XmlError> {
        Ok(Self(root.optional_text("date")?))
    }
}

impl FromJson for DateBody {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        Ok(Self(object.optional_text("date")?))
    }
}

/// `POST /user/{userId}/scheduled_deactivation` (`KIND` [`DEACTIVATION`]) and
/// `/scheduled_termination` ([`TERMINATION`]).
#[tracing::instrument(skip_all, fields(user_id = %user_id, kind = KIND))]
pub(crate) async fn schedule<const KIND: i32>(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    PathId(user_id): PathId,
    MaybeBody(body): MaybeBody<DateBody>,
) -> Result<StatusCode, GatewayError> {
    let message = ScheduleUserStatusRequest {
        user_id,
        kind: KIND,
        date: body.and_then(|DateBody(date)| date).unwrap_or_default(),
    };
    core.unary(&caller, message, |mut admin, request| async move {
        admin.schedule_user_status(request).await
    })
    .await?;
    Ok(StatusCode::OK)
}

/// `DELETE /user/{userId}/scheduled_deactivation` and `/scheduled_termination`.
#[tracing::instrument(skip_all, fields(user_id = %user_id, kind = KIND))]
pub(crate) async fn cancel<const KIND: i32>(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    PathId(user_id): PathId,
) -> Result<StatusCode, GatewayError> {
    let message = CancelScheduledUserStatusRequest {
        user_id,
        kind: KIND,
    };
    core.unary(&caller, message, |mut admin, request| async move {
        admin.cancel_scheduled_user_status(request).await
    })
    .await?;
    Ok(StatusCode::OK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse_json;
    use crate::xml::reader::parse_document;

    fn date_xml(body: &str) -> Result<DateBody, XmlError> {
        DateBody::from_root(&parse_document(body.as_bytes(), DateBody::ROOT)?)
    }

    #[test]
    fn the_date_is_read_as_sent_in_either_format() {
        assert_eq!(
            date_xml("<request><date> 2026-1-5 </date></request>").unwrap(),
            DateBody(Some("2026-1-5".into()))
        );
        assert_eq!(date_xml("<request/>").unwrap(), DateBody(None));
        assert!(date_xml("<request><date>a</date><date>b</date></request>").is_err());
        let json: DateBody = parse_json(br#"{"request": {"date": "2026-12-31"}}"#).unwrap();
        assert_eq!(json, DateBody(Some("2026-12-31".into())));
        assert_eq!(parse_json::<DateBody>(b"{}").unwrap(), DateBody(None));
        assert!(parse_json::<DateBody>(br#"{"date": ["2026-12-31"]}"#).is_err());
    }
}
