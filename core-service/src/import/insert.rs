//! Multi-row `INSERT`s of plain bound values, for the import's million-row tables.
//!
//! An import writes every row it validated, and nothing reads them back before the
//! commit: building a SeaORM `ActiveModel` and a query tree per row costs more than the
//! database's own work at that size. Each table's rows are bound as values straight into
//! one SQL text per chunk size, so the full-size statement is prepared once per
//! connection and reused from the driver's statement cache.

use sea_orm::{ConnectionTrait, DatabaseBackend, DbErr, Statement, Value};

use crate::db::bulk::MAX_BIND_PARAMETERS;

/// A table and the columns its rows give, in order.
pub(super) struct Table<const N: usize> {
    pub(super) name: &'static str,
    pub(super) columns: [&'static str; N],
}

/// Rows per statement: SQLite parses and plans each statement once, so large chunks win,
/// up to the bound-parameter limit both backends share.
fn rows_per_statement(columns: usize) -> usize {
    (MAX_BIND_PARAMETERS / columns.max(1)).clamp(1, 4_096)
}

/// Inserts `rows` into `table`, calling `written` with the count of each chunk once it
/// is in.
pub(super) async fn insert_rows<const N: usize>(
    conn: &impl ConnectionTrait,
    table: &Table<N>,
    rows: impl IntoIterator<Item = [Value; N]>,
    written: &mut (impl FnMut(usize) + Send),
) -> Result<(), DbErr> {
    let backend = conn.get_database_backend();
    let per_statement = rows_per_statement(N);
    let mut full_sql: Option<String> = None;
    let mut rows = rows.into_iter();
    loop {
        let mut values = Vec::with_capacity(per_statement * N);
        let mut count = 0;
        for row in rows.by_ref().take(per_statement) {
            values.extend(row);
            count += 1;
        }
        if count == 0 {
            return Ok(());
        }
        let sql = if count == per_statement {
            full_sql
                .get_or_insert_with(|| statement_sql(backend, table, count))
                .clone()
        } else {
            statement_sql(backend, table, count)
        };
        conn.execute_raw(Statement::from_sql_and_values(backend, sql, values))
            .await?;
        written(count);
    }
}

/// `INSERT INTO "t" ("a", "b") VALUES (?, ?), (?, ?)` with `rows` tuples, in the
/// placeholder style of `backend`.
fn statement_sql<const N: usize>(
    backend: DatabaseBackend,
    table: &Table<N>,
    rows: usize,
) -> String {
    let columns: Vec<String> = table.columns.iter().map(|c| format!("\"{c}\"")).collect();
    let mut sql = format!(
        "INSERT INTO \"{}\" ({}) VALUES ",
        table.name,
        columns.join(", ")
    );
    sql.reserve(rows * N * 6);
    let mut parameter = 0;
    for row in 0..rows {
        if row > 0 {
            sql.push_str(", ");
        }
        sql.push('(');
        for column in 0..N {
            if column > 0 {
                sql.push_str(", ");
            }
            parameter += 1;
            match backend {
                DatabaseBackend::Postgres => {
                    sql.push('$');
                    sql.push_str(&parameter.to_string());
                }
                _ => sql.push('?'),
            }
        }
        sql.push(')');
    }
    sql
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAIRS: Table<2> = Table {
        name: "group_members",
        columns: ["group_id", "user_id"],
    };

    #[test]
    fn statements_use_each_backends_placeholders() {
        assert_eq!(
            statement_sql(DatabaseBackend::Sqlite, &PAIRS, 2),
            "INSERT INTO \"group_members\" (\"group_id\", \"user_id\") VALUES (?, ?), (?, ?)"
        );
        assert_eq!(
            statement_sql(DatabaseBackend::Postgres, &PAIRS, 2),
            "INSERT INTO \"group_members\" (\"group_id\", \"user_id\") VALUES ($1, $2), ($3, $4)"
        );
    }

    #[test]
    fn a_statement_stays_within_the_parameter_limit() {
        for columns in 1..=12 {
            assert!(rows_per_statement(columns) * columns <= MAX_BIND_PARAMETERS);
        }
    }
}
