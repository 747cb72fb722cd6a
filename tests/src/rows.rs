//! Rows written or read straight in the database, beside the interfaces under test: a
//! permission granted as an administrator would, the audit rows a request left, and the
//! stored department closure.

use std::collections::BTreeSet;

use lms_core::entities::{audit_log, custom_role_permission, department_closure};
use sea_orm::{
    ActiveModelTrait as _, ColumnTrait as _, EntityTrait as _, QueryFilter as _, Set, prelude::Uuid,
};

use crate::{TestStack, world::uuid};

/// Gives the custom role `role` one more permission. Callers the core remembers see it only
/// once forgotten (see [`TestStack::forget_remembered_callers`]).
pub async fn grant(stack: &TestStack, role: &str, permission: &str) {
    custom_role_permission::ActiveModel {
        custom_role_id: Set(uuid(role)),
        permission: Set(permission.to_owned()),
    }
    .insert(stack.db())
    .await
    .expect("a permission added");
}

/// The audit rows written under `X-Request-Id: request_id`.
pub async fn audit_rows(stack: &TestStack, request_id: &str) -> Vec<audit_log::Model> {
    audit_log::Entity::find()
        .filter(audit_log::Column::RequestId.eq(request_id))
        .all(stack.db())
        .await
        .expect("read the audit log")
}

/// Every stored `department_closure` row of `account`, as (ancestor, descendant, depth).
pub async fn closure(stack: &TestStack, account: Uuid) -> BTreeSet<(Uuid, Uuid, i32)> {
    department_closure::Entity::find()
        .filter(department_closure::Column::AccountId.eq(account))
        .all(stack.db())
        .await
        .expect("read the closure")
        .into_iter()
        .map(|row| (row.ancestor_id, row.descendant_id, row.depth))
        .collect()
}
