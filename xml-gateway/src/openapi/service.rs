//! Outside the interface: the probes (`/healthz`, `/readyz`) and this document.

use super::Resource;
use super::node::{Node, object};
use super::operation::{Media, Operation};

const TAG: &str = "Service";

fn plain(description: &str) -> Node {
    object! { "type" => "string", "description" => description }
}

pub(crate) fn resource() -> Resource {
    let operations = vec![
        Operation::get("/healthz", TAG, "healthz")
            .public()
            .describe(
                "Liveness",
                "200 while the process serves HTTP. Outside authentication and the client prefixes.",
            )
            .answer(200, "Serving.", vec![Media::other("text/plain", plain("`ok`"))]),
        Operation::get("/readyz", TAG, "readyz")
            .public()
            .describe(
                "Readiness",
                "200 when the core answers and reports its database up; 503 with `Retry-After` otherwise. Outside authentication and the client prefixes.",
            )
            .answer(200, "Ready.", vec![Media::other("text/plain", plain("`ready`"))])
            .raw_answer(
                503,
                object! {
                    "description" => "Not ready: send no traffic here for now.",
                    "headers" => object! { "Retry-After" => object! { "$ref" => "#/components/headers/Retry-After" } },
                    "content" => object! { "text/plain" => object! { "schema" => plain("`not ready: ` and the reason.") } },
                },
            ),
        Operation::get("/openapi.json", TAG, "openapi")
            .public()
            .describe(
                "This document",
                "The OpenAPI 3.1 document of the whole HTTP interface, without authentication; also under the client prefixes. The same text is committed as `docs/openapi.json`.",
            )
            .answer(
                200,
                "The document.",
                vec![Media::json(object! { "type" => "object" })],
            ),
    ];
    Resource {
        operations,
        schemas: Vec::new(),
    }
}
