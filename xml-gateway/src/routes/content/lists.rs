//! `GET /content` (every item the caller may see) and `GET|POST /contents` (one page), each
//! optionally narrowed by `contentItemIds` and `contentTypes` (neighbours.md section 6).
//!
//! A listed item has the fields of `GET /content/{id}` and `contentItemType` after `type`:
//! the same value, under the name the OpenAPI gives and a real client filters on.

use axum::extract::{RawQuery, State};
use lms_proto::v1::{ContentItem, ListContentItemsRequest, ListContentItemsResponse, PageRequest};

use super::{ContentItemJson, write_content_item_with};
use crate::body::Body;
use crate::core_client::{Caller, CoreClient};
use crate::error::GatewayError;
use crate::json::{FromJson, JsonError, JsonObject};
use crate::representation::{Answer, Document, json_text};
use crate::routes::NoQuery;
use crate::routes::enrollment::{parse_page_size, xml_ids};
use crate::routes::paging::parse_listing;
use crate::xml::writer::XmlWriter;
use crate::xml::{Element, FromXml, XmlError};

const LISTS: [&str; 2] = ["contentItemIds", "contentTypes"];

async fn list(
    core: &CoreClient,
    caller: &Caller,
    message: ListContentItemsRequest,
) -> Result<ListContentItemsResponse, GatewayError> {
    core.unary(caller, message, |mut admin, request| async move {
        admin.list_content_items(request).await
    })
    .await
}

fn request(page: Option<PageRequest>, lists: Vec<Vec<String>>) -> ListContentItemsRequest {
    let [content_item_ids, content_types]: [Vec<String>; 2] = lists.try_into().unwrap_or_default();
    ListContentItemsRequest {
        page,
        content_item_ids,
        content_types,
    }
}

/// `<response><contentItem/>…</response>` or a top-level JSON array.
#[tracing::instrument(skip_all)]
pub(crate) async fn list_content_items(
    State(core): State<CoreClient>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer, GatewayError> {
    let (_, lists) = parse_listing(query.as_deref().unwrap_or_default(), &LISTS, false)?;
    let answer = list(&core, &caller, request(None, lists)).await?;
    Ok(Answer::ok(ContentList(answer.content_items)))
}

/// `<response><contentItems>…</contentItems><nextPageToken/></response>` or
/// `{"contentItems":[…],"nextPageToken":"…"}`, the token only while more pages follow.
#[tracing::instrument(skip_all)]
pub(crate) async fn page_content_items(
    State(core): State<CoreClient>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer, GatewayError> {
    let (page, lists) = parse_listing(query.as_deref().unwrap_or_default(), &LISTS, true)?;
    let answer = list(&core, &caller, request(Some(page), lists)).await?;
    Ok(Answer::ok(ContentPage {
        items: answer.content_items,
        next_page_token: answer.next_page_token,
    }))
}

/// The same page asked in a body.
#[tracing::instrument(skip_all)]
pub(crate) async fn page_content_items_by_post(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(query): Body<ContentQuery>,
) -> Result<Answer, GatewayError> {
    let message = ListContentItemsRequest {
        page: Some(PageRequest {
            page_size: parse_page_size(query.page_size.as_deref())?,
            page_token: query.page_token.unwrap_or_default(),
        }),
        content_item_ids: query.content_item_ids,
        content_types: query.content_types,
    };
    let answer = list(&core, &caller, message).await?;
    Ok(Answer::ok(ContentPage {
        items: answer.content_items,
        next_page_token: answer.next_page_token,
    }))
}

/// `<request>` with optional `pageSize`, `pageToken`, `<contentItemIds><id/>…` and
/// `contentTypes`, either as child elements (of any name) or as comma-separated text.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct ContentQuery {
    pub(crate) page_size: Option<String>,
    pub(crate) page_token: Option<String>,
    pub(crate) content_item_ids: Vec<String>,
    pub(crate) content_types: Vec<String>,
}

fn split(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(str::to_owned)
}

impl FromXml for ContentQuery {
    const ROOT: &'static str = "request";

    fn from_root(root: &Element) -> Result<Self, XmlError> {
        let content_types = match root.single_child("contentTypes")? {
            None => Vec::new(),
            Some(types) if types.children.is_empty() => split(&types.text).collect(),
            Some(types) => types
                .children
                .iter()
                .map(|child| {
                    child
                        .text_value()
                        .map(|text| split(text).collect::<Vec<_>>())
                })
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .flatten()
                .collect(),
        };
        Ok(Self {
            page_size: root.optional_text("pageSize")?,
            page_token: root.optional_text("pageToken")?,
            content_item_ids: xml_ids(root, "contentItemIds")?,
            content_types,
        })
    }
}

impl FromJson for ContentQuery {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        // `contentTypes` may be one string or a list, as the query string allows both.
        let content_types = match object.optional_text_list("contentTypes") {
            Ok(list) => list.unwrap_or_default(),
            Err(_) => object
                .optional_text("contentTypes")?
                .map(|text| split(&text).collect())
                .unwrap_or_default(),
        };
        Ok(Self {
            page_size: object.optional_text("pageSize")?,
            page_token: object.optional_text("pageToken")?,
            content_item_ids: object
                .optional_text_list("contentItemIds")?
                .unwrap_or_default(),
            content_types,
        })
    }
}

