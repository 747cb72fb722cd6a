//! Enrollments and points: the long lists, one row per entry.

use super::{
    AccountCheck, List, Place, Validator, label,
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
            && let Some(id) = validator.enrollment_id(place, &enrollment.id)
        {
            self.plan.enrollments.push(EnrollmentRow {
                id,
                index: place.index,
                learner_id,
                content_item_id,
            });
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
        self.plan.enrollments.push(EnrollmentRow {
            id,
            index: place.index,
            learner_id,
            content_item_id,
        });
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
