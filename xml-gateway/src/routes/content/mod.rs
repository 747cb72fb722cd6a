//! `GET /content/{contentItemId}` here; the list in [`list`].

mod list;

pub(crate) use list::ContentItems;

use anyhow::anyhow;
use axum::extract::State;
use lms_proto::v1::{ContentItem, GetContentItemRequest};

use crate::core_client::{Caller, CoreClient};
use crate::error::GatewayError;
use crate::representation::{Answer, Document, json_text};
use crate::routes::{NoQuery, PathId};
use crate::xml::writer::XmlWriter;

#[tracing::instrument(skip_all, fields(content_item_id = %content_item_id))]
pub(crate) async fn get_content_item(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    PathId(content_item_id): PathId,
) -> Result<Answer, GatewayError> {
    let message = GetContentItemRequest { content_item_id };
    let answer = core
        .unary(&caller, message, |mut admin, request| async move {
            admin.get_content_item(request).await
        })
        .await?;
    let item = answer.content_item.ok_or_else(|| {
        GatewayError::Internal(anyhow!("GetContentItem answered without a content item"))
    })?;
    Ok(Answer::ok(ContentItemAnswer(item)))
}

/// `<contentItem>` with its seven fields in the interface's order; in JSON the same keys in the
/// same order, without the `contentItem` wrapper (contract section 11).
pub(crate) struct ContentItemAnswer(pub(crate) ContentItem);

impl Document for ContentItemAnswer {
    fn write_xml(&self, xml: &mut XmlWriter) {
        write_content_item(xml, &self.0);
    }

    fn to_json(&self) -> String {
        json_text(&ContentItemJson::of(&self.0, false))
    }
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ContentItemJson<'a> {
    content_item_id: &'a str,
    title: &'a str,
    description: &'a str,
    user_id: &'a str,
    added_date: &'a str,
    view_url: &'a str,
    r#type: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    content_item_type: Option<&'a str>,
}

impl<'a> ContentItemJson<'a> {
    /// `listed`: with `contentItemType`, as list items carry it.
    fn of(item: &'a ContentItem, listed: bool) -> Self {
        Self {
            content_item_id: &item.content_item_id,
            title: &item.title,
            description: &item.description,
            user_id: &item.user_id,
            added_date: &item.added_date,
            view_url: &item.view_url,
            r#type: &item.r#type,
            content_item_type: listed.then_some(item.r#type.as_str()),
        }
    }
}

fn write_content_item(xml: &mut XmlWriter, item: &ContentItem) {
    write_content_item_with(xml, item, false);
}

fn write_content_item_with(xml: &mut XmlWriter, item: &ContentItem, listed: bool) {
    xml.open("contentItem")
        .text_element("contentItemId", &item.content_item_id)
        .text_element("title", &item.title)
        .text_element("description", &item.description)
        .text_element("userId", &item.user_id)
        .text_element("addedDate", &item.added_date)
        .text_element("viewUrl", &item.view_url)
        .text_element("type", &item.r#type);
    if listed {
        xml.text_element("contentItemType", &item.r#type);
    }
    xml.close("contentItem");
}

#[cfg(test)]
fn render_content_item(item: &ContentItem) -> String {
    let mut xml = XmlWriter::document();
    xml.open("response");
    write_content_item(&mut xml, item);
    xml.close("response");
    xml.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_content_item_is_written_in_the_interfaces_order_and_escaped() {
        let item = ContentItem {
            content_item_id: "c-1".into(),
            title: "Safety \"101\"".into(),
            description: "Read <this> & that's it\u{1}".into(),
            user_id: "u-1".into(),
            added_date: "2019-03-26T06:34:57+00:00".into(),
            view_url: "https://acme.example.com/view/c-1?a=1&b=2".into(),
            r#type: "Course".into(),
        };
        assert_eq!(
            render_content_item(&item),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response><contentItem>\
             <contentItemId>c-1</contentItemId><title>Safety \"101\"</title>\
             <description>Read &lt;this&gt; &amp; that's it\u{FFFD}</description>\
             <userId>u-1</userId><addedDate>2019-03-26T06:34:57+00:00</addedDate>\
             <viewUrl>https://acme.example.com/view/c-1?a=1&amp;b=2</viewUrl>\
             <type>Course</type></contentItem></response>"
        );
    }
}
