//! `lms-gateway`: parse settings, start telemetry, bind, serve until Ctrl-C or SIGTERM.

use clap::Parser;
use lms_gateway::{App, GatewaySettings, init_telemetry};

/// mimalloc: argon2id's 19 MiB blocks are reused instead of mapped and zeroed anew each
/// verification, and the many small allocations of a request cost less (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Debug, Parser)]
#[command(
    name = "lms-gateway",
    version,
    about = "XML-over-HTTP gateway of the LMS"
)]
struct Cli {
    #[command(flatten)]
    settings: GatewaySettings,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let _telemetry = init_telemetry("lms-gateway")?;
    let app = App::build(cli.settings).await?;
    println!("lms-gateway listening on http://{}", app.local_addr());
    app.run_until(shutdown_signal()).await
}

/// Completes on Ctrl-C or, on Unix, SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::error!(%error, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::error!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
    tracing::info!("shutdown requested");
}
