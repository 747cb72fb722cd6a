//! Tasks (results.md section 6): every recording is applied before it is answered, so its
//! task is written `complete` in the recording's transaction and only ever read afterwards.

use sea_orm::{ActiveModelTrait as _, ConnectionTrait, EntityTrait as _, NotSet, Set};

use crate::{
    access::{Caller, Grant, Operation},
    entities::result_task,
    error::{ServiceError, ServiceResult},
};

const COMPLETE: &str = "complete";

/// Writes the complete task of a recording by `caller`; its id.
pub(super) async fn complete_task(
    conn: &impl ConnectionTrait,
    caller: &Caller,
) -> ServiceResult<u64> {
    let task = result_task::ActiveModel {
        id: NotSet,
        account_id: Set(caller.account_id),
        started_by: Set(caller.user_id),
        status: Set(COMPLETE.to_owned()),
        created_at: Set(chrono::Utc::now()),
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
