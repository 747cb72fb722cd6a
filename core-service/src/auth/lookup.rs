//! The database reads authentication needs: one indexed lookup for the login, and the
//! role details only when the role needs them.

use std::{collections::HashSet, sync::Arc};

use sea_orm::{
    ColumnTrait as _, ConnectionTrait as _, DatabaseConnection, EntityTrait as _, QueryFilter as _,
    QuerySelect as _,
    prelude::Uuid,
    sea_query::{Expr, Query, UnionType},
};

use super::AuthRevision;
use crate::{
    access::Caller,
    domain::{
        account_url::scheme_spellings,
        roles::{Permission, Role},
    },
    entities::{account, custom_role_permission, user, user_managed_department},
    error::ServiceResult,
};

pub(super) struct Login {
    pub(super) account_id: Uuid,
    pub(super) account_url: String,
    pub(super) user_id: Uuid,
    pub(super) password_hash: String,
    pub(super) role: Role,
    pub(super) custom_role_id: Option<Uuid>,
    pub(super) active: bool,
}

/// The user behind (account URL, login), in one indexed query: this runs for every login
/// not answered from memory (and after every change to users, for every remembered one),
/// so it must stay one round trip. The account is looked up under both schemes (contract
/// section 2); at most one can exist (`uq_accounts_url_key`).
pub(super) async fn find_login(
    db: &DatabaseConnection,
    account_url: &str,
    email_key: &str,
) -> ServiceResult<Option<Login>> {
    let row = user::Entity::find()
        .select_only()
        .columns([
            user::Column::Id,
            user::Column::AccountId,
            user::Column::PasswordHash,
            user::Column::Role,
            user::Column::CustomRoleId,
            user::Column::Active,
        ])
        .column(account::Column::Url)
        .inner_join(account::Entity)
        .filter(account::Column::Url.is_in(scheme_spellings(account_url)))
        .filter(user::Column::EmailKey.eq(email_key))
        .into_tuple::<(Uuid, Uuid, String, Role, Option<Uuid>, bool, String)>()
        .one(db)
        .await?;
    Ok(row.map(
        |(user_id, account_id, password_hash, role, custom_role_id, active, url)| Login {
            account_id,
            account_url: url,
            user_id,
            password_hash,
            role,
            custom_role_id,
            active,
        },
    ))
}

/// The caller, with what its role needs beyond the user row: nothing for unscoped
/// built-in roles, the managed departments for scoped ones, and for a custom role those
/// and its permissions together in one round trip.
pub(super) async fn load_caller(
    db: &DatabaseConnection,
    login: Login,
    request_id: Option<String>,
    auth_revision: &Arc<AuthRevision>,
) -> ServiceResult<Caller> {
    let role = login.role;
    let scoped = matches!(
        role,
        Role::DepartmentAdministrator | Role::Publisher | Role::Custom
    );
    let custom_role_id = login.custom_role_id.filter(|_| role == Role::Custom);
    let (managed_department_ids, permissions) = if scoped {
        role_details(db, login.user_id, custom_role_id).await?
    } else {
        (Vec::new(), HashSet::new())
    };
    Ok(Caller {
        account_id: login.account_id,
        account_url: login.account_url,
        user_id: login.user_id,
        role,
        permissions,
        managed_department_ids,
        request_id,
        auth_revision: Some(auth_revision.clone()),
    })
}

/// Managed departments of `user_id` and permissions of `custom_role_id`, as one
/// `UNION ALL` whose rows carry one or the other.
async fn role_details(
    db: &DatabaseConnection,
    user_id: Uuid,
    custom_role_id: Option<Uuid>,
) -> ServiceResult<(Vec<Uuid>, HashSet<Permission>)> {
    const DEPARTMENT: &str = "department_id";
    const PERMISSION: &str = "permission";
    let mut query = Query::select()
        .expr_as(
            Expr::col(user_managed_department::Column::DepartmentId),
            DEPARTMENT,
        )
        .expr_as(Expr::null(), PERMISSION)
        .from(user_managed_department::Entity)
        .and_where(user_managed_department::Column::UserId.eq(user_id))
        .to_owned();
    if let Some(custom_role_id) = custom_role_id {
        query.union(
            UnionType::All,
            Query::select()
                .expr_as(Expr::null(), DEPARTMENT)
                .expr_as(
                    Expr::col(custom_role_permission::Column::Permission),
                    PERMISSION,
                )
                .from(custom_role_permission::Entity)
                .and_where(custom_role_permission::Column::CustomRoleId.eq(custom_role_id))
                .to_owned(),
        );
    }
    let rows = db.query_all(&query).await?;
    let mut managed = Vec::new();
    let mut permissions = HashSet::new();
    for row in rows {
        if let Some(department_id) = row.try_get::<Option<Uuid>>("", DEPARTMENT)? {
            managed.push(department_id);
        }
        if let Some(permission) = row.try_get::<Option<String>>("", PERMISSION)? {
            permissions.extend(Permission::parse(&permission));
        }
    }
    Ok((managed, permissions))
}

/// Stores a re-hashed password, unless the password changed meanwhile.
pub(super) async fn replace_password_hash(
    db: &DatabaseConnection,
    user_id: Uuid,
    old_hash: &str,
    new_hash: &str,
) -> ServiceResult<()> {
    user::Entity::update_many()
        .col_expr(
            user::Column::PasswordHash,
            sea_orm::prelude::Expr::value(new_hash),
        )
        .filter(user::Column::Id.eq(user_id))
        .filter(user::Column::PasswordHash.eq(old_hash))
        .exec(db)
        .await?;
    Ok(())
}
