//! PostgreSQL: a table's rows written with `COPY … FROM STDIN (FORMAT binary)`, the import's
//! way to fill its long tables.
//!
//! Against the `INSERT … SELECT FROM UNNEST` of [`super::rows`], `COPY` saves the server
//! from parsing array texts and planning a statement per chunk, and the rows stream: the
//! next chunk is encoded here while the server is still storing the last one, where a
//! statement had to be answered before the next was built. Binary, so a UUID or a
//! timestamp costs the server no parsing and this side no formatting.
//!
//! Everything runs inside the caller's [`PgTransaction`]: a failing row (a unique key, a
//! trigger) fails the whole `COPY`, and the transaction rolls back as for any statement.

use sea_orm::{DbErr, Value};

use super::{
    pg_transaction::{PgTransaction, exec_err},
    rows::{Table, insert_rows},
};

/// Bytes handed to the connection at a time: large enough that sending costs little,
/// small enough that the server starts storing rows at once and memory stays flat.
const CHUNK_BYTES: usize = 256 * 1024;

/// The binary format's signature, flags and header extension length.
const HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";

/// The binary format's end-of-data marker: a tuple of -1 fields.
const TRAILER: [u8; 2] = (-1i16).to_be_bytes();

/// Microseconds from the Unix epoch to PostgreSQL's (2000-01-01 UTC).
const POSTGRES_EPOCH_MICROS: i64 = 946_684_800_000_000;

/// Fewer rows than this go in as one `INSERT` ([`insert_rows`]) instead. A `COPY` ends with a
/// message of a few bytes sent after its data, which waits for the server to acknowledge that
/// data; the server delays its acknowledgement (about 40 ms on Linux) since it has nothing to
/// answer yet. For a table of a few rows, that wait costs more than the rows (the demo's dozen
/// short tables took half a second).
const COPY_MIN_ROWS: usize = 1_000;

/// Copies `rows` into `table` within `txn` (or inserts them, when they are few), calling
/// `written` with the count of each chunk once it has been handed to the server.
pub async fn copy_rows<const N: usize>(
    txn: &PgTransaction,
    table: &Table<N>,
    rows: impl IntoIterator<Item = [Value; N]>,
    written: &mut (impl FnMut(usize) + Send),
) -> Result<(), DbErr> {
    let mut rows = rows.into_iter();
    let first: Vec<[Value; N]> = rows.by_ref().take(COPY_MIN_ROWS).collect();
    if first.len() < COPY_MIN_ROWS {
        return insert_rows(txn, table, first, written).await;
    }
    let rows = first.into_iter().chain(rows);
    let mut connection = txn.connection().await;
    let mut copy = connection
        .get()
        .copy_in_raw(&copy_sql(table))
        .await
        .map_err(exec_err)?;
    let mut chunk = Vec::with_capacity(CHUNK_BYTES + 4096);
    chunk.extend_from_slice(HEADER);
    let mut count = 0;
    for row in rows {
        if let Err(err) = encode_row(&mut chunk, table, &row) {
            // The server discards what it was sent; the transaction is rolled back.
            copy.abort(err.to_string()).await.ok();
            return Err(err);
        }
        count += 1;
        if chunk.len() >= CHUNK_BYTES {
            copy.send(chunk.as_slice()).await.map_err(exec_err)?;
            chunk.clear();
            written(count);
            count = 0;
        }
    }
    chunk.extend_from_slice(&TRAILER);
    copy.send(chunk.as_slice()).await.map_err(exec_err)?;
    copy.finish().await.map_err(exec_err)?;
    written(count);
    Ok(())
}

/// `COPY "t" ("a", "b") FROM STDIN (FORMAT binary)`.
fn copy_sql<const N: usize>(table: &Table<N>) -> String {
    let columns: Vec<String> = table.columns.iter().map(|c| format!("\"{c}\"")).collect();
    format!(
        "COPY \"{}\" ({}) FROM STDIN (FORMAT binary)",
        table.name,
        columns.join(", ")
    )
}

