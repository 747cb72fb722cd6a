//! Concurrent hot reads of one shape on PostgreSQL, answered by one statement.
//!
//! A read of one group costs the PostgreSQL server far more in fixed work (a message to
//! parse, parameters to bind, an executor to start and stop, a snapshot, a reply to send,
//! two context switches) than in finding the group's few rows, and the server shares the
//! machine's cores with the services. Reads that arrive while others of the same shape are
//! running wait for the next statement, and that statement answers all of them at once,
//! each item's values bound as one element of an array parameter (`crate::db::pg_array`).
//!
//! What stays as it was:
//! - each read reflects the database: an item joins only a statement not yet sent, so the
//!   statement's snapshot is taken after its request arrived (nothing is ever answered from
//!   an earlier read);
//! - a read with nothing else running goes out at once, alone: batches form only while
//!   [`RUNNING`] statements of the shape are already on their way;
//! - a request dropped while it waits is simply not answered; the statement runs on a task
//!   of its own, so no caller's cancellation can cut it off for the others.

use std::sync::{Arc, Mutex};

use sea_orm::{
    DbErr, QueryResult, RuntimeErr, Value,
    error::ConnAcquireErr,
    sqlx::{
        self, PgConnection, Postgres,
        postgres::{PgArguments, PgConnectOptions},
        query::Query,
    },
};
use tokio::sync::oneshot;

use super::{held::Held, row::ReadRow};
use crate::db::pg_array::{ArrayText, UUID_WIDTH};

/// The held connections batched reads run on.
pub(super) type PgHeld = Held<PgConnection, PgConnectOptions>;

/// Statements of one shape running at once; another one starts only when one of them has
/// answered, with every item that arrived meanwhile. Two keep the server busy while the
/// previous answer is read, and leave a slow statement (a huge smart group) one other lane.
const RUNNING: usize = 2;
/// Items of one statement, so that one statement's work stays bounded.
const MOST_ITEMS: usize = 64;

/// A statement that reads many items of one shape at once.
///
/// Its parameters are arrays, one per value of an item (`$1` holds every item's first
/// value, in item order); its answer has a column `item`: the 1-based position of the item
/// each row belongs to (`unnest(…) WITH ORDINALITY`). An item may have any number of rows,
/// none included.
pub struct BatchedStatement {
    pub sql: &'static str,
}

/// The items waiting for a statement, per shape, and how many statements are running.
#[derive(Default)]
pub(super) struct Batches {
    shapes: Mutex<Vec<Shape>>,
}

struct Shape {
    sql: &'static str,
    waiting: Vec<Waiter>,
    running: usize,
}

struct Waiter {
    values: Vec<Value>,
    answer: oneshot::Sender<Result<Vec<ReadRow>, SharedError>>,
}

impl Batches {
    /// The rows of one item of `statement`, read on `held` together with the items of
    /// concurrent callers.
    pub(super) async fn read(
        self: &Arc<Self>,
        held: &Arc<PgHeld>,
        statement: &'static BatchedStatement,
        values: Vec<Value>,
    ) -> Result<Vec<ReadRow>, DbErr> {
        let (answer, answered) = oneshot::channel();
        let start = {
            let mut shapes = self.shapes.lock().unwrap_or_else(|e| e.into_inner());
            let shape = shape_of(&mut shapes, statement.sql);
            shape.waiting.push(Waiter { values, answer });
            if shape.running < RUNNING {
                shape.running += 1;
                Some(take_batch(&mut shape.waiting))
            } else {
                None
            }
        };
        if let Some(items) = start {
            tokio::spawn(run_batches(
                self.clone(),
                held.clone(),
                statement.sql,
                items,
            ));
        }
        match answered.await {
            Ok(rows) => rows.map_err(SharedError::into_db_err),
            Err(_) => Err(DbErr::ConnectionAcquire(ConnAcquireErr::ConnectionClosed)),
        }
    }
}

