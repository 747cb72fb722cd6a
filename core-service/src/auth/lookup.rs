//! The database reads authentication needs: one indexed lookup for the login, and the
//! role details only when the role needs them.

use std::collections::HashSet;

use sea_orm::{
    ColumnTrait as _, DatabaseConnection, EntityTrait as _, QueryFilter as _, QuerySelect as _,
    prelude::Uuid,
};

use crate::{
    access::Caller,
    domain::roles::{Permission, Role},
    entities::{account, custom_role_permission, user, user_managed_department},
    error::{ServiceError, ServiceResult},
};

pub(super) struct Login {
    pub(super) account_id: Uuid,
    pub(super) account_url: String,
    pub(super) user_id: Uuid,
    pub(super) password_hash: String,
    pub(super) role: String,
    pub(super) custom_role_id: Option<Uuid>,
    pub(super) active: bool,
}

pub(super) async fn find_login(
    db: &DatabaseConnection,
    account_url: &str,
    email_key: &str,
) -> ServiceResult<Option<Login>> {
    let Some(account) =
        account::Entity::find().filter(account::Column::Url.eq(account_url)).one(db).await?
    else {
        return Ok(None);
    };
    let user = user::Entity::find()
        .filter(user::Column::AccountId.eq(account.id))
        .filter(user::Column::EmailKey.eq(email_key))
        .one(db)
        .await?;
    Ok(user.map(|user| Login {
        account_id: account.id,
        account_url: account.url,
        user_id: user.id,
        password_hash: user.password_hash,
        role: user.role,
        custom_role_id: user.custom_role_id,
        active: user.active,
    }))
}

pub(super) async fn load_caller(
    db: &DatabaseConnection,
    login: Login,
    request_id: Option<String>,
) -> ServiceResult<Caller> {
    let role = Role::parse(&login.role).ok_or_else(|| {
        ServiceError::Unexpected(anyhow::anyhow!(
            "user {} has an unknown role {:?}",
            login.user_id,
            login.role
        ))
    })?;
    let permissions: HashSet<Permission> = match (role, login.custom_role_id) {
        (Role::Custom, Some(custom_role_id)) => custom_role_permission::Entity::find()
            .select_only()
            .column(custom_role_permission::Column::Permission)
            .filter(custom_role_permission::Column::CustomRoleId.eq(custom_role_id))
            .into_tuple::<String>()
            .all(db)
            .await?
            .iter()
            .filter_map(|p| Permission::parse(p))
            .collect(),
        _ => HashSet::new(),
    };
    let scoped = matches!(role, Role::DepartmentAdministrator | Role::Publisher | Role::Custom);
    let managed_department_ids = if scoped {
        user_managed_department::Entity::find()
            .select_only()
            .column(user_managed_department::Column::DepartmentId)
            .filter(user_managed_department::Column::UserId.eq(login.user_id))
            .into_tuple::<Uuid>()
            .all(db)
            .await?
    } else {
        Vec::new()
    };
    Ok(Caller {
        account_id: login.account_id,
        account_url: login.account_url,
        user_id: login.user_id,
        role,
        permissions,
        managed_department_ids,
        request_id,
    })
}

/// Stores a re-hashed password, unless the password changed meanwhile.
pub(super) async fn replace_password_hash(
    db: &DatabaseConnection,
    user_id: Uuid,
    old_hash: &str,
    new_hash: &str,
) -> ServiceResult<()> {
    user::Entity::update_many()
        .col_expr(user::Column::PasswordHash, sea_orm::prelude::Expr::value(new_hash))
        .filter(user::Column::Id.eq(user_id))
        .filter(user::Column::PasswordHash.eq(old_hash))
        .exec(db)
        .await?;
    Ok(())
}
