//! One page of a list: `<response><departments>…</departments><nextPageToken>…</nextPageToken>
//! </response>`, or `{"departments":[…],"nextPageToken":"…"}`. The token is there only while
//! more pages follow; an empty page is `<departments/>` and `[]`.

use super::{Form, Paged};
use crate::representation::{Document, push_json};
use crate::xml::writer::XmlWriter;

pub(crate) struct Page<L: Paged> {
    /// Numbers written before the rows, in order (a numbered page's `pageNumber` and
    /// `totalUsersNumber`).
    pub(crate) counts: Vec<(&'static str, u64)>,
    pub(crate) items: Vec<L::Item>,
    /// Empty on the last page: then the element (and the JSON key) is left out.
    pub(crate) next_page_token: String,
}

impl<L: Paged> Page<L> {
    /// The page the core answered.
    pub(crate) fn of(response: L::ListResponse) -> Self {
        let (items, next_page_token) = L::page_of(response);
        Self {
            counts: Vec::new(),
            items,
            next_page_token,
        }
    }
}

impl<L: Paged> Document for Page<L> {
    fn xml_bytes_hint(&self) -> usize {
        self.items.iter().map(L::xml_bytes_hint).sum::<usize>() + 128
    }

    fn write_xml(&self, xml: &mut XmlWriter) {
        for (name, count) in &self.counts {
            xml.text_element(name, &count.to_string());
        }
        if self.items.is_empty() {
            xml.empty(L::PAGE_ELEMENT);
        } else {
            xml.open(L::PAGE_ELEMENT);
            for item in &self.items {
                L::write_xml(xml, item, Form::Page);
            }
            xml.close(L::PAGE_ELEMENT);
        }
        if !self.next_page_token.is_empty() {
            xml.text_element("nextPageToken", &self.next_page_token);
        }
    }

    fn to_json(&self) -> String {
        let mut out = String::from("{");
        for (name, count) in &self.counts {
            push_json(&mut out, name);
            out.push(':');
            out.push_str(&count.to_string());
            out.push(',');
        }
        push_json(&mut out, L::PAGE_ELEMENT);
        out.push_str(":[");
        for (n, item) in self.items.iter().enumerate() {
            if n > 0 {
                out.push(',');
            }
            L::write_json(&mut out, item, Form::Page);
        }
        out.push(']');
        if !self.next_page_token.is_empty() {
            out.push_str(",\"nextPageToken\":");
            push_json(&mut out, &self.next_page_token);
        }
        out.push('}');
        out
    }
}
