//! Keyset paging shared by every listing: one page, or the whole list read page by page.
//!
//! A listing supplies one function, "up to `limit` rows with ids greater than `after`, in id
//! order", served by an index range scan. This module turns it into the answer of a paged
//! request (the page and the token of the next one) or of an unpaged one (every row, still
//! read in bounded statements so that none sorts or holds the account at once in the
//! database).

use std::future::Future;

use sea_orm::prelude::Uuid;

use crate::{
    domain::page::{MAX_PAGE_SIZE, Page},
    error::ServiceResult,
};

/// One answer of a listing: its rows in id order and, while more follow, the next token.
#[derive(Debug, Clone)]
pub struct Paged<T> {
    pub items: Vec<T>,
    /// Present while more rows follow this page.
    pub next_page_token: Option<String>,
}

/// The page `page` of a listing, or every row when `page` is `None`.
///
/// `read_after(after, limit)` returns up to `limit` rows with ids greater than `after`,
/// ascending; `id` names a row's id.
pub async fn read<T, F, Fut>(
    page: Option<Page>,
    id: impl Fn(&T) -> Uuid,
    mut read_after: F,
) -> ServiceResult<Paged<T>>
where
    F: FnMut(Option<Uuid>, u64) -> Fut,
    Fut: Future<Output = ServiceResult<Vec<T>>>,
{
    let Some(page) = page else {
        let mut items = Vec::new();
        let mut after = None;
        loop {
            let batch = read_after(after, MAX_PAGE_SIZE).await?;
            let done = (batch.len() as u64) < MAX_PAGE_SIZE;
            after = batch.last().map(&id);
            items.extend(batch);
            if done {
                break;
            }
        }
        return Ok(Paged {
            items,
            next_page_token: None,
        });
    };
    // One row more than the page tells whether another page follows, so no token ever leads
    // to an empty page.
    let mut items = read_after(page.after, page.size + 1).await?;
    let more = items.len() as u64 > page.size;
    items.truncate(page.size as usize);
    let next_page_token = more
        .then(|| items.last().map(|last| page.next_token(id(last))))
        .flatten();
    Ok(Paged {
        items,
        next_page_token,
    })
}
