//! Whole lists of large accounts (issue 28): every whole list (`GET /user`, `/user/v2`,
//! `/enrollment`, `/department`, `/group`, `/content`, `/gamification/points`) answers 200
//! with every row, in XML and in JSON, on accounts where the one-message answers of before
//! failed with 500 (above about 21,600 users, or 30,000 enrollments, a list no longer fitted
//! the 4 MiB message limit). Each body is read as it arrives, never held whole.
//!
//! The account of the issue (50,000 users, 500,000 enrollments) takes minutes to import and
//! read in a debug build, so it runs on request (`--ignored`); one of 25,000 users and 100,000
//! enrollments, above both old limits, always runs.

use lms_core::auth::PasswordHasher;
use lms_tests::{
    Backend, TestStack,
    large_world::{RoleLogin, WORLD_PASSWORD, WorldShape, import_account},
    stack::{StackOptions, TEST_POLICY},
    whole_lists::{Format, WHOLE_LISTS, read},
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn above_the_old_message_limit_every_whole_list_is_complete_on_sqlite() {
    every_whole_list_is_complete(Backend::Sqlite, above_the_old_limit()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn above_the_old_message_limit_every_whole_list_is_complete_on_postgres() {
    every_whole_list_is_complete(Backend::Postgres, above_the_old_limit()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "minutes in a debug build: run with --ignored (or in release)"]
async fn fifty_thousand_users_and_half_a_million_enrollments_on_sqlite() {
    every_whole_list_is_complete(Backend::Sqlite, the_issues_account()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "minutes in a debug build: run with --ignored (or in release)"]
async fn fifty_thousand_users_and_half_a_million_enrollments_on_postgres() {
    every_whole_list_is_complete(Backend::Postgres, the_issues_account()).await;
}

/// 25,000 users, 4 enrollments each.
fn above_the_old_limit() -> WorldShape {
    WorldShape {
        enrollments_per_user: 4,
        ..WorldShape::with_users(25_000)
    }
}

/// 50,006 users: the 6 role logins and 50,000 learners with 10 enrollments each.
fn the_issues_account() -> WorldShape {
    WorldShape::with_users(50_006)
}

async fn every_whole_list_is_complete(backend: Backend, shape: WorldShape) {
    let Some(stack) = TestStack::start_with(StackOptions {
        with_world: false,
        ..StackOptions::new(backend)
    })
    .await
    else {
        return;
    };
    let hasher = PasswordHasher::new(TEST_POLICY).expect("policy");
    let hash = hasher.hash(WORLD_PASSWORD).expect("hash");
    import_account(&stack, &shape, &hasher, &hash).await;
    for list in WHOLE_LISTS {
        for format in Format::BOTH {
            let read = read(&stack, &shape, RoleLogin::Owner, list, format)
                .await
                .unwrap_or_else(|error| panic!("{error:#}"));
            assert_eq!(
                read.rows,
                list.rows_for_the_owner(&shape),
                "{} in {format:?}: {} bytes",
                list.path,
                read.bytes
            );
        }
    }
    stack.stop().await;
}