/// Runs statements of one shape until no item waits for one.
async fn run_batches(
    batches: Arc<Batches>,
    held: Arc<PgHeld>,
    sql: &'static str,
    mut items: Vec<Waiter>,
) {
    // Counted out even if this task is cancelled (the runtime shutting down).
    let mut running = Running {
        batches: &batches,
        sql,
        counted_out: false,
    };
    loop {
        crate::metrics::read_batch(items.len());
        let answers = read_items(&held, sql, &items).await;
        match answers {
            Ok(mut answers) => {
                for (waiter, rows) in items.drain(..).zip(answers.drain(..)) {
                    let _ = waiter.answer.send(Ok(rows));
                }
            }
            Err(err) => {
                let err = SharedError::from(err);
                for waiter in items.drain(..) {
                    let _ = waiter.answer.send(Err(err.clone()));
                }
            }
        }
        let mut shapes = batches.shapes.lock().unwrap_or_else(|e| e.into_inner());
        let shape = shape_of(&mut shapes, sql);
        if shape.waiting.is_empty() {
            // In the same critical section: an item arriving after this sees the slot free.
            shape.running -= 1;
            running.counted_out = true;
            return;
        }
        items = take_batch(&mut shape.waiting);
    }
}

/// Each item's rows, by the statement's `item` column.
async fn read_items(
    held: &PgHeld,
    sql: &'static str,
    items: &[Waiter],
) -> Result<Vec<Vec<ReadRow>>, DbErr> {
    let mut query = sqlx::query(sql);
    let width = items.first().map_or(0, |item| item.values.len());
    for column in 0..width {
        query = bind_column(query, items, column)?;
    }
    let rows = held.fetch_all(query).await?;
    let mut answers: Vec<Vec<ReadRow>> = items.iter().map(|_| Vec::new()).collect();
    for row in rows {
        let row = QueryResult::from(row);
        let item: i64 = row.try_get("", "item")?;
        let answer = usize::try_from(item)
            .ok()
            .and_then(|item| item.checked_sub(1))
            .and_then(|at| answers.get_mut(at))
            .ok_or_else(|| DbErr::Type(format!("a row of item {item} of {}", items.len())))?;
        answer.push(ReadRow::Driver(row));
    }
    Ok(answers)
}

/// The next statement's items: the oldest waiting, at most [`MOST_ITEMS`].
fn take_batch(waiting: &mut Vec<Waiter>) -> Vec<Waiter> {
    if waiting.len() <= MOST_ITEMS {
        std::mem::take(waiting)
    } else {
        waiting.drain(..MOST_ITEMS).collect()
    }
}

/// The registered shape of `sql`, registered on first use.
fn shape_of<'a>(shapes: &'a mut Vec<Shape>, sql: &'static str) -> &'a mut Shape {
    match shapes.iter().position(|s| std::ptr::eq(s.sql, sql)) {
        Some(at) => &mut shapes[at],
        None => {
            shapes.push(Shape {
                sql,
                waiting: Vec::new(),
                running: 0,
            });
            shapes.last_mut().expect("just pushed")
        }
    }
}

/// One running statement of a shape, counted out when its task is cancelled.
struct Running<'a> {
    batches: &'a Batches,
    sql: &'static str,
    counted_out: bool,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        if self.counted_out {
            return;
        }
        let mut shapes = self
            .batches
            .shapes
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let shape = shape_of(&mut shapes, self.sql);
        shape.running -= 1;
        // Items left behind (this task cancelled between statements) are dropped with
        // their senders: their callers are told the connection closed.
        if shape.running == 0 {
            shape.waiting.clear();
        }
    }
}

