//! Validated domain values.
