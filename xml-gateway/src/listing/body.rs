//! A list asked for in a body (`POST /enrollments`, `POST /users`, `POST /gamification/points`),
//! for filters longer than a URI holds: the same filters as lists, `pageSize` and `pageToken`.
//!
//! A list in a body is read the way the query string reads one, in every shape clients send:
//! `<learnerIds><id>a</id><id>b</id></learnerIds>` (children of any name: the documents
//! disagree between `id`, `login`, `email`, `contentType`), `<contentTypes>a, b</contentTypes>`,
//! `{"learnerIds": ["a", "b"]}` or `{"contentTypes": "a, b"}`. Every value is split at commas
//! and trimmed, and empty ones are dropped.

use std::marker::PhantomData;

use lms_proto::v1::PageRequest;
use serde_json::Value;

use super::query::{page_request, split_values};
use super::{Filters, Listing};
use crate::clip::clip;
use crate::error::GatewayError;
use crate::json::{FromJson, JsonError, JsonObject};
use crate::xml::{Element, FromXml, XmlError};

/// `<request>` (or a JSON object) with the filters of `L` and optional `pageSize` and
/// `pageToken`.
#[derive(Debug)]
pub(crate) struct ListBody<L> {
    pub(crate) filters: Filters,
    pub(crate) page_size: Option<String>,
    pub(crate) page_token: Option<String>,
    listing: PhantomData<fn() -> L>,
}

impl<L: Listing> ListBody<L> {
    /// The filters and the page asked for.
    pub(crate) fn into_page(self) -> Result<(Filters, PageRequest), GatewayError> {
        let page = page_request(self.page_size.as_deref(), self.page_token.as_deref())?;
        Ok((self.filters, page))
    }
}

impl<L: Listing> FromXml for ListBody<L> {
    const ROOT: &'static str = "request";

    fn from_root(root: &Element) -> Result<Self, XmlError> {
        let mut filters = Filters::of(L::FILTERS.len(), 0);
        for (values, name) in filters.lists.iter_mut().zip(L::FILTERS) {
            *values = xml_list(root, name)?.unwrap_or_default();
        }
        Ok(Self {
            filters,
            page_size: root.optional_text("pageSize")?,
            page_token: root.optional_text("pageToken")?,
            listing: PhantomData,
        })
    }
}

impl<L: Listing> FromJson for ListBody<L> {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        let mut filters = Filters::of(L::FILTERS.len(), 0);
        for (values, name) in filters.lists.iter_mut().zip(L::FILTERS) {
            *values = json_list(object, name)?.unwrap_or_default();
        }
        Ok(Self {
            filters,
            page_size: object.optional_text("pageSize")?,
            page_token: object.optional_text("pageToken")?,
            listing: PhantomData,
        })
    }
}

/// The values of the list element `name` of `root`: `None` when absent (given twice is an
/// error); the text of each child, whatever its name, or the element's own text when it has
/// no children.
pub(crate) fn xml_list(root: &Element, name: &str) -> Result<Option<Vec<String>>, XmlError> {
    let Some(list) = root.single_child(name)? else {
        return Ok(None);
    };
    if list.children.is_empty() {
        return Ok(Some(split_values(&list.text).collect()));
    }
    let mut values = Vec::new();
    for item in &list.children {
        values.extend(split_values(item.text_value()?));
    }
    Ok(Some(values))
}

/// The values of the list field `name`: `None` when absent or `null`; an array of strings, or
/// one string.
fn json_list(object: &JsonObject<'_>, name: &str) -> Result<Option<Vec<String>>, JsonError> {
    let not_a_list = || JsonError::NotTextList(clip(name));
    match object.value(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(split_values(text).collect())),
        Some(Value::Array(items)) => {
            let mut values = Vec::new();
            for item in items {
                let Value::String(text) = item else {
                    return Err(not_a_list());
                };
                values.extend(split_values(text));
            }
            Ok(Some(values))
        }
        Some(_) => Err(not_a_list()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse_json;
    use crate::xml::reader::parse_document;

    /// A listing with two filters, as enrollments and content have.
    #[derive(Debug)]
    struct Two;

    impl Listing for Two {
        type Item = ();
        const NAME: &'static str = "two";
        const FILTERS: &'static [&'static str] = &["learnerIds", "contentTypes"];

        fn write_xml(_: &mut crate::xml::writer::XmlWriter, (): &(), _: super::super::Form) {}

        fn write_json(_: &mut String, (): &(), _: super::super::Form) {}
    }

    fn xml(body: &str) -> Result<ListBody<Two>, XmlError> {
        ListBody::from_root(&parse_document(body.as_bytes(), "request")?)
    }

    fn json(body: &str) -> Result<ListBody<Two>, JsonError> {
        parse_json(body.as_bytes())
    }

    #[test]
    fn lists_are_read_as_children_of_any_name_or_as_text() {
        let body = xml("<request><pageSize> 2 </pageSize><pageToken/>\
             <learnerIds><id> a </id><id/><learner>b,c</learner></learnerIds>\
             <contentTypes>Course, Quiz</contentTypes></request>")
        .unwrap();
        assert_eq!(
            body.filters.lists,
            [vec!["a", "b", "c"], vec!["Course", "Quiz"]]
        );
        let (_, page) = body.into_page().unwrap();
        assert_eq!((page.page_size, page.page_token.as_str()), (Some(2), ""));
        assert_eq!(
            xml("<request/>").unwrap().filters.lists,
            [Vec::<String>::new(), vec![]]
        );
    }

    #[test]
    fn a_list_given_twice_or_holding_elements_is_refused() {
        assert_eq!(
            xml("<request><learnerIds/><learnerIds/></request>").unwrap_err(),
            XmlError::Duplicate("learnerIds".into())
        );
        assert!(xml("<request><learnerIds><id><id>a</id></id></learnerIds></request>").is_err());
    }

    #[test]
    fn json_lists_are_arrays_of_strings_or_one_string() {
        let body =
            json(r#"{"learnerIds":[" a ","","b,c"],"contentTypes":"Course, Quiz","pageSize":3}"#)
                .unwrap();
        assert_eq!(
            body.filters.lists,
            [vec!["a", "b", "c"], vec!["Course", "Quiz"]]
        );
        assert_eq!(body.page_size.as_deref(), Some("3"));
        let nothing = json(r#"{"learnerIds":null}"#).unwrap();
        assert_eq!(nothing.filters, Filters::of(2, 0));
        for bad in [r#"{"learnerIds":[1]}"#, r#"{"learnerIds":{"a":1}}"#] {
            assert_eq!(
                json(bad).unwrap_err(),
                JsonError::NotTextList("learnerIds".into()),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_page_size_in_a_body_follows_the_query_rule() {
        let body = json(r#"{"pageSize":"+5"}"#).unwrap();
        assert!(matches!(
            body.into_page(),
            Err(GatewayError::BadRequest(message)) if message.starts_with("pageSize must be")
        ));
    }
}
