//! The user reads: each handler translates one HTTP request into `GetUser` or `ListUsers`.

use anyhow::anyhow;
use axum::extract::State;
use lms_proto::v1::{GetUserRequest, ListUsersRequest};

use super::Version;
use super::parse::{ListQuery, PageBody, PageQuery};
use super::render::{NumberedProfiles, OneProfile, ProfileList, ProfilePage};
use crate::body::Body;
use crate::core_client::{Caller, CoreClient};
use crate::error::GatewayError;
use crate::representation::Answer;
use crate::routes::{NoQuery, PathId};

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

async fn list(
    core: CoreClient,
    caller: Caller,
    request: ListUsersRequest,
    version: Version,
) -> Result<Answer, GatewayError> {
    let paged = request.page.is_some();
    let answer = core
        .unary(&caller, request, |mut admin, request| async move {
            admin.list_users(request).await
        })
        .await?;
    Ok(if paged {
        Answer::ok(ProfilePage {
            profiles: answer.users,
            version,
            next_page_token: answer.next_page_token,
        })
    } else {
        Answer::ok(ProfileList(answer.users, version))
    })
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

/// Every matching user, unpaged: profiles directly under `<response>`, or a JSON array.
#[tracing::instrument(skip_all)]
pub(crate) async fn list_users(
    State(core): State<CoreClient>,
    caller: Caller,
    ListQuery(filters): ListQuery,
) -> Result<Answer, GatewayError> {
    list(core, caller, filters.request(None), Version::V1).await
}

#[tracing::instrument(skip_all)]
pub(crate) async fn list_users_v2(
    State(core): State<CoreClient>,
    caller: Caller,
    ListQuery(filters): ListQuery,
) -> Result<Answer, GatewayError> {
    list(core, caller, filters.request(None), Version::V2).await
}

/// One keyset page: `<userProfiles>…</userProfiles><nextPageToken/>` or
/// `{"userProfiles":[…],"nextPageToken":"…"}`.
#[tracing::instrument(skip_all)]
pub(crate) async fn page_users(
    State(core): State<CoreClient>,
    caller: Caller,
    PageQuery(filters, page): PageQuery,
) -> Result<Answer, GatewayError> {
    list(core, caller, filters.request(Some(page)), Version::V1).await
}

#[tracing::instrument(skip_all)]
pub(crate) async fn page_users_v2(
    State(core): State<CoreClient>,
    caller: Caller,
    PageQuery(filters, page): PageQuery,
) -> Result<Answer, GatewayError> {
    list(core, caller, filters.request(Some(page)), Version::V2).await
}

/// `POST /users`: the page asked for in the body.
#[tracing::instrument(skip_all)]
pub(crate) async fn post_page_users(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(body): Body<PageBody>,
) -> Result<Answer, GatewayError> {
    list(core, caller, body.into_request()?, Version::V1).await
}

#[tracing::instrument(skip_all)]
pub(crate) async fn post_page_users_v2(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(body): Body<PageBody>,
) -> Result<Answer, GatewayError> {
    list(core, caller, body.into_request()?, Version::V2).await
}

/// `POST /user/list`: page-number paging, `{"pageNumber","totalUsersNumber","userProfiles"}`.
#[tracing::instrument(skip_all)]
pub(crate) async fn numbered_users(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(body): Body<PageBody>,
) -> Result<Answer, GatewayError> {
    let (page_number, request) = body.into_numbered()?;
    let answer = core
        .unary(&caller, request, |mut admin, request| async move {
            admin.list_users(request).await
        })
        .await?;
    Ok(Answer::ok(NumberedProfiles {
        page_number,
        total: answer.total,
        profiles: answer.users,
    }))
}
