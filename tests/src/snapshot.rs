//! A dump of every table, to assert that a refused request left stored data untouched.

use lms_core::entities::{
    account, audit_log, content_item, custom_role, custom_role_permission, department,
    department_closure, enrollment, group, group_member, learner_result, project, project_author,
    result_task, user, user_field, user_managed_department, user_points,
};
use sea_orm::{DatabaseConnection, EntityTrait, QueryOrder as _};

/// Every row of every table, in primary-key order, as text.
pub async fn snapshot(db: &DatabaseConnection) -> String {
    async fn dump<E>(
        db: &DatabaseConnection,
        name: &str,
        order: E::Column,
        then: Option<E::Column>,
    ) -> String
    where
        E: EntityTrait,
        E::Model: std::fmt::Debug,
    {
        let mut query = E::find().order_by_asc(order);
        if let Some(then) = then {
            query = query.order_by_asc(then);
        }
        let rows = query
            .all(db)
            .await
            .unwrap_or_else(|e| panic!("dump {name}: {e}"));
        format!("{name}: {rows:#?}\n")
    }
    let mut out = String::new();
    out += &dump::<account::Entity>(db, "accounts", account::Column::Id, None).await;
    out += &dump::<department::Entity>(db, "departments", department::Column::Id, None).await;
    out += &dump::<department_closure::Entity>(
        db,
        "department_closure",
        department_closure::Column::AncestorId,
        Some(department_closure::Column::DescendantId),
    )
    .await;
    out += &dump::<custom_role::Entity>(db, "custom_roles", custom_role::Column::Id, None).await;
    out += &dump::<custom_role_permission::Entity>(
        db,
        "custom_role_permissions",
        custom_role_permission::Column::CustomRoleId,
        Some(custom_role_permission::Column::Permission),
    )
    .await;
    out += &dump::<user::Entity>(db, "users", user::Column::Id, None).await;
    out += &dump::<user_field::Entity>(
        db,
        "user_fields",
        user_field::Column::UserId,
        Some(user_field::Column::Name),
    )
    .await;
    // `user_sign_ins` is left out: a refused request still signs its caller in.
    out += &dump::<user_managed_department::Entity>(
        db,
        "user_managed_departments",
        user_managed_department::Column::UserId,
        Some(user_managed_department::Column::DepartmentId),
    )
    .await;
    out += &dump::<group::Entity>(db, "groups", group::Column::Id, None).await;
    out += &dump::<group_member::Entity>(
        db,
        "group_members",
        group_member::Column::GroupId,
        Some(group_member::Column::UserId),
    )
    .await;
    out += &dump::<project::Entity>(db, "projects", project::Column::Id, None).await;
    out += &dump::<project_author::Entity>(
        db,
        "project_authors",
        project_author::Column::ProjectId,
        Some(project_author::Column::UserId),
    )
    .await;
    out += &dump::<content_item::Entity>(db, "content_items", content_item::Column::Id, None).await;
    out += &dump::<enrollment::Entity>(db, "enrollments", enrollment::Column::Id, None).await;
    out += &dump::<learner_result::Entity>(
        db,
        "learner_results",
        learner_result::Column::EnrollmentId,
        None,
    )
    .await;
    out += &dump::<result_task::Entity>(db, "result_tasks", result_task::Column::Id, None).await;
    out += &dump::<user_points::Entity>(db, "user_points", user_points::Column::UserId, None).await;
    out += &dump::<audit_log::Entity>(db, "audit_log", audit_log::Column::Id, None).await;
    out
}

/// `snapshot` without its `revision:` lines.
pub fn without_revision(snapshot: &str) -> String {
    snapshot
        .lines()
        .filter(|line| !line.trim_start().starts_with("revision:"))
        .collect::<Vec<_>>()
        .join("\n")
}
