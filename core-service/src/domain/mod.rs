//! Validated domain values, the one home of every value rule: once a value exists it is
//! valid ("parse, don't validate"). Each `parse` returns [`Invalid`], which the service
//! maps to INVALID_ARGUMENT and the import to a refusal naming the entry.
//!
//! - [`invalid`]: [`Invalid`] `{ field, reason }`, the one error of every parse.
//! - [`ids`]: identifiers in request fields, addressed resources ([`ids::ResourceRef`])
//!   and id lists with their one limit ([`ids::MAX_LIST_IDS`]).
//! - [`account_url`]: [`account_url::AccountUrl`], the one stored form of an account URL.
//! - [`login`]: [`login::Login`] (with [`login::email_key`]), [`login::EmailAddress`] and
//!   [`login::PlainPassword`].
//! - [`profile_fields`]: a user's other profile fields ([`profile_fields::ProfileFields`]).
//! - [`client_secret`]: [`client_secret::ClientSecret`], an API client's secret as an import
//!   document gives it.
//! - [`text`]: bounded required text ([`text::required_text`]) and descriptions.
//! - [`names`]: department names and codes, group names.
//! - [`content`]: [`content::AddedDate`] and [`content::ViewUrl`] of content items.
//! - [`page`]: [`page::Page`], where a keyset page starts, and the opaque page tokens.
//! - [`roles`]: built-in roles and custom-role permissions.
//! - [`schedule`]: scheduled status changes: their kind, their day, and "today".
//! - [`results`]: completion statuses, scores, result dates and windows, a tracked result.
//! - [`webhook`]: subscriber names, callback URLs and the address rules of deliveries,
//!   event types and their filters.

pub mod account_url;
pub mod client_secret;
pub mod content;
pub mod dates;
pub mod ids;
pub mod invalid;
pub mod login;
pub mod names;
pub mod page;
pub mod profile_fields;
pub mod results;
pub mod roles;
pub mod schedule;
pub mod text;
pub mod webhook;

pub use self::invalid::{Invalid, Reason};