/// One tuple: its field count, then each field's length and bytes (-1 for NULL), in the
/// binary send format of the column's type as `table.pg_types` names it.
fn encode_row<const N: usize>(
    out: &mut Vec<u8>,
    table: &Table<N>,
    row: &[Value; N],
) -> Result<(), DbErr> {
    out.extend_from_slice(&(N as i16).to_be_bytes());
    for ((value, pg_type), column) in row.iter().zip(table.pg_types).zip(table.columns) {
        encode_field(out, pg_type, value).ok_or_else(|| {
            DbErr::Custom(format!(
                "column {}.{column} ({pg_type}) has no binary form for {value:?}",
                table.name
            ))
        })?;
    }
    Ok(())
}

/// `None` when `value` does not fit `pg_type`: a mistake in a table's description, which
/// must fail the write rather than store a wrong value.
fn encode_field(out: &mut Vec<u8>, pg_type: &str, value: &Value) -> Option<()> {
    // Each field is its length in bytes (-1 for NULL), then the bytes.
    let mut field = |bytes: &[u8]| -> Option<()> {
        out.extend_from_slice(&i32::try_from(bytes.len()).ok()?.to_be_bytes());
        out.extend_from_slice(bytes);
        Some(())
    };
    match (pg_type, value) {
        (
            _,
            Value::Uuid(None)
            | Value::String(None)
            | Value::BigInt(None)
            | Value::Int(None)
            | Value::Bool(None)
            | Value::ChronoDateTimeUtc(None),
        ) => {
            out.extend_from_slice(&(-1i32).to_be_bytes());
            Some(())
        }
        ("uuid", Value::Uuid(Some(id))) => field(id.as_bytes()),
        ("text", Value::String(Some(text))) => field(text.as_bytes()),
        ("int8", Value::BigInt(Some(n))) => field(&n.to_be_bytes()),
        ("int8", Value::Int(Some(n))) => field(&i64::from(*n).to_be_bytes()),
        ("int4", Value::Int(Some(n))) => field(&n.to_be_bytes()),
        ("bool", Value::Bool(Some(b))) => field(&[u8::from(*b)]),
        // Microseconds, cut as the driver cuts a bound timestamp.
        ("timestamptz", Value::ChronoDateTimeUtc(Some(at))) => {
            field(&(at.timestamp_micros() - POSTGRES_EPOCH_MICROS).to_be_bytes())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone as _, Utc};

    use super::*;

    const ROWS: Table<4> = Table {
        name: "t",
        columns: ["id", "name", "n", "at"],
        pg_types: ["uuid", "text", "int8", "timestamptz"],
    };

    #[test]
    fn the_statement_names_every_column() {
        assert_eq!(
            copy_sql(&ROWS),
            "COPY \"t\" (\"id\", \"name\", \"n\", \"at\") FROM STDIN (FORMAT binary)"
        );
    }

    #[test]
    fn a_row_is_encoded_in_the_binary_format() {
        let id = uuid::Uuid::from_u128(1);
        let at = Utc.with_ymd_and_hms(2000, 1, 1, 0, 0, 1).unwrap();
        let mut out = Vec::new();
        let row = [
            Value::from(id),
            Value::String(None),
            Value::from(7i32),
            Value::from(at),
        ];
        encode_row(&mut out, &ROWS, &row).unwrap();
        let mut expected = vec![0, 4, 0, 0, 0, 16];
        expected.extend_from_slice(id.as_bytes());
        expected.extend_from_slice(&(-1i32).to_be_bytes());
        expected.extend_from_slice(&8i32.to_be_bytes());
        expected.extend_from_slice(&7i64.to_be_bytes());
        expected.extend_from_slice(&8i32.to_be_bytes());
        expected.extend_from_slice(&1_000_000i64.to_be_bytes());
        assert_eq!(out, expected);
        assert_eq!(HEADER.len(), 19);
    }

    #[test]
    fn a_value_of_another_type_is_refused() {
        let mut out = Vec::new();
        let row = [
            Value::from("not a uuid".to_owned()),
            Value::String(None),
            Value::from(1i64),
            Value::from(Utc::now()),
        ];
        let err = encode_row(&mut out, &ROWS, &row).unwrap_err();
        assert!(err.to_string().contains("t.id (uuid)"), "{err}");
    }
}
