//! Users (neighbours.md section 4): `GET /user/{userId}` and `/v2`, `GET /user` and
//! `/user/v2` (every matching user), `GET|POST /users` and `/users/v2` (keyset pages).
//!
//! `parse` reads the filters and paging of the lists, `render` writes profiles in XML and
//! JSON, `reads` holds the handlers.

pub(crate) mod parse;
pub(crate) mod reads;
pub(crate) mod render;
pub(crate) mod writes;

/// Which generation of the interface a route belongs to: v2 answers name the profile
/// element `userProfileV2` (neighbours Q13); JSON is the same for both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    V1,
    V2,
}

impl Version {
    pub(crate) fn profile_element(self) -> &'static str {
        match self {
            Version::V1 => "userProfile",
            Version::V2 => "userProfileV2",
        }
    }
}
