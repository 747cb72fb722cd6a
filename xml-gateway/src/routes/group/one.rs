//! `POST /group/{group_id}` (rename) and `GET /group/{group_id}`: one group.

use anyhow::anyhow;
use axum::extract::State;
use axum::http::StatusCode;
use lms_proto::v1::{GetGroupRequest, Group, UpdateGroupRequest};

use crate::body::Body;
use crate::core_client::{Caller, CoreClient};
use crate::error::GatewayError;
use crate::json::{FromJson, JsonError, JsonObject};
use crate::representation::{Answer, Document, json_text};
use crate::routes::{NoQuery, PathId};
use crate::xml::writer::XmlWriter;
use crate::xml::{Element, FromXml, XmlError};

/// `<request>` with an optional `name`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct GroupFields {
    pub(crate) name: Option<String>,
}

impl FromXml for GroupFields {
    const ROOT: &'static str = "request";

    fn from_root(root: &Element) -> Result<Self, XmlError> {
        Ok(Self {
            name: root.optional_text("name")?,
        })
    }
}

impl FromJson for GroupFields {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        Ok(Self {
            name: object.optional_text("name")?,
        })
    }
}

/// 200 with an empty body, as the interface describes.
#[tracing::instrument(skip_all, fields(group_id = %group_id))]
pub(crate) async fn update_group(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    PathId(group_id): PathId,
    Body(fields): Body<GroupFields>,
) -> Result<StatusCode, GatewayError> {
    let message = UpdateGroupRequest {
        group_id,
        name: fields.name,
    };
    core.unary(&caller, message, |mut admin, request| async move {
        admin.update_group(request).await
    })
    .await?;
    Ok(StatusCode::OK)
}

#[tracing::instrument(skip_all, fields(group_id = %group_id))]
pub(crate) async fn get_group(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    PathId(group_id): PathId,
) -> Result<Answer, GatewayError> {
    let answer = core
        .unary(
            &caller,
            GetGroupRequest { group_id },
            |mut admin, request| async move { admin.get_group(request).await },
        )
        .await?;
    let group = answer
        .group
        .ok_or_else(|| GatewayError::Internal(anyhow!("GetGroup answered without a group")))?;
    Ok(Answer::ok(GroupAnswer(group)))
}

/// `<group>` with `usersCount`, `userIds`, `groupId`, `name`, `isSmart`, in that order; in JSON
/// the same keys in the same order, without the `group` wrapper (contract section 11).
pub(crate) struct GroupAnswer(pub(crate) Group);

impl Document for GroupAnswer {
    fn xml_bytes_hint(&self) -> usize {
        // `<id>` + 36 characters + `</id>` per member, plus the rest.
        256 + 47 * self.0.user_ids.len() + self.0.name.len()
    }

    fn write_xml(&self, xml: &mut XmlWriter) {
        write_group(xml, &self.0);
    }

    fn to_json(&self) -> String {
        let group = &self.0;
        json_text(&GroupJson {
            users_count: group.users_count,
            user_ids: &group.user_ids,
            group_id: &group.group_id,
            name: &group.name,
            is_smart: u8::from(group.is_smart),
        })
    }
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct GroupJson<'a> {
    users_count: u64,
    user_ids: &'a [String],
    group_id: &'a str,
    name: &'a str,
    is_smart: u8,
}

fn write_group(xml: &mut XmlWriter, group: &Group) {
    xml.open("group")
        .text_element("usersCount", &group.users_count.to_string());
    if group.user_ids.is_empty() {
        xml.empty("userIds");
    } else {
        xml.open("userIds");
        for user_id in &group.user_ids {
            xml.text_element("id", user_id);
        }
        xml.close("userIds");
    }
    xml.text_element("groupId", &group.group_id)
        .text_element("name", &group.name)
        .text_element("isSmart", if group.is_smart { "1" } else { "0" })
        .close("group");
}

#[cfg(test)]
fn render_group(group: &Group) -> String {
    let mut xml = XmlWriter::document();
    xml.open("response");
    write_group(&mut xml, group);
    xml.close("response");
    xml.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_is_written_in_the_interfaces_order() {
        let group = Group {
            group_id: "g-1".into(),
            name: "Interns & <Friends>".into(),
            users_count: 2,
            user_ids: vec!["u-1".into(), "u-2".into()],
            is_smart: false,
        };
        assert_eq!(
            render_group(&group),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response><group>\
             <usersCount>2</usersCount><userIds><id>u-1</id><id>u-2</id></userIds>\
             <groupId>g-1</groupId><name>Interns &amp; &lt;Friends&gt;</name>\
             <isSmart>0</isSmart></group></response>"
        );
    }

    #[test]
    fn a_count_only_smart_group_has_an_empty_id_list() {
        let group = Group {
            group_id: "g-2".into(),
            name: "All of Sales".into(),
            users_count: 7,
            user_ids: vec![],
            is_smart: true,
        };
        assert_eq!(
            render_group(&group),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response><group>\
             <usersCount>7</usersCount><userIds/><groupId>g-2</groupId>\
             <name>All of Sales</name><isSmart>1</isSmart></group></response>"
        );
    }
}