/// Binds every item's value of `column` as one array text (`crate::db::pg_array`).
fn bind_column<'q>(
    query: Query<'q, Postgres, PgArguments>,
    items: &[Waiter],
    column: usize,
) -> Result<Query<'q, Postgres, PgArguments>, DbErr> {
    let mut array = ArrayText::with_capacity(items.len(), UUID_WIDTH);
    for item in items {
        let value = item
            .values
            .get(column)
            .ok_or_else(|| DbErr::Type(format!("a batched item without value {column}")))?;
        array.push(value)?;
    }
    Ok(query.bind(array.finish()))
}

/// A statement's failure, told to each of its items' callers.
#[derive(Clone)]
enum SharedError {
    Acquire(ConnAcquireErr),
    Conn(Arc<sqlx::Error>),
    Query(Arc<sqlx::Error>),
    Other(String),
}

impl From<DbErr> for SharedError {
    fn from(err: DbErr) -> Self {
        match err {
            DbErr::ConnectionAcquire(err) => Self::Acquire(err),
            DbErr::Conn(RuntimeErr::SqlxError(err)) => Self::Conn(err),
            DbErr::Query(RuntimeErr::SqlxError(err)) => Self::Query(err),
            other => Self::Other(other.to_string()),
        }
    }
}

impl SharedError {
    fn into_db_err(self) -> DbErr {
        match self {
            Self::Acquire(err) => DbErr::ConnectionAcquire(err),
            Self::Conn(err) => DbErr::Conn(RuntimeErr::SqlxError(err)),
            Self::Query(err) => DbErr::Query(RuntimeErr::SqlxError(err)),
            Self::Other(message) => DbErr::Custom(message),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use lms_testkit::{Backend, TestConnection};
    use tokio::task::JoinSet;
    use uuid::Uuid;

    use super::*;

    /// What a read of this module needs: the shapes, and connections to read on.
    #[derive(Clone)]
    struct Reads {
        batches: Arc<Batches>,
        held: Arc<PgHeld>,
    }

    impl Reads {
        /// Statements of `statement`'s shape running now.
        fn running(&self, statement: &BatchedStatement) -> usize {
            let shapes = self.batches.shapes.lock().unwrap();
            shapes
                .iter()
                .find(|s| std::ptr::eq(s.sql, statement.sql))
                .map_or(0, |s| s.running)
        }
    }

    /// Echoes each item's id, with the number of items its statement read (`batch`); an item
    /// whose flag is false has no row. Every statement takes 20 ms, so reads queue behind it.
    static ECHO: BatchedStatement = BatchedStatement {
        sql: "SELECT w.item, w.id, CAST(cardinality($1::text::uuid[]) AS BIGINT) AS batch \
                FROM unnest($1::text::uuid[], $2::text::boolean[]) \
                     WITH ORDINALITY AS w(id, keep, item) \
               CROSS JOIN LATERAL (SELECT 1 FROM pg_sleep(0.02)) s \
               WHERE w.keep",
    };

    /// Fails with a division by zero when any item's flag is false.
    static STRICT: BatchedStatement = BatchedStatement {
        sql: "SELECT w.item, 1 / CAST(min(CASE WHEN w.ok THEN 1 ELSE 0 END) OVER () AS BIGINT) AS one \
                FROM unnest($1::text::uuid[], $2::text::boolean[]) \
                     WITH ORDINALITY AS w(id, ok, item) \
               CROSS JOIN LATERAL (SELECT 1 FROM pg_sleep(0.02)) s",
    };

    async fn postgres() -> Option<(TestConnection, Reads)> {
        let connection = TestConnection::create(Backend::Postgres).await?;
        let pool = connection.db.get_postgres_connection_pool();
        let held = PgHeld::new(
            (*pool.connect_options()).clone(),
            8,
            pool.options().get_acquire_timeout(),
            &crate::db::fault::DATABASE_OUTAGE,
        );
        let reads = Reads {
            batches: Arc::default(),
            held: Arc::new(held),
        };
        Some((connection, reads))
    }

    fn read(
        reads: &Reads,
        statement: &'static BatchedStatement,
        id: Uuid,
        flag: bool,
    ) -> impl Future<Output = Result<Vec<ReadRow>, DbErr>> + Send + 'static {
        let reads = reads.clone();
        async move {
            reads
                .batches
                .read(&reads.held, statement, vec![id.into(), flag.into()])
                .await
        }
    }

    #[tokio::test]
    async fn reads_arriving_together_share_a_statement_and_each_gets_its_own_rows() {
        let Some((_database, reads)) = postgres().await else {
            return;
        };
        let mut tasks = JoinSet::new();
        for n in 0..40 {
            let (id, keep) = (Uuid::new_v4(), n % 5 != 0);
            let read = read(&reads, &ECHO, id, keep);
            tasks.spawn(async move { (id, keep, read.await) });
        }
        let mut largest = 0;
        while let Some(done) = tasks.join_next().await {
            let (id, keep, rows) = done.unwrap();
            let rows = rows.expect("read");
            if !keep {
                assert!(rows.is_empty(), "an item without rows gets none");
                continue;
            }
            assert_eq!(rows.len(), 1, "its own row only");
            let ReadRow::Driver(row) = &rows[0] else {
                panic!("PostgreSQL rows are the driver's");
            };
            let echoed: Uuid = row.try_get("", "id").unwrap();
            assert_eq!(echoed, id, "each read gets the row of its own item");
            largest = largest.max(rows[0].int("batch").unwrap());
        }
        assert!(
            largest > 1 && largest <= MOST_ITEMS as i64,
            "reads queued behind a running statement went out together ({largest})"
        );
        assert_eq!(reads.running(&ECHO), 0, "every statement counted out");

        // Alone, a read goes out at once, in a statement of its own.
        let id = Uuid::new_v4();
        let rows = read(&reads, &ECHO, id, true).await.unwrap();
        assert_eq!(rows[0].int("batch").unwrap(), 1);
    }

    #[tokio::test]
    async fn a_failed_statement_fails_its_reads_only_and_the_shape_goes_on() {
        let Some((_database, reads)) = postgres().await else {
            return;
        };
        let bad = Uuid::new_v4();
        let failing = read(&reads, &STRICT, bad, false).await;
        assert!(failing.is_err(), "the failing item's read fails");
        let mut tasks = JoinSet::new();
        for n in 0..12 {
            let ok = n != 5;
            let read = read(&reads, &STRICT, Uuid::new_v4(), ok);
            tasks.spawn(async move { (ok, read.await) });
        }
        while let Some(done) = tasks.join_next().await {
            match done.unwrap() {
                (false, Ok(_)) => panic!("the failing item's read fails"),
                (true, Ok(rows)) => assert_eq!(rows.len(), 1),
                // Its neighbours in the same statement fail with it.
                (_, Err(err)) => {
                    assert!(
                        !crate::db::fault::is_unavailable(&err),
                        "a statement's own error is not an outage: {err}"
                    );
                    assert!(err.to_string().contains("division by zero"), "{err}");
                }
            }
        }
        assert_eq!(reads.running(&STRICT), 0);
        assert_eq!(
            read(&reads, &STRICT, Uuid::new_v4(), true)
                .await
                .unwrap()
                .len(),
            1,
            "later reads of the shape are answered"
        );
    }

    #[tokio::test]
    async fn reads_dropped_while_they_wait_leave_the_others_answered() {
        let Some((_database, reads)) = postgres().await else {
            return;
        };
        let mut kept = JoinSet::new();
        let mut dropped = JoinSet::new();
        for n in 0..20 {
            let read = read(&reads, &ECHO, Uuid::new_v4(), true);
            if n % 2 == 0 {
                kept.spawn(read);
            } else {
                dropped.spawn(read);
            }
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
        dropped.abort_all();
        while let Some(done) = kept.join_next().await {
            assert_eq!(done.unwrap().expect("read").len(), 1);
        }
        assert_eq!(reads.running(&ECHO), 0);
    }
}
