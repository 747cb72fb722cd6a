//! The audit record (contract section 10): who, when, what, the request id, and the
//! values before and after, written in the transaction of the change it records.
//!
//! [`AuditAction`] and [`AuditEntity`] are stored as the strings the `audit_log` table has
//! always held (`department.update`, `department`), so rows written before they were
//! enums read the same.

use sea_orm::{ConnectionTrait, DbErr, Value, prelude::Uuid};

use crate::{
    access::Caller,
    db::rows::{self, Table},
    domain::ids::new_id,
};

/// What happened; the value of `audit_log.action`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuditAction {
    DepartmentCreated,
    DepartmentUpdated,
    DepartmentDeleted,
    UserCreated,
    UserPasswordSet,
    UserRoleSet,
    UserManagedDepartmentsSet,
    UserActiveSet,
    GroupCreated,
    GroupUpdated,
    GroupMembersAdded,
    ProjectCreated,
    ContentItemCreated,
    EnrollmentCreated,
    EnrollmentDeleted,
    PointsAdded,
    /// A whole account written by the import.
    Imported,
    ApiClientCreated,
    ApiClientRevoked,
    GroupDeleted,
    GroupMembersReplaced,
    PointsAwarded,
    PointsWithdrawn,
    /// A user's profile changed over HTTP (login, names, role, department, managed ones).
    UserUpdated,
    UserDeleted,
    /// An administrator's status set or removed (`POST /statistics/course`).
    ResultStatusSet,
    /// A result started over (`DELETE /statistics/module`).
    ResultReset,
    /// A tracked result recorded (`RecordResults`).
    ResultRecorded,
    WebhookSubscriberRegistered,
    WebhookCodeSent,
    WebhookSubscriberConfirmed,
    WebhookSubscriberEnabled,
    WebhookSubscriberDisabled,
    WebhookSubscriberRemoved,
    WebhookSettingsChanged,
    WebhookSubscribed,
    WebhookUnsubscribed,
    WebhookGaveUp,
    /// A user's scheduled deactivation or termination date set or removed.
    UserScheduled,
    /// Removed by SCIM `DELETE`: deactivated, out of its groups, hidden from SCIM.
    UserDeprovisioned,
    /// Brought back by a SCIM `POST` naming its `userName`.
    UserReprovisioned,
    /// Members taken out of a plain group (SCIM `PATCH`).
    GroupMembersRemoved,
}

impl AuditAction {
    pub const ALL: [AuditAction; 42] = [
        AuditAction::DepartmentCreated,
        AuditAction::DepartmentUpdated,
        AuditAction::DepartmentDeleted,
        AuditAction::UserCreated,
        AuditAction::UserPasswordSet,
        AuditAction::UserRoleSet,
        AuditAction::UserManagedDepartmentsSet,
        AuditAction::UserActiveSet,
        AuditAction::GroupCreated,
        AuditAction::GroupUpdated,
        AuditAction::GroupMembersAdded,
        AuditAction::ProjectCreated,
        AuditAction::ContentItemCreated,
        AuditAction::EnrollmentCreated,
        AuditAction::EnrollmentDeleted,
        AuditAction::PointsAdded,
        AuditAction::Imported,
        AuditAction::ApiClientCreated,
        AuditAction::ApiClientRevoked,
        AuditAction::GroupDeleted,
        AuditAction::GroupMembersReplaced,
        AuditAction::PointsAwarded,
        AuditAction::PointsWithdrawn,
        AuditAction::UserUpdated,
        AuditAction::UserDeleted,
        AuditAction::ResultStatusSet,
        AuditAction::ResultReset,
        AuditAction::ResultRecorded,
        AuditAction::WebhookSubscriberRegistered,
        AuditAction::WebhookCodeSent,
        AuditAction::WebhookSubscriberConfirmed,
        AuditAction::WebhookSubscriberEnabled,
        AuditAction::WebhookSubscriberDisabled,
        AuditAction::WebhookSubscriberRemoved,
        AuditAction::WebhookSettingsChanged,
        AuditAction::WebhookSubscribed,
        AuditAction::WebhookUnsubscribed,
        AuditAction::WebhookGaveUp,
        AuditAction::UserScheduled,
        AuditAction::UserDeprovisioned,
        AuditAction::UserReprovisioned,
        AuditAction::GroupMembersRemoved,
    ];

