//! The audit record (contract section 10): who, when, what, the request id, and the
//! values before and after, written in the transaction of the change it records.

use sea_orm::{ConnectionTrait, EntityTrait as _, Set, prelude::Uuid};
use serde_json::Value;

use super::ID_CHUNK;
use crate::{access::Caller, domain::ids::new_id, entities::audit_log, error::ServiceResult};

/// One change to record.
#[derive(Debug)]
pub struct Change {
    pub action: &'static str,
    pub entity_type: &'static str,
    pub entity_id: Uuid,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

pub async fn record(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    change: Change,
) -> ServiceResult<()> {
    record_all(conn, caller, vec![change]).await
}

pub async fn record_all(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    changes: Vec<Change>,
) -> ServiceResult<()> {
    let now = chrono::Utc::now();
    let rows: Vec<audit_log::ActiveModel> = changes
        .into_iter()
        .map(|change| audit_log::ActiveModel {
            id: Set(new_id()),
            account_id: Set(caller.account_id),
            actor_user_id: Set(Some(caller.user_id)),
            action: Set(change.action.to_owned()),
            entity_type: Set(change.entity_type.to_owned()),
            entity_id: Set(change.entity_id),
            request_id: Set(caller.request_id.clone()),
            before: Set(change.before.map(|v| v.to_string())),
            after: Set(change.after.map(|v| v.to_string())),
            created_at: Set(now),
        })
        .collect();
    // Ten columns a row: stay below the bound-parameter limits.
    for chunk in rows.chunks(ID_CHUNK / 10) {
        audit_log::Entity::insert_many(chunk.to_vec())
            .exec_without_returning(conn)
            .await?;
    }
    Ok(())
}
