//! Statements over many rows or ids, sized by the bound parameters they carry.
//!
//! SQLite allows 32,766 bound parameters per statement, PostgreSQL 65,535. One limit,
//! [`MAX_BIND_PARAMETERS`], below both, is shared by every batched statement; the chunk
//! sizes follow from it and from what each row or id binds, counted here rather than
//! by hand at each call.

use std::slice::Chunks;

use sea_orm::{ActiveModelTrait, ConnectionTrait, DbErr, EntityTrait, Iterable as _};

/// Bound parameters one batched statement may use. The headroom to SQLite's 32,766 is
/// left for the statement's other parameters (an account id, a group id).
pub const MAX_BIND_PARAMETERS: usize = 30_000;

/// Inserts `rows` with as few statements as [`MAX_BIND_PARAMETERS`] allows: each row
/// binds one parameter per column of its entity.
pub async fn insert_all<A>(
    conn: &impl ConnectionTrait,
    rows: impl IntoIterator<Item = A>,
) -> Result<(), DbErr>
where
    A: ActiveModelTrait + Send,
{
    let per_statement = rows_per_insert::<A::Entity>();
    let mut rows = rows.into_iter();
    loop {
        let chunk: Vec<A> = rows.by_ref().take(per_statement).collect();
        if chunk.is_empty() {
            return Ok(());
        }
        <A::Entity as EntityTrait>::insert_many(chunk)
            .exec_without_returning(conn)
            .await?;
    }
}

/// Rows of `E` one `INSERT` may carry.
pub fn rows_per_insert<E: EntityTrait>() -> usize {
    let columns = E::Column::iter().count().max(1);
    (MAX_BIND_PARAMETERS / columns).max(1)
}

/// `items` in chunks that each fit one `IN (…)` list of a statement.
pub fn in_chunks<T>(items: &[T]) -> Chunks<'_, T> {
    items.chunks(MAX_BIND_PARAMETERS)
}

/// `items` in chunks that each fit one `IN (…)` list of a statement that binds
/// `other_parameters` more (another list of known length, say).
pub fn in_chunks_beside<T>(items: &[T], other_parameters: usize) -> Chunks<'_, T> {
    items.chunks(MAX_BIND_PARAMETERS.saturating_sub(other_parameters).max(1))
}

/// Every pair of chunks of `left` and `right` that fit one statement with two `IN (…)`
/// lists, so that the pairs together cover every (left, right) combination.
pub fn in_chunk_pairs<'a, L, R>(
    left: &'a [L],
    right: &'a [R],
) -> impl Iterator<Item = (&'a [L], &'a [R])> {
    let half = MAX_BIND_PARAMETERS / 2;
    left.chunks(half)
        .flat_map(move |l| right.chunks(half).map(move |r| (l, r)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entities::{audit_log, group_member};

    #[test]
    fn chunks_stay_within_the_parameter_limit() {
        assert_eq!(rows_per_insert::<group_member::Entity>(), 15_000);
        assert_eq!(rows_per_insert::<audit_log::Entity>(), 3_000);
        let ids = vec![0u8; MAX_BIND_PARAMETERS * 2 + 1];
        assert_eq!(
            in_chunks(&ids).map(<[u8]>::len).max(),
            Some(MAX_BIND_PARAMETERS)
        );
        assert_eq!(in_chunks(&ids).count(), 3);
        assert_eq!(
            in_chunks_beside(&ids, 10_000).map(<[u8]>::len).max(),
            Some(20_000)
        );
        assert_eq!(in_chunks_beside(&ids[..3], usize::MAX).count(), 3);
        let pairs: Vec<_> = in_chunk_pairs(&ids, &ids[..10]).collect();
        assert_eq!(pairs.len(), 5);
        assert!(
            pairs
                .iter()
                .all(|(l, r)| l.len() + r.len() <= MAX_BIND_PARAMETERS)
        );
        assert_eq!(pairs.iter().map(|(l, _)| l.len()).sum::<usize>(), ids.len());
        assert_eq!(in_chunk_pairs(&ids, &[] as &[u8]).count(), 0);
    }
}