    /// The stored value.
    pub fn as_str(self) -> &'static str {
        match self {
            AuditAction::DepartmentCreated => "department.create",
            AuditAction::DepartmentUpdated => "department.update",
            AuditAction::DepartmentDeleted => "department.delete",
            AuditAction::UserCreated => "user.create",
            AuditAction::UserPasswordSet => "user.set_password",
            AuditAction::UserRoleSet => "user.set_role",
            AuditAction::UserManagedDepartmentsSet => "user.set_managed_departments",
            AuditAction::UserActiveSet => "user.set_active",
            AuditAction::GroupCreated => "group.create",
            AuditAction::GroupUpdated => "group.update",
            AuditAction::GroupMembersAdded => "group.add_members",
            AuditAction::ProjectCreated => "project.create",
            AuditAction::ContentItemCreated => "content_item.create",
            AuditAction::EnrollmentCreated => "enrollment.create",
            AuditAction::EnrollmentDeleted => "enrollment.delete",
            AuditAction::PointsAdded => "points.add",
            AuditAction::Imported => "import",
            AuditAction::ApiClientCreated => "api_client.create",
            AuditAction::ApiClientRevoked => "api_client.revoke",
            AuditAction::GroupDeleted => "group.delete",
            AuditAction::GroupMembersReplaced => "group.replace_members",
            AuditAction::PointsAwarded => "points.award",
            AuditAction::PointsWithdrawn => "points.withdraw",
            AuditAction::UserUpdated => "user.update",
            AuditAction::UserDeleted => "user.delete",
            AuditAction::ResultStatusSet => "result.set_status",
            AuditAction::ResultReset => "result.reset",
            AuditAction::ResultRecorded => "result.record",
            AuditAction::WebhookSubscriberRegistered => "webhook_subscriber.register",
            AuditAction::WebhookCodeSent => "webhook_subscriber.send_code",
            AuditAction::WebhookSubscriberConfirmed => "webhook_subscriber.confirm",
            AuditAction::WebhookSubscriberEnabled => "webhook_subscriber.enable",
            AuditAction::WebhookSubscriberDisabled => "webhook_subscriber.disable",
            AuditAction::WebhookSubscriberRemoved => "webhook_subscriber.remove",
            AuditAction::WebhookSettingsChanged => "webhook_subscriber.change_settings",
            AuditAction::WebhookSubscribed => "webhook_subscriber.subscribe",
            AuditAction::WebhookUnsubscribed => "webhook_subscriber.unsubscribe",
            AuditAction::WebhookGaveUp => "webhook_subscriber.give_up",
            AuditAction::UserScheduled => "user.schedule",
            AuditAction::UserDeprovisioned => "user.deprovision",
            AuditAction::UserReprovisioned => "user.reprovision",
            AuditAction::GroupMembersRemoved => "group.remove_members",
        }
    }

    /// The action stored as `raw`.
    pub fn parse(raw: &str) -> Option<AuditAction> {
        AuditAction::ALL
            .into_iter()
            .find(|action| action.as_str() == raw)
    }

    /// The kind of row an action changes: each action changes one kind only.
    pub fn entity(self) -> AuditEntity {
        match self {
            AuditAction::DepartmentCreated
            | AuditAction::DepartmentUpdated
            | AuditAction::DepartmentDeleted => AuditEntity::Department,
            AuditAction::UserCreated
            | AuditAction::UserPasswordSet
            | AuditAction::UserRoleSet
            | AuditAction::UserManagedDepartmentsSet
            | AuditAction::UserActiveSet
            | AuditAction::PointsAdded
            | AuditAction::PointsAwarded
            | AuditAction::PointsWithdrawn
            | AuditAction::UserUpdated
            | AuditAction::UserDeleted
            | AuditAction::UserScheduled
            | AuditAction::UserDeprovisioned
            | AuditAction::UserReprovisioned => AuditEntity::User,
            AuditAction::GroupCreated
            | AuditAction::GroupUpdated
            | AuditAction::GroupMembersAdded
            | AuditAction::GroupMembersRemoved
            | AuditAction::GroupDeleted
            | AuditAction::GroupMembersReplaced => AuditEntity::Group,
            AuditAction::ProjectCreated => AuditEntity::Project,
            AuditAction::ContentItemCreated => AuditEntity::ContentItem,
            AuditAction::EnrollmentCreated | AuditAction::EnrollmentDeleted => {
                AuditEntity::Enrollment
            }
            AuditAction::Imported => AuditEntity::Account,
            AuditAction::ApiClientCreated | AuditAction::ApiClientRevoked => AuditEntity::ApiClient,
            AuditAction::ResultStatusSet
            | AuditAction::ResultReset
            | AuditAction::ResultRecorded => AuditEntity::Result,
            AuditAction::WebhookSubscriberRegistered
            | AuditAction::WebhookCodeSent
            | AuditAction::WebhookSubscriberConfirmed
            | AuditAction::WebhookSubscriberEnabled
            | AuditAction::WebhookSubscriberDisabled
            | AuditAction::WebhookSubscriberRemoved
            | AuditAction::WebhookSettingsChanged
            | AuditAction::WebhookSubscribed
            | AuditAction::WebhookUnsubscribed
            | AuditAction::WebhookGaveUp => AuditEntity::WebhookSubscriber,
        }
    }

    /// Whether the change alters who a caller is (password, role, managed departments,
    /// active flag), so that callers remembered by this process must be read again.
    pub fn changes_users(self) -> bool {
        matches!(
            self,
            AuditAction::UserPasswordSet
                | AuditAction::UserRoleSet
                | AuditAction::UserManagedDepartmentsSet
                | AuditAction::UserActiveSet
                | AuditAction::UserUpdated
                | AuditAction::UserDeleted
        )
    }
}

