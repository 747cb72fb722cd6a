//! Tasks (results.md section 6): every recording is applied before it is answered, so its
//! task is written `complete` in the recording's transaction and only ever read afterwards.

use chrono::{TimeDelta, Utc};
use sea_orm::{
    ActiveModelTrait as _, ColumnTrait as _, ConnectionTrait, EntityTrait as _, NotSet,
    QueryFilter as _, QueryOrder as _, QuerySelect as _, Set,
};

use crate::{
    access::{Caller, Grant, Operation},
    entities::result_task,
    error::{ServiceError, ServiceResult},
};

const COMPLETE: &str = "complete";

/// How long a task is kept: results.md promises at least 7 days.
const TASK_RETENTION: TimeDelta = TimeDelta::days(30);

/// The most expired tasks one recording removes: more than the one it adds, so an account's
/// expired tasks go, and few enough that a recording costs the same whatever lies behind it.
const EXPIRED_PER_RECORDING: u64 = 100;

/// Writes the complete task of a recording by `caller`; its id. The account's oldest tasks
/// past [`TASK_RETENTION`] go in the same transaction, read from the front of
/// `result_tasks (account_id, id)` (ids grow with time).
pub(super) async fn complete_task(
    conn: &impl ConnectionTrait,
    caller: &Caller,
) -> ServiceResult<u64> {
    let now = Utc::now();
    let oldest: Vec<(i64, chrono::DateTime<Utc>)> = result_task::Entity::find()
        .select_only()
        .columns([result_task::Column::Id, result_task::Column::CreatedAt])
        .filter(result_task::Column::AccountId.eq(caller.account_id))
        .order_by_asc(result_task::Column::Id)
        .limit(EXPIRED_PER_RECORDING)
        .into_tuple()
        .all(conn)
        .await?;
    let expired: Vec<i64> = oldest
        .iter()
        .take_while(|(_, created_at)| *created_at < now - TASK_RETENTION)
        .map(|(id, _)| *id)
        .collect();
    if !expired.is_empty() {
        result_task::Entity::delete_many()
            .filter(result_task::Column::Id.is_in(expired))
            .exec(conn)
            .await?;
    }
    let task = result_task::ActiveModel {
        id: NotSet,
        account_id: Set(caller.account_id),
        started_by: Set(caller.user_id),
        status: Set(COMPLETE.to_owned()),
        created_at: Set(now),
    }
    .insert(conn)
    .await?;
    u64::try_from(task.id)
        .map_err(|_| ServiceError::Unexpected(anyhow::anyhow!("task id {} below 1", task.id)))
}

/// The status of task `task_id`: every task of the account for the owner and administrators,
/// one's own for the others allowed; another user's is PERMISSION_DENIED, and an unknown id or
/// another account's NOT_FOUND.
pub async fn task_status(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    task_id: u64,
) -> ServiceResult<String> {
    let grant = caller.grant(Operation::ReadResultTasks)?;
    let not_found = || ServiceError::not_found(format!("No task with id {task_id} exists."));
    let id = i64::try_from(task_id)
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(not_found)?;
    let task = result_task::Entity::find_by_id(id)
        .one(conn)
        .await?
        .filter(|task| task.account_id == caller.account_id)
        .ok_or_else(not_found)?;
    if grant != Grant::Everything && task.started_by != caller.user_id {
        return Err(ServiceError::denied(
            "You may read only the tasks you started.",
        ));
    }
    Ok(task.status)
}
