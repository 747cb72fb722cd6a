//! Results: the tracked result of enrollments the same account gives (results.md section 8),
//! checked after the enrollments, at most one entry per enrollment.

use super::{AccountCheck, label, plan::ResultRow};
use crate::{
    domain::{
        ids::parse_uuid,
        results::{RawTrackedResult, TrackedResult},
    },
    import::{ImportError, document::ResultEntry},
};

const NONE: u32 = u32::MAX;

impl AccountCheck {
    pub(crate) fn result(&mut self, i: usize, given: &ResultEntry) -> Result<(), ImportError> {
        let entry = label(self.a, "results", i, "enrollmentId", &given.enrollment_id);
        let id = parse_uuid(&given.enrollment_id)
            .ok_or_else(|| ImportError::invalid(&entry, "enrollmentId is not a UUID".to_owned()))?;
        let enrollments = &self.plan.enrollments;
        let index = self.enrollment_index.get_or_insert_with(|| {
            let mut index: Vec<(uuid::Uuid, u32)> =
                enrollments.iter().map(|row| (row.id, NONE)).collect();
            index.sort_unstable_by_key(|(id, _)| *id);
            index
        });
        let Ok(at) = index.binary_search_by_key(&id, |(id, _)| *id) else {
            return Err(ImportError::invalid(
                &entry,
                format!("enrollmentId \"{id}\" names no enrollment of this account"),
            ));
        };
        let first = index[at].1;
        if first != NONE {
            let first = label(
                self.a,
                "results",
                first as usize,
                "enrollmentId",
                &id.to_string(),
            );
            return Err(ImportError::invalid(
                &entry,
                format!(
                    "the enrollment already has a result in {first}; give at most one entry per enrollment"
                ),
            ));
        }
        index[at].1 = i as u32;
        let tracked = TrackedResult::parse(&RawTrackedResult {
            completion_status: &given.completion_status,
            progress: given.progress,
            awarded_score: given.awarded_score,
            passing_score: given.passing_score,
            time_spent: given.time_spent,
            views_count: given.views_count,
            completion_date: given.completion_date.as_deref(),
            last_view_date: given.last_view_date.as_deref(),
        })
        .map_err(|problem| {
            ImportError::invalid(
                &entry,
                format!("{} {}", problem.field.camel(), problem.problem),
            )
        })?;
        self.plan.results.push(ResultRow {
            enrollment_id: id,
            tracked,
        });
        Ok(())
    }
}
