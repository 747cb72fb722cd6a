//! The routes the gateway serves, as it serves them: every template it registers
//! (`lms_gateway::route_templates`) with each method it answers, found by asking it without
//! credentials (a method a route does not serve is 405; nothing is changed).

use reqwest::Method;

use crate::{Reply, TestStack};

/// The methods asked of every route (HEAD is GET's, answered by the same handler).
pub const METHODS: [Method; 5] = [
    Method::GET,
    Method::POST,
    Method::PUT,
    Method::PATCH,
    Method::DELETE,
];

/// A stand-in for every path parameter when asking a route which methods it serves.
pub const ANY_ID: &str = "0191a000-0000-7000-8000-0000000000ff";

/// Every `(method, template)` the gateway serves, in the order the routes are registered.
pub async fn served_routes(stack: &TestStack) -> Vec<(Method, &'static str)> {
    let mut routes = Vec::new();
    for template in lms_gateway::route_templates() {
        for method in methods_of(stack, template).await {
            routes.push((method, template));
        }
    }
    routes
}

/// The methods `template` serves: every method but those answered 405.
pub async fn methods_of(stack: &TestStack, template: &str) -> Vec<Method> {
    let path: String = template
        .split('/')
        .map(|segment| {
            if segment.starts_with('{') {
                ANY_ID
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/");
    let mut served = Vec::new();
    for method in METHODS {
        let reply = Reply::from(
            stack
                .http
                .request(method.clone(), format!("{}{path}", stack.base_url))
                .send()
                .await
                .expect("the gateway answers"),
        )
        .await;
        assert_ne!(reply.status, 404, "{method} {path} is not routed");
        if reply.status != 405 {
            served.push(method);
        }
    }
    assert!(!served.is_empty(), "{template} serves no method");
    served
}
