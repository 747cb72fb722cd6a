//! List content items: all the caller may see, or one keyset page of them, optionally only
//! some ids or types (neighbours.md sections 6.1 and 6.2).
//!
//! The walk follows `content_items (account_id, id)`; a type filter rides along as a residual
//! condition. An author sees the items of the projects it authors: its projects are read once
//! (a handful) and the walk drops other items batch by batch until the page is full, so every
//! statement stays a range scan.

use std::{
    collections::{BTreeSet, HashSet},
    sync::Arc,
};

use futures::Stream;
use sea_orm::{
    ColumnTrait as _, ConnectionTrait, DatabaseConnection, EntityTrait as _, QueryFilter as _,
    QuerySelect as _, prelude::Uuid,
};

use crate::service::{Parsed, content::ContentItemView, keyset::Paged};
use crate::{
    access::{Caller, Grant, Operation},
    db::bulk,
    domain::{
        Invalid, Reason,
        ids::{IdList, MAX_LIST_IDS},
        page::{Listing, Page},
    },
    entities::{content_item, project_author},
    error::ServiceResult,
};

/// Which items to list: each list empty means "any".
#[derive(Debug, Clone, Default)]
pub struct ContentFilter {
    pub ids: IdList,
    /// Compared exactly as stored; blanks dropped, each once.
    pub types: Vec<String>,
}

impl ContentFilter {
    pub fn parse(ids: &[String], types: &[String]) -> Result<Self, Invalid> {
        let ids = IdList::parse("contentItemIds", ids)?;
        if types.len() > MAX_LIST_IDS {
            return Err(Invalid::new(
                "contentTypes",
                Reason::TooManyIds {
                    max: MAX_LIST_IDS,
                    given: types.len(),
                },
            ));
        }
        let types: BTreeSet<String> = types
            .iter()
            .map(|t| t.trim())
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect();
        Ok(Self {
            ids,
            types: types.into_iter().collect(),
        })
    }
}

pub type ContentList = Paged<ContentItemView>;

/// Every item the caller may see that `filter` selects (`page` `None`), or one page.
pub async fn list_content_items(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    filter: Parsed<ContentFilter>,
    page: Option<Parsed<Page>>,
) -> ServiceResult<ContentList> {
    let grant = caller.grant(Operation::GetContentItem)?;
    let filter = filter?;
    let page = page.transpose()?;
    let authored = authored_projects(conn, caller, grant).await?;
    let list = crate::service::keyset::read(
        Listing::ContentItems,
        page,
        |item: &content_item::Model| item.id,
        |after, limit| {
            read_after(
                conn,
                caller.account_id,
                authored.as_ref(),
                &filter,
                after,
                limit,
            )
        },
    )
    .await?;
    Ok(Paged {
        items: list
            .items
            .into_iter()
            .map(|item| ContentItemView::of(item, &caller.account_url))
            .collect(),
        next_page_token: list.next_page_token,
    })
}

/// Every item the caller may see that `filter` selects, as chunks read one after the other
/// ([`crate::service::keyset::stream`]); refused like [`list_content_items`] before the first.
pub async fn stream_content_items(
    db: &DatabaseConnection,
    caller: &Caller,
    filter: Parsed<ContentFilter>,
) -> ServiceResult<impl Stream<Item = ServiceResult<Vec<ContentItemView>>> + Send + 'static> {
    let grant = caller.grant(Operation::GetContentItem)?;
    let filter = filter?;
    let authored = authored_projects(db, caller, grant).await?;
    let walk = Arc::new((caller.account_url.clone(), authored, filter));
    let (db, account_id) = (db.clone(), caller.account_id);
    Ok(crate::service::keyset::stream(
        |item: &ContentItemView| item.id,
        move |after, limit| {
            let (db, walk) = (db.clone(), Arc::clone(&walk));
            async move {
                let (account_url, authored, filter) = &*walk;
                let rows =
                    read_after(&db, account_id, authored.as_ref(), filter, after, limit).await?;
                Ok(rows
                    .into_iter()
                    .map(|item| ContentItemView::of(item, account_url))
                    .collect())
            }
        },
    ))
}

/// The projects whose items an author sees; `None` for a caller who sees every item.
async fn authored_projects(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    grant: Grant,
) -> ServiceResult<Option<HashSet<Uuid>>> {
    if grant != Grant::AuthoredProjects {
        return Ok(None);
    }
    Ok(Some(
        project_author::Entity::find()
            .select_only()
            .column(project_author::Column::ProjectId)
            .filter(project_author::Column::UserId.eq(caller.user_id))
            .into_tuple::<Uuid>()
            .all(conn)
            .await?
            .into_iter()
            .collect(),
    ))
}

/// The fewest rows one statement of an author's walk reads.
const MIN_BATCH: u64 = 500;

/// Up to `limit` items the caller may see with ids greater than `after`, ascending.
async fn read_after(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    authored: Option<&HashSet<Uuid>>,
    filter: &ContentFilter,
    after: Option<Uuid>,
    limit: u64,
) -> ServiceResult<Vec<content_item::Model>> {
    let Some(authored) = authored else {
        return candidates(conn, account_id, filter, after, limit).await;
    };
    if authored.is_empty() {
        return Ok(Vec::new());
    }
    let mut found = Vec::new();
    let mut cursor = after;
    // Other projects' items are dropped after the read: a small page would otherwise cost
    // many statements.
    let batch_size = limit.max(MIN_BATCH);
    loop {
        let batch = candidates(conn, account_id, filter, cursor, batch_size).await?;
        let exhausted = (batch.len() as u64) < batch_size;
        let Some(last) = batch.last() else {
            break;
        };
        cursor = Some(last.id);
        found.extend(
            batch
                .into_iter()
                .filter(|item| authored.contains(&item.project_id)),
        );
        if exhausted || found.len() as u64 >= limit {
            break;
        }
    }
    found.truncate(limit as usize);
    Ok(found)
}

async fn candidates(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    filter: &ContentFilter,
    after: Option<Uuid>,
    limit: u64,
) -> ServiceResult<Vec<content_item::Model>> {
    let mut query =
        content_item::Entity::find().filter(content_item::Column::AccountId.eq(account_id));
    if let Some(after) = after {
        query = query.filter(content_item::Column::Id.gt(after));
    }
    if !filter.types.is_empty() {
        query = query.filter(content_item::Column::ContentType.is_in(filter.types.iter().cloned()));
    }
    if filter.ids.is_empty() {
        let mut walk = crate::service::keyset::account_range(
            conn.get_database_backend(),
            content_item::Entity::find(),
            content_item::Column::AccountId,
            content_item::Column::Id,
            account_id,
            after,
        );
        if !filter.types.is_empty() {
            walk =
                walk.filter(content_item::Column::ContentType.is_in(filter.types.iter().cloned()));
        }
        return Ok(walk.limit(limit).all(conn).await?);
    }
    // A bounded list of primary keys: read them all, order and cut here.
    let mut rows = Vec::new();
    for chunk in bulk::in_chunks_beside(filter.ids.as_slice(), filter.types.len()) {
        rows.extend(
            query
                .clone()
                .filter(content_item::Column::Id.is_in(chunk.iter().copied()))
                .all(conn)
                .await?,
        );
    }
    rows.sort_unstable_by_key(|item| item.id);
    rows.truncate(limit as usize);
    Ok(rows)
}
