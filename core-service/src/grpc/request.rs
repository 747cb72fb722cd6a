//! Credentials and request id from gRPC metadata.

use lms_runtime::Secret;
use tonic::{Request, Status, metadata::MetadataMap};

use super::CoreState;
use crate::{access::Caller, auth::Credentials};
use lms_proto::metadata::{ACCOUNT_URL, EMAIL, PASSWORD, REQUEST_ID, TOKEN};

/// Authenticates the caller of `request`.
pub async fn caller<T>(state: &CoreState, request: &Request<T>) -> Result<Caller, Status> {
    let metadata = request.metadata();
    let request_id = Some(text(metadata, REQUEST_ID)).filter(|id| !id.is_empty());
    // A call carrying a token is authenticated by it alone (contract section 12).
    if metadata.contains_key(TOKEN) {
        let token = Secret::new(text(metadata, TOKEN));
        return Ok(state
            .auth
            .authenticate_token(token.expose(), request_id)
            .await?);
    }
    let credentials = Credentials {
        account_url: text(metadata, ACCOUNT_URL),
        email: text(metadata, EMAIL),
        password: Secret::new(text(metadata, PASSWORD)),
    };
    Ok(state.auth.authenticate(&credentials, request_id).await?)
}

/// A missing or non-text entry reads as empty, which authentication refuses.
fn text(metadata: &MetadataMap, key: &str) -> String {
    metadata
        .get(key)
        .and_then(|value| value.to_str().ok())
        .map(|value| value.trim().to_owned())
        .unwrap_or_default()
}
