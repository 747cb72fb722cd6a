//! Content items (interface 4.6; neighbours.md section 6).

use super::Resource;
use super::components::{list_filter, parameter};
use super::node::{Node, object};
use super::operation::{Media, Operation, both};
use super::schema::{
    Others, element, formatted, id, id_list, integer_between, optional, page, reference, required,
    response_of, text, whole_list,
};
use crate::listing::{Listing, Paged};
use crate::routes::content::ContentItems;

const TAG: &str = "Content";

const READERS: &str = "Account owners and administrators, department administrators and custom roles with `content.read` see every item; an author the items of the projects it authors.";

fn filter_meaning(name: &str) -> &'static str {
    match name {
        "contentItemIds" => "Only these content items.",
        _ => "Only items of these types (compared as given, e.g. `Course`).",
    }
}

fn with_filters(mut operation: Operation) -> Operation {
    for name in ContentItems::FILTERS {
        operation = operation.query(list_filter(name, filter_meaning(name)));
    }
    operation
}

pub(crate) fn resource() -> Resource {
    let operations = vec![
        Operation::get("/content/{content_item_id}", TAG, "getContentItem")
            .describe("Read a content item", &format!("One content item. {READERS}"))
            .path_id("content_item_id", "The content item.")
            .answer(
                200,
                "The item: in XML inside `<response>`, in JSON the bare object.",
                vec![
                    Media::xml(reference("ContentItemDocument")),
                    Media::json(reference("ContentItem")),
                ],
            )
            .errors(&[403]),
        with_filters(Operation::get("/content", TAG, "listContentItems").describe(
            "Every matching content item",
            &format!("Every content item the caller may see that matches the filters, ascending by id, streamed as it is read. {READERS}"),
        ))
        .answer(200, "The items.", both("ContentItemList"))
        .errors(&[403]),
        with_filters(Operation::get("/contents", TAG, "pageContentItems").describe(
            "One page of content items",
            &format!("The matching content items, one page at a time, ascending by id. {READERS}"),
        ))
        .query(parameter("pageSize"))
        .query(parameter("pageToken"))
        .answer(200, "One page.", both("ContentItemPage"))
        .errors(&[403]),
        Operation::post("/contents", TAG, "pageContentItemsByBody")
            .describe(
                "One page of content items, asked in a body",
                "As the `GET`, the filters and the page given in the body, for filters longer than a URI holds.",
            )
            .body(
                "The filters and the page. The XML root is `request`.",
                vec![
                    Media::xml(reference("ContentItemQuery")).example(
                        "<request><contentTypes><contentType>Course</contentType></contentTypes><pageSize>100</pageSize></request>",
                    ),
                    Media::json(reference("ContentItemQuery")).example(object! {
                        "contentTypes" => vec!["Course"],
                        "pageSize" => 100_i64,
                    }),
                ],
            )
            .answer(200, "One page.", both("ContentItemPage"))
            .errors(&[403]),
    ];
    Resource {
        operations,
        schemas: vec![
            ("ContentItem".into(), content_item(false)),
            ("ListedContentItem".into(), content_item(true)),
            (
                "ContentItemDocument".into(),
                response_of("contentItem", "ContentItem"),
            ),
            (
                "ContentItemList".into(),
                whole_list(
                    "ListedContentItem",
                    "Every matching item: XML `<contentItem>` elements directly under `<response>`; JSON a top-level array.",
                ),
            ),
            (
                "ContentItemPage".into(),
                page(
                    ContentItems::PAGE_ELEMENT,
                    "ListedContentItem",
                    "One page of content items.",
                ),
            ),
            ("ContentItemQuery".into(), query()),
        ],
    }
}

/// The item, and in lists with `contentItemType` after `type`.
fn content_item(listed: bool) -> Node {
    let mut properties = vec![
        required("contentItemId", id("The item's id.")),
        required("title", text("Its title.")),
        required("description", text("Its description; may be empty.")),
        required("userId", id("The user who added it.")),
        required(
            "addedDate",
            object! {
                "type" => "string",
                "format" => "date-time",
                "description" => "When it was added: seconds precision with a numeric offset, e.g. `2019-03-26T06:34:57+00:00` (never `Z`).",
            },
        ),
        required(
            "viewUrl",
            formatted(
                "uri",
                "Where a learner opens it: `{account URL}/view/{contentItemId}` unless set on import.",
            ),
        ),
        required("type", text("Its kind, e.g. `Course`.")),
    ];
    if listed {
        properties.push(required(
            "contentItemType",
            text("`type` again, under the name list clients filter on."),
        ));
    }
    element(
        "contentItem",
        if listed {
            "A content item in a list."
        } else {
            "A content item, its elements in this order."
        },
        properties,
        Others::Refused,
    )
}

fn query() -> Node {
    let list = |description: &str| {
        let mut ids = id_list(
            object! { "type" => "string" },
            &format!(
                "{description} Each child's text is a value (children of any name), or the element's own text split at commas; in JSON an array of strings or one comma-separated string."
            ),
        );
        ids.set("maxItems", 10_000_u64);
        ids
    };
    element(
        "request",
        "Which content items, and which page.",
        vec![
            optional("contentItemIds", list("Only these content items.")),
            optional("contentTypes", list("Only items of these types.")),
            optional(
                "pageSize",
                integer_between("How many rows a page holds, 1,000 when absent.", 1, 10_000),
            ),
            optional(
                "pageToken",
                text("The `nextPageToken` of the previous page; absent or empty for the first."),
            ),
        ],
        Others::Ignored,
    )
}
