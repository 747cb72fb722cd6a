//! Enroll learners in courses: every learner named in every course named, all or nothing,
//! audited. One function for `POST /enrollment` (neighbours.md section 5.4) and for
//! `CreateEnrollment` of `lms.v1.DirectoryService` (one learner in one item).
//!
//! A pair already enrolled is left exactly as it is and the request still succeeds: clients
//! retry, and C12 checks before enrolling, so a duplicate would be a defect and an error
//! would break a retry. The product of the two lists is bounded so that one request cannot
//! hold the account's lock for an unbounded write.

use std::collections::BTreeMap;

use chrono::{DateTime, TimeDelta, Utc};
use sea_orm::{
    ColumnTrait as _, ConnectionTrait, DatabaseConnection, EntityTrait as _, QueryFilter as _,
    QuerySelect as _, Set, prelude::Uuid,
};
use serde_json::json;

use crate::service::webhooks::outbox::Event;
use crate::service::{
    Parsed,
    audit::{AuditAction, Change},
    lookups::{self, unknown},
    write,
};
use crate::{
    access::{Caller, Grant, Operation},
    db::bulk,
    domain::{
        Invalid, Reason,
        dates::parse_administrator_date,
        ids::{IdList, new_id},
    },
    entities::{content_item, enrollment},
    error::{ServiceError, ServiceResult},
};

/// The most enrollments (courses × learners) one request may ask for.
pub const MAX_ENROLLMENT_PAIRS: usize = 10_000;
/// The longest `duePeriod`, in hours (ten years).
pub const MAX_DUE_PERIOD_HOURS: u64 = 87_600;

/// Learners to enroll in courses, with the dates every new enrollment gets.
#[derive(Debug, Clone)]
pub struct NewEnrollments {
    /// Ascending, each once.
    pub course_ids: Vec<Uuid>,
    /// Ascending, each once.
    pub learner_ids: Vec<Uuid>,
    /// `None`: from the moment of the write.
    pub access_at: Option<DateTime<Utc>>,
    pub due: Due,
    pub lock_after_due: bool,
    /// The names the request gives its two lists, for a message naming one of them.
    pub fields: PairFields,
}

/// What a request calls its courses and its learners.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairFields {
    pub courses: &'static str,
    pub learners: &'static str,
}

/// When new enrollments fall due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// `unlimited`, and `default` (we keep no account default, so it means no due date).
    Never,
    At(DateTime<Utc>),
    /// Hours after the access date.
    After(u64),
}

/// The request as the adapters receive it, every value as the client wrote it.
#[derive(Debug, Clone, Default)]
pub struct RawEnrollments<'a> {
    pub course_ids: &'a [String],
    pub learner_ids: &'a [String],
    pub access_date: Option<&'a str>,
    pub due_date_type: Option<&'a str>,
    pub due_date: Option<&'a str>,
    pub due_period: Option<&'a str>,
    pub lock_after_due_date: Option<bool>,
}

const DUE_TYPES: &str = "unlimited, default, due_date, due_period";

impl NewEnrollments {
    pub fn parse(raw: &RawEnrollments<'_>) -> Result<Self, Invalid> {
        let course_ids = IdList::parse_non_empty("courseIds", raw.course_ids)?;
        let learner_ids = IdList::parse_non_empty("learnerIds", raw.learner_ids)?;
        let pairs = course_ids.as_slice().len() * learner_ids.as_slice().len();
        if pairs > MAX_ENROLLMENT_PAIRS {
            return Err(Invalid::new(
                "learnerIds",
                Reason::TooManyPairs {
                    other: "courseIds",
                    max: MAX_ENROLLMENT_PAIRS,
                    given: pairs,
                },
            ));
        }
        let access_at = blank_to_none(raw.access_date)
            .map(|text| parse_administrator_date("accessDate", text))
            .transpose()?;
        let due_type = blank_to_none(raw.due_date_type).unwrap_or("unlimited");
        let due_date = blank_to_none(raw.due_date);
        let due_period = blank_to_none(raw.due_period);
        let due = match due_type {
            "unlimited" | "default" => Due::Never,
            "due_date" => Due::At(parse_administrator_date(
                "dueDate",
                due_date.ok_or(Invalid::new(
                    "dueDate",
                    Reason::RequiredWhen("dueDateType is due_date"),
                ))?,
            )?),
            "due_period" => {
                let text = due_period.ok_or(Invalid::new(
                    "duePeriod",
                    Reason::RequiredWhen("dueDateType is due_period"),
                ))?;
                let hours = text
                    .parse::<u64>()
                    .ok()
                    .filter(|hours| (1..=MAX_DUE_PERIOD_HOURS).contains(hours))
                    .ok_or(Invalid::new(
                        "duePeriod",
                        Reason::OutOfRange {
                            min: 1,
                            max: MAX_DUE_PERIOD_HOURS,
                        },
                    ))?;
                Due::After(hours)
            }
            other => {
                return Err(Invalid::new(
                    "dueDateType",
                    Reason::NotOneOf {
                        raw: other.to_owned(),
                        allowed: DUE_TYPES.to_owned(),
                    },
                ));
            }
        };
        if due_date.is_some() && due_type != "due_date" {
            return Err(Invalid::new(
                "dueDate",
                Reason::OnlyWhen("dueDateType is due_date"),
            ));
        }
        if due_period.is_some() && due_type != "due_period" {
            return Err(Invalid::new(
                "duePeriod",
                Reason::OnlyWhen("dueDateType is due_period"),
            ));
        }
        Ok(Self {
            course_ids: course_ids.into_inner(),
            learner_ids: learner_ids.into_inner(),
            access_at,
            due,
            lock_after_due: raw.lock_after_due_date.unwrap_or(false),
            fields: PairFields {
                courses: "courseIds",
                learners: "learnerIds",
            },
        })
    }

