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
use crate::routes::{NoQuery, PathId};

/// `KIND` of the routes: [`ScheduleKind`] as the number the const parameter carries.
pub(crate) const DEACTIVATION: i32 = ScheduleKind::Deactivation as i32;
pub(crate) const TERMINATION: i32 = ScheduleKind::Termination as i32;

text_body!(
    /// `<request><date>…</date></request>` / `{"date": "…"}`.
    DateBody,
    "date"
);

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
