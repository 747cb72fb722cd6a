//! Credentials and request id from gRPC metadata, and the caller's rate.

use lms_runtime::Secret;
use tonic::{Request, Status, metadata::MetadataMap};

use super::CoreState;
use crate::{
    access::Caller,
    auth::Credentials,
    error::ServiceError,
    rate_limit::{BudgetSlot, CallerKey},
};
use lms_proto::metadata::{ACCOUNT_URL, EMAIL, PASSWORD, REQUEST_ID, TOKEN};

/// Authenticates the caller of `request`, then takes the request from its rate limits (after
/// authentication, so a refusal costs no more than a remembered login). The budget left goes
/// to the call's [`BudgetSlot`], for the answer's `ratelimit-*` metadata.
pub async fn caller<T>(state: &CoreState, request: &Request<T>) -> Result<Caller, Status> {
    let (caller, key) = authenticate(state, request).await?;
    let admitted = state.rate_limits.admit(key, caller.account_id);
    if let Some(slot) = request.extensions().get::<BudgetSlot>() {
        match &admitted {
            Ok(Some(budget)) => slot.record(*budget),
            Ok(None) => {}
            Err(limited) => slot.record(limited.budget),
        }
    }
    admitted.map_err(ServiceError::RateLimited)?;
    Ok(caller)
}

async fn authenticate<T>(
    state: &CoreState,
    request: &Request<T>,
) -> Result<(Caller, CallerKey), Status> {
    let metadata = request.metadata();
    let request_id = Some(text(metadata, REQUEST_ID)).filter(|id| !id.is_empty());
    // A call carrying a token is authenticated by it alone (contract section 12).
    if metadata.contains_key(TOKEN) {
        let token = Secret::new(text(metadata, TOKEN));
        let (caller, client_id) = state
            .auth
            .authenticate_token(token.expose(), request_id)
            .await?;
        return Ok((caller, CallerKey::ApiClient(client_id)));
    }
    let credentials = Credentials {
        account_url: text(metadata, ACCOUNT_URL),
        email: text(metadata, EMAIL),
        password: Secret::new(text(metadata, PASSWORD)),
    };
    let caller = state.auth.authenticate(&credentials, request_id).await?;
    let key = CallerKey::Login(caller.user_id);
    Ok((caller, key))
}

/// A missing or non-text entry reads as empty, which authentication refuses.
fn text(metadata: &MetadataMap, key: &str) -> String {
    metadata
        .get(key)
        .and_then(|value| value.to_str().ok())
        .map(|value| value.trim().to_owned())
        .unwrap_or_default()
}
