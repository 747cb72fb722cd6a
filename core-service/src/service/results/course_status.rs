//! `POST /statistics/course` (results.md section 6): an administrator sets, or with
//! `automatic` removes, the administrator's status of results of one content item, all or
//! nothing, in one transaction under the account's lock. Results the request leaves as they
//! were are neither written nor audited.

use chrono::{DateTime, Utc};
use sea_orm::{DatabaseConnection, prelude::Uuid};
use serde_json::json;

use super::{
    events::{self, Rewrite},
    stored::{self, AdminStatus, Layers},
    targets, tasks,
};
use crate::{
    access::{Caller, Operation},
    domain::{
        Invalid, Reason,
        dates::parse_administrator_date,
        ids::{IdList, parse_field_id},
        results::{CompletionStatus, Score},
    },
    error::ServiceResult,
    service::{
        Parsed,
        audit::{AuditAction, Change},
        write,
    },
};

/// The longest `reason`.
pub const MAX_REASON_CHARS: usize = 1_000;

/// What the administrator sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusChange {
    /// `complete`, `passed`, `failed` with the completion date, or `incomplete` without.
    Set(AdminStatus),
    /// `automatic`: the tracked result shows again.
    Automatic,
}

/// A parsed `POST /statistics/course`.
#[derive(Debug, Clone)]
pub struct CourseStatusUpdate {
    pub course_id: Uuid,
    /// Ascending, each once.
    pub enrollment_ids: Vec<Uuid>,
    pub change: StatusChange,
    pub reason: Option<String>,
}

/// The request as the adapters receive it.
#[derive(Debug, Clone, Default)]
pub struct RawCourseStatusUpdate<'a> {
    pub course_id: &'a str,
    pub enrollment_ids: &'a [String],
    pub status: &'a str,
    pub date: Option<&'a str>,
    pub awarded_score: Option<f64>,
    pub reason: Option<&'a str>,
}

const ADMIN_STATUSES: &str = "complete, passed, failed, incomplete, automatic";

impl CourseStatusUpdate {
    pub fn parse(raw: &RawCourseStatusUpdate<'_>) -> Result<Self, Invalid> {
        if raw.course_id.trim().is_empty() {
            return Err(Invalid::new("courseId", Reason::Missing));
        }
        let course_id = parse_field_id("courseId", raw.course_id)?;
        let enrollment_ids = IdList::parse_non_empty("enrollmentIds", raw.enrollment_ids)?;
        let status = match raw.status.trim() {
            "" => return Err(Invalid::new("status", Reason::Missing)),
            "automatic" => None,
            name => Some(
                CompletionStatus::from_name(name)
                    .filter(|status| {
                        matches!(
                            status,
                            CompletionStatus::Complete
                                | CompletionStatus::Passed
                                | CompletionStatus::Failed
                                | CompletionStatus::Incomplete
                        )
                    })
                    .ok_or_else(|| {
                        Invalid::new(
                            "status",
                            Reason::NotOneOf {
                                raw: name.to_owned(),
                                allowed: ADMIN_STATUSES.to_owned(),
                            },
                        )
                    })?,
            ),
        };
        let date: Option<DateTime<Utc>> = raw
            .date
            .filter(|date| !date.trim().is_empty())
            .map(|date| parse_administrator_date("date", date))
            .transpose()?;
        let score = raw
            .awarded_score
            .map(|score| Score::parse("awardedScore", score))
            .transpose()?;
        let reason = raw.reason.filter(|reason| !reason.is_empty());
        if reason.is_some_and(|reason| reason.chars().count() > MAX_REASON_CHARS) {
            return Err(Invalid::new(
                "reason",
                Reason::TooLong {
                    max: MAX_REASON_CHARS,
                },
            ));
        }
        let change = match status {
            None => StatusChange::Automatic,
            Some(CompletionStatus::Incomplete) => StatusChange::Set(AdminStatus {
                status: CompletionStatus::Incomplete,
                completed_at: None,
                score,
            }),
            Some(status) => StatusChange::Set(AdminStatus {
                status,
                completed_at: Some(date.ok_or(Invalid::new(
                    "date",
                    Reason::RequiredWhen("status is complete, passed or failed"),
                ))?),
                score,
            }),
        };
        Ok(Self {
            course_id,
            enrollment_ids: enrollment_ids.into_inner(),
            change,
            reason: reason.map(str::to_owned),
        })
    }
}

/// Applies `update`; the id of its (complete) task.
pub async fn update_course_status(
    db: &DatabaseConnection,
    caller: &Caller,
    update: Parsed<CourseStatusUpdate>,
) -> ServiceResult<u64> {
    let grant = caller.grant(Operation::WriteResults)?;
    let update = update?;
    write(db, caller, async |w| {
        let txn = w.txn();
        let current =
            targets::course_results(txn, caller, grant, update.course_id, &update.enrollment_ids)
                .await?;
        let admin = match update.change {
            StatusChange::Set(admin) => Some(admin),
            StatusChange::Automatic => None,
        };
        let mut changed = Vec::new();
        for id in &update.enrollment_ids {
            let Some(target) = current.get(id) else {
                continue;
            };
            let before = &target.result;
            let layers = Layers {
                admin,
                ..Layers::of(before)?
            };
            let after = layers.row(*id, caller.account_id);
            if &after == before {
                continue;
            }
            let mut after_values = stored::audit_values(&after);
            if let (Some(reason), Some(object)) = (&update.reason, after_values.as_object_mut()) {
                object.insert("reason".to_owned(), json!(reason));
            }
            w.record(Change {
                action: AuditAction::ResultStatusSet,
                entity_id: *id,
                before: Some(stored::audit_values(before)),
                after: Some(after_values),
            });
            changed.push(Rewrite {
                learner_id: target.learner_id,
                course_id: update.course_id,
                before,
                after,
            });
        }
        events::rewrite(w, changed).await?;
        tasks::complete_task(txn, caller).await
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    const COURSE: &str = "0191a000-0000-7000-8000-000000000501";
    const ENROLLMENT: &str = "0191a000-0000-7000-8000-000000000601";

    fn parse(
        status: &str,
        date: Option<&str>,
        score: Option<f64>,
    ) -> Result<CourseStatusUpdate, Invalid> {
        let ids = [ENROLLMENT.to_owned()];
        CourseStatusUpdate::parse(&RawCourseStatusUpdate {
            course_id: COURSE,
            enrollment_ids: &ids,
            status,
            date,
            awarded_score: score,
            reason: None,
        })
    }

    #[test]
    fn finished_statuses_need_a_date_and_incomplete_drops_it() {
        assert_eq!(parse("passed", None, None).unwrap_err().field, "date");
        let update = parse("incomplete", Some("2025-12-31"), Some(50.0)).unwrap();
        assert!(matches!(
            update.change,
            StatusChange::Set(AdminStatus {
                completed_at: None,
                ..
            })
        ));
        assert_eq!(
            parse("automatic", Some("not a date"), None)
                .unwrap_err()
                .field,
            "date"
        );
        assert_eq!(
            parse("automatic", None, Some(101.0)).unwrap_err().field,
            "awardedScore"
        );
        for status in ["in_progress", "not_started", "Passed"] {
            assert_eq!(
                parse(status, Some("2025-12-31"), None).unwrap_err().field,
                "status"
            );
        }
    }
}