/// The kind of the changed row; the value of `audit_log.entity_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuditEntity {
    Account,
    Department,
    User,
    Group,
    Project,
    ContentItem,
    Enrollment,
    ApiClient,
    /// A learner result, named by its enrollment's id.
    Result,
    WebhookSubscriber,
}

impl AuditEntity {
    /// The stored value.
    pub fn as_str(self) -> &'static str {
        match self {
            AuditEntity::Account => "account",
            AuditEntity::Department => "department",
            AuditEntity::User => "user",
            AuditEntity::Group => "group",
            AuditEntity::Project => "project",
            AuditEntity::ContentItem => "content_item",
            AuditEntity::Enrollment => "enrollment",
            AuditEntity::ApiClient => "api_client",
            AuditEntity::Result => "result",
            AuditEntity::WebhookSubscriber => "webhook_subscriber",
        }
    }
}

/// One change to record. The changed row's kind follows from the action
/// ([`AuditAction::entity`]).
#[derive(Debug, Clone)]
pub struct Change {
    pub action: AuditAction,
    pub entity_id: Uuid,
    /// The values before the change; `None` for a creation.
    pub before: Option<serde_json::Value>,
    /// The values after the change; `None` for a deletion.
    pub after: Option<serde_json::Value>,
}

/// Who made a change, as the audit table records it.
#[derive(Debug, Clone)]
pub struct Actor {
    pub account_id: Uuid,
    /// `None` for changes nobody made through the interface (the import).
    pub user_id: Option<Uuid>,
    pub request_id: Option<String>,
}

impl Actor {
    /// Nobody in particular, acting on `account_id`: the import.
    pub fn system(account_id: Uuid) -> Self {
        Self {
            account_id,
            user_id: None,
            request_id: None,
        }
    }
}

impl From<&Caller> for Actor {
    fn from(caller: &Caller) -> Self {
        Self {
            account_id: caller.account_id,
            user_id: Some(caller.user_id),
            request_id: caller.request_id.clone(),
        }
    }
}

/// The `audit_log` table, for [`rows::insert_rows`].
pub const TABLE: Table<10> = Table {
    name: "audit_log",
    columns: [
        "id",
        "account_id",
        "actor_user_id",
        "action",
        "entity_type",
        "entity_id",
        "request_id",
        "before",
        "after",
        "created_at",
    ],
    pg_types: [
        "uuid",
        "uuid",
        "uuid",
        "text",
        "text",
        "uuid",
        "text",
        "text",
        "text",
        "timestamptz",
    ],
};

/// The `audit_log` row of `change` by `actor` at `at`, in the columns of [`TABLE`].
pub fn row(actor: &Actor, change: Change, at: chrono::DateTime<chrono::Utc>) -> [Value; 10] {
    [
        Value::from(new_id()),
        Value::from(actor.account_id),
        Value::from(actor.user_id),
        Value::from(change.action.as_str()),
        Value::from(change.action.entity().as_str()),
        Value::from(change.entity_id),
        Value::from(actor.request_id.clone()),
        Value::from(change.before.map(|v| v.to_string())),
        Value::from(change.after.map(|v| v.to_string())),
        Value::from(at),
    ]
}

/// Writes `changes` by `actor`, all stamped now.
pub async fn insert(
    conn: &impl ConnectionTrait,
    actor: &Actor,
    changes: impl IntoIterator<Item = Change>,
) -> Result<(), DbErr> {
    let now = chrono::Utc::now();
    let rows = changes.into_iter().map(|change| row(actor, change, now));
    rows::insert_rows(conn, &TABLE, rows, &mut |_| {}).await
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn every_action_is_stored_under_its_own_name() {
        let names: HashSet<&str> = AuditAction::ALL.iter().map(|a| a.as_str()).collect();
        assert_eq!(names.len(), AuditAction::ALL.len());
        for action in AuditAction::ALL {
            assert_eq!(AuditAction::parse(action.as_str()), Some(action));
        }
        assert_eq!(AuditAction::DepartmentUpdated.as_str(), "department.update");
        assert_eq!(
            AuditAction::DepartmentUpdated.entity().as_str(),
            "department"
        );
        assert_eq!(AuditAction::PointsAdded.entity(), AuditEntity::User);
        assert_eq!(AuditAction::Imported.entity().as_str(), "account");
    }
}