    /// One learner in one content item, open from now on without a due date, as
    /// `CreateEnrollment` names them (`learnerId`, `contentItemId`).
    pub fn one(learner_id: Uuid, content_item_id: Uuid) -> Self {
        Self {
            course_ids: vec![content_item_id],
            learner_ids: vec![learner_id],
            access_at: None,
            due: Due::Never,
            lock_after_due: false,
            fields: PairFields {
                courses: "contentItemId",
                learners: "learnerId",
            },
        }
    }
}

fn blank_to_none(text: Option<&str>) -> Option<&str> {
    text.map(str::trim).filter(|text| !text.is_empty())
}

/// Enrolls every learner in every course; the enrollment of each pair, course by course and
/// learner by learner in ascending id order. A pair already enrolled keeps its enrollment,
/// unchanged (a retry is harmless).
pub async fn enroll_learners(
    db: &DatabaseConnection,
    caller: &Caller,
    new: Parsed<NewEnrollments>,
) -> ServiceResult<Vec<Uuid>> {
    let grant = caller.grant(Operation::CreateEnrollments)?;
    let new = new?;
    let (courses, learners) = (&new.course_ids, &new.learner_ids);
    write(db, caller, async |w| {
        let txn = w.txn();
        require_courses(txn, caller.account_id, courses, new.fields.courses).await?;
        let found = lookups::existing_users(txn, caller.account_id, learners).await?;
        if let Some(missing) = learners.iter().find(|id| !found.contains(id)) {
            return Err(unknown(new.fields.learners, *missing, "user"));
        }
        if grant == Grant::InScope {
            let outside =
                lookups::users_outside_scope(txn, &caller.managed_department_ids, learners)
                    .await?;
            if !outside.is_empty() {
                return Err(ServiceError::denied(format!(
                    "{} of the learners are outside the departments you manage; nobody was enrolled.",
                    outside.len()
                )));
            }
        }
        let mut enrolled = enrolled_pairs(txn, caller.account_id, learners, courses).await?;
        let now = Utc::now();
        let access_at = new.access_at.unwrap_or(now);
        let due_at = match new.due {
            Due::Never => None,
            Due::At(at) => Some(at),
            Due::After(hours) => Some(access_at + TimeDelta::hours(hours as i64)),
        };
        let rows: Vec<enrollment::ActiveModel> = courses
            .iter()
            .flat_map(|course| learners.iter().map(move |learner| (*course, *learner)))
            .filter(|pair| !enrolled.contains_key(pair))
            .map(|(course, learner)| enrollment::ActiveModel {
                id: Set(new_id()),
                account_id: Set(caller.account_id),
                learner_id: Set(learner),
                content_item_id: Set(course),
                created_at: Set(now),
                access_at: Set(Some(access_at)),
                due_at: Set(due_at),
                lock_after_due: Set(new.lock_after_due),
            })
            .collect();
        enrolled.extend(rows.iter().map(|row| {
            let pair = (*row.content_item_id.as_ref(), *row.learner_id.as_ref());
            (pair, *row.id.as_ref())
        }));
        w.record_all(rows.iter().map(|row| Change {
            action: AuditAction::EnrollmentCreated,
            entity_id: *row.id.as_ref(),
            before: None,
            after: Some(json!({
                "learnerId": row.learner_id.as_ref(),
                "contentItemId": row.content_item_id.as_ref(),
                "accessDate": access_at.to_rfc3339(),
                "dueDate": due_at.map(|at| at.to_rfc3339()),
                "lockAfterDueDate": new.lock_after_due,
            })),
        }));
        let new_ids: Vec<Uuid> = rows.iter().map(|row| *row.id.as_ref()).collect();
        let mut announced = Vec::new();
        for course in courses {
            if announced.contains(course) {
                continue;
            }
            announced.push(*course);
            let mut learner_ids: Vec<Uuid> = rows
                .iter()
                .filter(|row| row.content_item_id.as_ref() == course)
                .map(|row| *row.learner_id.as_ref())
                .collect();
            if !learner_ids.is_empty() {
                learner_ids.sort_unstable();
                w.emit(Event::LearnersEnrolled {
                    course_id: *course,
                    learner_ids,
                });
            }
        }
        bulk::insert_all(txn, rows).await?;
        // Every enrollment has its result from the start (results.md section 1).
        crate::service::results::create_untouched(txn, caller.account_id, new_ids).await?;
        Ok(enrolled.into_values().collect())
    })
    .await
}

