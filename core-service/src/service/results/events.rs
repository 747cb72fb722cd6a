//! The course events of a results write (webhooks.md section 7), and the rewrite that
//! records them: one event of each applicable type per (learner, course) whose effective
//! status the write changed, `COURSE_STATUS_CHANGED` first. A write that leaves every
//! effective status as it was (a date or a score changed) records none.

use std::collections::{HashMap, hash_map::Entry};

use chrono::{DateTime, Utc};
use sea_orm::prelude::Uuid;

use super::stored;
use crate::{
    domain::results::CompletionStatus,
    entities::learner_result,
    error::ServiceResult,
    service::{
        Write,
        webhooks::outbox::{Event, event_date},
    },
};

/// One result a write rewrites: whose it is, as it was and as it becomes.
pub(super) struct Rewrite<'a> {
    pub learner_id: Uuid,
    pub course_id: Uuid,
    pub before: &'a learner_result::Model,
    pub after: learner_result::Model,
}

/// Stores the rewritten results and emits their course events, in the write's transaction.
pub(super) async fn rewrite(w: &Write, rewrites: Vec<Rewrite<'_>>) -> ServiceResult<()> {
    for event in course_events(&rewrites, Utc::now()) {
        w.emit(event);
    }
    let rows: Vec<learner_result::Model> = rewrites.into_iter().map(|r| r.after).collect();
    stored::replace(w.txn(), &rows).await
}

fn successful(status: &str) -> bool {
    CompletionStatus::from_name(status).is_some_and(CompletionStatus::is_successful)
}

/// The events of `rewrites` committed at `changed_at`, (learner, course) pairs in the order
/// they first appear. A pair's statuses are those of its first enrollment by id (a learner
/// holds one enrollment per item unless an import gave more).
fn course_events(rewrites: &[Rewrite<'_>], changed_at: DateTime<Utc>) -> Vec<Event> {
    // Each pair's place in `pairs` by key: a write of 10,000 results is as many pairs, and
    // looking each one up along the list was quadratic in them.
    let mut places: HashMap<(Uuid, Uuid), usize> = HashMap::new();
    let mut pairs: Vec<((Uuid, Uuid), Vec<&Rewrite<'_>>)> = Vec::new();
    for rewrite in rewrites
        .iter()
        .filter(|r| r.before.effective_status != r.after.effective_status)
    {
        let key = (rewrite.learner_id, rewrite.course_id);
        match places.entry(key) {
            Entry::Occupied(place) => pairs[*place.get()].1.push(rewrite),
            Entry::Vacant(place) => {
                place.insert(pairs.len());
                pairs.push((key, vec![rewrite]));
            }
        }
    }
    let mut events = Vec::new();
    for ((learner_id, course_id), mut changed) in pairs {
        changed.sort_unstable_by_key(|r| r.after.enrollment_id);
        let first = changed[0];
        let enrollment_ids: Vec<Uuid> = changed.iter().map(|r| r.after.enrollment_id).collect();
        let (status, previous) = (
            &first.after.effective_status,
            &first.before.effective_status,
        );
        events.push(Event::CourseStatusChanged {
            course_id,
            learner_id,
            enrollment_ids: enrollment_ids.clone(),
            status: status.clone(),
            previous_status: previous.clone(),
            change_date: event_date(changed_at),
        });
        if successful(status) && !successful(previous) {
            events.push(Event::CourseCompletedSuccessfully {
                course_id,
                learner_id,
                enrollment_ids,
                completion_date: event_date(
                    first.after.effective_completed_at.unwrap_or(changed_at),
                ),
            });
        }
    }
    events
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone as _;

    use super::*;

    fn result(enrollment: u128, status: &str, completed: Option<i64>) -> learner_result::Model {
        learner_result::Model {
            enrollment_id: Uuid::from_u128(enrollment),
            account_id: Uuid::from_u128(1),
            status: status.to_owned(),
            progress: 0,
            awarded_score: 0,
            passing_score: 0,
            time_spent: 0,
            views_count: 0,
            completed_at: None,
            last_viewed_at: None,
            admin_status: None,
            admin_completed_at: None,
            admin_score: None,
            effective_status: status.to_owned(),
            effective_completed_at: completed.map(|s| Utc.timestamp_opt(s, 0).unwrap()),
        }
    }

    #[test]
    fn a_completion_is_announced_after_its_status_change_with_its_completion_date() {
        let before = result(10, "in_progress", None);
        let rewrites = [Rewrite {
            learner_id: Uuid::from_u128(2),
            course_id: Uuid::from_u128(3),
            before: &before,
            after: result(10, "passed", Some(1_700_000_000)),
        }];
        let at = Utc.timestamp_opt(1_800_000_000, 0).unwrap();
        let events = course_events(&rewrites, at);
        assert_eq!(events.len(), 2);
        assert!(matches!(
            &events[0],
            Event::CourseStatusChanged { status, previous_status, change_date, .. }
                if status == "passed" && previous_status == "in_progress"
                    && *change_date == 1_800_000_000_000_000_000
        ));
        assert!(matches!(
            &events[1],
            Event::CourseCompletedSuccessfully { completion_date, enrollment_ids, .. }
                if *completion_date == 1_700_000_000_000_000_000
                    && enrollment_ids == &[Uuid::from_u128(10)]
        ));
    }

    #[test]
    fn unchanged_statuses_and_moves_between_successes_record_only_what_changed() {
        let same = result(10, "passed", Some(1));
        let complete = result(11, "complete", Some(1));
        let rewrites = [
            Rewrite {
                learner_id: Uuid::from_u128(2),
                course_id: Uuid::from_u128(3),
                before: &same,
                after: result(10, "passed", Some(2)),
            },
            Rewrite {
                learner_id: Uuid::from_u128(4),
                course_id: Uuid::from_u128(3),
                before: &complete,
                after: result(11, "accepted", Some(2)),
            },
        ];
        let events = course_events(&rewrites, Utc::now());
        assert_eq!(events.len(), 1, "{events:?}");
        assert!(matches!(
            &events[0],
            Event::CourseStatusChanged { learner_id, .. } if *learner_id == Uuid::from_u128(4)
        ));
    }

    #[test]
    fn a_learners_enrollments_of_one_course_make_one_event_listing_them_ascending() {
        let (a, b) = (
            result(21, "in_progress", None),
            result(20, "in_progress", None),
        );
        let rewrites = [
            Rewrite {
                learner_id: Uuid::from_u128(2),
                course_id: Uuid::from_u128(3),
                before: &a,
                after: result(21, "failed", Some(5)),
            },
            Rewrite {
                learner_id: Uuid::from_u128(2),
                course_id: Uuid::from_u128(3),
                before: &b,
                after: result(20, "failed", Some(5)),
            },
        ];
        let events = course_events(&rewrites, Utc::now());
        assert_eq!(events.len(), 1);
        assert!(matches!(
            &events[0],
            Event::CourseStatusChanged { enrollment_ids, .. }
                if enrollment_ids == &[Uuid::from_u128(20), Uuid::from_u128(21)]
        ));
    }
}
