//! Users (neighbours.md section 4): `GET /user/{userId}` and `/v2` and the numbered pages of
//! `POST /user/list` ([`reads`]), the lists `GET /user`, `/user/v2`, `GET|POST /users` and
//! `/users/v2` ([`list`]), the writes ([`writes`]), the bulk lifecycle calls of provisioning
//! ([`lifecycle`]), scheduled deactivation and termination ([`schedule`]); `render` writes
//! profiles in XML and JSON.

/// A body of one optional text element: `<request><FIELD>…</FIELD></request>`, JSON
/// `{"FIELD": "…"}`; the text as sent (trimmed), `None` when absent, for the core to judge.
macro_rules! text_body {
    ($(#[$doc:meta])* $name:ident, $field:literal) => {
        $(#[$doc])*
        #[derive(Debug, Default, PartialEq, Eq)]
        pub(crate) struct $name(pub(crate) Option<String>);

        impl crate::xml::FromXml for $name {
            const ROOT: &'static str = "request";

            fn from_root(root: &crate::xml::Element) -> Result<Self, crate::xml::XmlError> {
                Ok(Self(root.optional_text($field)?))
            }
        }

        impl crate::json::FromJson for $name {
            fn from_object(
                object: &crate::json::JsonObject<'_>,
            ) -> Result<Self, crate::json::JsonError> {
                Ok(Self(object.optional_text($field)?))
            }
        }
    };
}

pub(crate) mod lifecycle;
pub(crate) mod list;
pub(crate) mod reads;
pub(crate) mod render;
pub(crate) mod schedule;
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
