//! The operations.
