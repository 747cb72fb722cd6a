//! Scheduled deactivation and termination (provisioning.md section 6): storing and removing
//! the day a user's status is to change ([`schedule_user_status`],
//! [`cancel_scheduled_user_status`]), and carrying out the changes that fell due
//! ([`due_schedules`], [`carry_out_due`]) for the core's scheduler.
//!
//! A change is made exactly as `POST /users/deactivate` or `/users/terminate` makes it for
//! that user, through [`change_statuses`]: a deactivation changes only an active user, a
//! termination one of status 1 or 3, the user's tokens end, and the last active account
//! owner stays.
//!
//! Several cores may run the scheduler on one database. Each carries out one account's due
//! users in a [`write_unattended`] transaction, which takes the account's write lock before it
//! reads the dates again: a core that waited for another's commit finds the dates cleared and
//! changes nothing, so each change is made (and audited) once.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use sea_orm::{
    ColumnTrait as _, ConnectionTrait, DatabaseConnection, EntityTrait as _, QueryFilter as _,
    QueryOrder as _, QuerySelect as _,
    prelude::{Expr, Uuid},
    sea_query::ExprTrait as _,
};
use serde_json::json;

use super::{UserStatus, change_statuses, edit::reachable_user};
use crate::service::{
    Parsed, Write,
    audit::{AuditAction, Change},
    lookups::find_user,
    write,
    write::write_unattended,
};
use crate::{
    access::{Caller, Grant, Operation, UsersChanged},
    db::bulk,
    domain::{
        ids::ResourceRef,
        schedule::{ScheduleKind, ScheduledDate},
    },
    entities::user,
    error::{ServiceError, ServiceResult},
};

/// The status a change of `kind` sets.
fn status_of(kind: ScheduleKind) -> UserStatus {
    match kind {
        ScheduleKind::Deactivation => UserStatus::Blocked,
        ScheduleKind::Termination => UserStatus::EmploymentEnded,
    }
}

/// The column holding the date of `kind`.
fn column(kind: ScheduleKind) -> user::Column {
    match kind {
        ScheduleKind::Deactivation => user::Column::ScheduledDeactivationDate,
        ScheduleKind::Termination => user::Column::ScheduledTerminationDate,
    }
}

/// The dates a user holds, as the profile and the audit record show them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ScheduledDates {
    deactivation: Option<NaiveDate>,
    termination: Option<NaiveDate>,
}

impl ScheduledDates {
    fn of(user: &user::Model) -> Self {
        Self {
            deactivation: user.scheduled_deactivation_date,
            termination: user.scheduled_termination_date,
        }
    }

    fn with(mut self, kind: ScheduleKind, date: Option<NaiveDate>) -> Self {
        match kind {
            ScheduleKind::Deactivation => self.deactivation = date,
            ScheduleKind::Termination => self.termination = date,
        }
        self
    }

    fn snapshot(self) -> serde_json::Value {
        let day = |date: Option<NaiveDate>| date.map(|day| day.format("%Y-%m-%d").to_string());
        json!({
            ScheduleKind::Deactivation.date_field(): day(self.deactivation),
            ScheduleKind::Termination.date_field(): day(self.termination),
        })
    }
}

/// `POST /user/{userId}/scheduled_deactivation` and `/scheduled_termination`: a date after
/// `today` is stored (replacing the one of that kind); one on or before it is carried out in
/// this request's transaction, as the bulk call would for this user, and nothing of that kind
/// stays stored. 403 before 400 before 404, as `POST /user/{id}/status`.
pub async fn schedule_user_status(
    db: &DatabaseConnection,
    caller: &Caller,
    user: &ResourceRef,
    kind: Parsed<ScheduleKind>,
    date: Parsed<ScheduledDate>,
    today: NaiveDate,
) -> ServiceResult<()> {
    let grant = caller.grant(Operation::UpdateUser)?;
    let kind = kind?;
    let date = date?.day();
    write_reachable_user(db, caller, grant, user, async |w, current| {
        let due = date <= today;
        store_date(w, &current, kind, (!due).then_some(date)).await?;
        let status = status_of(kind);
        if due && status.bulk_changes(UserStatus::of(&current)) {
            change_statuses(w, caller.account_id, &[current], status).await?;
        }
        Ok(())
    })
    .await
}

