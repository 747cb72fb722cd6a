//! `GET /group` (every group, whole) and `GET /groups` (paged), neighbours.md 7.1 and 7.2.
//!
//! iSpring writes `isSmart` as `true`/`false` in the whole list and as `0`/`1` in the paged
//! one (and in `GET /group/{id}`); each list's JSON follows its own XML, so a client reading
//! either format of one endpoint sees the same values.

use lms_proto::v1::{
    GroupSummary, ListGroupsRequest, ListGroupsResponse, PageRequest, StreamGroupsRequest,
    StreamGroupsResponse,
};

use crate::error::GatewayError;
use crate::listing::{Filters, Form, Listing, Paged, Streamed, Whole, paged_rpc, streamed_rpc};
use crate::representation::push_json;
use crate::xml::writer::XmlWriter;

/// Every group of the account.
pub(crate) struct Groups;

impl Listing for Groups {
    type Item = GroupSummary;
    const NAME: &'static str = "groups";
    const FILTERS: &'static [&'static str] = &[];

    fn write_xml(xml: &mut XmlWriter, group: &GroupSummary, form: Form) {
        let is_smart = match (form, group.is_smart) {
            (Form::Whole, true) => "true",
            (Form::Whole, false) => "false",
            (Form::Page, true) => "1",
            (Form::Page, false) => "0",
        };
        xml.open("group")
            .text_element("groupId", &group.group_id)
            .text_element("name", &group.name)
            .text_element("isSmart", is_smart)
            .close("group");
    }

    fn write_json(out: &mut String, group: &GroupSummary, form: Form) {
        match form {
            Form::Whole => push_json(out, &GroupJson::of(group, group.is_smart)),
            Form::Page => push_json(out, &GroupJson::of(group, u8::from(group.is_smart))),
        }
    }

    fn xml_bytes_hint(group: &GroupSummary) -> usize {
        96 + group.name.len()
    }
}

impl Streamed for Groups {
    streamed_rpc!(stream_groups(StreamGroupsRequest) -> StreamGroupsResponse.groups);
}

impl Whole for Groups {
    fn stream_request(_: Filters) -> StreamGroupsRequest {
        StreamGroupsRequest {}
    }
}

impl Paged for Groups {
    const PAGE_ELEMENT: &'static str = "groups";

    fn list_request(_: Filters, page: PageRequest) -> Result<ListGroupsRequest, GatewayError> {
        Ok(ListGroupsRequest { page: Some(page) })
    }

    paged_rpc!(list_groups(ListGroupsRequest) -> ListGroupsResponse.groups);
}

/// `isSmart` as a boolean in the whole list, as a digit in pages.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct GroupJson<'a, Smart> {
    group_id: &'a str,
    name: &'a str,
    is_smart: Smart,
}

impl<'a, Smart> GroupJson<'a, Smart> {
    fn of(group: &'a GroupSummary, is_smart: Smart) -> Self {
        Self {
            group_id: &group.group_id,
            name: &group.name,
            is_smart,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listing::testing::{page_text, whole_text};
    use crate::representation::Format;

    fn group(id: &str, is_smart: bool) -> GroupSummary {
        GroupSummary {
            group_id: id.into(),
            name: "Sales & <Co>".into(),
            is_smart,
        }
    }

    #[tokio::test]
    async fn the_whole_list_writes_is_smart_as_words_in_both_formats() {
        let messages = [StreamGroupsResponse {
            groups: vec![group("g-1", false), group("g-2", true)],
        }];
        assert_eq!(
            whole_text::<Groups>(&messages, Format::Xml).await,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response>\
             <group><groupId>g-1</groupId><name>Sales &amp; &lt;Co&gt;</name><isSmart>false</isSmart></group>\
             <group><groupId>g-2</groupId><name>Sales &amp; &lt;Co&gt;</name><isSmart>true</isSmart></group>\
             </response>"
        );
        assert_eq!(
            whole_text::<Groups>(&messages, Format::Json).await,
            r#"[{"groupId":"g-1","name":"Sales & <Co>","isSmart":false},{"groupId":"g-2","name":"Sales & <Co>","isSmart":true}]"#
        );
        assert_eq!(whole_text::<Groups>(&[], Format::Json).await, "[]");
        assert_eq!(
            whole_text::<Groups>(&[], Format::Xml).await,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response/>"
        );
    }

    #[tokio::test]
    async fn a_page_writes_is_smart_as_digits_and_its_token_only_while_more_follow() {
        let more = || vec![group("g-2", true)];
        assert_eq!(
            page_text::<Groups>(more(), "dG9rZW4", Format::Xml).await,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response><groups>\
             <group><groupId>g-2</groupId><name>Sales &amp; &lt;Co&gt;</name><isSmart>1</isSmart></group>\
             </groups><nextPageToken>dG9rZW4</nextPageToken></response>"
        );
        assert_eq!(
            page_text::<Groups>(more(), "dG9rZW4", Format::Json).await,
            r#"{"groups":[{"groupId":"g-2","name":"Sales & <Co>","isSmart":1}],"nextPageToken":"dG9rZW4"}"#
        );
        assert_eq!(
            page_text::<Groups>(vec![], "", Format::Xml).await,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response><groups/></response>"
        );
        assert_eq!(
            page_text::<Groups>(vec![], "", Format::Json).await,
            r#"{"groups":[]}"#
        );
    }
}
