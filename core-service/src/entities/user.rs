//! `users`: the people of an account, with their login, role and own department.

use sea_orm::entity::prelude::*;

use crate::domain::roles::Role;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "users")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub account_id: Uuid,
    /// The login as given: the sign-in name of `X-Auth-Email`. The contract (and the import
    /// document) calls it the e-mail, and it is one unless set otherwise over HTTP.
    #[sea_orm(column_type = "String(StringLen::N(255))")]
    pub email: String,
    /// The lower-cased login, unique within the account (the sign-in lookup key).
    #[sea_orm(column_type = "String(StringLen::N(255))")]
    pub email_key: String,
    /// An argon2id PHC string.
    #[sea_orm(column_type = "Text")]
    pub password_hash: String,
    /// A built-in role, or `custom` (then `custom_role_id` is set); stored by name.
    pub role: Role,
    pub custom_role_id: Option<Uuid>,
    pub department_id: Uuid,
    pub active: bool,
    /// The profile's `EMAIL` when it is not the login; `None`: the login is the address.
    #[sea_orm(column_type = "String(StringLen::N(255))", nullable)]
    pub contact_email: Option<String>,
    /// `contact_email` lower-cased, for the `emails` filter.
    #[sea_orm(column_type = "String(StringLen::N(255))", nullable)]
    pub contact_email_key: Option<String>,
    /// Status 5 rather than 3: inactive because the employment ended.
    pub employment_ended: bool,
    /// The profile's `FIRST_NAME`; empty when never given.
    #[sea_orm(column_type = "String(StringLen::N(255))")]
    pub first_name: String,
    /// The profile's `LAST_NAME`; empty when never given.
    #[sea_orm(column_type = "String(StringLen::N(255))")]
    pub last_name: String,
    /// The UTC day the user is to be deactivated (status 3 if still active); `None`: not
    /// scheduled. Cleared when carried out.
    pub scheduled_deactivation_date: Option<Date>,
    /// The UTC day the user's employment is to end (status 5); `None`: not scheduled.
    pub scheduled_termination_date: Option<Date>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
    /// The identity provider's id (SCIM `externalId`), unique per account where set.
    #[sea_orm(column_type = "String(StringLen::N(255))", nullable)]
    pub external_id: Option<String>,
    /// Removed by SCIM `DELETE`: hidden from SCIM, still read by REST.
    pub scim_removed: bool,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::account::Entity",
        from = "Column::AccountId",
        to = "super::account::Column::Id",
        on_update = "Restrict",
        on_delete = "Restrict"
    )]
    Account,
    #[sea_orm(
        belongs_to = "super::custom_role::Entity",
        from = "Column::CustomRoleId",
        to = "super::custom_role::Column::Id",
        on_update = "Restrict",
        on_delete = "Restrict"
    )]
    CustomRole,
    /// The user's own department.
    #[sea_orm(
        belongs_to = "super::department::Entity",
        from = "Column::DepartmentId",
        to = "super::department::Column::Id",
        on_update = "Restrict",
        on_delete = "Restrict"
    )]
    Department,
    #[sea_orm(has_many = "super::user_managed_department::Entity")]
    UserManagedDepartment,
    #[sea_orm(has_many = "super::group_member::Entity")]
    GroupMember,
    #[sea_orm(has_many = "super::project_author::Entity")]
    ProjectAuthor,
}

impl Related<super::account::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Account.def()
    }
}

impl Related<super::custom_role::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::CustomRole.def()
    }
}

/// The user's own department (not the managed ones: see [`Relation::UserManagedDepartment`]).
impl Related<super::department::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Department.def()
    }
}

impl Related<super::user_managed_department::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::UserManagedDepartment.def()
    }
}

impl Related<super::group_member::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::GroupMember.def()
    }
}

impl Related<super::project_author::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::ProjectAuthor.def()
    }
}

/// The groups the user is a stored member of (smart groups are computed, not linked).
impl Related<super::group::Entity> for Entity {
    fn to() -> RelationDef {
        super::group_member::Relation::Group.def()
    }

    fn via() -> Option<RelationDef> {
        Some(super::group_member::Relation::User.def().rev())
    }
}

/// The projects the user authors.
impl Related<super::project::Entity> for Entity {
    fn to() -> RelationDef {
        super::project_author::Relation::Project.def()
    }

    fn via() -> Option<RelationDef> {
        Some(super::project_author::Relation::User.def().rev())
    }
}

impl ActiveModelBehavior for ActiveModel {}
