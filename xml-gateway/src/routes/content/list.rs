//! `GET /content` (every item the caller may see) and `GET|POST /contents` (one page), each
//! optionally narrowed by `contentItemIds` and `contentTypes` (neighbours.md section 6).
//!
//! A listed item has the fields of `GET /content/{id}` and `contentItemType` after `type`:
//! the same value, under the name the OpenAPI gives and a real client filters on.

use lms_proto::v1::{
    ContentItem, ListContentItemsRequest, ListContentItemsResponse, PageRequest,
    StreamContentItemsRequest, StreamContentItemsResponse,
};

use super::{ContentItemJson, write_content_item_with};
use crate::error::GatewayError;
use crate::listing::{Filters, Form, Listing, Paged, Streamed, Whole, paged_rpc, streamed_rpc};
use crate::representation::push_json;
use crate::xml::writer::XmlWriter;

/// Every content item that matches the filters.
pub(crate) struct ContentItems;

impl Listing for ContentItems {
    type Item = ContentItem;
    const NAME: &'static str = "content items";
    const FILTERS: &'static [&'static str] = &["contentItemIds", "contentTypes"];

    fn write_xml(xml: &mut XmlWriter, item: &ContentItem, _: Form) {
        write_content_item_with(xml, item, true);
    }

    fn write_json(out: &mut String, item: &ContentItem, _: Form) {
        push_json(out, &ContentItemJson::of(item, true));
    }

    fn xml_bytes_hint(item: &ContentItem) -> usize {
        400 + item.title.len() + item.description.len() + item.view_url.len()
    }
}

impl Streamed for ContentItems {
    streamed_rpc!(
        stream_content_items(StreamContentItemsRequest) -> StreamContentItemsResponse.content_items
    );
}

impl Whole for ContentItems {
    fn stream_request(filters: Filters) -> StreamContentItemsRequest {
        let [content_item_ids, content_types] = filters.into_lists();
        StreamContentItemsRequest {
            content_item_ids,
            content_types,
        }
    }
}

impl Paged for ContentItems {
    const PAGE_ELEMENT: &'static str = "contentItems";

    fn list_request(
        filters: Filters,
        page: PageRequest,
    ) -> Result<ListContentItemsRequest, GatewayError> {
        let StreamContentItemsRequest {
            content_item_ids,
            content_types,
        } = Self::stream_request(filters);
        Ok(ListContentItemsRequest {
            page: Some(page),
            content_item_ids,
            content_types,
        })
    }

    paged_rpc!(
        list_content_items(ListContentItemsRequest) -> ListContentItemsResponse.content_items
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listing::testing::{page_text, whole_text};
    use crate::representation::Format;

    fn item() -> ContentItem {
        ContentItem {
            content_item_id: "c-1".into(),
            title: "T".into(),
            description: String::new(),
            user_id: "u-1".into(),
            added_date: "2019-03-26T06:34:57+00:00".into(),
            view_url: "https://a.example.com/view/c-1".into(),
            r#type: "Course".into(),
        }
    }

    #[tokio::test]
    async fn a_listed_item_has_its_type_twice_in_the_whole_list_and_in_pages() {
        let messages = [StreamContentItemsResponse {
            content_items: vec![item()],
        }];
        let json = whole_text::<ContentItems>(&messages, Format::Json).await;
        assert!(
            json.ends_with(r#""type":"Course","contentItemType":"Course"}]"#),
            "{json}"
        );
        let xml = whole_text::<ContentItems>(&messages, Format::Xml).await;
        assert!(
            xml.ends_with(
                "<type>Course</type><contentItemType>Course</contentItemType></contentItem></response>"
            ),
            "{xml}"
        );
        let page = page_text::<ContentItems>(vec![item()], "", Format::Json).await;
        assert!(page.starts_with(r#"{"contentItems":[{"contentItemId":"c-1""#));
        assert!(page.ends_with(r#""contentItemType":"Course"}]}"#), "{page}");
    }

    #[test]
    fn the_filters_reach_the_core_in_their_places() {
        let (filters, page) = crate::listing::testing::query::<ContentItems>(
            "contentTypes=Course,%20Quiz&contentItemIds[]=c",
        );
        let request = ContentItems::list_request(filters, page).unwrap();
        assert_eq!(request.content_item_ids, ["c"]);
        assert_eq!(request.content_types, ["Course", "Quiz"]);
    }
}
