//! Gamification points: read them (interface 4.7; contract section 8) as a stream in
//! ascending user id order, read from the database one page at a time so that a large
//! account is never held whole in memory; and change a user's total ([`change`]: award,
//! withdraw, or add as `lms.v1.DirectoryService` does, one function for all three).

mod change;

pub use change::{Direction, MAX_AMOUNT, MAX_REASON_CHARS, PointsMove, PointsUser, move_points};

use std::collections::HashMap;

use futures::{Stream, StreamExt as _, TryStreamExt as _, stream};
use sea_orm::{
    ColumnTrait as _, ConnectionTrait as _, DatabaseConnection, DbBackend, EntityTrait as _,
    QueryFilter as _, QuerySelect as _, Statement, prelude::Uuid,
};

use super::{Parsed, lookups};
use crate::{
    access::{Caller, Grant, Operation},
    domain::ids::IdList,
    entities::user_points,
    error::{ServiceError, ServiceResult},
};

/// Users read per database round trip.
const PAGE: u64 = 1_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserPointsRow {
    pub user_id: Uuid,
    pub points: i64,
}

/// Checks the request and permissions up front (so every error comes before the first
/// row), then returns the rows as a lazily paged stream.
pub async fn points(
    db: &DatabaseConnection,
    caller: &Caller,
    user_ids: Parsed<IdList>,
) -> ServiceResult<impl Stream<Item = ServiceResult<UserPointsRow>> + Send + 'static> {
    let grant = caller.grant(Operation::GetPoints)?;
    let user_ids = user_ids?;
    // No ids means every user the caller may see.
    let filter: Option<Vec<Uuid>> = if !user_ids.is_empty() {
        let ids = user_ids.into_inner();
        let known = lookups::existing_users(db, caller.account_id, &ids).await?;
        let ids: Vec<Uuid> = ids.into_iter().filter(|id| known.contains(id)).collect();
        if grant == Grant::InScope {
            let outside =
                lookups::users_outside_scope(db, &caller.managed_department_ids, &ids).await?;
            if let Some(first) = outside.iter().min() {
                return Err(ServiceError::denied(format!(
                    "userIds: user '{first}' is outside the departments you manage."
                )));
            }
        }
        Some(ids)
    } else if grant == Grant::InScope {
        Some(
            lookups::users_in_subtrees(db, caller.account_id, &caller.managed_department_ids)
                .await?,
        )
    } else {
        None
    };
    let pager = Pager {
        db: db.clone(),
        account_id: caller.account_id,
        filter,
    };
    Ok(
        stream::try_unfold((pager, None), |(pager, after)| async move {
            let page = pager.page(after).await?;
            Ok::<_, ServiceError>(match page.last() {
                Some(last) => {
                    let next = Some(last.user_id);
                    Some((page, (pager, next)))
                }
                None => None,
            })
        })
        .map_ok(|page| stream::iter(page.into_iter().map(Ok)))
        .try_flatten()
        .boxed(),
    )
}

struct Pager {
    db: DatabaseConnection,
    account_id: Uuid,
    /// Set when the users are known up front (named by the caller, or the caller's
    /// subtrees): only these, ascending.
    filter: Option<Vec<Uuid>>,
}

impl Pager {
    /// The next page of users after `after`, with their points (0 when they have none).
    async fn page(&self, after: Option<Uuid>) -> ServiceResult<Vec<UserPointsRow>> {
        let ids: Vec<Uuid> = match &self.filter {
            Some(filter) => {
                let start = after.map_or(0, |a| filter.partition_point(|id| *id <= a));
                filter
                    .iter()
                    .skip(start)
                    .take(PAGE as usize)
                    .copied()
                    .collect()
            }
            None if self.db.get_database_backend() == DbBackend::Sqlite => {
                return self.packed_page(after).await;
            }
            None => return self.joined_page(after).await,
        };
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let points: HashMap<Uuid, i64> = user_points::Entity::find()
            .select_only()
            .column(user_points::Column::UserId)
            .column(user_points::Column::Points)
            .filter(user_points::Column::UserId.is_in(ids.iter().copied()))
            .into_tuple::<(Uuid, i64)>()
            .all(&self.db)
            .await?
            .into_iter()
            .collect();
        Ok(ids
            .into_iter()
            .map(|user_id| UserPointsRow {
                user_id,
                points: points.get(&user_id).copied().unwrap_or(0),
            })
            .collect())
    }

