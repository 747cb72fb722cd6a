//! Multi-row `INSERT`s of plain bound values: the import's million-row tables and the audit
//! rows of large changes (10,000 deleted enrollments are 10,000 audit rows).
//!
//! Nothing reads these rows back before the commit: building a SeaORM `ActiveModel` and
//! a query tree per row costs more than the database's own work at that size. Each table's rows are bound as values straight into
//! one SQL text per chunk size, so the full-size statement is prepared once per
//! connection and reused from the driver's statement cache.
//!
//! On PostgreSQL each column of a chunk is bound as one array instead
//! (`INSERT … SELECT * FROM UNNEST($1::text::uuid[], …)`): binding and planning a
//! statement of 30,000 parameters costs the server more than parsing a few array texts.

use sea_orm::{ConnectionTrait, DatabaseBackend, DbErr, Statement, Value};

use super::{bulk::MAX_BIND_PARAMETERS, pg_array::ArrayText};

/// A table and the columns its rows give, in order, with their PostgreSQL types.
pub struct Table<const N: usize> {
    pub name: &'static str,
    pub columns: [&'static str; N],
    pub pg_types: [&'static str; N],
}

/// Rows per statement: SQLite parses and plans each statement once, so large chunks win,
/// up to the bound-parameter limit both backends share.
fn rows_per_statement(columns: usize) -> usize {
    (MAX_BIND_PARAMETERS / columns.max(1)).clamp(1, 4_096)
}

/// What a chunk's statement does with its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Insert,
    /// Rewrites the rows whose first `keys` columns match, every other column set: an index
    /// whose columns did not change is left alone, where a delete and an insert would touch
    /// every index twice.
    Update {
        keys: usize,
    },
}

/// Inserts `rows` into `table`, calling `written` with the count of each chunk once it
/// is in.
pub async fn insert_rows<const N: usize>(
    conn: &impl ConnectionTrait,
    table: &Table<N>,
    rows: impl IntoIterator<Item = [Value; N]>,
    written: &mut (impl FnMut(usize) + Send),
) -> Result<(), DbErr> {
    write_rows(conn, table, Kind::Insert, rows, written).await
}

/// Sets every other column of the stored rows of `table` whose first `keys` columns equal
/// those of one of `rows`; rows naming nothing stored change nothing.
pub async fn update_rows<const N: usize>(
    conn: &impl ConnectionTrait,
    table: &Table<N>,
    keys: usize,
    rows: impl IntoIterator<Item = [Value; N]>,
) -> Result<(), DbErr> {
    assert!(
        0 < keys && keys < N,
        "an update sets at least one column by at least one key"
    );
    write_rows(conn, table, Kind::Update { keys }, rows, &mut |_| {}).await
}

async fn write_rows<const N: usize>(
    conn: &impl ConnectionTrait,
    table: &Table<N>,
    kind: Kind,
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
        let statement = if backend == DatabaseBackend::Postgres {
            Statement::from_sql_and_values(
                backend,
                unnest_sql(table, kind),
                column_arrays(&values, N)?,
            )
        } else {
            let sql = if count == per_statement {
                full_sql
                    .get_or_insert_with(|| statement_sql(backend, table, kind, count))
                    .clone()
            } else {
                statement_sql(backend, table, kind, count)
            };
            Statement::from_sql_and_values(backend, sql, values)
        };
        conn.execute_raw(statement).await?;
        written(count);
    }
}

fn quoted<const N: usize>(table: &Table<N>) -> Vec<String> {
    table.columns.iter().map(|c| format!("\"{c}\"")).collect()
}

/// `SET "c" = "v"."c", … WHERE "t"."k" = "v"."k" AND …` of an update from the rows `v`.
fn set_from_v<const N: usize>(table: &Table<N>, keys: usize) -> (String, String) {
    let columns = quoted(table);
    let set: Vec<String> = columns[keys..]
        .iter()
        .map(|c| format!("{c} = \"v\".{c}"))
        .collect();
    let matched: Vec<String> = columns[..keys]
        .iter()
        .map(|c| format!("\"{}\".{c} = \"v\".{c}", table.name))
        .collect();
    (set.join(", "), matched.join(" AND "))
}

/// The statement of a chunk of `rows` rows, in the placeholder style of `backend`:
/// `INSERT INTO "t" ("a", "b") VALUES (?, ?), (?, ?)`, or for an update
/// `WITH "v"("a", "b") AS (VALUES (?, ?), (?, ?)) UPDATE "t" SET "b" = "v"."b" FROM "v"
/// WHERE "t"."a" = "v"."a"`.
fn statement_sql<const N: usize>(
    backend: DatabaseBackend,
    table: &Table<N>,
    kind: Kind,
    rows: usize,
) -> String {
    let columns = quoted(table).join(", ");
    let mut sql = match kind {
        Kind::Insert => format!("INSERT INTO \"{}\" ({columns}) VALUES ", table.name),
        Kind::Update { .. } => format!("WITH \"v\"({columns}) AS (VALUES "),
    };
    sql.reserve(rows * N * 6 + 200);
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
    if let Kind::Update { keys } = kind {
        let (set, matched) = set_from_v(table, keys);
        sql.push_str(&format!(
            ") UPDATE \"{}\" SET {set} FROM \"v\" WHERE {matched}",
            table.name
        ));
    }
    sql
}

