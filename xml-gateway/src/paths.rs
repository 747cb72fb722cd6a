//! The spellings of one route that real clients send (contract section 11): under `/`,
//! `/api/v2/` and `/index.php/api/v2/`, with or without a trailing `/`; the results lists
//! also under `/api/v1/` (results.md section 2: a real client calls them there). They are reduced to the
//! one path the router knows before routing, so every route, its 404 and 405, and the span
//! named by route are the same whichever spelling arrived.

use axum::extract::Request;
use axum::http::Uri;
use axum::http::uri::PathAndQuery;

/// Prefixes clients put before the interface's paths, longest first.
const PREFIXES: [&str; 2] = ["/index.php/api/v2", "/api/v2"];

/// The token endpoint's own version; PHP front controllers put `/index.php` before it too.
const TOKEN_PATH: &str = "/api/v3/token";

/// The paths that also answer under `/api/v1`.
const V1_PATHS: [&str; 2] = ["/learners/results", "/learners/modules/results"];

/// The path the router knows for `path`: without a client prefix and without one trailing `/`.
pub(crate) fn canonical_path(path: &str) -> &str {
    let path = path
        .strip_prefix("/index.php")
        .filter(|rest| rest.strip_suffix('/').unwrap_or(rest) == TOKEN_PATH)
        .unwrap_or(path);
    let path = path
        .strip_prefix("/api/v1")
        .filter(|rest| V1_PATHS.contains(&rest.strip_suffix('/').unwrap_or(rest)))
        .unwrap_or(path);
    let unprefixed = PREFIXES
        .iter()
        .find_map(|prefix| {
            path.strip_prefix(prefix)
                .filter(|rest| rest.is_empty() || rest.starts_with('/'))
        })
        .unwrap_or(path);
    match unprefixed.strip_suffix('/') {
        Some(trimmed) if !trimmed.is_empty() => trimmed,
        _ if unprefixed.is_empty() => "/",
        _ => unprefixed,
    }
}

/// Rewrites the request's URI to its canonical path, keeping the query.
pub(crate) async fn canonicalize(mut request: Request) -> Request {
    let path = request.uri().path();
    let canonical = canonical_path(path);
    if canonical.len() == path.len() {
        return request;
    }
    let rewritten = match request.uri().query() {
        Some(query) => format!("{canonical}?{query}"),
        None => canonical.to_owned(),
    };
    if let Ok(path_and_query) = PathAndQuery::try_from(rewritten) {
        let mut parts = request.uri().clone().into_parts();
        parts.path_and_query = Some(path_and_query);
        if let Ok(uri) = Uri::from_parts(parts) {
            *request.uri_mut() = uri;
        }
    }
    request
}

#[cfg(test)]
mod tests {
    use super::canonical_path;

    #[test]
    fn prefixes_and_one_trailing_slash_are_removed() {
        for path in [
            "/group/g-1",
            "/group/g-1/",
            "/api/v2/group/g-1",
            "/api/v2/group/g-1/",
            "/index.php/api/v2/group/g-1",
            "/index.php/api/v2/group/g-1/",
        ] {
            assert_eq!(canonical_path(path), "/group/g-1", "{path}");
        }
    }

    #[test]
    fn other_paths_stay_as_they_are() {
        assert_eq!(canonical_path("/"), "/");
        assert_eq!(canonical_path("/api/v2"), "/");
        assert_eq!(canonical_path("/api/v2/"), "/");
        assert_eq!(canonical_path("/api/v20/group"), "/api/v20/group");
        assert_eq!(canonical_path("/api/v3/token"), "/api/v3/token");
        assert_eq!(canonical_path("/index.php/api/v3/token/"), "/api/v3/token");
        assert_eq!(
            canonical_path("/index.php/api/v3/other"),
            "/index.php/api/v3/other"
        );
        assert_eq!(canonical_path("/group//"), "/group/");
        assert_eq!(canonical_path("/index.php/group"), "/index.php/group");
    }

    #[test]
    fn the_results_lists_also_answer_under_api_v1_and_nothing_else_does() {
        for (path, canonical) in [
            ("/api/v1/learners/results", "/learners/results"),
            ("/api/v1/learners/results/", "/learners/results"),
            (
                "/api/v1/learners/modules/results",
                "/learners/modules/results",
            ),
            (
                "/api/v2/learners/modules/results/",
                "/learners/modules/results",
            ),
            ("/api/v1/group/g-1", "/api/v1/group/g-1"),
            ("/api/v1/learners/results/x", "/api/v1/learners/results/x"),
            (
                "/index.php/api/v1/learners/results",
                "/index.php/api/v1/learners/results",
            ),
            ("/api/v1", "/api/v1"),
        ] {
            assert_eq!(canonical_path(path), canonical, "{path}");
        }
    }
}
