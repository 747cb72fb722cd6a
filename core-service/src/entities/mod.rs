//! SeaORM entities, one module per table (see docs/data-model.md).
