//! Running one scenario on both backends.

use std::future::Future;

use crate::{Backend, TestConnection};

/// What a scenario runs against: set up fresh on a backend, torn down after the scenario.
pub trait Fixture: Sized {
    /// `None` when `backend` is not available here (PostgreSQL without a server, which
    /// has been said already).
    fn start(backend: Backend) -> impl Future<Output = Option<Self>>;

    /// Ends what `start` began (servers, connections) before the database goes.
    fn stop(self) -> impl Future<Output = ()>;
}

impl Fixture for TestConnection {
    async fn start(backend: Backend) -> Option<Self> {
        TestConnection::create(backend).await
    }

    async fn stop(self) {
        self.db.close().await.ok();
    }
}

/// Declares each `async fn scenario(fixture: &F)` of the calling module as two tests,
/// `scenario::on_sqlite` and `scenario::on_postgres`, each on a fresh fixture `F` (any
/// [`Fixture`]; a `&F` may also coerce to what `F` dereferences to). The PostgreSQL test
/// passes after printing [`crate::SKIPPED_WITHOUT_POSTGRES`] when no server is configured.
///
/// ```text
/// on_both_backends!(TestConnection => an_import_lands, a_cycle_is_refused);
/// on_both_backends!(TestConnection, worker_threads = 4 => concurrent_writes_are_kept);
/// ```
#[macro_export]
macro_rules! on_both_backends {
    ($fixture:ty => $($scenario:ident),* $(,)?) => {
        $crate::on_both_backends!($fixture, worker_threads = 2 => $($scenario),*);
    };
    ($fixture:ty, worker_threads = $workers:literal => $($scenario:ident),* $(,)?) => {
        $(
            mod $scenario {
                #[allow(unused_imports)]
                use super::*;

                #[::tokio::test(flavor = "multi_thread", worker_threads = $workers)]
                async fn on_sqlite() {
                    let fixture = <$fixture as $crate::Fixture>::start($crate::Backend::Sqlite)
                        .await
                        .expect("SQLite is always available");
                    super::$scenario(&fixture).await;
                    $crate::Fixture::stop(fixture).await;
                }

                #[::tokio::test(flavor = "multi_thread", worker_threads = $workers)]
                async fn on_postgres() {
                    let Some(fixture) =
                        <$fixture as $crate::Fixture>::start($crate::Backend::Postgres).await
                    else {
                        return;
                    };
                    super::$scenario(&fixture).await;
                    $crate::Fixture::stop(fixture).await;
                }
            }
        )*
    };
}
