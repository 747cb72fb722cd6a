//! `GET /group` (every group, unpaged) and `GET /groups` (paged), neighbours.md 7.1 and 7.2.
//!
//! iSpring writes `isSmart` as `true`/`false` in the unpaged list and as `0`/`1` in the
//! paged one (and in `GET /group/{id}`); each list's JSON follows its own XML, so a client
//! reading either format of one endpoint sees the same values.

use axum::extract::State;
use lms_proto::v1::{GroupSummary, ListGroupsRequest};

use crate::core_client::{Caller, CoreClient};
use crate::error::GatewayError;
use crate::representation::{Answer, Document, json_text};
use crate::routes::NoQuery;
use crate::routes::paging::PageQuery;
use crate::xml::writer::XmlWriter;

/// Every group, unpaged: `<response><group/>…</response>` or a top-level JSON array.
#[tracing::instrument(skip_all)]
pub(crate) async fn list_groups(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
) -> Result<Answer, GatewayError> {
    let answer = core
        .unary(
            &caller,
            ListGroupsRequest { page: None },
            |mut admin, request| async move { admin.list_groups(request).await },
        )
        .await?;
    Ok(Answer::ok(GroupList(answer.groups)))
}

/// One page: `<response><groups>…</groups><nextPageToken/></response>` or
/// `{"groups":[…],"nextPageToken":"…"}`, the token only while more pages follow.
#[tracing::instrument(skip_all)]
pub(crate) async fn page_groups(
    State(core): State<CoreClient>,
    caller: Caller,
    PageQuery(page): PageQuery,
) -> Result<Answer, GatewayError> {
    let answer = core
        .unary(
            &caller,
            ListGroupsRequest { page: Some(page) },
            |mut admin, request| async move { admin.list_groups(request).await },
        )
        .await?;
    Ok(Answer::ok(GroupPage {
        groups: answer.groups,
        next_page_token: answer.next_page_token,
    }))
}

/// How a list writes `isSmart`.
#[derive(Clone, Copy)]
enum Smart {
    /// `true`/`false` (`GET /group`).
    Words,
    /// `1`/`0` (`GET /groups`).
    Digits,
}

fn write_group(xml: &mut XmlWriter, group: &GroupSummary, smart: Smart) {
    let is_smart = match (smart, group.is_smart) {
        (Smart::Words, flag) => {
            if flag {
                "true"
            } else {
                "false"
            }
        }
        (Smart::Digits, flag) => {
            if flag {
                "1"
            } else {
                "0"
            }
        }
    };
    xml.open("group")
        .text_element("groupId", &group.group_id)
        .text_element("name", &group.name)
        .text_element("isSmart", is_smart)
        .close("group");
}

fn groups_bytes_hint(groups: &[GroupSummary]) -> usize {
    groups.iter().map(|g| 96 + g.name.len()).sum::<usize>() + 128
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ListedGroupJson<'a> {
    group_id: &'a str,
    name: &'a str,
    is_smart: bool,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct PagedGroupJson<'a> {
    group_id: &'a str,
    name: &'a str,
    is_smart: u8,
}

/// `GET /group`: repeated `<group>` directly under `<response>`; a JSON array.
pub(crate) struct GroupList(pub(crate) Vec<GroupSummary>);

impl Document for GroupList {
    fn xml_bytes_hint(&self) -> usize {
        groups_bytes_hint(&self.0)
    }

    fn write_xml(&self, xml: &mut XmlWriter) {
        for group in &self.0 {
            write_group(xml, group, Smart::Words);
        }
    }

    fn to_json(&self) -> String {
        let groups: Vec<_> = self
            .0
            .iter()
            .map(|g| ListedGroupJson {
                group_id: &g.group_id,
                name: &g.name,
                is_smart: g.is_smart,
            })
            .collect();
        json_text(&groups)
    }
}

/// `GET /groups`: one page and, while more follow, the next page's token.
pub(crate) struct GroupPage {
    pub(crate) groups: Vec<GroupSummary>,
    /// Empty on the last page: then the element (and the JSON key) is left out.
    pub(crate) next_page_token: String,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct GroupPageJson<'a> {
    groups: Vec<PagedGroupJson<'a>>,
    #[serde(skip_serializing_if = "str::is_empty")]
    next_page_token: &'a str,
}

impl Document for GroupPage {
    fn xml_bytes_hint(&self) -> usize {
        groups_bytes_hint(&self.groups)
    }

    fn write_xml(&self, xml: &mut XmlWriter) {
        if self.groups.is_empty() {
            xml.empty("groups");
        } else {
            xml.open("groups");
            for group in &self.groups {
                write_group(xml, group, Smart::Digits);
            }
            xml.close("groups");
        }
        if !self.next_page_token.is_empty() {
            xml.text_element("nextPageToken", &self.next_page_token);
        }
    }

    fn to_json(&self) -> String {
        json_text(&GroupPageJson {
            groups: self
                .groups
                .iter()
                .map(|g| PagedGroupJson {
                    group_id: &g.group_id,
                    name: &g.name,
                    is_smart: u8::from(g.is_smart),
                })
                .collect(),
            next_page_token: &self.next_page_token,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(id: &str, is_smart: bool) -> GroupSummary {
        GroupSummary {
            group_id: id.into(),
            name: "Sales & <Co>".into(),
            is_smart,
        }
    }

    fn xml_of(document: &impl Document) -> String {
        let mut xml = XmlWriter::document();
        xml.open("response");
        document.write_xml(&mut xml);
        xml.close("response");
        xml.finish()
    }

    #[test]
    fn the_unpaged_list_writes_is_smart_as_words_in_both_formats() {
        let list = GroupList(vec![group("g-1", false), group("g-2", true)]);
        assert_eq!(
            xml_of(&list),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response>\
             <group><groupId>g-1</groupId><name>Sales &amp; &lt;Co&gt;</name><isSmart>false</isSmart></group>\
             <group><groupId>g-2</groupId><name>Sales &amp; &lt;Co&gt;</name><isSmart>true</isSmart></group>\
             </response>"
        );
        assert_eq!(
            list.to_json(),
            r#"[{"groupId":"g-1","name":"Sales & <Co>","isSmart":false},{"groupId":"g-2","name":"Sales & <Co>","isSmart":true}]"#
        );
        assert_eq!(GroupList(vec![]).to_json(), "[]");
    }

    #[test]
    fn a_page_writes_is_smart_as_digits_and_its_token_only_while_more_follow() {
        let more = GroupPage {
            groups: vec![group("g-2", true)],
            next_page_token: "dG9rZW4".into(),
        };
        assert_eq!(
            xml_of(&more),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response><groups>\
             <group><groupId>g-2</groupId><name>Sales &amp; &lt;Co&gt;</name><isSmart>1</isSmart></group>\
             </groups><nextPageToken>dG9rZW4</nextPageToken></response>"
        );
        assert_eq!(
            more.to_json(),
            r#"{"groups":[{"groupId":"g-2","name":"Sales & <Co>","isSmart":1}],"nextPageToken":"dG9rZW4"}"#
        );
        let last = GroupPage {
            groups: vec![],
            next_page_token: String::new(),
        };
        assert_eq!(
            xml_of(&last),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response><groups/></response>"
        );
        assert_eq!(last.to_json(), r#"{"groups":[]}"#);
    }
}
