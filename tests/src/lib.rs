//! End-to-end test support: the real core and the real gateway on loopback ports, over
//! a fresh SQLite file or a fresh PostgreSQL database, holding a known world.
//!
//! Layout:
//! - [`database`]: a fresh database per test; PostgreSQL runs are selected by
//!   `LMS_TEST_POSTGRES_URL` and say so when skipped.
//! - [`world`]: the import document every test starts from, with named ids and logins.
//! - [`stack`]: starts core and gateway, and a small client for the XML interface.
//! - [`xml`]: reading single elements of XML bodies in assertions.
//! - [`snapshot`]: every table as text, to prove a refused request changed nothing.
//! - [`large_world`]: generated accounts of any size, for the scale benchmark and plan checks.
//! - [`query_plan`]: records the statements the core runs and checks how the database plans them.
//!
//! Each scenario runs on both backends through [`on_both_backends!`].

pub mod database;
pub mod large_world;
pub mod query_plan;
pub mod snapshot;
pub mod stack;
pub mod world;
pub mod xml;

pub use database::Backend;
pub use stack::{Reply, TestStack};

/// Declares `async fn $name(stack: &TestStack)` scenarios as two tests each: one on
/// SQLite, one on PostgreSQL (skipped, saying so, without `LMS_TEST_POSTGRES_URL`).
#[macro_export]
macro_rules! on_both_backends {
    ($($scenario:ident),* $(,)?) => {
        $(
            mod $scenario {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn on_sqlite() {
                    let stack = $crate::TestStack::start($crate::Backend::Sqlite).await.expect("SQLite is always available");
                    super::$scenario(&stack).await;
                    stack.stop().await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn on_postgres() {
                    let Some(stack) = $crate::TestStack::start($crate::Backend::Postgres).await else { return };
                    super::$scenario(&stack).await;
                    stack.stop().await;
                }
            }
        )*
    };
}
