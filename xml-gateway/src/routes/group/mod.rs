//! Groups (interface 4.3, 4.4; neighbours.md section 7): one group read and renamed
//! ([`one`]), the lists ([`lists`]), and create, delete and replace members ([`writes`]).

mod lists;
mod one;
mod writes;

pub(crate) use lists::Groups;
pub(crate) use one::{get_group, update_group};
pub(crate) use writes::{create_group, delete_group, replace_members};
