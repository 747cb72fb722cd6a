//! Keyset paging shared by every listing: one page, or the whole list read page by page.
//!
//! A listing supplies one function, "up to `limit` rows with ids greater than `after`, in id
//! order", served by an index range scan. This module turns it into the answer of a paged
//! request (the page and the token of the next one) or of an unpaged one (every row, still
//! read in bounded statements so that none sorts or holds the account at once in the
//! database).

use std::future::Future;

use sea_orm::{
    ColumnTrait, DbBackend, EntityTrait, QueryFilter as _, QueryOrder as _, Select, prelude::Uuid,
    sea_query::Expr,
};

use crate::{
    db::pg_array,
    domain::page::{MAX_PAGE_SIZE, Page},
    error::ServiceResult,
};

/// One answer of a listing: its rows in id order and, while more follow, the next token.
#[derive(Debug, Clone)]
pub struct Paged<T> {
    pub items: Vec<T>,
    /// Present while more rows follow this page.
    pub next_page_token: Option<String>,
}

/// The page `page` of a listing, or every row when `page` is `None`.
///
/// `read_after(after, limit)` returns up to `limit` rows with ids greater than `after`,
/// ascending; `id` names a row's id.
pub async fn read<T, F, Fut>(
    page: Option<Page>,
    id: impl Fn(&T) -> Uuid,
    mut read_after: F,
) -> ServiceResult<Paged<T>>
where
    F: FnMut(Option<Uuid>, u64) -> Fut,
    Fut: Future<Output = ServiceResult<Vec<T>>>,
{
    let Some(page) = page else {
        let mut items = Vec::new();
        let mut after = None;
        loop {
            let batch = read_after(after, MAX_PAGE_SIZE).await?;
            let done = (batch.len() as u64) < MAX_PAGE_SIZE;
            after = batch.last().map(&id);
            items.extend(batch);
            if done {
                break;
            }
        }
        return Ok(Paged {
            items,
            next_page_token: None,
        });
    };
    // One row more than the page tells whether another page follows, so no token ever leads
    // to an empty page.
    let mut items = read_after(page.after, page.size + 1).await?;
    let more = items.len() as u64 > page.size;
    items.truncate(page.size as usize);
    let next_page_token = more
        .then(|| items.last().map(|last| page.next_token(id(last))))
        .flatten();
    Ok(Paged {
        items,
        next_page_token,
    })
}

/// `query` narrowed to the rows of `account_id` with ids greater than `after` (all of them
/// when `None`), in id order: one range of the table's `(account_id, id)` index.
///
/// On PostgreSQL the account is matched as `account_id = ANY($1::text::uuid[])` (one id in
/// the array, [`pg_array`]) and the rows are
/// ordered by `(account_id, id)`. The plain `account_id = $1 AND id > $2 ORDER BY id` is
/// planned there (generic and custom plans alike) as a walk of the primary key filtered by
/// account: in a database of many tenants that walk steps over every other tenant's rows whose
/// ids fall between this account's, so a page costs in proportion to the database. An array
/// match is no equality the planner folds into a constant, so only the composite index gives
/// the requested order, and it still positions the scan at `(account, after)`. SQLite plans
/// the plain form on the composite index already.
pub fn account_range<E, C>(
    backend: DbBackend,
    query: Select<E>,
    account_column: C,
    id_column: C,
    account_id: Uuid,
    after: Option<Uuid>,
) -> Select<E>
where
    E: EntityTrait,
    C: ColumnTrait,
{
    let mut query = if backend == DbBackend::Postgres {
        let column = format!(
            "\"{}\".\"{}\"",
            E::default().table_name(),
            account_column.as_str()
        );
        query
            .filter(Expr::cust_with_values(
                format!("{column} = ANY($1::text::uuid[])"),
                [pg_array::uuids(&[account_id])],
            ))
            .order_by_asc(account_column)
    } else {
        query.filter(account_column.eq(account_id))
    };
    if let Some(after) = after {
        query = query.filter(id_column.gt(after));
    }
    query.order_by_asc(id_column)
}

#[cfg(test)]
mod tests {
    use sea_orm::QueryTrait as _;

    use super::*;
    use crate::entities::user;

    fn sql(backend: DbBackend, after: Option<Uuid>) -> String {
        account_range(
            backend,
            user::Entity::find(),
            user::Column::AccountId,
            user::Column::Id,
            Uuid::from_u128(7),
            after,
        )
        .build(backend)
        .to_string()
    }

    #[test]
    fn postgresql_matches_the_account_as_an_array_and_orders_by_account_and_id() {
        let sql = sql(DbBackend::Postgres, Some(Uuid::from_u128(9)));
        assert!(sql.contains("= ANY("), "{sql}");
        assert!(
            sql.ends_with("ORDER BY \"users\".\"account_id\" ASC, \"users\".\"id\" ASC"),
            "{sql}"
        );
    }

    #[test]
    fn sqlite_keeps_the_plain_equality() {
        let sql = sql(DbBackend::Sqlite, None);
        assert!(sql.contains("\"users\".\"account_id\" = "), "{sql}");
        assert!(sql.ends_with("ORDER BY \"users\".\"id\" ASC"), "{sql}");
    }
}
