//! List enrollments: all the caller may see, or one keyset page of them, optionally narrowed
//! to some learners, courses or enrollment ids (neighbours.md sections 5.1 to 5.3).
//!
//! Every statement walks one index in id order from the page's position: the account's
//! enrollments on `(account_id, id)`, or, when the request names learners or courses, each
//! named one's enrollments on `(learner_id, id)` / `(content_item_id, id)`, merged here. The
//! other filters are applied to the rows walked, so no statement sorts enrollments.
//!
//! A scoped caller (department administrator, publisher, custom role) sees the enrollments of
//! learners in its subtrees. The walk reads candidates in id order and drops those of learners
//! outside the scope, batch by batch, until the page is full: each statement stays a range
//! scan, at the price of reading past the enrollments of other departments. Walking the
//! scope's learners instead would cost one statement per learner per page, which is worse for
//! the common case of a scope holding most of the account.

use std::{
    collections::{BTreeMap, BTreeSet, HashSet},
    sync::Arc,
};

use chrono::{DateTime, Utc};
use futures::Stream;
use sea_orm::{
    ColumnTrait as _, ConnectionTrait, DatabaseConnection, EntityTrait as _, QueryFilter as _,
    QueryOrder as _, QuerySelect as _, prelude::Uuid,
};

use crate::service::{Parsed, keyset::Paged, lookups};
use crate::{
    access::{Caller, Grant, Operation},
    db::bulk,
    domain::{
        ids::IdList,
        page::{Listing, Page},
    },
    entities::enrollment,
    error::ServiceResult,
};

/// Which enrollments to list: each list empty means "any".
#[derive(Debug, Clone, Default)]
pub struct EnrollmentFilter {
    pub learner_ids: IdList,
    pub course_ids: IdList,
    pub enrollment_ids: IdList,
}

/// An enrollment as the interface shows it (neighbours.md section 5.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnrollmentView {
    pub id: Uuid,
    pub course_id: Uuid,
    pub learner_id: Uuid,
    /// `YYYY-MM-DD` (UTC).
    pub access_date: String,
    /// `YYYY-MM-DD` (UTC), when a due date is set.
    pub due_date: Option<String>,
    /// The due date, when the item locks after it.
    pub expiration_date: Option<String>,
    pub should_lock_after_due_date: bool,
    /// Always false: every enrollment here is assigned by an administrator, none comes from a
    /// catalogue.
    pub enrollment_type_group: bool,
}

pub type EnrollmentList = Paged<EnrollmentView>;

fn day(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%d").to_string()
}

impl From<enrollment::Model> for EnrollmentView {
    fn from(e: enrollment::Model) -> Self {
        let due_date = e.due_at.map(day);
        Self {
            id: e.id,
            course_id: e.content_item_id,
            learner_id: e.learner_id,
            access_date: day(e.access_at.unwrap_or(e.created_at)),
            expiration_date: due_date.clone().filter(|_| e.lock_after_due),
            due_date,
            should_lock_after_due_date: e.lock_after_due,
            enrollment_type_group: false,
        }
    }
}

/// Every enrollment the caller may see that `filter` selects (`page` `None`), or one page.
pub async fn list_enrollments(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    filter: Parsed<EnrollmentFilter>,
    page: Option<Parsed<Page>>,
) -> ServiceResult<EnrollmentList> {
    let grant = caller.grant(Operation::ReadEnrollments)?;
    let filter = filter?;
    let page = page.transpose()?;
    let list = crate::service::keyset::read(
        Listing::Enrollments,
        page,
        |e: &enrollment::Model| e.id,
        |after, limit| read_after(conn, caller, grant, &filter, after, limit),
    )
    .await?;
    Ok(Paged {
        items: list.items.into_iter().map(EnrollmentView::from).collect(),
        next_page_token: list.next_page_token,
    })
}

/// Every enrollment the caller may see that `filter` selects, as chunks read one after the
/// other ([`crate::service::keyset::stream`]); refused like [`list_enrollments`] before the first.
pub fn stream_enrollments(
    db: &DatabaseConnection,
    caller: &Caller,
    filter: Parsed<EnrollmentFilter>,
) -> ServiceResult<impl Stream<Item = ServiceResult<Vec<EnrollmentView>>> + Send + 'static> {
    let grant = caller.grant(Operation::ReadEnrollments)?;
    let walk = Arc::new((caller.clone(), filter?));
    let db = db.clone();
    Ok(crate::service::keyset::stream(
        |e: &EnrollmentView| e.id,
        move |after, limit| {
            let (db, walk) = (db.clone(), Arc::clone(&walk));
            async move {
                let (caller, filter) = &*walk;
                let rows = read_after(&db, caller, grant, filter, after, limit).await?;
                Ok(rows.into_iter().map(EnrollmentView::from).collect())
            }
        },
    ))
}

