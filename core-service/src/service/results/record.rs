//! `RecordResults` (results.md section 9): tracking sources state the whole tracked result of
//! each named enrollment, all or nothing. A finished tracked result is never undone here
//! (only a reset starts it over), and nothing moves to `not_started`.

use std::collections::HashMap;

use sea_orm::{DatabaseConnection, prelude::Uuid};

use super::{
    events::{self, Rewrite},
    stored::{self, Layers},
    targets,
};
use crate::{
    access::{Caller, Operation},
    domain::{
        ids::{clip, parse_uuid},
        results::{CompletionStatus, RawTrackedResult, ResultField, TrackedResult},
    },
    entities::enrollment,
    error::{ServiceError, ServiceResult},
    service::{
        audit::{AuditAction, Change},
        write,
    },
};

/// The most records one call may carry.
pub const MAX_RECORDS: usize = 10_000;

/// One record as the adapter receives it.
#[derive(Debug, Clone, Default)]
pub struct RawRecord<'a> {
    pub enrollment_id: &'a str,
    pub result: RawTrackedResult<'a>,
}

/// Records, each checked: the enrollment and its whole tracked result, in request order.
#[derive(Debug, Clone)]
pub struct Records(Vec<(Uuid, TrackedResult)>);

impl Records {
    /// INVALID_ARGUMENT naming the record and field (`results[1].progress`).
    pub fn parse(raw: &[RawRecord<'_>]) -> Result<Records, ServiceError> {
        if raw.is_empty() || raw.len() > MAX_RECORDS {
            return Err(ServiceError::invalid(format!(
                "results must hold from 1 to {MAX_RECORDS} records; {} were given.",
                raw.len()
            )));
        }
        let mut first_of: HashMap<Uuid, usize> = HashMap::with_capacity(raw.len());
        let mut records = Vec::with_capacity(raw.len());
        for (i, record) in raw.iter().enumerate() {
            let field = |field: ResultField| format!("results[{i}].{}", field.snake());
            let id = parse_uuid(record.enrollment_id).ok_or_else(|| {
                ServiceError::invalid(format!(
                    "{} '{}' is not a valid identifier.",
                    field(ResultField::EnrollmentId),
                    clip(record.enrollment_id)
                ))
            })?;
            if let Some(first) = first_of.insert(id, i) {
                return Err(ServiceError::invalid(format!(
                    "{} '{id}' is recorded twice, by results[{first}] and results[{i}]; give one record per enrollment.",
                    field(ResultField::EnrollmentId)
                )));
            }
            let result = TrackedResult::parse(&record.result).map_err(|problem| {
                ServiceError::invalid(format!("{} {}.", field(problem.field), problem.problem))
            })?;
            records.push((id, result));
        }
        Ok(Records(records))
    }
}

/// Records `records`; how many tracked results changed.
pub async fn record_results(
    db: &DatabaseConnection,
    caller: &Caller,
    records: Result<Records, ServiceError>,
) -> ServiceResult<u32> {
    let grant = caller.grant(Operation::WriteResults)?;
    let Records(records) = records?;
    let ids: Vec<Uuid> = records.iter().map(|(id, _)| *id).collect();
    write(db, caller, async |w| {
        let txn = w.txn();
        let enrollments = stored::enrollments(txn, caller.account_id, &ids).await?;
        let known: HashMap<Uuid, &enrollment::Model> =
            enrollments.iter().map(|e| (e.id, e)).collect();
        if let Some((i, (id, _))) = records
            .iter()
            .enumerate()
            .find(|(_, (id, _))| !known.contains_key(id))
        {
            return Err(ServiceError::invalid(format!(
                "results[{i}].enrollment_id '{id}' does not name an enrollment of this account."
            )));
        }
        targets::require_in_scope(txn, caller, grant, enrollments.iter()).await?;
        let current: HashMap<Uuid, _> = stored::results(txn, caller.account_id, &ids)
            .await?
            .into_iter()
            .map(|row| (row.enrollment_id, row))
            .collect();
        let mut changed = Vec::new();
        for (id, tracked) in &records {
            let (Some(before), Some(enrollment)) = (current.get(id), known.get(id)) else {
                continue;
            };
            let layers = Layers::of(before)?;
            refuse_undoing(*id, layers.tracked.status, tracked.status)?;
            let after = Layers {
                tracked: *tracked,
                ..layers
            }
            .row(*id, caller.account_id);
            if &after == before {
                continue;
            }
            w.record(Change {
                action: AuditAction::ResultRecorded,
                entity_id: *id,
                before: Some(stored::audit_values(before)),
                after: Some(stored::audit_values(&after)),
            });
            changed.push(Rewrite {
                learner_id: enrollment.learner_id,
                course_id: enrollment.content_item_id,
                before,
                after,
            });
        }
        let count = changed.len() as u32;
        events::rewrite(w, changed).await?;
        Ok(count)
    })
    .await
}

/// FAILED_PRECONDITION for a transition results.md section 1 refuses to tracking sources.
fn refuse_undoing(id: Uuid, from: CompletionStatus, to: CompletionStatus) -> ServiceResult<()> {
    if from.is_finished() && !to.is_finished() {
        return Err(ServiceError::Conflict(format!(
            "The result of enrollment {id} is finished ({from}) and cannot become {to}; only a reset starts it over."
        )));
    }
    if to == CompletionStatus::NotStarted && from != CompletionStatus::NotStarted {
        return Err(ServiceError::Conflict(format!(
            "The result of enrollment {id} is {from} and cannot become not_started; only a reset starts it over."
        )));
    }
    Ok(())
}
