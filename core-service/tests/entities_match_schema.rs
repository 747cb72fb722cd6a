//! The SeaORM entities match the schema the migrations make: on a freshly migrated
//! database, one row per table goes in through its entity and comes back unchanged, and
//! the schema's unique keys and foreign keys are reported alike by both backends.
//!
//! SQLite always runs; PostgreSQL runs too when `LMS_TEST_POSTGRES_URL` names a server
//! (a fresh database is created there for the test and dropped afterwards).

use chrono::{DateTime, TimeZone as _, Utc};
use lms_core::{
    db::{UniqueKey, unique_violation},
    domain::roles::Role,
    entities::{
        account, audit_log, content_item, custom_role, custom_role_permission, department,
        department_closure, enrollment, group, group_member, learner_result, project,
        project_author, result_task, user, user_field, user_managed_department, user_points,
        user_sign_in,
    },
    error::ServiceError,
    import::ImportError,
};
use lms_migrations::{Migrator, MigratorTrait as _};
use lms_testkit::{Backend, TestDatabase};
use sea_orm::{
    ActiveModelTrait as _, ActiveValue::NotSet, DatabaseConnection, EntityTrait, IntoActiveModel,
    ModelTrait as _, PrimaryKeyTrait, QueryOrder as _, Set, prelude::Uuid,
};

/// A fixed instant with whole seconds, exact on every backend.
fn at(second: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 22, 6, 34, second)
        .single()
        .expect("valid time")
}

fn id() -> Uuid {
    Uuid::now_v7()
}

/// Inserts `model` through its entity, reads it back by primary key, and checks both
/// the returned and the re-read row equal what went in.
async fn round_trip<E, M>(
    db: &DatabaseConnection,
    model: M,
    key: <E::PrimaryKey as PrimaryKeyTrait>::ValueType,
) -> M
where
    E: EntityTrait<Model = M>,
    M: sea_orm::ModelTrait<Entity = E>
        + IntoActiveModel<E::ActiveModel>
        + sea_orm::FromQueryResult
        + Clone
        + PartialEq
        + std::fmt::Debug
        + Send
        + Sync,
    E::ActiveModel: sea_orm::ActiveModelBehavior + Send,
{
    let table = E::default().table_name().to_owned();
    let inserted = model
        .clone()
        .into_active_model()
        .insert(db)
        .await
        .unwrap_or_else(|err| panic!("insert into {table}: {err}"));
    assert_eq!(inserted, model, "{table}: the inserted row differs");
    let read = E::find_by_id(key)
        .one(db)
        .await
        .unwrap_or_else(|err| panic!("read {table}: {err}"))
        .unwrap_or_else(|| panic!("{table}: the row is gone"));
    assert_eq!(read, model, "{table}: the row read back differs");
    read
}