/// `DELETE /user/{userId}/scheduled_deactivation` and `/scheduled_termination`: removes the
/// stored date of `kind`; with none stored, nothing changes and nothing is audited.
pub async fn cancel_scheduled_user_status(
    db: &DatabaseConnection,
    caller: &Caller,
    user: &ResourceRef,
    kind: Parsed<ScheduleKind>,
) -> ServiceResult<()> {
    let grant = caller.grant(Operation::UpdateUser)?;
    let kind = kind?;
    write_reachable_user(db, caller, grant, user, async |w, current| {
        store_date(w, &current, kind, None).await
    })
    .await
}

/// Runs `body` in a write with `user` as read in it, once the caller may change that user
/// (404, then 403 for a scoped caller outside its departments or above its role).
async fn write_reachable_user(
    db: &DatabaseConnection,
    caller: &Caller,
    grant: Grant,
    user: &ResourceRef,
    body: impl AsyncFnOnce(&Write, user::Model) -> ServiceResult<()>,
) -> ServiceResult<()> {
    reachable_user(db, caller, grant, user).await?;
    let id = user.id("User")?;
    write(db, caller, async |w| {
        let current = find_user(w.txn(), caller.account_id, id)
            .await?
            .ok_or_else(|| user.not_found("User"))?;
        body(w, current).await
    })
    .await
}

/// Sets the date of `kind` on `current` (read in this write); one `user.schedule` audit row
/// with both dates before and after, none when the date was already that.
async fn store_date(
    w: &Write,
    current: &user::Model,
    kind: ScheduleKind,
    date: Option<NaiveDate>,
) -> ServiceResult<()> {
    let before = ScheduledDates::of(current);
    let after = before.with(kind, date);
    if after == before {
        return Ok(());
    }
    user::Entity::update_many()
        .col_expr(column(kind), Expr::value(date))
        .col_expr(user::Column::UpdatedAt, Expr::value(chrono::Utc::now()))
        .filter(user::Column::AccountId.eq(current.account_id))
        .filter(user::Column::Id.eq(current.id))
        .exec(w.txn())
        .await?;
    w.record(Change {
        action: AuditAction::UserScheduled,
        entity_id: current.id,
        before: Some(before.snapshot()),
        after: Some(after.snapshot()),
    });
    Ok(())
}

/// A stored change whose day has come: the user, its account and the day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DueChange {
    pub user_id: Uuid,
    pub account_id: Uuid,
    pub date: NaiveDate,
}

/// Up to `limit` stored changes of `kind` due by `today`, of every account, in the order of
/// `(date, user id)` and after `after` (the last one of the previous batch): one range of
/// the date's index, however many users there are.
pub async fn due_schedules(
    conn: &impl ConnectionTrait,
    kind: ScheduleKind,
    today: NaiveDate,
    after: Option<DueChange>,
    limit: u64,
) -> ServiceResult<Vec<DueChange>> {
    let date = column(kind);
    let mut query = user::Entity::find()
        .select_only()
        .column(user::Column::Id)
        .column(user::Column::AccountId)
        .column(date)
        .filter(date.lte(today));
    if let Some(last) = after {
        query = query.filter(
            Expr::tuple([Expr::col(date), Expr::col(user::Column::Id)]).gt(Expr::tuple([
                Expr::value(last.date),
                Expr::value(last.user_id),
            ])),
        );
    }
    let rows: Vec<(Uuid, Uuid, NaiveDate)> = query
        .order_by_asc(date)
        .order_by_asc(user::Column::Id)
        .limit(limit)
        .into_tuple()
        .all(conn)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(user_id, account_id, date)| DueChange {
            user_id,
            account_id,
            date,
        })
        .collect())
}

/// What one call of [`carry_out_due`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CarriedOut {
    /// Users whose status changed (each with one `user.set_active` row).
    pub changed: usize,
    /// Users whose due date was removed without a change (a deactivation of a user no longer
    /// active, a termination of one whose employment already ended).
    pub cleared: usize,
    /// Users left as they are, date and all, since no active account owner would remain.
    pub kept: Vec<Uuid>,
}

/// One account's stored changes of one kind that were due by `today`, as a pass read them.
#[derive(Debug, Clone, Copy)]
pub struct DueBatch<'a> {
    pub account_id: Uuid,
    pub kind: ScheduleKind,
    /// Users of the account, ascending.
    pub user_ids: &'a [Uuid],
    pub today: NaiveDate,
}

