//! The learner results lists (results.md sections 3 to 5): one row per enrollment the caller
//! may see that every filter selects, ascending by enrollment id, by keyset pages or as a
//! stream.
//!
//! Every statement walks one index in enrollment-id order from the page's position, chosen
//! from the filters so that a filter that selects few rows never walks the account: named
//! enrollments by primary key; named learners (or the few learners of small departments)
//! each on `enrollments (learner_id, id)`; named content items on
//! `enrollments (content_item_id, id)`; a date window holding few rows on its own
//! `(account_id, date, id)` index, put in id order here; named statuses each on
//! `learner_results (account_id, effective_status, enrollment_id)`; else the account's
//! results on `(account_id, enrollment_id)`. The walks of several keys are merged here. The
//! rows walked are then read by key, each result joined to its enrollment, learner and item
//! in one statement (the account walk reads them in its own), and the other filters and the
//! caller's scope applied to them, batch by batch, until the page is full: no statement
//! sorts, and a row never moves, since its key is its enrollment's id.

use std::{
    collections::{BTreeMap, HashSet},
    sync::Arc,
};

use chrono::{DateTime, Utc};
use futures::Stream;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, DbBackend, EntityTrait as _, FromQueryResult,
    JoinType, QueryFilter as _, QueryOrder as _, QuerySelect as _, RelationTrait as _,
    prelude::Uuid, sea_query::Expr,
};

use crate::service::{Parsed, keyset, keyset::Paged, lookups};
use crate::{
    access::{Caller, Grant, Operation},
    db::{bulk, pg_array},
    domain::{
        Invalid, Reason,
        ids::{IdList, ResourceRef},
        page::{Listing, Page},
        results::{CompletionStatus, DateWindow, Score, WindowFields, format_date},
    },
    entities::{content_item, department_closure, enrollment, learner_result, user},
    error::ServiceResult,
};

/// A learner's status as the interface numbers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UserStatus {
    Active = 1,
    Blocked = 3,
    EmploymentEnded = 5,
}

impl UserStatus {
    fn of(row: &Joined) -> UserStatus {
        match (row.active, row.employment_ended) {
            (true, _) => UserStatus::Active,
            (false, false) => UserStatus::Blocked,
            (false, true) => UserStatus::EmploymentEnded,
        }
    }
}

/// Which results to list; an empty list filters nothing.
#[derive(Debug, Clone, Default)]
pub struct ResultFilter {
    pub user_ids: IdList,
    /// `None`: any item. `Some`: these items (the intersection of the lists naming items,
    /// which may be empty: then nothing matches).
    pub course_ids: Option<Vec<Uuid>>,
    pub department_ids: IdList,
    pub enrollment_ids: IdList,
    pub statuses: Vec<CompletionStatus>,
    /// Never empty: absent means active learners only.
    pub user_statuses: Vec<UserStatus>,
    pub access: DateWindow,
    pub due: DateWindow,
    pub completion: DateWindow,
}

/// A list request's values as the adapters receive them.
#[derive(Debug, Clone, Default)]
pub struct RawResultFilter<'a> {
    pub user_ids: &'a [String],
    pub course_ids: &'a [String],
    pub department_ids: &'a [String],
    pub enrollment_ids: &'a [String],
    pub completion_statuses: &'a [String],
    pub user_statuses: &'a [i32],
    /// (start, end) of each window.
    pub access_date: (Option<&'a str>, Option<&'a str>),
    pub due_date: (Option<&'a str>, Option<&'a str>),
    pub completion_date: (Option<&'a str>, Option<&'a str>),
    /// The module list's: each names a content item.
    pub module_ids: &'a [String],
    pub course_item_ids: &'a [String],
}

const USER_STATUSES: &str = "1, 3, 5";

