//! The OpenAPI document (`GET /openapi.json`): it describes exactly the routes and methods the
//! router serves, each with a summary, a description and its path parameters, and it is the
//! committed `docs/openapi.json` byte for byte.
//!
//! After an intended change of the document, write the new one with
//! `LMS_BLESS_OPENAPI=1 cargo test -p lms-tests --test e2e -- openapi::` and commit it.

use std::collections::BTreeSet;
use std::path::PathBuf;

use lms_tests::routes::served_routes;
use lms_tests::{Reply, TestStack, on_both_backends};
use serde_json::Value;

on_both_backends!(
    the_document_describes_exactly_the_routes_the_router_serves,
    the_committed_document_is_the_one_served_under_every_prefix_without_credentials,
);

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

async fn fetch(stack: &TestStack, path: &str) -> Reply {
    Reply::from(
        stack
            .http
            .get(format!("{}{path}", stack.base_url))
            .send()
            .await
            .expect("the gateway answers"),
    )
    .await
}

async fn document(stack: &TestStack) -> Value {
    let reply = fetch(stack, "/openapi.json").await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.headers["content-type"], "application/json",
        "{:?}",
        reply.headers
    );
    serde_json::from_str(&reply.body).expect("the document is JSON")
}

async fn the_document_describes_exactly_the_routes_the_router_serves(stack: &TestStack) {
    let document = document(stack).await;
    assert_eq!(document["openapi"], "3.1.0");
    let paths = document["paths"].as_object().expect("paths");
    let described: BTreeSet<(String, String)> = paths
        .iter()
        .flat_map(|(path, item)| {
            METHODS
                .iter()
                .filter(|method| item.get(**method).is_some())
                .map(|method| (method.to_ascii_uppercase(), path.clone()))
        })
        .collect();
    let served: BTreeSet<(String, String)> = served_routes(stack)
        .await
        .into_iter()
        .map(|(method, template)| (method.as_str().to_owned(), template.to_owned()))
        .collect();
    let undescribed: Vec<_> = served.difference(&described).collect();
    assert!(
        undescribed.is_empty(),
        "served but not described in the OpenAPI document (xml-gateway/src/openapi/): {undescribed:?}"
    );
    let unserved: Vec<_> = described.difference(&served).collect();
    assert!(
        unserved.is_empty(),
        "described in the OpenAPI document but not served: {unserved:?}"
    );

    for (method, path) in &described {
        let operation = &paths[path][method.to_ascii_lowercase()];
        let at = format!("{method} {path}");
        for key in ["summary", "description", "operationId"] {
            let text = operation[key].as_str().unwrap_or_default();
            assert!(!text.trim().is_empty(), "{at} has no {key}");
        }
        let declared: BTreeSet<&str> = operation["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|parameter| parameter["in"] == "path")
            .filter_map(|parameter| parameter["name"].as_str())
            .collect();
        let in_template: BTreeSet<&str> = path
            .split('/')
            .filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}'))
            .collect();
        assert_eq!(declared, in_template, "{at}: path parameters");
        let answers = operation["responses"].as_object().expect("responses");
        assert!(
            answers.keys().any(|status| status.starts_with('2')),
            "{at} describes no success"
        );
        let public = operation["security"] == serde_json::json!([]);
        if !public {
            assert!(answers.contains_key("401"), "{at} describes no 401");
        }
    }
}

fn committed_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/openapi.json")
}

async fn the_committed_document_is_the_one_served_under_every_prefix_without_credentials(
    stack: &TestStack,
) {
    let served = fetch(stack, "/openapi.json").await;
    assert_eq!(served.status, 200, "{}", served.body);
    for path in [
        "/openapi.json/",
        "/api/v2/openapi.json",
        "/index.php/api/v2/openapi.json",
    ] {
        let reply = fetch(stack, path).await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.body);
        assert!(reply.body == served.body, "{path} serves another document");
    }
    let wrong_method = Reply::from(
        stack
            .http
            .delete(format!("{}/openapi.json", stack.base_url))
            .send()
            .await
            .expect("the gateway answers"),
    )
    .await;
    assert_eq!(wrong_method.status, 405, "{}", wrong_method.body);

    let path = committed_path();
    if std::env::var_os("LMS_BLESS_OPENAPI").is_some() {
        std::fs::write(&path, &served.body).expect("docs/openapi.json is written");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == served.body,
        "docs/openapi.json differs from the document the gateway serves; after an intended \
         change run `LMS_BLESS_OPENAPI=1 cargo test -p lms-tests --test e2e -- openapi::` and \
         commit the file"
    );
}