/// Up to `limit` enrollments the caller may see with ids greater than `after`, ascending.
///
/// The walk follows one index; the filters it does not follow and a scoped caller's scope are
/// applied here, batch by batch, until the page is full or the walk ends. As conditions of the
/// statement they would let PostgreSQL combine two indexes and sort the result.
async fn read_after(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    grant: Grant,
    filter: &EnrollmentFilter,
    after: Option<Uuid>,
    limit: u64,
) -> ServiceResult<Vec<enrollment::Model>> {
    let scoped = grant == Grant::InScope;
    // An empty scope holds nobody: walking the account to drop every row would be waste.
    if scoped && caller.managed_department_ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut found = Vec::new();
    let mut cursor = after;
    // Where rows are dropped after the read, a small page would otherwise cost many
    // statements.
    let batch_size = if scoped || filter.lists() > 1 {
        limit.max(MIN_BATCH)
    } else {
        limit
    };
    loop {
        let batch = walk(conn, caller.account_id, filter, cursor, batch_size).await?;
        let exhausted = (batch.len() as u64) < batch_size;
        let Some(last) = batch.last() else {
            break;
        };
        cursor = Some(last.id);
        let mut batch: Vec<enrollment::Model> =
            batch.into_iter().filter(|e| filter.selects(e)).collect();
        if scoped && !batch.is_empty() {
            let learners: Vec<Uuid> = batch
                .iter()
                .map(|e| e.learner_id)
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            let outside: HashSet<Uuid> =
                lookups::users_outside_scope(conn, &caller.managed_department_ids, &learners)
                    .await?
                    .into_iter()
                    .collect();
            batch.retain(|e| !outside.contains(&e.learner_id));
        }
        found.extend(batch);
        if exhausted || found.len() as u64 >= limit {
            break;
        }
    }
    found.truncate(limit as usize);
    Ok(found)
}

/// The fewest rows one statement of a walk reads when it drops some of them.
const MIN_BATCH: u64 = 500;

impl EnrollmentFilter {
    /// How many of the lists narrow: beyond the first, each is applied to the rows walked.
    fn lists(&self) -> usize {
        [&self.learner_ids, &self.course_ids, &self.enrollment_ids]
            .iter()
            .filter(|ids| !ids.is_empty())
            .count()
    }

    /// Whether `e` passes every filter (the walk's own included, which it passes anyway).
    fn selects(&self, e: &enrollment::Model) -> bool {
        let passes =
            |ids: &IdList, id: Uuid| ids.is_empty() || ids.as_slice().binary_search(&id).is_ok();
        passes(&self.learner_ids, e.learner_id)
            && passes(&self.course_ids, e.content_item_id)
            && passes(&self.enrollment_ids, e.id)
    }
}

/// Up to `limit` enrollments of the account with ids greater than `after`, ascending, along
/// the one index the filter lets the walk follow; the other filters are not applied.
async fn walk(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    filter: &EnrollmentFilter,
    after: Option<Uuid>,
    limit: u64,
) -> ServiceResult<Vec<enrollment::Model>> {
    let in_account = || {
        let mut query =
            enrollment::Entity::find().filter(enrollment::Column::AccountId.eq(account_id));
        if let Some(after) = after {
            query = query.filter(enrollment::Column::Id.gt(after));
        }
        query
    };
    if !filter.enrollment_ids.is_empty() {
        // A bounded list of primary keys: read them all, order and cut here.
        let mut rows = Vec::new();
        for chunk in bulk::in_chunks(filter.enrollment_ids.as_slice()) {
            rows.extend(
                in_account()
                    .filter(enrollment::Column::Id.is_in(chunk.iter().copied()))
                    .all(conn)
                    .await?,
            );
        }
        rows.sort_unstable_by_key(|e| e.id);
        rows.truncate(limit as usize);
        return Ok(rows);
    }
    let (column, ids) = if !filter.learner_ids.is_empty() {
        (enrollment::Column::LearnerId, filter.learner_ids.as_slice())
    } else if !filter.course_ids.is_empty() {
        (
            enrollment::Column::ContentItemId,
            filter.course_ids.as_slice(),
        )
    } else {
        let walk = crate::service::keyset::account_range(
            conn.get_database_backend(),
            enrollment::Entity::find(),
            enrollment::Column::AccountId,
            enrollment::Column::Id,
            account_id,
            after,
        );
        return Ok(walk.limit(limit).all(conn).await?);
    };
    // One walk per named learner (or course), merged: the first `limit` of the union are
    // among the first `limit` of each walk. The map never holds more than `limit` rows.
    let mut merged = BTreeMap::new();
    for id in ids {
        let rows = in_account()
            .filter(column.eq(*id))
            .order_by_asc(enrollment::Column::Id)
            .limit(limit)
            .all(conn)
            .await?;
        for row in rows {
            merged.insert(row.id, row);
        }
        while merged.len() as u64 > limit {
            merged.pop_last();
        }
    }
    Ok(merged.into_values().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().into()
    }

    fn model(access: Option<&str>, due: Option<&str>, lock: bool) -> enrollment::Model {
        enrollment::Model {
            id: Uuid::nil(),
            account_id: Uuid::nil(),
            learner_id: Uuid::nil(),
            content_item_id: Uuid::nil(),
            created_at: at("2022-07-14T23:30:00Z"),
            access_at: access.map(at),
            due_at: due.map(at),
            lock_after_due: lock,
        }
    }

    #[test]
    fn an_enrollment_without_an_access_date_was_open_from_its_creation() {
        let view = EnrollmentView::from(model(None, None, false));
        assert_eq!(view.access_date, "2022-07-14");
        assert_eq!(view.due_date, None);
        assert_eq!(view.expiration_date, None);
    }

    #[test]
    fn the_expiration_date_is_the_due_date_only_when_the_item_locks() {
        let open = EnrollmentView::from(model(
            Some("2022-08-01T10:30:00Z"),
            Some("2022-09-01T00:00:00Z"),
            false,
        ));
        assert_eq!(open.access_date, "2022-08-01");
        assert_eq!(open.due_date.as_deref(), Some("2022-09-01"));
        assert_eq!(open.expiration_date, None);
        let locked = EnrollmentView::from(model(None, Some("2022-09-01T00:00:00Z"), true));
        assert_eq!(locked.expiration_date.as_deref(), Some("2022-09-01"));
        assert!(locked.should_lock_after_due_date);
    }
}