/// Refuses the first of `ids` that names no content item of the account, naming it and
/// `field`.
async fn require_courses(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    ids: &[Uuid],
    field: &str,
) -> ServiceResult<()> {
    let found = lookups::existing_in_account(
        conn,
        content_item::Column::AccountId,
        content_item::Column::Id,
        account_id,
        ids,
    )
    .await?;
    match ids.iter().find(|id| !found.contains(id)) {
        Some(missing) => Err(unknown(field, *missing, "content item")),
        None => Ok(()),
    }
}

/// The enrollments of the (course, learner) pairs among `learners` × `courses` already
/// enrolled: each learner's enrollments are read on `(learner_id, id)`, the courses a
/// residual condition.
async fn enrolled_pairs(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    learners: &[Uuid],
    courses: &[Uuid],
) -> ServiceResult<BTreeMap<(Uuid, Uuid), Uuid>> {
    let mut pairs = BTreeMap::new();
    for learner_chunk in bulk::in_chunks_beside(learners, courses.len() + 1) {
        let rows: Vec<(Uuid, Uuid, Uuid)> = enrollment::Entity::find()
            .select_only()
            .column(enrollment::Column::ContentItemId)
            .column(enrollment::Column::LearnerId)
            .column(enrollment::Column::Id)
            .filter(enrollment::Column::AccountId.eq(account_id))
            .filter(enrollment::Column::LearnerId.is_in(learner_chunk.iter().copied()))
            .filter(enrollment::Column::ContentItemId.is_in(courses.iter().copied()))
            .into_tuple()
            .all(conn)
            .await?;
        pairs.extend(
            rows.into_iter()
                .map(|(course, learner, id)| ((course, learner), id)),
        );
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "0191a000-0000-7000-8000-000000000501";
    const B: &str = "0191a000-0000-7000-8000-000000000206";

    fn raw<'a>(courses: &'a [String], learners: &'a [String]) -> RawEnrollments<'a> {
        RawEnrollments {
            course_ids: courses,
            learner_ids: learners,
            ..Default::default()
        }
    }

    fn one() -> Vec<String> {
        vec![A.to_owned()]
    }

    #[test]
    fn defaults_are_no_due_date_unlocked_and_access_from_now() {
        let (c, l) = (one(), vec![B.to_owned()]);
        let new = NewEnrollments::parse(&raw(&c, &l)).unwrap();
        assert_eq!(new.due, Due::Never);
        assert_eq!(new.access_at, None);
        assert!(!new.lock_after_due);
    }

    #[test]
    fn due_types_need_their_value_and_only_theirs() {
        let (c, l) = (one(), vec![B.to_owned()]);
        let with =
            |kind: &'static str, date: Option<&'static str>, period: Option<&'static str>| {
                NewEnrollments::parse(&RawEnrollments {
                    due_date_type: Some(kind),
                    due_date: date,
                    due_period: period,
                    ..raw(&c, &l)
                })
            };
        assert_eq!(
            with("due_period", None, Some("3")).unwrap().due,
            Due::After(3)
        );
        assert!(matches!(
            with("due_date", Some("2030-01-01"), None).unwrap().due,
            Due::At(_)
        ));
        assert_eq!(with("default", None, None).unwrap().due, Due::Never);
        for (kind, date, period, message) in [
            (
                "due_date",
                None,
                None,
                "dueDate is required when dueDateType is due_date",
            ),
            (
                "due_period",
                None,
                None,
                "duePeriod is required when dueDateType is due_period",
            ),
            (
                "due_period",
                None,
                Some("0"),
                "duePeriod must be a whole number from 1 to 87600",
            ),
            (
                "unlimited",
                Some("2030-01-01"),
                None,
                "dueDate may be given only when",
            ),
            (
                "soon",
                None,
                None,
                "dueDateType 'soon' is not one of unlimited, default",
            ),
        ] {
            let err = with(kind, date, period).unwrap_err().to_string();
            assert!(err.starts_with(message), "{err}");
        }
    }

    #[test]
    fn the_product_of_the_lists_is_bounded_naming_the_limit() {
        let courses: Vec<String> = (0..101)
            .map(|n| format!("0191a000-0000-7000-8000-{n:012x}"))
            .collect();
        let learners: Vec<String> = (0..100)
            .map(|n| format!("0191a000-0000-7000-8001-{n:012x}"))
            .collect();
        let err = NewEnrollments::parse(&raw(&courses, &learners))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "courseIds × learnerIds must make at most 10000 enrollments in one request; 10100 were asked for"
        );
        assert!(NewEnrollments::parse(&raw(&courses[..100], &learners)).is_ok());
        assert!(NewEnrollments::parse(&raw(&[], &learners)).is_err());
    }
}
