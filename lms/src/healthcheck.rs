//! `lms healthcheck URL`: one probe of a running service, for container health checks (the
//! image has no curl or grpc_health_probe). Exit status 0 when healthy, 1 otherwise, with one
//! line saying why.
//!
//! - `http://HOST:PORT/PATH`: a plain HTTP/1.1 `GET`; healthy on a 2xx status (the gateway's
//!   `/healthz` and `/readyz`, the metrics address's `/metrics`).
//! - `grpc://HOST:PORT`: the standard gRPC health check of `lms.v1.AdminService`; healthy when
//!   SERVING (the core turns it NOT_SERVING while its database is out of reach, and when
//!   stopping).

use std::time::Duration;

use anyhow::{Context as _, bail};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tonic_health::pb::{
    HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
};

/// How long a probe may take unless told otherwise, in milliseconds: well inside Docker's
/// default health-check timeout (30 s).
pub const DEFAULT_TIMEOUT_MS: u64 = 3_000;

/// The gRPC service whose health stands for the core's.
const CORE_SERVICE: &str = "lms.v1.AdminService";

/// Probes `url` once within `timeout`: `Ok` when healthy, otherwise why not.
pub async fn probe(url: &str, timeout: Duration) -> anyhow::Result<()> {
    let check = async {
        if let Some(rest) = url.strip_prefix("http://") {
            probe_http(rest).await
        } else if let Some(authority) = url.strip_prefix("grpc://") {
            probe_grpc(authority.trim_end_matches('/')).await
        } else {
            bail!("cannot check {url:?}: give http://HOST:PORT/PATH or grpc://HOST:PORT")
        }
    };
    tokio::time::timeout(timeout, check)
        .await
        .with_context(|| format!("{url}: no answer within {} ms", timeout.as_millis()))?
}

async fn probe_http(rest: &str) -> anyhow::Result<()> {
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let mut stream = tokio::net::TcpStream::connect(authority)
        .await
        .with_context(|| format!("cannot connect to {authority}"))?;
    let request = format!("GET /{path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    // The status line is all that is needed; a short read of the head is enough.
    let mut head = vec![0; 256];
    let mut read = 0;
    while read < head.len() && !head[..read].contains(&b'\n') {
        match stream.read(&mut head[read..]).await? {
            0 => break,
            n => read += n,
        }
    }
    let line = String::from_utf8_lossy(&head[..read]);
    let line = line.lines().next().unwrap_or_default();
    let status = line.split_whitespace().nth(1).unwrap_or_default();
    match status.parse::<u16>() {
        Ok(code) if (200..300).contains(&code) => Ok(()),
        Ok(_) => bail!("http://{rest} answered {line:?}"),
        Err(_) => bail!("http://{rest} answered no HTTP status: {line:?}"),
    }
}

async fn probe_grpc(authority: &str) -> anyhow::Result<()> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{authority}"))
        .with_context(|| format!("invalid address {authority:?}"))?
        .connect()
        .await
        .with_context(|| format!("cannot connect to {authority}"))?;
    let answer = HealthClient::new(channel)
        .check(HealthCheckRequest {
            service: CORE_SERVICE.to_owned(),
        })
        .await
        .with_context(|| format!("grpc://{authority}: the health check failed"))?;
    match answer.get_ref().status() {
        ServingStatus::Serving => Ok(()),
        status => bail!(
            "grpc://{authority}: {CORE_SERVICE} is {}",
            status.as_str_name()
        ),
    }
}
