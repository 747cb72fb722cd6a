//! End-to-end test support: the real core and the real gateway on loopback ports, over
//! a fresh SQLite file or a fresh PostgreSQL database, holding a known world.
//!
//! Layout:
//! - [`database`]: a fresh database per test (the workspace's `lms-testkit`); PostgreSQL
//!   runs are selected by `LMS_TEST_POSTGRES_URL` and say so when skipped.
//! - [`world`]: the import document every test starts from, with named ids and logins.
//! - [`stack`]: starts core and gateway, and a small client for the XML interface.
//! - [`xml`]: reading single elements of XML bodies in assertions.
//! - [`lists`]: the ids of a list answer, and walks over every page of a paged list.
//! - [`rows`]: rows written or read straight in the database (a granted permission, audit rows).
//! - [`fault`]: fault injection: a core that can be killed and restarted apart from its
//!   gateway, a load that records every answer, and the checks each fault scenario ends with.
//! - [`lms_process`]: the `lms` executable as an operator runs it (`lms up` on fixed ports,
//!   its log and exit), for faults only a whole process shows.
//! - [`http_load`]: a minimal HTTP/1.1 keep-alive load generator and latency quantiles, for
//!   the benchmarks.
//! - [`machine`]: the machine a benchmark ran on, and CPU time from `/proc`.
//! - [`snapshot`]: every table as text, to prove a refused request changed nothing.
//! - [`large_world`]: generated accounts of any size, for the scale benchmark and plan checks.
//! - [`query_plan`]: records the statements the core runs and checks how the database plans them.
//! - [`memory`]: the growth of this process's peak memory, for benchmarks.
//! - [`webhooks`]: a receiver of webhook deliveries on loopback, stacks that deliver to
//!   it, and the register → code → confirm → subscribe flow.
//! - [`whole_lists`]: reads the whole lists of a generated account as they arrive, counting rows.
//! - [`routes`]: every route and method the gateway serves, found by asking it.
//!
//! Each scenario runs on both backends through [`on_both_backends!`].

pub mod bench;
pub mod database;
pub mod fault;
pub mod http_load;
pub mod large_world;
pub mod lists;
pub mod lms_process;
pub mod machine;
pub mod memory;
pub mod query_plan;
pub mod routes;
pub mod rows;
pub mod snapshot;
pub mod stack;
pub mod webhooks;
pub mod whole_lists;
pub mod world;
pub mod xml;

pub use database::Backend;
pub use lists::{Pages, json_ids, walk_json_pages, walk_xml_pages, xml_ids};
pub use stack::{Reply, TestStack, get_json, json_of, post_json};
pub use world::uuid;

#[doc(hidden)]
pub use lms_testkit as testkit;

/// A stack is what the end-to-end scenarios run against.
impl lms_testkit::Fixture for TestStack {
    async fn start(backend: Backend) -> Option<Self> {
        TestStack::start(backend).await
    }

    async fn stop(self) {
        TestStack::stop(self).await;
    }
}

/// Declares `async fn $name(stack: &TestStack)` scenarios as two tests each: one on
/// SQLite, one on PostgreSQL (skipped, saying so, without `LMS_TEST_POSTGRES_URL`).
#[macro_export]
macro_rules! on_both_backends {
    ($($scenario:ident),* $(,)?) => {
        $crate::testkit::on_both_backends!($crate::TestStack => $($scenario),*);
    };
}
