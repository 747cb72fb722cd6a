//! SeaORM entities, one module per table (see docs/data-model.md).
//!
//! The schema itself is made by the `lms_migrations` crate; these models mirror it
//! column for column (checked by `tests/entities_match_schema.rs`).

pub mod account;
pub mod api_client;
pub mod api_token;
pub mod audit_log;
pub mod content_item;
pub mod custom_role;
pub mod custom_role_permission;
pub mod department;
pub mod department_closure;
pub mod enrollment;
pub mod group;
pub mod group_member;
pub mod learner_result;
pub mod project;
pub mod project_author;
pub mod result_task;
pub mod user;
pub mod user_field;
pub mod user_managed_department;
pub mod user_points;
pub mod user_sign_in;
pub mod webhook_delivery;
pub mod webhook_event;
pub mod webhook_event_counter;
pub mod webhook_subscriber;
pub mod webhook_subscription;

/// The entities under their table-like names, for `use crate::entities::prelude::*`.
pub mod prelude {
    pub use super::account::Entity as Account;
    pub use super::api_client::Entity as ApiClient;
    pub use super::api_token::Entity as ApiToken;
    pub use super::audit_log::Entity as AuditLog;
    pub use super::content_item::Entity as ContentItem;
    pub use super::custom_role::Entity as CustomRole;
    pub use super::custom_role_permission::Entity as CustomRolePermission;
    pub use super::department::Entity as Department;
    pub use super::department_closure::Entity as DepartmentClosure;
    pub use super::enrollment::Entity as Enrollment;
    pub use super::group::Entity as Group;
    pub use super::group_member::Entity as GroupMember;
    pub use super::learner_result::Entity as LearnerResult;
    pub use super::project::Entity as Project;
    pub use super::project_author::Entity as ProjectAuthor;
    pub use super::result_task::Entity as ResultTask;
    pub use super::user::Entity as User;
    pub use super::user_field::Entity as UserField;
    pub use super::user_managed_department::Entity as UserManagedDepartment;
    pub use super::user_points::Entity as UserPoints;
    pub use super::user_sign_in::Entity as UserSignIn;
}
