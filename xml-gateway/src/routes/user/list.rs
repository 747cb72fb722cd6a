//! `GET /user` and `/user/v2` (every matching user), `GET|POST /users` and `/users/v2` (keyset
//! pages), narrowed by `departments`, `groups`, `logins` and `emails`: within one filter any
//! value matches; all given must match.

use std::marker::PhantomData;

use lms_proto::v1::{
    ListUsersRequest, ListUsersResponse, PageRequest, StreamUsersRequest, StreamUsersResponse,
    UserProfile,
};

use super::Version;
use super::render::{ProfileJson, write_profile};
use crate::error::GatewayError;
use crate::listing::{Filters, Form, Listing, Paged, Streamed, Whole, paged_rpc, streamed_rpc};
use crate::representation::push_json;
use crate::xml::writer::XmlWriter;

/// The generation of the interface a list belongs to (it names the profile element).
pub(crate) trait Generation: Send + Sync + 'static {
    const VERSION: Version;
}

/// `/user`, `/users`.
pub(crate) enum V1 {}

/// `/user/v2`, `/users/v2`.
pub(crate) enum V2 {}

impl Generation for V1 {
    const VERSION: Version = Version::V1;
}

impl Generation for V2 {
    const VERSION: Version = Version::V2;
}

/// Every matching user the caller may see, as profiles of generation `G`.
pub(crate) struct Users<G>(PhantomData<fn() -> G>);

impl<G: Generation> Listing for Users<G> {
    type Item = UserProfile;
    const NAME: &'static str = "users";
    const FILTERS: &'static [&'static str] = &["departments", "groups", "logins", "emails"];

    fn write_xml(xml: &mut XmlWriter, profile: &UserProfile, _: Form) {
        write_profile(xml, G::VERSION.profile_element(), profile);
    }

    fn write_json(out: &mut String, profile: &UserProfile, _: Form) {
        push_json(out, &ProfileJson::of(profile));
    }

    fn xml_bytes_hint(p: &UserProfile) -> usize {
        let fields: usize = p
            .fields
            .iter()
            .map(|f| 40 + f.name.len() + f.value.len())
            .sum();
        900 + 2 * (p.login.len() + p.email.len()) + 50 * p.group_ids.len() + fields
    }
}

impl<G: Generation> Streamed for Users<G> {
    streamed_rpc!(stream_users(StreamUsersRequest) -> StreamUsersResponse.users);
}

impl<G: Generation> Whole for Users<G> {
    fn stream_request(filters: Filters) -> StreamUsersRequest {
        let [department_ids, group_ids, logins, emails] = filters.into_lists();
        StreamUsersRequest {
            department_ids,
            group_ids,
            logins,
            emails,
        }
    }
}

impl<G: Generation> Paged for Users<G> {
    const PAGE_ELEMENT: &'static str = "userProfiles";

    fn list_request(filters: Filters, page: PageRequest) -> Result<ListUsersRequest, GatewayError> {
        let StreamUsersRequest {
            department_ids,
            group_ids,
            logins,
            emails,
        } = Self::stream_request(filters);
        Ok(ListUsersRequest {
            page: Some(page),
            department_ids,
            group_ids,
            logins,
            emails,
            numbered_page: None,
        })
    }

    paged_rpc!(list_users(ListUsersRequest) -> ListUsersResponse.users);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listing::testing::{page_text, query, whole_text};
    use crate::representation::Format;
    use lms_proto::v1::Role;

    fn profile(user_id: &str) -> UserProfile {
        UserProfile {
            user_id: user_id.into(),
            role: Role::Learner.into(),
            role_id: "r-1".into(),
            department_id: "d-1".into(),
            active: true,
            login: "a@x".into(),
            email: "a@x".into(),
            added_at: "2026-11-23T10:00:00Z".into(),
            ..UserProfile::default()
        }
    }

    #[tokio::test]
    async fn the_generation_names_the_profile_element_and_json_is_the_same_for_both() {
        let messages = [StreamUsersResponse {
            users: vec![profile("u-1"), profile("u-2")],
        }];
        let v1 = whole_text::<Users<V1>>(&messages, Format::Xml).await;
        assert!(v1.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?><response><userProfile><role>learner</role>"), "{v1}");
        assert!(v1.ends_with("</userProfile></response>"), "{v1}");
        let v2 = whole_text::<Users<V2>>(&messages, Format::Xml).await;
        assert_eq!(v2.matches("<userProfileV2>").count(), 2, "{v2}");
        let json = whole_text::<Users<V2>>(&messages, Format::Json).await;
        assert_eq!(json, whole_text::<Users<V1>>(&messages, Format::Json).await);
        assert!(
            json.starts_with(r#"[{"role":"learner","roleId":"r-1","userId":"u-1""#),
            "{json}"
        );
    }

    #[tokio::test]
    async fn a_page_has_its_token_only_while_more_follow() {
        assert_eq!(
            page_text::<Users<V1>>(vec![], "", Format::Json).await,
            r#"{"userProfiles":[]}"#
        );
        let more = page_text::<Users<V2>>(vec![profile("u-1")], "dG9r", Format::Json).await;
        assert!(more.ends_with(r#"}],"nextPageToken":"dG9r"}"#), "{more}");
        let xml = page_text::<Users<V2>>(vec![profile("u-1")], "dG9r", Format::Xml).await;
        assert!(
            xml.contains("<response><userProfiles><userProfileV2>"),
            "{xml}"
        );
        assert!(xml.ends_with("</userProfiles><nextPageToken>dG9r</nextPageToken></response>"));
    }

    #[test]
    fn the_four_filters_reach_the_core_in_their_places() {
        let (filters, page) = query::<Users<V1>>(
            "groups[]=g&logins[]=L&emails[]=e@x&departments[]=d&pageSize=5&pageToken=",
        );
        let request = Users::<V1>::list_request(filters, page).unwrap();
        assert_eq!(
            (
                request.department_ids,
                request.group_ids,
                request.logins,
                request.emails
            ),
            (
                vec!["d".into()],
                vec!["g".into()],
                vec!["L".into()],
                vec!["e@x".into()]
            )
        );
        assert_eq!(request.page.unwrap().page_size, Some(5));
    }
}
