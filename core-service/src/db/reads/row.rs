//! One row of a hot read, from whichever connection answered it.

use std::sync::Arc;

use sea_orm::{DbErr, QueryResult};

/// A row of the driver or of the inline reader. Its columns are read as the types both
/// backends agree on (cast in SQL where they would not).
pub enum ReadRow {
    Driver(QueryResult),
    Inline {
        columns: Arc<[String]>,
        values: Vec<rusqlite::types::Value>,
    },
}

impl ReadRow {
    pub fn int(&self, column: &str) -> Result<i64, DbErr> {
        match self {
            Self::Driver(row) => row.try_get("", column),
            Self::Inline { .. } => match self.inline(column)? {
                rusqlite::types::Value::Integer(n) => Ok(*n),
                other => Err(type_error(column, "an integer", other)),
            },
        }
    }

    /// An integer column that may be NULL.
    pub fn optional_int(&self, column: &str) -> Result<Option<i64>, DbErr> {
        match self {
            Self::Driver(row) => row.try_get("", column),
            Self::Inline { .. } => match self.inline(column)? {
                rusqlite::types::Value::Null => Ok(None),
                rusqlite::types::Value::Integer(n) => Ok(Some(*n)),
                other => Err(type_error(column, "an integer", other)),
            },
        }
    }

    pub fn text(&self, column: &str) -> Result<Option<String>, DbErr> {
        match self {
            Self::Driver(row) => row.try_get("", column),
            Self::Inline { .. } => match self.inline(column)? {
                rusqlite::types::Value::Null => Ok(None),
                rusqlite::types::Value::Text(text) => Ok(Some(text.clone())),
                other => Err(type_error(column, "text", other)),
            },
        }
    }

    pub fn blob(&self, column: &str) -> Result<Option<Vec<u8>>, DbErr> {
        match self {
            Self::Driver(row) => row.try_get("", column),
            Self::Inline { .. } => match self.inline(column)? {
                rusqlite::types::Value::Null => Ok(None),
                rusqlite::types::Value::Blob(bytes) => Ok(Some(bytes.clone())),
                other => Err(type_error(column, "bytes", other)),
            },
        }
    }

    /// The inline row's value of `column` (a driver's row has none here).
    fn inline(&self, column: &str) -> Result<&rusqlite::types::Value, DbErr> {
        let Self::Inline { columns, values } = self else {
            return Err(DbErr::Type(format!("column {column} is the driver's")));
        };
        columns
            .iter()
            .position(|name| name == column)
            .and_then(|i| values.get(i))
            .ok_or_else(|| DbErr::Type(format!("no column {column} in the row")))
    }
}

fn type_error(column: &str, wanted: &str, found: &rusqlite::types::Value) -> DbErr {
    DbErr::Type(format!(
        "column {column}: wanted {wanted}, found {:?}",
        found.data_type()
    ))
}
