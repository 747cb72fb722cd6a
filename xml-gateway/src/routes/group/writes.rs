//! `POST /group` (create), `DELETE /group/{groupId}` and `POST /group/{groupId}/members`
//! (replace the members), neighbours.md 7.3 to 7.5.

use axum::extract::State;
use axum::http::StatusCode;
use lms_proto::v1::{AddGroupRequest, DeleteGroupRequest, ReplaceGroupMembersRequest};

use crate::body::Body;
use crate::core_client::{Caller, CoreClient};
use crate::error::GatewayError;
use crate::json::{FromJson, JsonError, JsonObject};
use crate::representation::Answer;
use crate::routes::department::Created;
use crate::routes::{NoQuery, PathId};
use crate::xml::{Element, FromXml, XmlError};

/// `<userIds><id>…</id>…</userIds>`: the ids as given (the core checks each); `<userIds/>`
/// is an empty list.
fn id_list(user_ids: &Element) -> Result<Vec<String>, XmlError> {
    user_ids
        .children_named("id")
        .map(|id| id.text_value().map(str::to_owned))
        .collect()
}

/// `<request><name/><userIds>…</userIds></request>`; `userIds` is optional (C1 sends an
/// empty `<userIds/>` when it has nobody to add).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct NewGroupFields {
    pub(crate) name: Option<String>,
    pub(crate) user_ids: Vec<String>,
}

impl FromXml for NewGroupFields {
    const ROOT: &'static str = "request";

    fn from_root(root: &Element) -> Result<Self, XmlError> {
        Ok(Self {
            name: root.optional_text("name")?,
            user_ids: match root.single_child("userIds")? {
                Some(user_ids) => id_list(user_ids)?,
                None => Vec::new(),
            },
        })
    }
}

impl FromJson for NewGroupFields {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        Ok(Self {
            name: object.optional_text("name")?,
            user_ids: object.optional_text_list("userIds")?.unwrap_or_default(),
        })
    }
}

/// `<request><userIds>…</userIds></request>`. `userIds` is required: an empty list removes
/// every member, so a body that forgot the element must not do the same.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct MemberIds(pub(crate) Vec<String>);

impl FromXml for MemberIds {
    const ROOT: &'static str = "request";

    fn from_root(root: &Element) -> Result<Self, XmlError> {
        id_list(root.required_child("userIds")?).map(Self)
    }
}

impl FromJson for MemberIds {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        object.required_text_list("userIds").map(Self)
    }
}

/// 201 with the new id. A missing `name` goes to the core as empty: the core names it.
#[tracing::instrument(skip_all, fields(members = fields.user_ids.len()))]
pub(crate) async fn create_group(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(fields): Body<NewGroupFields>,
) -> Result<Answer, GatewayError> {
    let message = AddGroupRequest {
        name: fields.name.unwrap_or_default(),
        user_ids: fields.user_ids,
    };
    let created = core
        .unary(&caller, message, |mut admin, request| async move {
            admin.add_group(request).await
        })
        .await?;
    Ok(Answer::new(StatusCode::CREATED, Created(created.group_id)))
}

/// 204 with no body.
#[tracing::instrument(skip_all, fields(group_id = %group_id))]
pub(crate) async fn delete_group(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    PathId(group_id): PathId,
) -> Result<StatusCode, GatewayError> {
    core.unary(
        &caller,
        DeleteGroupRequest { group_id },
        |mut admin, request| async move { admin.delete_group(request).await },
    )
    .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// 200 with an empty body, as the documentation shows.
#[tracing::instrument(skip_all, fields(group_id = %group_id, members = ids.len()))]
pub(crate) async fn replace_members(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    PathId(group_id): PathId,
    Body(MemberIds(ids)): Body<MemberIds>,
) -> Result<StatusCode, GatewayError> {
    let message = ReplaceGroupMembersRequest {
        group_id,
        user_ids: ids,
    };
    core.unary(&caller, message, |mut admin, request| async move {
        admin.replace_group_members(request).await
    })
    .await?;
    Ok(StatusCode::OK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse_json;
    use crate::xml::reader::parse_document;

    fn xml<T: FromXml>(body: &str) -> Result<T, XmlError> {
        T::from_root(&parse_document(body.as_bytes(), T::ROOT)?)
    }

    #[test]
    fn a_new_group_reads_its_name_and_optional_members_in_both_formats() {
        let parsed: NewGroupFields =
            xml("<request><name> Hires </name><userIds><id>a</id><id>b</id></userIds></request>")
                .unwrap();
        assert_eq!(parsed.name.as_deref(), Some("Hires"));
        assert_eq!(parsed.user_ids, ["a", "b"]);
        let empty: NewGroupFields = xml("<request><name>X</name><userIds/></request>").unwrap();
        assert!(empty.user_ids.is_empty());
        let json: NewGroupFields =
            parse_json(br#"{"name":"X","userIds":null,"colour":"red"}"#).unwrap();
        assert_eq!(json.name.as_deref(), Some("X"));
        assert!(json.user_ids.is_empty());
    }

    #[test]
    fn members_need_a_user_ids_element_which_may_be_empty() {
        assert_eq!(
            xml::<MemberIds>("<request/>").unwrap_err(),
            XmlError::Missing("userIds".into())
        );
        assert_eq!(
            xml::<MemberIds>("<request><userIds/></request>")
                .unwrap()
                .0
                .len(),
            0
        );
        assert_eq!(
            parse_json::<MemberIds>(br#"{"userIds":[]}"#).unwrap(),
            MemberIds(vec![])
        );
        assert!(parse_json::<MemberIds>(br#"{}"#).is_err());
    }
}
