//! Driver connections held outside the pool, handed out one statement at a time.
//!
//! A connection goes back to the idle list as soon as its statement has answered in full,
//! without the pool's ping: a statement that answered in full left nothing behind on its
//! connection. A read that did not finish (its request was dropped midway, or it failed)
//! closes its connection instead, so nothing half-read is ever handed out again.
//!
//! Connections are made lazily, up to a bound, and are closed as the pool's are after a
//! fault ([`fault::opened_before_last_fault`]).

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use lms_runtime::Outage;
use sea_orm::{ConnAcquireErr, DbErr, RuntimeErr, sqlx};
use tokio::sync::Semaphore;

use crate::db::fault;

pub(super) struct Held<C, O> {
    options: O,
    idle: Mutex<Vec<Idle<C>>>,
    permits: Semaphore,
    /// The pool's: how long a read waits for a connection, connecting included, before
    /// it is answered as unavailable.
    acquire_timeout: Duration,
    /// Whether the database is down ([`fault::DATABASE_OUTAGE`] but in tests).
    outage: &'static Outage,
}

struct Idle<C> {
    connection: C,
    opened: Instant,
}

impl<C, O> Held<C, O>
where
    C: sqlx::Connection<Options = O>,
    O: sqlx::ConnectOptions<Connection = C>,
    for<'c> &'c mut C: sqlx::Executor<'c, Database = C::Database>,
{
    pub(super) fn new(
        options: O,
        size: usize,
        acquire_timeout: Duration,
        outage: &'static Outage,
    ) -> Self {
        Self {
            options,
            idle: Mutex::new(Vec::with_capacity(size)),
            permits: Semaphore::new(size),
            acquire_timeout,
            outage,
        }
    }

    /// Every row of `query`, on a held connection.
    pub(super) async fn fetch_all<'q, A>(
        &self,
        query: sqlx::query::Query<'q, C::Database, A>,
    ) -> Result<Vec<<C::Database as sqlx::Database>::Row>, DbErr>
    where
        A: sqlx::IntoArguments<C::Database> + 'q,
    {
        let mut lease = self.lease().await?;
        let rows = query.fetch_all(lease.connection()).await;
        lease.finish(rows)
    }

    /// An idle connection, or a new one while fewer than the bound are open; as the pool,
    /// a timeout when that takes longer than its acquire timeout.
    async fn lease(&self) -> Result<Lease<'_, C, O>, DbErr> {
        tokio::time::timeout(self.acquire_timeout, self.lease_untimed())
            .await
            .unwrap_or(Err(DbErr::ConnectionAcquire(ConnAcquireErr::Timeout)))
    }

    async fn lease_untimed(&self) -> Result<Lease<'_, C, O>, DbErr> {
        let permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| DbErr::ConnectionAcquire(ConnAcquireErr::ConnectionClosed))?;
        let idle = {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            // Every idle connection opened before the last fault goes, not only the one
            // taken: on SQLite the connections of one process share the file's `-shm`
            // mapping, and one opened while the files were unwritable keeps it read-only
            // (every write failing) for as long as it stays open, idle or not.
            // Dropped without a goodbye: a broken connection may never answer one.
            idle.retain(|held| !fault::opened_before_last_fault(held.opened.elapsed()));
            idle.pop()
        };
        if let Some(idle) = idle {
            return Ok(Lease {
                held: self,
                idle: Some(idle),
                _permit: permit,
            });
        }
        let connection = self
            .options
            .connect()
            .await
            .map_err(|err| DbErr::Conn(RuntimeErr::SqlxError(Arc::new(err))))?;
        Ok(Lease {
            held: self,
            idle: Some(Idle {
                connection,
                opened: Instant::now(),
            }),
            _permit: permit,
        })
    }
}

impl<C, O> Held<C, O> {
    /// Idle connections held now.
    #[cfg(test)]
    pub(super) fn idle(&self) -> usize {
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// One connection out of [`Held`]: back to the idle list only through [`Lease::finish`]
/// with a complete answer; dropped otherwise.
struct Lease<'a, C, O> {
    held: &'a Held<C, O>,
    idle: Option<Idle<C>>,
    _permit: tokio::sync::SemaphorePermit<'a>,
}

impl<C, O> Lease<'_, C, O> {
    fn connection(&mut self) -> &mut C {
        &mut self
            .idle
            .as_mut()
            .unwrap_or_else(|| unreachable!("a lease holds its connection until it ends"))
            .connection
    }

    /// Gives the connection back after a complete answer; closes it after an error (the
    /// error's conversion into a service error counts it as a fault, as the pool's are).
    fn finish<T>(mut self, answer: Result<T, sqlx::Error>) -> Result<T, DbErr> {
        match answer {
            Ok(answer) => {
                // During an outage a connection serves one read only: one opened while the
                // files were unwritable would otherwise outlive the fault (see `lease`).
                let keep = !self.held.outage.is_down();
                if let Some(idle) = self.idle.take().filter(|_| keep) {
                    self.held
                        .idle
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(idle);
                }
                Ok(answer)
            }
            Err(err) => Err(DbErr::Query(RuntimeErr::SqlxError(Arc::new(err)))),
        }
    }
}
