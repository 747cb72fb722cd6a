//! Enrollments and points: the long lists, one row per entry.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{
    AccountCheck, List, Place, Validator, given, label,
    plan::{EnrollmentRow, PointsRow},
    reference, require,
};
use crate::{
    domain::ids::{clip, parse_uuid},
    import::{
        ImportError,
        document::{EnrollmentEntry, PointsEntry},
    },
};

/// An enrollment's optional dates, checked: RFC 3339, and a lock only with a due date.
struct Dates {
    access_at: Option<DateTime<Utc>>,
    due_at: Option<DateTime<Utc>>,
    lock_after_due: bool,
}

impl Dates {
    /// The dates, or what is wrong with them as a sentence naming the field.
    fn parse(entry: &EnrollmentEntry) -> Result<Dates, String> {
        let date = |field: &str, raw: Option<&str>| {
            given(raw)
                .map(|raw| {
                    DateTime::parse_from_rfc3339(raw.trim())
                        .map(|at| at.to_utc())
                        .map_err(|_| {
                            format!(
                                "{field} \"{}\" must be a date and time with an offset, e.g. 2025-02-01T12:30:00+00:00",
                                clip(raw)
                            )
                        })
                })
                .transpose()
        };
        let access_at = date("accessDate", entry.access_date.as_deref())?;
        let due_at = date("dueDate", entry.due_date.as_deref())?;
        if entry.lock_after_due_date && due_at.is_none() {
            return Err("lockAfterDueDate may be true only with a dueDate".to_owned());
        }
        Ok(Dates {
            access_at,
            due_at,
            lock_after_due: entry.lock_after_due_date,
        })
    }

    fn row(self, id: Uuid, index: u32, learner_id: Uuid, content_item_id: Uuid) -> EnrollmentRow {
        EnrollmentRow {
            id,
            index,
            learner_id,
            content_item_id,
            access_at: self.access_at,
            due_at: self.due_at,
            lock_after_due: self.lock_after_due,
        }
    }
}

impl AccountCheck {
    pub(crate) fn enrollment(
        &mut self,
        validator: &mut Validator,
        i: usize,
        enrollment: &EnrollmentEntry,
    ) -> Result<(), ImportError> {
        let known = &self.known;
        let place = Place::new(self.a, List::Enrollments, i);
        // A million of these: the common, valid case skips writing out the entry's name.
        if let (Some(learner_id), Some(content_item_id)) = (
            parse_uuid(&enrollment.learner_id),
            parse_uuid(&enrollment.content_item_id),
        ) && known.users.contains(&learner_id)
            && known.content_items.contains(&content_item_id)
            && let Ok(dates) = Dates::parse(enrollment)
            && let Some(id) = validator.enrollment_id(place, &enrollment.id)
        {
            self.plan
                .enrollments
                .push(dates.row(id, place.index, learner_id, content_item_id));
            return Ok(());
        }
        let entry = label(self.a, "enrollments", i, "id", &enrollment.id);
        let id = validator
            .enrollment_id(place, &enrollment.id)
            .ok_or_else(|| {
                ImportError::invalid(
                    &entry,
                    format!("id \"{}\" is not a UUID", clip(&enrollment.id)),
                )
            })?;
        let learner_id = reference(&entry, "learnerId", &enrollment.learner_id)?;
        require(&entry, "learnerId", learner_id, &known.users, "user")?;
        let content_item_id = reference(&entry, "contentItemId", &enrollment.content_item_id)?;
        require(
            &entry,
            "contentItemId",
            content_item_id,
            &known.content_items,
            "content item",
        )?;
        let dates =
            Dates::parse(enrollment).map_err(|problem| ImportError::invalid(&entry, problem))?;
        self.plan
            .enrollments
            .push(dates.row(id, place.index, learner_id, content_item_id));
        Ok(())
    }

    /// At most one entry per user, never negative.
    pub(crate) fn points(&mut self, i: usize, given: &PointsEntry) -> Result<(), ImportError> {
        let entry = label(self.a, "points", i, "userId", &given.user_id);
        let user_id = reference(&entry, "userId", &given.user_id)?;
        require(&entry, "userId", user_id, &self.known.users, "user")?;
        if let Some(&first) = self.points_given.get(&user_id) {
            let first = label(
                self.a,
                "points",
                first as usize,
                "userId",
                &user_id.to_string(),
            );
            return Err(ImportError::invalid(
                &entry,
                format!("the user already has points in {first}; give at most one entry per user"),
            ));
        }
        if given.points < 0 {
            return Err(ImportError::invalid(&entry, "points must not be negative"));
        }
        self.points_given.insert(user_id, i as u32);
        self.plan.points.push(PointsRow {
            user_id,
            points: given.points,
        });
        Ok(())
    }
}
