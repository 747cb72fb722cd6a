//! Keeps `department_closure` equal to the transitive closure of `departments.parent_id`.
//! Callers run these inside a write transaction (see [`write`](super::write())), which
//! serializes tree changes per account.

use sea_orm::{
    ColumnTrait as _, ConnectionTrait, EntityTrait as _, QueryFilter as _, QuerySelect as _, Set,
    prelude::Uuid,
};

use crate::{db::bulk, entities::department_closure as closure, error::ServiceResult};

/// Links a new leaf `department_id` under `parent_id`.
pub(super) async fn attach_leaf(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    department_id: Uuid,
    parent_id: Uuid,
) -> ServiceResult<()> {
    let ancestors = ancestors_of(conn, parent_id).await?;
    let rows = ancestors
        .into_iter()
        .map(|(ancestor_id, depth)| (ancestor_id, depth + 1))
        .chain([(department_id, 0)])
        .map(|(ancestor_id, depth)| row(account_id, ancestor_id, department_id, depth));
    closure::Entity::insert_many(rows)
        .exec_without_returning(conn)
        .await?;
    Ok(())
}

/// Moves the subtree rooted at `department_id` under `new_parent_id`. The caller has
/// checked that `new_parent_id` is not inside that subtree.
pub(super) async fn move_subtree(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    department_id: Uuid,
    new_parent_id: Uuid,
) -> ServiceResult<()> {
    let subtree: Vec<(Uuid, i32)> = closure::Entity::find()
        .select_only()
        .column(closure::Column::DescendantId)
        .column(closure::Column::Depth)
        .filter(closure::Column::AncestorId.eq(department_id))
        .into_tuple()
        .all(conn)
        .await?;
    let old_ancestors: Vec<Uuid> = ancestors_of(conn, department_id)
        .await?
        .into_iter()
        .filter_map(|(id, depth)| (depth > 0).then_some(id))
        .collect();
    let subtree_ids: Vec<Uuid> = subtree.iter().map(|(id, _)| *id).collect();
    for (ancestors, descendants) in bulk::in_chunk_pairs(&old_ancestors, &subtree_ids) {
        closure::Entity::delete_many()
            .filter(closure::Column::AncestorId.is_in(ancestors.iter().copied()))
            .filter(closure::Column::DescendantId.is_in(descendants.iter().copied()))
            .exec(conn)
            .await?;
    }
    let new_ancestors = ancestors_of(conn, new_parent_id).await?;
    // Collected first: a borrowing iterator held across the inserts' awaits would keep
    // the caller's future from being `Send`.
    let rows: Vec<closure::ActiveModel> = new_ancestors
        .iter()
        .flat_map(|(ancestor_id, above)| {
            subtree.iter().map(move |(descendant_id, below)| {
                row(account_id, *ancestor_id, *descendant_id, above + below + 1)
            })
        })
        .collect();
    bulk::insert_all(conn, rows).await?;
    Ok(())
}

/// `(ancestor, depth)` of every ancestor of `department_id`, itself included at depth 0.
async fn ancestors_of(
    conn: &impl ConnectionTrait,
    department_id: Uuid,
) -> ServiceResult<Vec<(Uuid, i32)>> {
    Ok(closure::Entity::find()
        .select_only()
        .column(closure::Column::AncestorId)
        .column(closure::Column::Depth)
        .filter(closure::Column::DescendantId.eq(department_id))
        .into_tuple()
        .all(conn)
        .await?)
}

fn row(
    account_id: Uuid,
    ancestor_id: Uuid,
    descendant_id: Uuid,
    depth: i32,
) -> closure::ActiveModel {
    closure::ActiveModel {
        account_id: Set(account_id),
        ancestor_id: Set(ancestor_id),
        descendant_id: Set(descendant_id),
        depth: Set(depth),
    }
}
