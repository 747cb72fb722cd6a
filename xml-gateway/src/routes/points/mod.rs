//! Gamification points (interface 4.7; neighbours.md section 8): the read ([`read`], its
//! streamed body in [`stream`]) and the award and withdraw writes ([`write`]).

mod read;
mod stream;
mod write;

pub(crate) use read::{get_points, post_points};
pub(crate) use write::{award_points, withdraw_points};
