//! Recording sign-ins for the profile's `lastLoginDate`: the first authenticated request of
//! each user on each day (UTC) is written to `user_sign_ins`, in the background.
//!
//! Only the date is shown, so one write per user per day and process is enough; the other
//! requests of the day cost a lookup in memory. The write never holds up or fails the
//! request: a failure is logged, and the next day's first request writes again.

use std::{collections::HashSet, sync::Mutex};

use chrono::{NaiveDate, Utc};
use sea_orm::{DatabaseConnection, EntityTrait as _, Set, prelude::Uuid, sea_query::OnConflict};
use tracing::Instrument as _;

use crate::entities::user_sign_in;

#[derive(Debug)]
pub(super) struct SignIns {
    db: DatabaseConnection,
    /// The day, and the users whose sign-in that day is written (or being written).
    today: Mutex<(NaiveDate, HashSet<Uuid>)>,
}

impl SignIns {
    pub(super) fn new(db: DatabaseConnection) -> Self {
        Self {
            db,
            today: Mutex::new((Utc::now().date_naive(), HashSet::new())),
        }
    }

    /// Notes that `user_id` made an authenticated request now.
    pub(super) fn record(&self, user_id: Uuid) {
        let now = Utc::now();
        {
            let mut today = self.today.lock().unwrap_or_else(|e| e.into_inner());
            if today.0 != now.date_naive() {
                *today = (now.date_naive(), HashSet::new());
            }
            if !today.1.insert(user_id) {
                return;
            }
        }
        let db = self.db.clone();
        // In the request's trace: a write of its own would otherwise start a trace nobody
        // asked for.
        let write = async move {
            let row = user_sign_in::ActiveModel {
                user_id: Set(user_id),
                last_at: Set(now),
            };
            let upsert = OnConflict::column(user_sign_in::Column::UserId)
                .update_column(user_sign_in::Column::LastAt)
                .to_owned();
            let written = user_sign_in::Entity::insert(row)
                .on_conflict(upsert)
                .exec_without_returning(&db)
                .await;
            if let Err(err) = written {
                tracing::warn!(%user_id, error = %err, "recording a sign-in failed");
            }
        };
        tokio::spawn(write.in_current_span());
    }
}
