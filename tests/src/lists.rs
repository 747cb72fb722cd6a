//! Reading the lists the gateway answers: the ids of one answer, and walks over every page of
//! a paged list that follow `nextPageToken` until a page has none, as a syncing client does.

use serde_json::Value;

use crate::{
    stack::{Reply, TestStack, json_of},
    xml::{text_of, texts_of},
};

/// The texts of every `<{id}>` of a 200 XML answer, in order.
#[track_caller]
pub fn xml_ids(reply: &Reply, id: &str) -> Vec<String> {
    assert_eq!(reply.status, 200, "{}", reply.body);
    texts_of(&reply.body, id)
}

/// The `id` of every object of the JSON array `list`, in order.
#[track_caller]
pub fn json_ids(list: &Value, id: &str) -> Vec<String> {
    list.as_array()
        .unwrap_or_else(|| panic!("an array: {list}"))
        .iter()
        .map(|item| {
            item[id]
                .as_str()
                .unwrap_or_else(|| panic!("a text {id} in {item}"))
                .to_owned()
        })
        .collect()
}

/// What a walk over a paged list saw.
#[derive(Debug, Clone)]
pub struct Pages<P> {
    /// Every id of every page, in the order the pages gave them.
    pub ids: Vec<String>,
    /// How many items each page held, page by page.
    pub sizes: Vec<usize>,
    /// The `nextPageToken` of every page but the last, which had none.
    pub tokens: Vec<String>,
    /// Each page as answered, for checks of their own.
    pub pages: Vec<P>,
}

impl<P> Pages<P> {
    /// Asserts that every page that named a token, so every page but the last, held `size`.
    #[track_caller]
    pub fn assert_full_before_last(&self, size: usize) {
        let before_last = &self.sizes[..self.tokens.len()];
        assert!(
            before_last.iter().all(|&held| held == size),
            "every page before the last holds {size}: {:?}",
            self.sizes
        );
    }

    fn new() -> Self {
        Self {
            ids: Vec::new(),
            sizes: Vec::new(),
            tokens: Vec::new(),
            pages: Vec::new(),
        }
    }

    /// Records one page; the token to ask for the next one, if the page named one.
    #[track_caller]
    fn push(&mut self, page: P, ids: Vec<String>, next: Option<String>) -> Option<String> {
        self.sizes.push(ids.len());
        self.ids.extend(ids);
        self.pages.push(page);
        let next = next?;
        assert!(
            !next.is_empty(),
            "page {} names an empty token",
            self.pages.len()
        );
        // A token seen before would start the walk over: it would never end.
        assert!(
            !self.tokens.contains(&next),
            "page {} names a token seen before: {next}",
            self.pages.len()
        );
        self.tokens.push(next.clone());
        Some(next)
    }
}

/// `path` asking for the page at `token`; the first page is asked with an empty token, as
/// clients that keep one URL and fill in the saved token do.
fn page_path(path: &str, token: &str) -> String {
    let join = if path.contains('?') { '&' } else { '?' };
    format!("{path}{join}pageToken={token}")
}

async fn get(stack: &TestStack, path: &str, headers: &[(&str, &str)]) -> Reply {
    let mut request = stack.http.get(format!("{}{path}", stack.base_url));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    Reply::from(request.send().await.expect("request")).await
}

/// Walks the XML pages of `path` (such as `/departments?pageSize=5`), sent with `headers`
/// (a [`Login`](crate::world::Login)'s `headers()`, or a bearer token), reading the `<{id}>`
/// of each item. Every page must be a 200.
pub async fn walk_xml_pages(
    stack: &TestStack,
    path: &str,
    headers: &[(&str, &str)],
    id: &str,
) -> Pages<Reply> {
    let mut walk = Pages::new();
    let mut token = String::new();
    loop {
        let reply = get(stack, &page_path(path, &token), headers).await;
        let ids = xml_ids(&reply, id);
        let next = text_of(&reply.body, "nextPageToken");
        match walk.push(reply, ids, next) {
            Some(next) => token = next,
            None => return walk,
        }
    }
}

/// Walks the JSON pages of `path` as [`walk_xml_pages`] does the XML ones, asking with
/// `Accept: application/json`; each page is an object whose `list` holds the items, read by
/// their `id` key. Every page must be a 200 in JSON, and a `nextPageToken` a string.
pub async fn walk_json_pages(
    stack: &TestStack,
    path: &str,
    headers: &[(&str, &str)],
    list: &str,
    id: &str,
) -> Pages<Value> {
    let headers = [headers, &[("Accept", "application/json")]].concat();
    let mut walk = Pages::new();
    let mut token = String::new();
    loop {
        let page = json_of(&get(stack, &page_path(path, &token), &headers).await);
        let ids = json_ids(&page[list], id);
        let next = page.get("nextPageToken").map(|next| {
            next.as_str()
                .unwrap_or_else(|| panic!("a text token: {page}"))
                .to_owned()
        });
        match walk.push(page, ids, next) {
            Some(next) => token = next,
            None => return walk,
        }
    }
}