async fn check_entities(db: &DatabaseConnection) {
    Migrator::up(db, None).await.expect("migrate");

    // The account, with the database defaults for `revision`.
    let account_id = id();
    let account = account::ActiveModel {
        id: Set(account_id),
        url: Set("https://acme.example.com".to_owned()),
        revision: NotSet,
        created_at: Set(at(0)),
    }
    .insert(db)
    .await
    .expect("insert account");
    assert_eq!(account.revision, 0, "accounts.revision defaults to 0");
    let other_id = id();
    round_trip(
        db,
        account::Model {
            id: other_id,
            url: "https://other.example.com".to_owned(),
            revision: 7,
            created_at: at(1),
        },
        other_id,
    )
    .await;

    let root_id = id();
    let root = department::Model {
        id: root_id,
        account_id,
        parent_id: None,
        name: "Acme".to_owned(),
        code: Some("ACME".to_owned()),
        created_at: at(2),
        updated_at: at(3),
    };
    round_trip(db, root.clone(), root_id).await;
    let child_id = id();
    round_trip(
        db,
        department::Model {
            id: child_id,
            account_id,
            parent_id: Some(root_id),
            name: "Sales".to_owned(),
            code: None,
            created_at: at(4),
            updated_at: at(4),
        },
        child_id,
    )
    .await;

    for (ancestor_id, descendant_id, depth) in [
        (root_id, root_id, 0),
        (child_id, child_id, 0),
        (root_id, child_id, 1),
    ] {
        round_trip(
            db,
            department_closure::Model {
                account_id,
                ancestor_id,
                descendant_id,
                depth,
            },
            (ancestor_id, descendant_id),
        )
        .await;
    }

    let role_id = id();
    round_trip(
        db,
        custom_role::Model {
            id: role_id,
            account_id,
            name: "Trainer".to_owned(),
        },
        role_id,
    )
    .await;
    round_trip(
        db,
        custom_role_permission::Model {
            custom_role_id: role_id,
            permission: "group.read".to_owned(),
        },
        (role_id, "group.read".to_owned()),
    )
    .await;

    let user_id = id();
    let owner = user::Model {
        id: user_id,
        account_id,
        email: "Owner@Acme.example.com".to_owned(),
        email_key: "owner@acme.example.com".to_owned(),
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo".to_owned(),
        role: Role::Custom,
        custom_role_id: Some(role_id),
        department_id: child_id,
        active: false,
        contact_email: Some("Ada@Elsewhere.example".to_owned()),
        contact_email_key: Some("ada@elsewhere.example".to_owned()),
        employment_ended: true,
        first_name: "Ada".to_owned(),
        last_name: "Lovelace & <Co>".to_owned(),
        scheduled_deactivation_date: chrono::NaiveDate::from_ymd_opt(2026, 12, 31),
        scheduled_termination_date: chrono::NaiveDate::from_ymd_opt(2027, 1, 31),
        created_at: at(5),
        updated_at: at(6),
        external_id: Some("00u1ext".to_owned()),
        scim_removed: true,
    };
    round_trip(db, owner.clone(), user_id).await;
    round_trip(
        db,
        user_field::Model {
            user_id,
            name: "JOB_TITLE".to_owned(),
            value: "Analyst & <Engine>".to_owned(),
        },
        (user_id, "JOB_TITLE".to_owned()),
    )
    .await;
    round_trip(
        db,
        user_sign_in::Model {
            user_id,
            last_at: at(9),
        },
        user_id,
    )
    .await;
    // `active` defaults to true in the database.
    let learner_id = id();
    let learner = user::ActiveModel {
        id: Set(learner_id),
        account_id: Set(account_id),
        email: Set("learner@acme.example.com".to_owned()),
        email_key: Set("learner@acme.example.com".to_owned()),
        password_hash: Set("x".to_owned()),
        role: Set(Role::Learner),
        custom_role_id: Set(None),
        department_id: Set(root_id),
        active: NotSet,
        // Empty in the database unless given, as for every user made before the names.
        contact_email: NotSet,
        contact_email_key: NotSet,
        employment_ended: NotSet,
        first_name: NotSet,
        last_name: NotSet,
        scheduled_deactivation_date: NotSet,
        scheduled_termination_date: NotSet,
        created_at: Set(at(7)),
        updated_at: Set(at(7)),
        external_id: NotSet,
        scim_removed: NotSet,
    }
    .insert(db)
    .await
    .expect("insert learner");
    assert!(learner.active, "users.active defaults to true");
    assert!(
        !learner.employment_ended && learner.contact_email.is_none(),
        "a user's employment has not ended and its login is its e-mail unless said otherwise"
    );
    assert_eq!(
        (learner.first_name.as_str(), learner.last_name.as_str()),
        ("", ""),
        "names default to empty"
    );
    unique_keys_are_conflicts(db, account_id, root_id).await;

    round_trip(
        db,
        user_managed_department::Model {
            user_id,
            department_id: root_id,
        },
        (user_id, root_id),
    )
    .await;

    let group_id = id();
    round_trip(
        db,
        group::Model {
            id: group_id,
            account_id,
            name: "Interns".to_owned(),
            smart_department_id: None,
            external_id: Some("g-ext".to_owned()),
            created_at: Some(at(5)),
            updated_at: Some(at(6)),
        },
        group_id,
    )
    .await;
    let smart_group_id = id();
    round_trip(
        db,
        group::Model {
            id: smart_group_id,
            account_id,
            name: "All of Sales".to_owned(),
            smart_department_id: Some(child_id),
            external_id: None,
            created_at: None,
            updated_at: None,
        },
        smart_group_id,
    )
    .await;
    round_trip(
        db,
        group_member::Model {
            group_id,
            user_id: learner_id,
        },
        (group_id, learner_id),
    )
    .await;

    let project_id = id();
    round_trip(
        db,
        project::Model {
            id: project_id,
            account_id,
            name: "Onboarding".to_owned(),
        },
        project_id,
    )
    .await;
    round_trip(
        db,
        project_author::Model {
            project_id,
            user_id,
        },
        (project_id, user_id),
    )
    .await;

    let item_id = id();
    round_trip(
        db,
        content_item::Model {
            id: item_id,
            account_id,
            project_id,
            title: "Welcome".to_owned(),
            description: "First steps".to_owned(),
            user_id,
            added_at: at(8),
            content_type: "Course".to_owned(),
            view_url: None,
        },
        item_id,
    )
    .await;
    let linked_item_id = id();
    round_trip(
        db,
        content_item::Model {
            id: linked_item_id,
            account_id,
            project_id,
            title: "Elsewhere".to_owned(),
            description: String::new(),
            user_id,
            added_at: at(9),
            content_type: "Link".to_owned(),
            view_url: Some("https://cdn.example.com/x".to_owned()),
        },
        linked_item_id,
    )
    .await;

    let enrollment_id = id();
    round_trip(
        db,
        enrollment::Model {
            id: enrollment_id,
            account_id,
            learner_id,
            content_item_id: item_id,
            created_at: at(10),
            access_at: Some(at(11)),
            due_at: Some(at(12)),
            lock_after_due: true,
        },
        enrollment_id,
    )
    .await;
    // Both layers of a result, with the extremes each column must hold exactly.
    round_trip(
        db,
        learner_result::Model {
            enrollment_id,
            account_id,
            status: "passed".to_owned(),
            progress: 100,
            awarded_score: i32::MAX,
            passing_score: 7_000,
            time_spent: i64::MAX,
            views_count: i64::MAX - 1,
            completed_at: Some(at(13)),
            last_viewed_at: Some(at(14)),
            admin_status: Some("failed".to_owned()),
            admin_completed_at: Some(at(15)),
            admin_score: Some(0),
            effective_status: "failed".to_owned(),
            effective_completed_at: Some(at(15)),
        },
        enrollment_id,
    )
    .await;
    // A task id as large as JSON numbers keep exact.
    let task_id = (1_i64 << 53) - 1;
    round_trip(
        db,
        result_task::Model {
            id: task_id,
            account_id,
            started_by: user_id,
            status: "complete".to_owned(),
            created_at: at(16),
        },
        task_id,
    )
    .await;

    round_trip(
        db,
        user_points::Model {
            user_id: learner_id,
            account_id,
            points: i64::MAX - 1,
        },
        learner_id,
    )
    .await;
    // `points` defaults to 0 in the database.
    let points = user_points::ActiveModel {
        user_id: Set(user_id),
        account_id: Set(account_id),
        points: NotSet,
    }
    .insert(db)
    .await
    .expect("insert points");
    assert_eq!(points.points, 0, "user_points.points defaults to 0");

    let audit_id = id();
    round_trip(
        db,
        audit_log::Model {
            id: audit_id,
            account_id,
            actor_user_id: Some(user_id),
            action: "department.update".to_owned(),
            entity_type: "department".to_owned(),
            entity_id: child_id,
            request_id: Some("req-1".to_owned()),
            before: Some(r#"{"name":"Sale"}"#.to_owned()),
            after: Some(r#"{"name":"Sales"}"#.to_owned()),
            created_at: at(11),
        },
        audit_id,
    )
    .await;
    let import_audit_id = id();
    round_trip(
        db,
        audit_log::Model {
            id: import_audit_id,
            account_id,
            actor_user_id: None,
            action: "import".to_owned(),
            entity_type: "account".to_owned(),
            entity_id: account_id,
            request_id: None,
            before: None,
            after: Some("{}".to_owned()),
            created_at: at(12),
        },
        import_audit_id,
    )
    .await;

    // The relations resolve.
    let member_ids: Vec<Uuid> = group::Entity::find_by_id(group_id)
        .one(db)
        .await
        .unwrap()
        .unwrap()
        .find_related(user::Entity)
        .all(db)
        .await
        .expect("group members")
        .into_iter()
        .map(|u| u.id)
        .collect();
    assert_eq!(member_ids, vec![learner_id]);
    let authored: Vec<Uuid> = owner
        .find_related(project::Entity)
        .all(db)
        .await
        .expect("authored projects")
        .into_iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(authored, vec![project_id]);
    let departments: Vec<Uuid> = account
        .find_related(department::Entity)
        .order_by_asc(department::Column::CreatedAt)
        .all(db)
        .await
        .expect("departments of the account")
        .into_iter()
        .map(|d| d.id)
        .collect();
    assert_eq!(departments, vec![root_id, child_id]);

    // Foreign keys are enforced: a department of an unknown account is refused.
    let orphan = department::Model {
        id: id(),
        account_id: id(),
        parent_id: None,
        name: "Orphan".to_owned(),
        code: None,
        created_at: at(13),
        updated_at: at(13),
    };
    let refused = orphan
        .into_active_model()
        .insert(db)
        .await
        .expect_err("a foreign key must refuse a department of an unknown account");
    assert_eq!(
        unique_violation(&refused),
        None,
        "a foreign-key violation is no conflict"
    );
    assert!(matches!(
        ServiceError::from(refused),
        ServiceError::Unexpected(_)
    ));
    // Link tables cascade: deleting a group deletes its member rows.
    group::Entity::delete_by_id(group_id)
        .exec(db)
        .await
        .expect("delete group");
    assert!(
        group_member::Entity::find_by_id((group_id, learner_id))
            .one(db)
            .await
            .unwrap()
            .is_none(),
        "group_members rows go with their group"
    );
}

/// Writes that collide with a unique key of the seeded account are conflicts, told apart
/// and worded the same on every backend.
async fn unique_keys_are_conflicts(db: &DatabaseConnection, account_id: Uuid, root_id: Uuid) {
    // Either scheme names one account, so the other scheme collides too (an import that
    // raced another past its checks gets the same conflict).
    for url in ["https://acme.example.com", "http://acme.example.com"] {
        let same_url = account::ActiveModel {
            id: Set(id()),
            url: Set(url.to_owned()),
            revision: NotSet,
            created_at: Set(at(0)),
        }
        .insert(db)
        .await
        .expect_err("a second account with the same URL");
        assert_eq!(
            unique_violation(&same_url),
            Some(UniqueKey::AccountUrl),
            "{url}"
        );
        let ImportError::Conflict(message) = ImportError::from(same_url) else {
            panic!("the import must see a conflict");
        };
        assert_eq!(message, "An account with this URL already exists.");
    }

    let same_login = user::ActiveModel {
        id: Set(id()),
        account_id: Set(account_id),
        email: Set("OWNER@acme.example.com".to_owned()),
        email_key: Set("owner@acme.example.com".to_owned()),
        password_hash: Set("x".to_owned()),
        role: Set(Role::Learner),
        custom_role_id: Set(None),
        department_id: Set(root_id),
        active: Set(true),
        contact_email: NotSet,
        contact_email_key: NotSet,
        employment_ended: NotSet,
        first_name: NotSet,
        last_name: NotSet,
        scheduled_deactivation_date: NotSet,
        scheduled_termination_date: NotSet,
        created_at: Set(at(7)),
        updated_at: Set(at(7)),
        external_id: NotSet,
        scim_removed: NotSet,
    }
    .insert(db)
    .await
    .expect_err("a second user with the same login");
    assert_eq!(unique_violation(&same_login), Some(UniqueKey::UserLogin));
    let ServiceError::Conflict(message) = ServiceError::from(same_login) else {
        panic!("the services must see a conflict");
    };
    assert_eq!(
        message,
        "A user with this login already exists in the account."
    );

    // The owner's address is held apart from its login; another login with that address
    // collides too (two writers that both checked first meet here).
    let same_address = user::ActiveModel {
        id: Set(id()),
        account_id: Set(account_id),
        email: Set("someone@acme.example.com".to_owned()),
        email_key: Set("someone@acme.example.com".to_owned()),
        password_hash: Set("x".to_owned()),
        role: Set(Role::Learner),
        custom_role_id: Set(None),
        department_id: Set(root_id),
        active: Set(true),
        contact_email: Set(Some("ADA@elsewhere.example".to_owned())),
        contact_email_key: Set(Some("ada@elsewhere.example".to_owned())),
        employment_ended: NotSet,
        first_name: NotSet,
        last_name: NotSet,
        scheduled_deactivation_date: NotSet,
        scheduled_termination_date: NotSet,
        created_at: Set(at(7)),
        updated_at: Set(at(7)),
        external_id: NotSet,
        scim_removed: NotSet,
    }
    .insert(db)
    .await
    .expect_err("a second user with the same e-mail address");
    assert_eq!(unique_violation(&same_address), Some(UniqueKey::UserEmail));
    assert!(matches!(
        ServiceError::from(same_address),
        ServiceError::Conflict(message)
            if message == "A user with this e-mail address already exists in the account."
    ));

    let same_id = account::ActiveModel {
        id: Set(account_id),
        url: Set("https://elsewhere.example.com".to_owned()),
        revision: NotSet,
        created_at: Set(at(0)),
    }
    .insert(db)
    .await
    .expect_err("a second account with the same id");
    assert_eq!(unique_violation(&same_id), Some(UniqueKey::Row));
}

/// `check_entities` on a fresh, empty database of `backend`.
async fn check_on(backend: Backend) {
    let Some(database) = TestDatabase::create_empty(backend).await else {
        return;
    };
    let db = database.connect().await;
    check_entities(&db).await;
    db.close().await.expect("close");
}

#[tokio::test]
async fn entities_match_the_sqlite_schema() {
    check_on(Backend::Sqlite).await;
}

#[tokio::test]
async fn entities_match_the_postgres_schema() {
    check_on(Backend::Postgres).await;
}
