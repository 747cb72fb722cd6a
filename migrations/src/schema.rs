//! Small builders shared by the migrations: named foreign keys and indexes.

use sea_orm_migration::prelude::{
    ForeignKey, ForeignKeyAction, ForeignKeyCreateStatement, Index, IndexCreateStatement, IntoIden,
    IntoIndexColumn,
};

/// A named foreign key `from_table.from_col -> to_table.to_col` (ON UPDATE RESTRICT).
pub(crate) fn foreign_key(
    name: &str,
    from: (impl IntoIden, impl IntoIden),
    to: (impl IntoIden, impl IntoIden),
    on_delete: ForeignKeyAction,
) -> ForeignKeyCreateStatement {
    ForeignKey::create()
        .name(name)
        .from(from.0, from.1)
        .to(to.0, to.1)
        .on_delete(on_delete)
        .on_update(ForeignKeyAction::Restrict)
        .take()
}

/// A named (non-unique) index on `columns` of `table`.
pub(crate) fn index<C: IntoIndexColumn>(
    name: &str,
    table: impl IntoIden,
    columns: impl IntoIterator<Item = C>,
) -> IndexCreateStatement {
    let mut index = Index::create();
    index.name(name).table(table);
    for column in columns {
        index.col(column);
    }
    index.take()
}

/// A named unique index on `columns` of `table`.
pub(crate) fn unique_index<C: IntoIndexColumn>(
    name: &str,
    table: impl IntoIden,
    columns: impl IntoIterator<Item = C>,
) -> IndexCreateStatement {
    index(name, table, columns).unique().take()
}
