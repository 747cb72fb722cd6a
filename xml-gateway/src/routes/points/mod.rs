//! Gamification points (interface 4.7; neighbours.md section 8): the read, a whole list
//! ([`read`]), and the award and withdraw writes ([`write`]).

mod read;
mod write;

pub(crate) use read::Points;
pub(crate) use write::{award_points, withdraw_points};
