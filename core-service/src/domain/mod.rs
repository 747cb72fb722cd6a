//! Validated domain values: once one exists it is valid ("parse, don't validate").
//!
//! - [`ids`]: identifiers from requests (body fields and addressed resources).
//! - [`names`]: department names and codes, group names.
//! - [`roles`]: built-in roles and custom-role permissions.

pub mod ids;
pub mod names;
pub mod roles;
