//! The scheduler every core runs (provisioning.md section 6): it carries out the stored
//! deactivations and terminations whose day has begun, once at start and then every
//! `--scheduler-interval-ms`.
//!
//! The dates live in the database, so a change that fell due while no core ran is made at
//! the next start. A pass walks the due rows of every account in `(date, user id)` order, in
//! batches of [`BATCH`]; each account's users of a batch are one transaction
//! (`service::users::carry_out_due`), which reads the dates again under the account's write
//! lock, so cores running passes at the same time make each change once. Users the owner
//! rule keeps (the last active account owner) are skipped, not waited on: the walk goes on
//! after them, and the next pass tries them again.

use std::{sync::Arc, time::Duration};

use sea_orm::DatabaseConnection;
use tokio::sync::watch;
use tracing::Instrument as _;

use crate::{
    access::UsersChanged,
    domain::schedule::{self, ScheduleKind},
    error::ServiceResult,
    service::users::{self, CarriedOut, DueBatch},
    telemetry::untraced,
};

pub const DEFAULT_INTERVAL_MS: u64 = 60_000;
pub const DEFAULT_DATE_OFFSET_DAYS: i32 = 0;

/// Due rows read at once: one account's share of them is one transaction.
pub const BATCH: u64 = 1_000;

#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct SchedulerSettings {
    /// How often a core looks for due scheduled status changes, in ms (it also looks at start).
    #[arg(long = "scheduler-interval-ms", env = "LMS_SCHEDULER_INTERVAL_MS", default_value_t = DEFAULT_INTERVAL_MS, value_parser = clap::value_parser!(u64).range(100..=3_600_000))]
    pub interval_ms: u64,

    /// Days added to the UTC date wherever scheduled changes ask what day it is, to rehearse a
    /// coming date.
    #[arg(long = "scheduler-date-offset-days", env = "LMS_SCHEDULER_DATE_OFFSET_DAYS", default_value_t = DEFAULT_DATE_OFFSET_DAYS, allow_negative_numbers = true, value_parser = clap::value_parser!(i32).range(-3650..=3650))]
    pub date_offset_days: i32,
}

impl Default for SchedulerSettings {
    fn default() -> Self {
        Self {
            interval_ms: DEFAULT_INTERVAL_MS,
            date_offset_days: DEFAULT_DATE_OFFSET_DAYS,
        }
    }
}

/// The scheduler of one process.
pub struct Scheduler {
    db: DatabaseConnection,
    /// This process's authenticator, told when a change ends a user's sign-ins.
    told: Arc<dyn UsersChanged>,
    settings: SchedulerSettings,
}

/// What one pass did, over every account.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pass {
    pub changed: usize,
    pub cleared: usize,
    pub kept: usize,
}

impl Scheduler {
    pub fn new(
        db: DatabaseConnection,
        told: Arc<dyn UsersChanged>,
        settings: SchedulerSettings,
    ) -> Self {
        Self { db, told, settings }
    }

    /// A pass at once, then one every interval until `stop` turns true. A failed pass (the
    /// database away) is logged and tried again at the next interval.
    pub async fn run(self, mut stop: watch::Receiver<bool>) {
        let interval = Duration::from_millis(self.settings.interval_ms);
        loop {
            if *stop.borrow() {
                break;
            }
            let passed = self.pass(&stop).await;
            match passed {
                Ok(pass) if pass == Pass::default() => {}
                Ok(pass) => tracing::info!(
                    changed = pass.changed,
                    cleared = pass.cleared,
                    kept = pass.kept,
                    "scheduled status changes carried out"
                ),
                Err(err) => tracing::warn!(
                    error = %err,
                    "scheduled status changes could not be carried out; trying again at the next interval"
                ),
            }
            tokio::select! {
                () = tokio::time::sleep(interval) => {}
                _ = stop.changed() => {}
            }
        }
    }

    /// Carries out every change due today (the UTC date plus the offset), deactivations first;
    /// a stop ends it between transactions (the next start goes on where it left off).
    pub async fn pass(&self, stop: &watch::Receiver<bool>) -> ServiceResult<Pass> {
        let today = schedule::today(self.settings.date_offset_days);
        let mut pass = Pass::default();
        for kind in ScheduleKind::ALL {
            let mut after = None;
            loop {
                // Looking makes no trace; each change made is one, apart from any request's.
                let batch =
                    untraced(users::due_schedules(&self.db, kind, today, after, BATCH)).await?;
                let Some(last) = batch.last() else {
                    break;
                };
                after = Some(*last);
                for (account_id, user_ids) in users::by_account(&batch) {
                    if *stop.borrow() {
                        return Ok(pass);
                    }
                    let batch = DueBatch {
                        account_id,
                        kind,
                        user_ids: &user_ids,
                        today,
                    };
                    let span = tracing::info_span!(
                        parent: None,
                        "scheduler.carry_out",
                        lms.account_id = %account_id,
                        lms.users = user_ids.len()
                    );
                    let done = users::carry_out_due(&self.db, self.told.as_ref(), batch)
                        .instrument(span)
                        .await?;
                    pass.add(kind, account_id, done);
                }
                if (batch.len() as u64) < BATCH {
                    break;
                }
            }
        }
        Ok(pass)
    }
}

impl Pass {
    fn add(&mut self, kind: ScheduleKind, account_id: uuid::Uuid, done: CarriedOut) {
        self.changed += done.changed;
        self.cleared += done.cleared;
        self.kept += done.kept.len();
        for user_id in done.kept {
            tracing::warn!(
                account = %account_id,
                user = %user_id,
                change = kind.date_field(),
                "a due scheduled change would leave the account without an active account owner; it stays stored until another owner is active"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        settings: SchedulerSettings,
    }

    #[test]
    fn an_empty_command_line_gives_the_default_constants() {
        let parsed = Cli::try_parse_from(["lms-core"]).unwrap().settings;
        assert_eq!(parsed, SchedulerSettings::default());
        assert_eq!(parsed.interval_ms, 60_000);
        assert_eq!(parsed.date_offset_days, 0);
    }

    #[test]
    fn the_ranges_of_section_14_hold_and_offsets_may_be_negative() {
        let parse = |args: &[&str]| {
            Cli::try_parse_from(std::iter::once("lms-core").chain(args.iter().copied()))
                .map(|cli| cli.settings)
        };
        assert!(parse(&["--scheduler-interval-ms", "99"]).is_err());
        assert!(parse(&["--scheduler-interval-ms", "3600001"]).is_err());
        assert_eq!(
            parse(&["--scheduler-interval-ms", "100"])
                .unwrap()
                .interval_ms,
            100
        );
        assert!(parse(&["--scheduler-date-offset-days", "3651"]).is_err());
        assert!(parse(&["--scheduler-date-offset-days", "-3651"]).is_err());
        assert_eq!(
            parse(&["--scheduler-date-offset-days", "-3650"])
                .unwrap()
                .date_offset_days,
            -3650
        );
        assert_eq!(
            parse(&["--scheduler-date-offset-days=7"])
                .unwrap()
                .date_offset_days,
            7
        );
    }
}
