//! The bulk lifecycle calls (provisioning.md sections 2 to 5): `POST /users/activate`,
//! `/users/deactivate`, `/users/terminate` (200, no body), `POST /users/find_existing` (the ids
//! found), `POST /department/{departmentId}/user/move` (204) and `POST
//! /user/{userId}/groups/remove` (200, no body).
//!
//! The bodies are id lists: `<request><userIds><id>…</id></userIds></request>`, JSON
//! `{"userIds": ["…"]}` (`groupIds` for the groups). A missing list goes to the core as an
//! empty one, which it refuses naming the list once it has judged the caller's right, so a
//! caller without the right gets 403 whatever it sent.

use axum::extract::State;
use axum::http::StatusCode;
use lms_proto::v1::{
    FindExistingUsersRequest, MoveUsersToDepartmentRequest, RemoveUserFromGroupsRequest,
    SetUsersStatusRequest,
};

use crate::body::Body;
use crate::core_client::{Caller, CoreClient};
use crate::error::GatewayError;
use crate::json::{FromJson, JsonError, JsonObject};
use crate::representation::{Answer, Document, json_text};
use crate::routes::{NoQuery, PathId};
use crate::xml::writer::XmlWriter;
use crate::xml::{Element, FromXml, XmlError};

/// The `id` children of the list element `name`, each as sent (empty when the list is absent).
fn xml_ids(root: &Element, name: &str) -> Result<Vec<String>, XmlError> {
    let Some(list) = root.single_child(name)? else {
        return Ok(Vec::new());
    };
    list.children_named("id")
        .map(|id| id.text_value().map(str::to_owned))
        .collect()
}

/// `<request><userIds><id>…</id>…</userIds></request>` / `{"userIds": ["…"]}`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct UserIds(pub(crate) Vec<String>);

impl FromXml for UserIds {
    const ROOT: &'static str = "request";

    fn from_root(root: &Element) -> Result<Self, XmlError> {
        xml_ids(root, "userIds").map(Self)
    }
}

impl FromJson for UserIds {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        Ok(Self(
            object.optional_text_list("userIds")?.unwrap_or_default(),
        ))
    }
}

/// `<request><groupIds><id>…</id>…</groupIds></request>` / `{"groupIds": ["…"]}`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct GroupIds(pub(crate) Vec<String>);

impl FromXml for GroupIds {
    const ROOT: &'static str = "request";

    fn from_root(root: &Element) -> Result<Self, XmlError> {
        xml_ids(root, "groupIds").map(Self)
    }
}

impl FromJson for GroupIds {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        Ok(Self(
            object.optional_text_list("groupIds")?.unwrap_or_default(),
        ))
    }
}

/// `POST /users/activate` (`STATUS` 1), `/users/deactivate` (3) and `/users/terminate` (5):
/// the status for every named user it changes.
#[tracing::instrument(skip_all, fields(status = STATUS, count = ids.len()))]
pub(crate) async fn set_status<const STATUS: u32>(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(UserIds(ids)): Body<UserIds>,
) -> Result<StatusCode, GatewayError> {
    let message = SetUsersStatusRequest {
        user_ids: ids,
        status: STATUS,
    };
    core.unary(&caller, message, |mut admin, request| async move {
        admin.set_users_status(request).await
    })
    .await?;
    Ok(StatusCode::OK)
}

/// The ids found: `<response><id>…</id>…</response>`, JSON a top-level array.
pub(crate) struct FoundIds(Vec<String>);

impl Document for FoundIds {
    fn xml_bytes_hint(&self) -> usize {
        // `<id>` + 36 characters + `</id>` each, plus the document.
        128 + 45 * self.0.len()
    }

    fn write_xml(&self, xml: &mut XmlWriter) {
        for id in &self.0 {
            xml.text_element("id", id);
        }
    }

    fn to_json(&self) -> String {
        json_text(&self.0)
    }
}

#[tracing::instrument(skip_all, fields(count = ids.len()))]
pub(crate) async fn find_existing_users(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(UserIds(ids)): Body<UserIds>,
) -> Result<Answer, GatewayError> {
    let message = FindExistingUsersRequest { user_ids: ids };
    let found = core
        .unary(&caller, message, |mut admin, request| async move {
            admin.find_existing_users(request).await
        })
        .await?;
    Ok(Answer::new(StatusCode::OK, FoundIds(found.user_ids)))
}

#[tracing::instrument(skip_all, fields(department_id = %department_id, count = ids.len()))]
pub(crate) async fn move_users(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    PathId(department_id): PathId,
    Body(UserIds(ids)): Body<UserIds>,
) -> Result<StatusCode, GatewayError> {
    let message = MoveUsersToDepartmentRequest {
        department_id,
        user_ids: ids,
    };
    core.unary(&caller, message, |mut admin, request| async move {
        admin.move_users_to_department(request).await
    })
    .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[tracing::instrument(skip_all, fields(user_id = %user_id, count = ids.len()))]
pub(crate) async fn remove_from_groups(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    PathId(user_id): PathId,
    Body(GroupIds(ids)): Body<GroupIds>,
) -> Result<StatusCode, GatewayError> {
    let message = RemoveUserFromGroupsRequest {
        user_id,
        group_ids: ids,
    };
    core.unary(&caller, message, |mut admin, request| async move {
        admin.remove_user_from_groups(request).await
    })
    .await?;
    Ok(StatusCode::OK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse_json;
    use crate::xml::reader::parse_document;

    fn user_ids(body: &str) -> Result<UserIds, XmlError> {
        UserIds::from_root(&parse_document(body.as_bytes(), UserIds::ROOT)?)
    }

    #[test]
    fn ids_are_read_as_sent_and_a_missing_list_is_empty_for_the_core_to_refuse() {
        assert_eq!(
            user_ids("<request><userIds><id> a </id><id>a</id><id>b,c</id></userIds></request>")
                .unwrap(),
            UserIds(vec!["a".into(), "a".into(), "b,c".into()])
        );
        assert_eq!(user_ids("<request/>").unwrap(), UserIds::default());
        assert_eq!(
            user_ids("<request><userIds/></request>").unwrap(),
            UserIds::default()
        );
        let twice = user_ids("<request><userIds/><userIds/></request>").unwrap_err();
        assert_eq!(twice.to_string(), "Element <userIds> is given twice.");
        let json: GroupIds = parse_json(br#"{"request": {"groupIds": ["g"]}}"#).unwrap();
        assert_eq!(json, GroupIds(vec!["g".into()]));
        let none: UserIds = parse_json(br#"{"userIds": null}"#).unwrap();
        assert_eq!(none, UserIds::default());
        assert!(parse_json::<UserIds>(br#"{"userIds": [1]}"#).is_err());
    }
}
