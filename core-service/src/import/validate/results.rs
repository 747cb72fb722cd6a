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
        // Three quarters of a million of these: the entry's name is written out only for
        // a refusal.
        let a = self.a;
        let entry = || label(a, "results", i, "enrollmentId", &given.enrollment_id);
        let Some(id) = parse_uuid(&given.enrollment_id) else {
            return Err(ImportError::invalid(
                entry(),
                "enrollmentId is not a UUID".to_owned(),
            ));
        };
        // The enrollments are sorted by id once, when the first result is checked (they
        // would be once the document is read anyway), and searched in place: a copy of
        // their ids would weigh 20 bytes per enrollment.
        let enrollments = &mut self.plan.enrollments;
        let given_for = self.result_of.get_or_insert_with(|| {
            if !enrollments.is_sorted_by_key(|row| (row.id, row.index)) {
                enrollments.sort_unstable_by_key(|row| (row.id, row.index));
            }
            vec![NONE; enrollments.len()]
        });
        let Ok(at) = enrollments.binary_search_by_key(&id, |row| row.id) else {
            return Err(ImportError::invalid(
                entry(),
                format!("enrollmentId \"{id}\" names no enrollment of this account"),
            ));
        };
        let first = given_for[at];
        if first != NONE {
            let first = label(
                a,
                "results",
                first as usize,
                "enrollmentId",
                &id.to_string(),
            );
            return Err(ImportError::invalid(
                entry(),
                format!(
                    "the enrollment already has a result in {first}; give at most one entry per enrollment"
                ),
            ));
        }
        given_for[at] = i as u32;
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
                entry(),
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
