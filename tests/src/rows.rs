//! Rows written or read straight in the database, beside the interfaces under test: a
//! permission granted as an administrator would, and the audit rows a request left.

use lms_core::entities::{audit_log, custom_role_permission};
use sea_orm::{ActiveModelTrait as _, ColumnTrait as _, EntityTrait as _, QueryFilter as _, Set};

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
