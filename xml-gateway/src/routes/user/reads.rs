//! The user reads besides the lists: `GET /user/{userId}` and `/v2` (`GetUser`), and
//! `POST /user/list`, the numbered pages (`ListUsers` with a page number).

use anyhow::anyhow;
use axum::extract::State;
use lms_proto::v1::{GetUserRequest, NumberedPage, PageRequest};

use super::Version;
use super::list::{Users, V1};
use super::render::OneProfile;
use crate::body::Body;
use crate::core_client::{Caller, CoreClient};
use crate::error::GatewayError;
use crate::json::{FromJson, JsonError, JsonObject};
use crate::listing::{ListBody, Page, Paged, whole_number};
use crate::representation::Answer;
use crate::routes::{NoQuery, PathId};
use crate::xml::{Element, FromXml, XmlError};

async fn one(
    core: CoreClient,
    caller: Caller,
    user_id: String,
    version: Version,
) -> Result<Answer, GatewayError> {
    let answer = core
        .unary(
            &caller,
            GetUserRequest { user_id },
            |mut admin, request| async move { admin.get_user(request).await },
        )
        .await?;
    let user = answer
        .user
        .ok_or_else(|| GatewayError::Internal(anyhow!("GetUser answered without a user")))?;
    Ok(Answer::ok(OneProfile(user, version)))
}

#[tracing::instrument(skip_all, fields(user_id = %user_id))]
pub(crate) async fn get_user(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    PathId(user_id): PathId,
) -> Result<Answer, GatewayError> {
    one(core, caller, user_id, Version::V1).await
}

#[tracing::instrument(skip_all, fields(user_id = %user_id))]
pub(crate) async fn get_user_v2(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    PathId(user_id): PathId,
) -> Result<Answer, GatewayError> {
    one(core, caller, user_id, Version::V2).await
}

/// The body of `POST /user/list`: the filters of the user list, `page` (1-based, default 1)
/// and `pageSize`.
pub(crate) struct NumberedQuery {
    list: ListBody<Users<V1>>,
    page: Option<String>,
}

impl FromXml for NumberedQuery {
    const ROOT: &'static str = "request";

    fn from_root(root: &Element) -> Result<Self, XmlError> {
        Ok(Self {
            list: ListBody::from_root(root)?,
            page: root.optional_text("page")?,
        })
    }
}

impl FromJson for NumberedQuery {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        Ok(Self {
            list: ListBody::from_object(object)?,
            page: object.optional_text("page")?,
        })
    }
}

/// `POST /user/list`: page-number paging, `pageNumber`, `totalUsersNumber` and the page's
/// `userProfiles` (always an array in JSON, which clients tolerate either way).
#[tracing::instrument(skip_all)]
pub(crate) async fn numbered_users(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(query): Body<NumberedQuery>,
) -> Result<Answer, GatewayError> {
    let number = whole_number("page", query.page.as_deref())?.unwrap_or(1);
    let size = whole_number("pageSize", query.list.page_size.as_deref())?;
    let mut request = Users::<V1>::list_request(query.list.filters, PageRequest::default())?;
    request.page = None;
    request.numbered_page = Some(NumberedPage { number, size });
    let answer = core.unary(&caller, request, Users::<V1>::list).await?;
    let total = answer.total;
    let mut page = Page::<Users<V1>>::of(answer);
    page.counts = vec![("pageNumber", number), ("totalUsersNumber", total)];
    // Numbered pages are walked by number, never by token.
    page.next_page_token.clear();
    Ok(Answer::ok(page))
}
