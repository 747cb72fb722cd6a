//! `webhook_subscribers`: a receiver of an account's events, with its delivery state
//! (`docs/spec/webhooks.md`).

use std::fmt;

use sea_orm::entity::prelude::*;

/// Text that must never reach a log, a trace or `Debug` output (a signing secret, a
/// confirmation code).
#[derive(Clone, PartialEq, Eq, DeriveValueType)]
pub struct Hidden(pub String);

impl fmt::Debug for Hidden {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[hidden]")
    }
}

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_subscribers")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub account_id: Uuid,
    pub name: String,
    pub callback_url: String,
    pub secret: Option<Hidden>,
    /// `subscriberStatus`: `ACTIVE` when true, `INACTIVE` after disable.
    pub active: bool,
    pub confirmed: bool,
    /// The latest confirmation code (a lower-case UUID), until confirmed or superseded.
    pub code: Option<Hidden>,
    pub code_expires_at: Option<DateTimeUtc>,
    /// The CONFIRMATION delivery of `code`, while it is not acknowledged.
    pub confirmation_delivery_id: Option<Uuid>,
    pub confirmation_attempts: i32,
    /// When the CONFIRMATION delivery is next attempted; `None` when none is pending.
    pub confirmation_retry_at: Option<DateTimeUtc>,
    /// Raised by the first event recorded for the subscriber while it had none; lowered by
    /// the dispatcher that finds none left. The events themselves are counted when asked.
    pub has_events: bool,
    /// When the oldest undelivered delivery is next attempted after a failure.
    pub events_retry_at: Option<DateTimeUtc>,
    /// Consecutive failures of the oldest undelivered delivery.
    pub failures: i32,
    /// The first failure of the current run of failures.
    pub failing_since: Option<DateTimeUtc>,
    /// The dispatching process working on the subscriber, until `claim_expires_at`.
    pub claim_owner: Option<Uuid>,
    pub claim_expires_at: Option<DateTimeUtc>,
    pub last_attempt_at: Option<DateTimeUtc>,
    pub last_attempt_result: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub last_error: Option<String>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
