//! `DELETE /statistics/module` (results.md section 6): named results of one content item
//! start over (tracked result untouched, administrator's status removed), all or nothing.
//! An untouched result is left as it is, unaudited.

use sea_orm::{DatabaseConnection, prelude::Uuid};

use super::{
    events::{self, Rewrite},
    stored::{self, Layers},
    targets, tasks,
};
use crate::{
    access::{Caller, Operation},
    domain::{
        Invalid, Reason,
        ids::{IdList, parse_field_id},
        results::TrackedResult,
    },
    error::ServiceResult,
    service::{
        Parsed,
        audit::{AuditAction, Change},
        write,
    },
};

/// A parsed reset.
#[derive(Debug, Clone)]
pub struct ModuleReset {
    pub course_id: Uuid,
    /// Ascending, each once.
    pub enrollment_ids: Vec<Uuid>,
}

impl ModuleReset {
    /// `content_item_ids`, when given, may name only `course_id`: a content item is its own
    /// only module.
    pub fn parse(
        course_id: &str,
        enrollment_ids: &[String],
        content_item_ids: &[String],
    ) -> Result<Self, Invalid> {
        if course_id.trim().is_empty() {
            return Err(Invalid::new("courseId", Reason::Missing));
        }
        let course_id = parse_field_id("courseId", course_id)?;
        let enrollment_ids = IdList::parse_non_empty("enrollmentIds", enrollment_ids)?;
        let modules = IdList::parse("contentItemIds", content_item_ids)?;
        if let Some(other) = modules.as_slice().iter().find(|id| **id != course_id) {
            return Err(Invalid::new(
                "contentItemIds",
                Reason::NotOneOf {
                    raw: other.to_string(),
                    allowed: format!("the modules of courseId ({course_id}, its only module)"),
                },
            ));
        }
        Ok(Self {
            course_id,
            enrollment_ids: enrollment_ids.into_inner(),
        })
    }
}

/// Applies `reset`; the id of its (complete) task.
pub async fn reset_module_statistics(
    db: &DatabaseConnection,
    caller: &Caller,
    reset: Parsed<ModuleReset>,
) -> ServiceResult<u64> {
    let grant = caller.grant(Operation::WriteResults)?;
    let reset = reset?;
    write(db, caller, async |w| {
        let txn = w.txn();
        let current =
            targets::course_results(txn, caller, grant, reset.course_id, &reset.enrollment_ids)
                .await?;
        let untouched = Layers {
            tracked: TrackedResult::untouched(),
            admin: None,
        };
        let mut changed = Vec::new();
        for id in &reset.enrollment_ids {
            let Some(target) = current.get(id) else {
                continue;
            };
            let before = &target.result;
            let after = untouched.row(*id, caller.account_id);
            if &after == before {
                continue;
            }
            w.record(Change {
                action: AuditAction::ResultReset,
                entity_id: *id,
                before: Some(stored::audit_values(before)),
                after: Some(stored::audit_values(&after)),
            });
            changed.push(Rewrite {
                learner_id: target.learner_id,
                course_id: reset.course_id,
                before,
                after,
            });
        }
        events::rewrite(w, changed).await?;
        tasks::complete_task(txn, caller).await
    })
    .await
}
