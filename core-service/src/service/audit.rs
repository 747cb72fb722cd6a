//! The audit record as bodies of [`write_transaction`](crate::db::write_transaction)
//! write it themselves, naming action and entity kind by their stored strings.
//! [`db::write`](crate::db::write) bodies record typed changes instead
//! ([`Write::record`](crate::db::Write::record)).

use sea_orm::{ConnectionTrait, prelude::Uuid};
use serde_json::Value;

use crate::{
    access::Caller,
    db::{self, Actor, AuditAction},
    error::{ServiceError, ServiceResult},
};

/// One change to record, by the stored names of its action and entity kind.
#[derive(Debug)]
pub struct Change {
    pub action: &'static str,
    pub entity_type: &'static str,
    pub entity_id: Uuid,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

impl TryFrom<Change> for db::Change {
    type Error = ServiceError;

    fn try_from(change: Change) -> ServiceResult<Self> {
        let action = AuditAction::parse(change.action)
            .filter(|action| action.entity().as_str() == change.entity_type)
            .ok_or_else(|| {
                ServiceError::Unexpected(anyhow::anyhow!(
                    "no audit action {:?} on {:?}",
                    change.action,
                    change.entity_type
                ))
            })?;
        Ok(db::Change {
            action,
            entity_id: change.entity_id,
            before: change.before,
            after: change.after,
        })
    }
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
    let changes = changes
        .into_iter()
        .map(db::Change::try_from)
        .collect::<ServiceResult<Vec<_>>>()?;
    db::audit::insert(conn, &Actor::from(caller), changes).await?;
    Ok(())
}
