//! The handlers every list shares: the whole list asked in the query or in a body, one page
//! asked in the query or in a body. Each is one RPC of the listing.

use axum::extract::{RawQuery, State};
use lms_proto::v1::PageRequest;
use tracing::Span;

use super::body::ListBody;
use super::page::Page;
use super::query::{QueryShape, parse_query};
use super::stream::WholeList;
use super::{Filters, Paged, Streamed, Whole};
use crate::body::Body;
use crate::core_client::{Caller, CoreClient};
use crate::error::GatewayError;
use crate::representation::Answer;
use crate::routes::{NoQuery, permission_first};

/// Every row the caller may see that matches the query's filters, written as it arrives.
#[tracing::instrument(name = "whole_list", skip_all, fields(list = L::NAME, filter = tracing::field::Empty))]
pub(crate) async fn whole<L: Whole>(
    State(core): State<CoreClient>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer, GatewayError> {
    let query = query.as_deref().unwrap_or_default();
    let (filters, _) = parse_query(query, QueryShape::of::<L>(false))?;
    Span::current().record("filter", filters.values());
    stream::<L>(core, caller, L::stream_request(filters)).await
}

/// The same, the filters given in a body (for lists longer than a URI holds).
#[tracing::instrument(name = "whole_list", skip_all, fields(list = L::NAME, filter = tracing::field::Empty))]
pub(crate) async fn whole_by_post<L: Whole>(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(body): Body<ListBody<L>>,
) -> Result<Answer, GatewayError> {
    Span::current().record("filter", body.filters.values());
    stream::<L>(core, caller, L::stream_request(body.filters)).await
}

/// One page: the rows inside the list's element, then `nextPageToken` while more follow. A
/// query the gateway refuses is still answered 403 for a caller who may not read the list.
#[tracing::instrument(name = "list_page", skip_all, fields(list = L::NAME))]
pub(crate) async fn page<L: Paged>(
    State(core): State<CoreClient>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer, GatewayError> {
    let query = query.as_deref().unwrap_or_default();
    let request = match parse_query(query, QueryShape::of::<L>(true))
        .and_then(|(filters, page)| L::list_request(filters, page))
    {
        Ok(request) => request,
        Err(refusal) => {
            // The smallest first page, unfiltered: refused only for want of the right.
            let probe = L::list_request(
                Filters::none::<L>(),
                PageRequest {
                    page_size: Some(1),
                    page_token: String::new(),
                },
            );
            return Err(match probe {
                Ok(probe) => permission_first(refusal, core.unary(&caller, probe, L::list)).await,
                Err(_) => refusal,
            });
        }
    };
    let answer = core.unary(&caller, request, L::list).await?;
    Ok(Answer::ok(Page::<L>::of(answer)))
}

/// The same page asked in a body, for filters longer than a URI holds.
#[tracing::instrument(name = "list_page", skip_all, fields(list = L::NAME))]
pub(crate) async fn page_by_post<L: Paged>(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(body): Body<ListBody<L>>,
) -> Result<Answer, GatewayError> {
    let (filters, page) = body.into_page()?;
    let answer = core
        .unary(&caller, L::list_request(filters, page)?, L::list)
        .await?;
    Ok(Answer::ok(Page::<L>::of(answer)))
}

/// Opens the list's stream with `message` and waits for its first message (or error) before
/// answering, so that a refusal is still an error answer with its status; the body then
/// follows the stream. No `grpc-timeout`: a long list may take longer than one deadline to
/// stream, so the gateway bounds the wait for the first message and for each next one
/// instead.
pub(crate) async fn stream<L: Streamed>(
    core: CoreClient,
    caller: Caller,
    message: L::StreamRequest,
) -> Result<Answer, GatewayError> {
    let opened = tokio::time::timeout(
        core.timeout(),
        core.on_a_replica(|admin| {
            let request = caller.request(message.clone(), None);
            async move {
                let mut stream = L::open(admin, request).await?.into_inner();
                let first = stream.message().await?;
                Ok::<_, tonic::Status>((stream, first))
            }
        }),
    )
    .await;
    let (stream, first) = match opened {
        Ok(result) => core.settle(result)?,
        Err(_elapsed) => return Err(GatewayError::CoreTimeout),
    };
    Ok(Answer::ok(WholeList::<L> {
        stream,
        first,
        idle_timeout: core.timeout(),
        outage: core.outage(),
        span: Span::current(),
    }))
}