fn window(name: &'static str) -> WindowFields {
    match name {
        "accessDate" => WindowFields {
            window: "accessDate",
            start: "accessDate[startDate]",
            end: "accessDate[endDate]",
        },
        "dueDate" => WindowFields {
            window: "dueDate",
            start: "dueDate[startDate]",
            end: "dueDate[endDate]",
        },
        _ => WindowFields {
            window: "completionDate",
            start: "completionDate[startDate]",
            end: "completionDate[endDate]",
        },
    }
}

impl ResultFilter {
    /// The filters of a list request, named as the HTTP interface spells its parameters.
    pub fn parse(raw: &RawResultFilter<'_>) -> Result<ResultFilter, Invalid> {
        let user_ids = IdList::parse("userIds", raw.user_ids)?;
        let mut course_ids: Option<Vec<Uuid>> = None;
        for (field, ids) in [
            ("courseIds", raw.course_ids),
            ("moduleIds", raw.module_ids),
            ("courseItemIds", raw.course_item_ids),
        ] {
            let ids = IdList::parse(field, ids)?;
            if ids.is_empty() {
                continue;
            }
            course_ids = Some(match course_ids {
                None => ids.into_inner(),
                Some(before) => before
                    .into_iter()
                    .filter(|id| ids.as_slice().binary_search(id).is_ok())
                    .collect(),
            });
        }
        let department_ids = IdList::parse("departmentIds", raw.department_ids)?;
        let enrollment_ids = IdList::parse("enrollmentIds", raw.enrollment_ids)?;
        let mut statuses = raw
            .completion_statuses
            .iter()
            .map(|raw| CompletionStatus::parse("completionStatuses", raw))
            .collect::<Result<Vec<_>, _>>()?;
        statuses.sort_unstable();
        statuses.dedup();
        let mut user_statuses = raw
            .user_statuses
            .iter()
            .map(|code| match code {
                1 => Ok(UserStatus::Active),
                3 => Ok(UserStatus::Blocked),
                5 => Ok(UserStatus::EmploymentEnded),
                other => Err(Invalid::new(
                    "userStatuses",
                    Reason::NotOneOf {
                        raw: other.to_string(),
                        allowed: USER_STATUSES.to_owned(),
                    },
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        if user_statuses.is_empty() {
            user_statuses.push(UserStatus::Active);
        }
        let parse_window = |name, (start, end): (Option<&str>, Option<&str>)| {
            DateWindow::parse(window(name), start, end)
        };
        Ok(ResultFilter {
            user_ids,
            course_ids,
            department_ids,
            enrollment_ids,
            statuses,
            user_statuses,
            access: parse_window("accessDate", raw.access_date)?,
            due: parse_window("dueDate", raw.due_date)?,
            completion: parse_window("completionDate", raw.completion_date)?,
        })
    }

    /// Active learners' results in one content item (its final statuses).
    fn of_item(item: Uuid) -> ResultFilter {
        ResultFilter {
            course_ids: Some(vec![item]),
            user_statuses: vec![UserStatus::Active],
            ..Default::default()
        }
    }
}

/// The effective result of one enrollment as the lists show it (results.md section 3).
#[derive(Debug, Clone, PartialEq)]
pub struct ResultView {
    pub enrollment_id: Uuid,
    pub user_id: Uuid,
    pub course_id: Uuid,
    pub course_title: String,
    pub access_date: String,
    pub completion_status: &'static str,
    pub is_overdue: bool,
    pub completion_date: Option<String>,
    pub due_date: Option<String>,
    pub expiration_date: Option<String>,
    pub progress: u32,
    pub time_spent: u64,
    pub awarded_score: f64,
    pub passing_score: f64,
    pub views_count: u64,
    pub last_view_date: Option<String>,
}

pub type ResultList = Paged<ResultView>;

/// One page of the course results (`Listing::LearnerResults`) or the module results
/// (`Listing::LearnerModuleResults`) the caller may see that `filter` selects.
pub async fn list_results(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    filter: Parsed<ResultFilter>,
    page: Parsed<Page>,
) -> ServiceResult<ResultList> {
    let grant = caller.grant(Operation::ReadResults)?;
    let filter = filter?;
    let page = page?;
    let walk = Walk::prepare(conn, caller, grant, filter).await?;
    keyset::read(
        page.listing,
        Some(page),
        |row: &ResultView| row.enrollment_id,
        |after, limit| walk.read_after(conn, after, limit),
    )
    .await
}

/// The results of the active learners in scope enrolled in one content item, as chunks read
/// one after the other; NOT_FOUND for an item that is not the account's.
pub async fn stream_final_statuses(
    db: &DatabaseConnection,
    caller: &Caller,
    item: &ResourceRef,
) -> ServiceResult<impl Stream<Item = ServiceResult<Vec<ResultView>>> + Send + 'static> {
    let grant = caller.grant(Operation::ReadResults)?;
    let item_id = item.id("Content item")?;
    let exists = content_item::Entity::find_by_id(item_id)
        .filter(content_item::Column::AccountId.eq(caller.account_id))
        .one(db)
        .await?
        .is_some();
    if !exists {
        return Err(item.not_found("Content item").into());
    }
    let walk = Arc::new(Walk::prepare(db, caller, grant, ResultFilter::of_item(item_id)).await?);
    let db = db.clone();
    Ok(keyset::stream(
        |row: &ResultView| row.enrollment_id,
        move |after, limit| {
            let (db, walk) = (db.clone(), Arc::clone(&walk));
            async move { walk.read_after(&db, after, limit).await }
        },
    ))
}

/// A list request made ready to walk: the filter, and the departments the caller's scope and
/// the department filter allow (`None`: any).
struct Walk {
    account_id: Uuid,
    filter: ResultFilter,
    scope: Option<HashSet<Uuid>>,
    departments: Option<HashSet<Uuid>>,
    /// The learners the walk follows instead of the account, when a filter names few.
    learners: Option<Vec<Uuid>>,
}

/// The most learners of a department filter walked one by one; a larger department is
/// read by the account walk, which then drops the rows of other departments.
const FEW_LEARNERS: usize = 200;

/// The fewest rows one statement of a walk reads when it drops some of them.
const MIN_BATCH: u64 = 500;

/// The most rows of a date window read on the window's own index to page it; a window holding
/// more past the page's position is paged by the account walk, which then finds its rows often
/// enough (results.md section 11: a filter that matches few rows must not walk the account).
const FEW_IN_WINDOW: u64 = 5_000;

impl Walk {
    async fn prepare(
        conn: &impl ConnectionTrait,
        caller: &Caller,
        grant: Grant,
        filter: ResultFilter,
    ) -> ServiceResult<Walk> {
        let scope = match grant {
            Grant::InScope => {
                Some(subtree(conn, caller.account_id, &caller.managed_department_ids).await?)
            }
            _ => None,
        };
        let departments = if filter.department_ids.is_empty() {
            None
        } else {
            Some(subtree(conn, caller.account_id, filter.department_ids.as_slice()).await?)
        };
        let mut learners =
            (!filter.user_ids.is_empty()).then(|| filter.user_ids.as_slice().to_vec());
        if learners.is_none() && filter.enrollment_ids.is_empty() && departments.is_some() {
            learners =
                few_learners(conn, caller.account_id, filter.department_ids.as_slice()).await?;
        }
        Ok(Walk {
            account_id: caller.account_id,
            filter,
            scope,
            departments,
            learners,
        })
    }

    /// Up to `limit` rows the caller may see that the filter selects, with enrollment ids
    /// greater than `after`, ascending.
    async fn read_after(
        &self,
        conn: &impl ConnectionTrait,
        after: Option<Uuid>,
        limit: u64,
    ) -> ServiceResult<Vec<ResultView>> {
        if self.scope.as_ref().is_some_and(HashSet::is_empty)
            || self.departments.as_ref().is_some_and(HashSet::is_empty)
            || self.filter.course_ids.as_ref().is_some_and(Vec::is_empty)
            || self.learners.as_ref().is_some_and(Vec::is_empty)
        {
            return Ok(Vec::new());
        }
        let now = Utc::now();
        let mut found = Vec::new();
        let mut cursor = after;
        let batch_size = limit.max(MIN_BATCH);
        loop {
            let rows = match self.walk(conn, cursor, batch_size).await? {
                Walked::Ids(ids) => self.rows_of(conn, &ids).await?,
                Walked::Account => self.account_rows(conn, cursor, batch_size).await?,
            };
            let exhausted = (rows.len() as u64) < batch_size;
            let Some(last) = rows.last() else {
                break;
            };
            cursor = Some(last.enrollment_id);
            found.extend(
                rows.iter()
                    .filter(|row| self.selects(row))
                    .map(|row| view(row, now)),
            );
            if exhausted || found.len() as u64 >= limit {
                break;
            }
        }
        found.truncate(limit as usize);
        Ok(found)
    }

    /// Up to `limit` enrollment ids greater than `after`, ascending, along the one index the
    /// filters let the walk follow; no other filter is applied. [`Walked::Account`] when no
    /// filter narrows the walk: the account's rows are then read in the walk's own statement.
    async fn walk(
        &self,
        conn: &impl ConnectionTrait,
        after: Option<Uuid>,
        limit: u64,
    ) -> ServiceResult<Walked> {
        let filter = &self.filter;
        if !filter.enrollment_ids.is_empty() {
            return Ok(Walked::Ids(
                filter
                    .enrollment_ids
                    .as_slice()
                    .iter()
                    .copied()
                    .filter(|id| after.is_none_or(|after| *id > after))
                    .take(limit as usize)
                    .collect(),
            ));
        }
        if let Some(learners) = &self.learners {
            return Ok(Walked::Ids(
                self.merged(conn, enrollment::Column::LearnerId, learners, after, limit)
                    .await?,
            ));
        }
        if let Some(items) = &filter.course_ids {
            return Ok(Walked::Ids(
                self.merged(conn, enrollment::Column::ContentItemId, items, after, limit)
                    .await?,
            ));
        }
        if let Some(ids) = self.in_window(conn, after, limit).await? {
            return Ok(Walked::Ids(ids));
        }
        if !filter.statuses.is_empty() {
            let mut merged = BTreeMap::new();
            for status in &filter.statuses {
                for id in self.by_status(conn, *status, after, limit).await? {
                    merged.insert(id, ());
                }
                while merged.len() as u64 > limit {
                    merged.pop_last();
                }
            }
            return Ok(Walked::Ids(merged.into_keys().collect()));
        }
        Ok(Walked::Account)
    }

    /// The first `limit` rows of the account past `after`, on `learner_results (account_id,
    /// enrollment_id)`, each joined to its enrollment, learner and item by primary key.
    async fn account_rows(
        &self,
        conn: &impl ConnectionTrait,
        after: Option<Uuid>,
        limit: u64,
    ) -> ServiceResult<Vec<Joined>> {
        let query = keyset::account_range(
            conn.get_database_backend(),
            joined(),
            learner_result::Column::AccountId,
            learner_result::Column::EnrollmentId,
            self.account_id,
            after,
        );
        Ok(query.limit(limit).into_model().all(conn).await?)
    }

    /// The rows of the enrollments `ids` (ascending) of the account, in the same order: one
    /// statement (per chunk of ids) joining each result to its enrollment, learner and item.
    async fn rows_of(
        &self,
        conn: &impl ConnectionTrait,
        ids: &[Uuid],
    ) -> ServiceResult<Vec<Joined>> {
        use learner_result::Column as R;
        let mut rows: Vec<Joined> = Vec::with_capacity(ids.len());
        if conn.get_database_backend() == DbBackend::Postgres {
            rows = joined()
                .filter(R::AccountId.eq(self.account_id))
                .filter(Expr::cust_with_values(
                    r#""learner_results"."enrollment_id" = ANY($1::text::uuid[])"#,
                    [pg_array::uuids(ids)],
                ))
                .into_model()
                .all(conn)
                .await?;
        } else {
            for chunk in bulk::in_chunks(ids) {
                rows.extend(
                    joined()
                        .filter(R::AccountId.eq(self.account_id))
                        .filter(R::EnrollmentId.is_in(chunk.iter().copied()))
                        .into_model::<Joined>()
                        .all(conn)
                        .await?,
                );
            }
        }
        rows.sort_unstable_by_key(|row| row.enrollment_id);
        Ok(rows)
    }

    /// The first `limit` enrollment ids past `after` of the first date window holding at most
    /// [`FEW_IN_WINDOW`] rows past it, read on the window's index (`(account_id, date, id)`)
    /// and put in order here; `None` when no window is that narrow.
    async fn in_window(
        &self,
        conn: &impl ConnectionTrait,
        after: Option<Uuid>,
        limit: u64,
    ) -> ServiceResult<Option<Vec<Uuid>>> {
        use enrollment::Column as E;
        use learner_result::Column as R;
        let (filter, account) = (&self.filter, self.account_id);
        // `None`: the completion date, on the results; else a date of the enrollments.
        for (window, date) in [
            (&filter.completion, None),
            (&filter.due, Some(E::DueAt)),
            (&filter.access, Some(E::AccessAt)),
        ] {
            if window.is_open() {
                continue;
            }
            let mut ids = match date {
                None => {
                    let columns = (R::AccountId, R::EffectiveCompletedAt, R::EnrollmentId);
                    window_ids::<learner_result::Entity>(conn, window, columns, account, after)
                        .await?
                }
                Some(date) => {
                    let columns = (E::AccountId, date, E::Id);
                    window_ids::<enrollment::Entity>(conn, window, columns, account, after).await?
                }
            };
            if ids.len() as u64 <= FEW_IN_WINDOW {
                ids.sort_unstable();
                ids.truncate(limit as usize);
                return Ok(Some(ids));
            }
        }
        Ok(None)
    }

    /// One walk per key of `column` on `(column, id)`, merged: the first `limit` of the
    /// union are among the first `limit` of each walk.
    async fn merged(
        &self,
        conn: &impl ConnectionTrait,
        column: enrollment::Column,
        keys: &[Uuid],
        after: Option<Uuid>,
        limit: u64,
    ) -> ServiceResult<Vec<Uuid>> {
        let mut merged = BTreeMap::new();
        for key in keys {
            let mut query = enrollment::Entity::find()
                .select_only()
                .column(enrollment::Column::Id)
                .filter(column.eq(*key))
                .filter(enrollment::Column::AccountId.eq(self.account_id));
            if let Some(after) = after {
                query = query.filter(enrollment::Column::Id.gt(after));
            }
            let ids: Vec<Uuid> = query
                .order_by_asc(enrollment::Column::Id)
                .limit(limit)
                .into_tuple()
                .all(conn)
                .await?;
            for id in ids {
                merged.insert(id, ());
            }
            while merged.len() as u64 > limit {
                merged.pop_last();
            }
        }
        Ok(merged.into_keys().collect())
    }

    /// The account's results in `status`, on `(account_id, effective_status,
    /// enrollment_id)`. On PostgreSQL the account is matched as an array, as
    /// [`keyset::account_range`] explains, so that only this index gives the order.
    async fn by_status(
        &self,
        conn: &impl ConnectionTrait,
        status: CompletionStatus,
        after: Option<Uuid>,
        limit: u64,
    ) -> ServiceResult<Vec<Uuid>> {
        let mut query = learner_result::Entity::find()
            .select_only()
            .column(learner_result::Column::EnrollmentId);
        if conn.get_database_backend() == DbBackend::Postgres {
            query = query
                .filter(Expr::cust_with_values(
                    r#""learner_results"."account_id" = ANY($1::text::uuid[])"#,
                    [pg_array::uuids(&[self.account_id])],
                ))
                .order_by_asc(learner_result::Column::AccountId)
                .order_by_asc(learner_result::Column::EffectiveStatus);
        } else {
            query = query.filter(learner_result::Column::AccountId.eq(self.account_id));
        }
        query = query.filter(learner_result::Column::EffectiveStatus.eq(status.as_str()));
        if let Some(after) = after {
            query = query.filter(learner_result::Column::EnrollmentId.gt(after));
        }
        Ok(query
            .order_by_asc(learner_result::Column::EnrollmentId)
            .limit(limit)
            .into_tuple()
            .all(conn)
            .await?)
    }

    /// Whether the caller may see `row` and every filter selects it.
    fn selects(&self, row: &Joined) -> bool {
        let f = &self.filter;
        let listed = |ids: &[Uuid], id: Uuid| ids.is_empty() || ids.binary_search(&id).is_ok();
        listed(f.user_ids.as_slice(), row.learner_id)
            && listed(f.enrollment_ids.as_slice(), row.enrollment_id)
            && f.course_ids
                .as_ref()
                .is_none_or(|ids| ids.binary_search(&row.content_item_id).is_ok())
            && (f.statuses.is_empty()
                || f.statuses
                    .iter()
                    .any(|status| status.as_str() == row.effective_status))
            && f.user_statuses.contains(&UserStatus::of(row))
            && self
                .departments
                .as_ref()
                .is_none_or(|set| set.contains(&row.department_id))
            && self
                .scope
                .as_ref()
                .is_none_or(|set| set.contains(&row.department_id))
            && (f.access.is_open() || f.access.contains(row.access_at.unwrap_or(row.created_at)))
            && (f.due.is_open() || row.due_at.is_some_and(|at| f.due.contains(at)))
            && (f.completion.is_open()
                || row
                    .effective_completed_at
                    .is_some_and(|at| f.completion.contains(at)))
    }
}

/// Up to [`FEW_IN_WINDOW`] + 1 ids past `after` whose `date` lies in `window`, read on
/// `(account, date, id)` in the index's order (by date): the caller puts them in id order.
async fn window_ids<E: sea_orm::EntityTrait>(
    conn: &impl ConnectionTrait,
    window: &DateWindow,
    (account, date, id): (E::Column, E::Column, E::Column),
    account_id: Uuid,
    after: Option<Uuid>,
) -> ServiceResult<Vec<Uuid>> {
    let mut query = E::find()
        .select_only()
        .column(id)
        .filter(account.eq(account_id));
    if let Some(start) = window.start {
        query = query.filter(date.gte(start));
    }
    if let Some(end) = window.end {
        query = query.filter(date.lte(end));
    }
    if let Some(after) = after {
        query = query.filter(id.gt(after));
    }
    Ok(query
        .limit(FEW_IN_WINDOW + 1)
        .into_tuple()
        .all(conn)
        .await?)
}

/// Every department of the account in the subtrees of `roots`, the roots included.
async fn subtree(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    roots: &[Uuid],
) -> ServiceResult<HashSet<Uuid>> {
    let mut found = HashSet::new();
    for chunk in bulk::in_chunks(roots) {
        let ids: Vec<Uuid> = department_closure::Entity::find()
            .select_only()
            .column(department_closure::Column::DescendantId)
            .filter(department_closure::Column::AccountId.eq(account_id))
            .filter(department_closure::Column::AncestorId.is_in(chunk.iter().copied()))
            .into_tuple()
            .all(conn)
            .await?;
        found.extend(ids);
    }
    Ok(found)
}

/// The learners of the subtrees of `roots`, ascending, when there are at most
/// [`FEW_LEARNERS`]; read through `users (department_id, id, account_id)` and cut there.
async fn few_learners(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    roots: &[Uuid],
) -> ServiceResult<Option<Vec<Uuid>>> {
    let mut ids: Vec<Uuid> = user::Entity::find()
        .select_only()
        .column(user::Column::Id)
        .filter(user::Column::AccountId.eq(account_id))
        .filter(user::Column::DepartmentId.in_subquery(lookups::subtree_departments(roots)))
        .limit(FEW_LEARNERS as u64 + 1)
        .into_tuple()
        .all(conn)
        .await?;
    if ids.len() > FEW_LEARNERS {
        return Ok(None);
    }
    ids.sort_unstable();
    Ok(Some(ids))
}

/// Where a walk's rows come from.
enum Walked {
    /// These enrollments, ascending: read by key.
    Ids(Vec<Uuid>),
    /// The account's results in order: read by the walk itself.
    Account,
}

/// A result with what its row shows and the filters look at: its enrollment's, its
/// learner's and its item's columns.
#[derive(Debug, FromQueryResult)]
struct Joined {
    enrollment_id: Uuid,
    effective_status: String,
    effective_completed_at: Option<DateTime<Utc>>,
    admin_score: Option<i32>,
    awarded_score: i32,
    passing_score: i32,
    progress: i32,
    time_spent: i64,
    views_count: i64,
    last_viewed_at: Option<DateTime<Utc>>,
    learner_id: Uuid,
    content_item_id: Uuid,
    created_at: DateTime<Utc>,
    access_at: Option<DateTime<Utc>>,
    due_at: Option<DateTime<Utc>>,
    lock_after_due: bool,
    department_id: Uuid,
    active: bool,
    employment_ended: bool,
    title: String,
}

/// `learner_results` joined to the enrollment, learner and item of each row, by primary key,
/// selecting the columns of [`Joined`].
fn joined() -> sea_orm::Select<learner_result::Entity> {
    use enrollment::Column as E;
    use learner_result::Column as R;
    learner_result::Entity::find()
        .select_only()
        .columns([R::EnrollmentId, R::EffectiveStatus, R::EffectiveCompletedAt])
        .columns([R::AdminScore, R::AwardedScore, R::PassingScore, R::Progress])
        .columns([R::TimeSpent, R::ViewsCount, R::LastViewedAt])
        .columns([
            E::LearnerId,
            E::ContentItemId,
            E::CreatedAt,
            E::AccessAt,
            E::DueAt,
        ])
        .column(E::LockAfterDue)
        .columns([
            user::Column::DepartmentId,
            user::Column::Active,
            user::Column::EmploymentEnded,
        ])
        .column(content_item::Column::Title)
        .join(
            JoinType::InnerJoin,
            learner_result::Relation::Enrollment.def(),
        )
        .join(JoinType::InnerJoin, enrollment::Relation::Learner.def())
        .join(JoinType::InnerJoin, enrollment::Relation::ContentItem.def())
}

fn view(row: &Joined, now: DateTime<Utc>) -> ResultView {
    let status = CompletionStatus::from_name(&row.effective_status)
        .map_or("not_started", CompletionStatus::as_str);
    let completed_at = row.effective_completed_at;
    let is_overdue = row.due_at.is_some_and(|due| match completed_at {
        Some(done) => done > due,
        None => due < now,
    });
    let awarded = row.admin_score.unwrap_or(row.awarded_score);
    ResultView {
        enrollment_id: row.enrollment_id,
        user_id: row.learner_id,
        course_id: row.content_item_id,
        course_title: row.title.clone(),
        access_date: format_date(row.access_at.unwrap_or(row.created_at)),
        completion_status: status,
        is_overdue,
        completion_date: completed_at.map(format_date),
        due_date: row.due_at.map(format_date),
        expiration_date: row.due_at.filter(|_| row.lock_after_due).map(format_date),
        progress: u32::try_from(row.progress).unwrap_or(0),
        time_spent: u64::try_from(row.time_spent).unwrap_or(0),
        awarded_score: Score::from_hundredths(awarded).as_f64(),
        passing_score: Score::from_hundredths(row.passing_score).as_f64(),
        views_count: u64::try_from(row.views_count).unwrap_or(0),
        last_view_date: row.last_viewed_at.map(format_date),
    }
}

/// Refuses what no list can answer. Kept beside the lists so the adapters stay three lines.
pub fn page(listing: Listing, size: Option<u64>, token: &str) -> Parsed<Page> {
    Page::parse(listing, size, token)
}