fn write_listed(xml: &mut XmlWriter, item: &ContentItem) {
    write_content_item_with(xml, item, true);
}

fn bytes_hint(items: &[ContentItem]) -> usize {
    items
        .iter()
        .map(|item| 400 + item.title.len() + item.description.len() + item.view_url.len())
        .sum::<usize>()
        + 128
}

/// `GET /content`: repeated `<contentItem>` directly under `<response>`; a JSON array.
pub(crate) struct ContentList(pub(crate) Vec<ContentItem>);

impl Document for ContentList {
    fn xml_bytes_hint(&self) -> usize {
        bytes_hint(&self.0)
    }

    fn write_xml(&self, xml: &mut XmlWriter) {
        for item in &self.0 {
            write_listed(xml, item);
        }
    }

    fn to_json(&self) -> String {
        json_text(
            &self
                .0
                .iter()
                .map(|item| ContentItemJson::of(item, true))
                .collect::<Vec<_>>(),
        )
    }
}

/// `GET|POST /contents`: one page and, while more follow, the next page's token.
pub(crate) struct ContentPage {
    pub(crate) items: Vec<ContentItem>,
    /// Empty on the last page: then the element (and the JSON key) is left out.
    pub(crate) next_page_token: String,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ContentPageJson<'a> {
    content_items: Vec<ContentItemJson<'a>>,
    #[serde(skip_serializing_if = "str::is_empty")]
    next_page_token: &'a str,
}

impl Document for ContentPage {
    fn xml_bytes_hint(&self) -> usize {
        bytes_hint(&self.items)
    }

    fn write_xml(&self, xml: &mut XmlWriter) {
        if self.items.is_empty() {
            xml.empty("contentItems");
        } else {
            xml.open("contentItems");
            for item in &self.items {
                write_listed(xml, item);
            }
            xml.close("contentItems");
        }
        if !self.next_page_token.is_empty() {
            xml.text_element("nextPageToken", &self.next_page_token);
        }
    }

    fn to_json(&self) -> String {
        json_text(&ContentPageJson {
            content_items: self
                .items
                .iter()
                .map(|item| ContentItemJson::of(item, true))
                .collect(),
            next_page_token: &self.next_page_token,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xml::reader::parse_document;

    fn query(body: &str) -> ContentQuery {
        ContentQuery::from_root(&parse_document(body.as_bytes(), "request").unwrap()).unwrap()
    }

    #[test]
    fn content_types_are_read_as_elements_or_as_text() {
        assert_eq!(
            query("<request><contentTypes><contentType>Course</contentType><type>Quiz</type></contentTypes></request>")
                .content_types,
            ["Course", "Quiz"]
        );
        assert_eq!(
            query("<request><contentTypes>Course, Quiz</contentTypes></request>").content_types,
            ["Course", "Quiz"]
        );
    }

    #[test]
    fn a_listed_item_has_its_type_twice() {
        let item = ContentItem {
            content_item_id: "c-1".into(),
            title: "T".into(),
            description: String::new(),
            user_id: "u-1".into(),
            added_date: "2019-03-26T06:34:57+00:00".into(),
            view_url: "https://a.example.com/view/c-1".into(),
            r#type: "Course".into(),
        };
        let json = ContentList(vec![item]).to_json();
        assert!(
            json.ends_with(r#""type":"Course","contentItemType":"Course"}]"#),
            "{json}"
        );
    }
}