/// `INSERT INTO "t" ("a", "b") SELECT * FROM UNNEST($1::text::uuid[], $2::text::text[])`,
/// or for an update `UPDATE "t" SET "b" = "v"."b" FROM UNNEST(…) AS "v"("a", "b") WHERE
/// "t"."a" = "v"."a"`.
fn unnest_sql<const N: usize>(table: &Table<N>, kind: Kind) -> String {
    let columns = quoted(table).join(", ");
    let arrays: Vec<String> = table
        .pg_types
        .iter()
        .enumerate()
        .map(|(i, pg_type)| format!("${}::text::{pg_type}[]", i + 1))
        .collect();
    let arrays = arrays.join(", ");
    match kind {
        Kind::Insert => format!(
            "INSERT INTO \"{}\" ({columns}) SELECT * FROM UNNEST({arrays})",
            table.name
        ),
        Kind::Update { keys } => {
            let (set, matched) = set_from_v(table, keys);
            format!(
                "UPDATE \"{}\" SET {set} FROM UNNEST({arrays}) AS \"v\"({columns}) WHERE {matched}",
                table.name
            )
        }
    }
}

/// The row-major `values` of `columns` columns as one PostgreSQL array text per column.
fn column_arrays(values: &[Value], columns: usize) -> Result<Vec<Value>, DbErr> {
    let rows = values.len() / columns.max(1);
    let mut arrays: Vec<ArrayText> = (0..columns)
        .map(|_| ArrayText::with_capacity(rows, 16))
        .collect();
    for (i, value) in values.iter().enumerate() {
        arrays[i % columns].push(value)?;
    }
    Ok(arrays
        .into_iter()
        .map(|array| Value::from(array.finish()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAIRS: Table<2> = Table {
        name: "group_members",
        columns: ["group_id", "user_id"],
        pg_types: ["uuid", "uuid"],
    };

    #[test]
    fn postgresql_gets_one_array_per_column() {
        assert_eq!(
            unnest_sql(&PAIRS, Kind::Insert),
            "INSERT INTO \"group_members\" (\"group_id\", \"user_id\") \
             SELECT * FROM UNNEST($1::text::uuid[], $2::text::uuid[])"
        );
        let id = uuid::Uuid::from_u128(1);
        let values = [
            Value::from(id),
            Value::from("a \"quoted\" \\ name".to_owned()),
            Value::from(id),
            Value::String(None),
        ];
        let arrays = column_arrays(&values, 2).unwrap();
        assert_eq!(arrays[0], Value::from(format!("{{{id},{id}}}")));
        assert_eq!(
            arrays[1],
            Value::from("{\"a \\\"quoted\\\" \\\\ name\",NULL}".to_owned())
        );
    }

    #[test]
    fn statements_use_each_backends_placeholders() {
        assert_eq!(
            statement_sql(DatabaseBackend::Sqlite, &PAIRS, Kind::Insert, 2),
            "INSERT INTO \"group_members\" (\"group_id\", \"user_id\") VALUES (?, ?), (?, ?)"
        );
        assert_eq!(
            statement_sql(DatabaseBackend::Postgres, &PAIRS, Kind::Insert, 2),
            "INSERT INTO \"group_members\" (\"group_id\", \"user_id\") VALUES ($1, $2), ($3, $4)"
        );
    }

    #[test]
    fn an_update_sets_every_column_but_its_keys_from_the_rows_it_names() {
        assert_eq!(
            statement_sql(DatabaseBackend::Sqlite, &PAIRS, Kind::Update { keys: 1 }, 2),
            "WITH \"v\"(\"group_id\", \"user_id\") AS (VALUES (?, ?), (?, ?)) \
             UPDATE \"group_members\" SET \"user_id\" = \"v\".\"user_id\" FROM \"v\" \
             WHERE \"group_members\".\"group_id\" = \"v\".\"group_id\""
        );
        assert_eq!(
            unnest_sql(&PAIRS, Kind::Update { keys: 1 }),
            "UPDATE \"group_members\" SET \"user_id\" = \"v\".\"user_id\" \
             FROM UNNEST($1::text::uuid[], $2::text::uuid[]) AS \"v\"(\"group_id\", \"user_id\") \
             WHERE \"group_members\".\"group_id\" = \"v\".\"group_id\""
        );
    }

    #[test]
    fn a_statement_stays_within_the_parameter_limit() {
        for columns in 1..=12 {
            assert!(rows_per_statement(columns) * columns <= MAX_BIND_PARAMETERS);
        }
    }
}
