//! What subscriber info shows (section 5): statuses, the backlog and the last attempt;
//! never the secret or a code.

use crate::entities::webhook_subscriber;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscriberView {
    pub subscriber_status: &'static str,
    pub confirmation_status: &'static str,
    pub notification_process_status: &'static str,
    pub name: String,
    pub callback_url: String,
    pub has_secret: bool,
    pub pending_events: u64,
    /// UTC, whole seconds, numeric offset: `2026-11-27T10:15:02+00:00`.
    pub last_attempt_date: Option<String>,
    pub last_attempt_result: Option<String>,
    pub last_error: Option<String>,
}

impl SubscriberView {
    /// The view of `model`, whose stored events number `pending_events`.
    pub fn of(model: &webhook_subscriber::Model, pending_events: u64) -> Self {
        let notification_process_status = if !model.active || !model.confirmed {
            "INACTIVE"
        } else if model.events_retry_at.is_some() {
            "SUSPENDED"
        } else {
            "ACTIVE"
        };
        Self {
            subscriber_status: if model.active { "ACTIVE" } else { "INACTIVE" },
            confirmation_status: if model.confirmed {
                "CONFIRMED"
            } else {
                "UNCONFIRMED"
            },
            notification_process_status,
            name: model.name.clone(),
            callback_url: model.callback_url.clone(),
            has_secret: model.secret.is_some(),
            pending_events,
            last_attempt_date: model
                .last_attempt_at
                .map(|at| at.format("%Y-%m-%dT%H:%M:%S+00:00").to_string()),
            last_attempt_result: model.last_attempt_result.clone(),
            last_error: model.last_error.clone(),
        }
    }
}
