//! Webhooks (`docs/spec/webhooks.md`): the `/webhook` calls ([`subscribers`]), the events
//! a write records in its own transaction ([`outbox`]) for the subscriptions it keeps in
//! memory ([`known`]), and what subscriber info shows ([`view`]). Delivery is [`crate::webhooks`]' work.

pub mod known;
pub mod outbox;
pub mod subscribers;
pub mod view;