/// Carries out `batch`: the dates still due once the account is locked are removed, and the
/// users whose status the change alters get it (`user.set_active`, no actor, no request id).
/// The rows of an account owner whose leaving would leave no active owner are kept for a
/// later pass, the others go ahead without them.
pub async fn carry_out_due(
    db: &DatabaseConnection,
    told: &dyn UsersChanged,
    batch: DueBatch<'_>,
) -> ServiceResult<CarriedOut> {
    match carry_out(db, told, batch).await {
        Err(ServiceError::Conflict(_)) if batch.user_ids.len() > 1 => {}
        Err(ServiceError::Conflict(_)) => {
            return Ok(CarriedOut {
                kept: batch.user_ids.to_vec(),
                ..CarriedOut::default()
            });
        }
        other => return other,
    }
    // Rare (an owner leaving with the others): one at a time finds who must stay.
    let mut all = CarriedOut::default();
    for id in batch.user_ids {
        let one = [*id];
        match carry_out(
            db,
            told,
            DueBatch {
                user_ids: &one,
                ..batch
            },
        )
        .await
        {
            Ok(done) => {
                all.changed += done.changed;
                all.cleared += done.cleared;
            }
            Err(ServiceError::Conflict(_)) => all.kept.push(*id),
            Err(err) => return Err(err),
        }
    }
    Ok(all)
}

/// One transaction of [`carry_out_due`]; CONFLICT (all rolled back) when no active owner
/// would remain.
async fn carry_out(
    db: &DatabaseConnection,
    told: &dyn UsersChanged,
    batch: DueBatch<'_>,
) -> ServiceResult<CarriedOut> {
    let DueBatch {
        account_id,
        kind,
        user_ids,
        today,
    } = batch;
    let date = column(kind);
    write_unattended(db, account_id, told, async |w| {
        let txn = w.txn();
        let mut due = Vec::with_capacity(user_ids.len());
        // Two more parameters beside each chunk: the account and the day.
        for chunk in bulk::in_chunks_beside(user_ids, 2) {
            due.extend(
                user::Entity::find()
                    .filter(user::Column::AccountId.eq(account_id))
                    .filter(user::Column::Id.is_in(chunk.iter().copied()))
                    .filter(date.lte(today))
                    .all(txn)
                    .await?,
            );
        }
        if due.is_empty() {
            return Ok(CarriedOut::default());
        }
        let ids: Vec<Uuid> = due.iter().map(|user| user.id).collect();
        let now = chrono::Utc::now();
        // Four more parameters beside each chunk: the date, the time, the account and the day.
        for chunk in bulk::in_chunks_beside(&ids, 4) {
            user::Entity::update_many()
                .col_expr(date, Expr::value(Option::<NaiveDate>::None))
                .col_expr(user::Column::UpdatedAt, Expr::value(now))
                .filter(user::Column::AccountId.eq(account_id))
                .filter(user::Column::Id.is_in(chunk.iter().copied()))
                .filter(date.lte(today))
                .exec(txn)
                .await?;
        }
        let status = status_of(kind);
        let total = due.len();
        let changing: Vec<user::Model> = due
            .into_iter()
            .filter(|user| status.bulk_changes(UserStatus::of(user)))
            .collect();
        change_statuses(w, account_id, &changing, status).await?;
        Ok(CarriedOut {
            changed: changing.len(),
            cleared: total - changing.len(),
            kept: Vec::new(),
        })
    })
    .await
}

/// The due changes of `batch` grouped by account, each account's users ascending.
pub fn by_account(batch: &[DueChange]) -> BTreeMap<Uuid, Vec<Uuid>> {
    let mut accounts: BTreeMap<Uuid, Vec<Uuid>> = BTreeMap::new();
    for change in batch {
        accounts
            .entry(change.account_id)
            .or_default()
            .push(change.user_id);
    }
    for users in accounts.values_mut() {
        users.sort_unstable();
        users.dedup();
    }
    accounts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_audit_record_names_both_dates_and_null_for_none() {
        let dates = ScheduledDates {
            deactivation: NaiveDate::from_ymd_opt(2026, 12, 31),
            termination: None,
        };
        assert_eq!(
            dates.snapshot(),
            json!({"scheduledDeactivationDate": "2026-12-31", "scheduledTerminationDate": null})
        );
        let replaced = dates.with(
            ScheduleKind::Termination,
            NaiveDate::from_ymd_opt(2027, 1, 31),
        );
        assert_eq!(
            replaced.snapshot()["scheduledTerminationDate"],
            json!("2027-01-31")
        );
        assert_eq!(
            dates.with(ScheduleKind::Deactivation, dates.deactivation),
            dates
        );
    }

    #[test]
    fn each_kind_sets_the_status_of_its_bulk_call() {
        assert_eq!(status_of(ScheduleKind::Deactivation).code(), 3);
        assert_eq!(status_of(ScheduleKind::Termination).code(), 5);
    }
}