    /// The next page of the whole account on PostgreSQL: each user's points found by its
    /// own probe of the `user_points` key.
    ///
    /// With ids that are not in insertion order (UUID v1 and v4 ids, as accounts moving
    /// from other systems bring), a page of a thousand users in id order names rows all over
    /// the `user_points` heap, and `user_id IN (…)` was planned as a scan of the whole table
    /// for every page: the whole read cost pages × table. A probe per user costs the page.
    async fn joined_page(&self, after: Option<Uuid>) -> ServiceResult<Vec<UserPointsRow>> {
        let statement = Statement::from_sql_and_values(
            DbBackend::Postgres,
            JOINED_PAGE,
            [
                crate::db::pg_array::uuids(&[self.account_id]).into(),
                after.unwrap_or_else(Uuid::nil).into(),
                (PAGE as i64).into(),
            ],
        );
        Ok(self
            .db
            .query_all_raw(statement)
            .await?
            .into_iter()
            .map(|row| {
                Ok(UserPointsRow {
                    user_id: row.try_get("", "user_id")?,
                    points: row.try_get("", "points")?,
                })
            })
            .collect::<Result<_, sea_orm::DbErr>>()?)
    }

    /// The next page of the whole account on SQLite, as one row.
    ///
    /// SQLite's driver hands every result row from its own thread to ours: a hundred
    /// thousand users and their points were two hundred thousand hand-overs, most of the
    /// read's time. Packed into one text per page they are a hundred.
    async fn packed_page(&self, after: Option<Uuid>) -> ServiceResult<Vec<UserPointsRow>> {
        let statement = Statement::from_sql_and_values(
            DbBackend::Sqlite,
            PACKED_PAGE,
            [
                self.account_id.into(),
                after.unwrap_or_else(Uuid::nil).into(),
                (PAGE as i64).into(),
            ],
        );
        let Some(row) = self.db.query_one_raw(statement).await? else {
            return Ok(Vec::new());
        };
        let Some(packed) = row.try_get::<Option<String>>("", "page")? else {
            return Ok(Vec::new());
        };
        let mut rows = packed
            .split(',')
            .map(unpack_points_row)
            .collect::<ServiceResult<Vec<_>>>()?;
        // The subquery's order is the order `group_concat` sees; sorting a sorted page
        // costs one pass and keeps the answer right should that ever change.
        rows.sort_unstable_by_key(|row| row.user_id);
        Ok(rows)
    }
}

/// One page of [`Pager::packed_page`]: `HEX(id)` followed by the points, entries joined
/// by commas, in ascending id order. `?2` is the last id of the page before (nil at first).
const PACKED_PAGE: &str = "\
    SELECT group_concat(hex(m.id) || m.points, ',') AS page FROM ( \
      SELECT u.id AS id, COALESCE(p.points, 0) AS points \
        FROM users u LEFT JOIN user_points p ON p.user_id = u.id \
       WHERE u.account_id = ?1 AND u.id > ?2 ORDER BY u.id LIMIT ?3 \
    ) m";

/// One page of [`Pager::joined_page`]. The account is matched as an array and the rows
/// ordered by `(account_id, id)` for the reason `keyset::account_range` gives: only the
/// composite index then gives the order, positioned at `(account, after)`.
const JOINED_PAGE: &str = "\
    SELECT u.id AS user_id, \
           COALESCE((SELECT p.points FROM user_points p WHERE p.user_id = u.id), 0) AS points \
      FROM users u \
     WHERE u.account_id = ANY($1::text::uuid[]) AND u.id > $2 \
     ORDER BY u.account_id, u.id LIMIT $3";

/// `0192…0001` + `421`: 32 hex digits of the id, then the points in decimal.
fn unpack_points_row(entry: &str) -> ServiceResult<UserPointsRow> {
    let malformed = || ServiceError::from(anyhow::anyhow!("malformed points entry {entry:?}"));
    let (id, points) = (entry.get(..32), entry.get(32..));
    let (Some(id), Some(points)) = (id, points) else {
        return Err(malformed());
    };
    Ok(UserPointsRow {
        user_id: Uuid::try_parse(id).map_err(|_| malformed())?,
        points: points.parse().map_err(|_| malformed())?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_entry_is_an_id_and_its_points() {
        let id = Uuid::from_u128(0x0192_0000_0003_7000_8000_0000_0000_00ab);
        let entry = format!("{}-42", id.simple().to_string().to_uppercase());
        assert_eq!(
            unpack_points_row(&entry).unwrap(),
            UserPointsRow {
                user_id: id,
                points: -42
            }
        );
        assert!(unpack_points_row("0192").is_err());
        assert!(unpack_points_row(&format!("{}x", id.simple())).is_err());
    }
}
