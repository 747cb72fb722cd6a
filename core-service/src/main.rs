//! `lms-core`: the gRPC core on its own.

use clap::Parser;
use lms_core::{app::App, settings::CoreSettings};
use lms_runtime::{LogSettings, Telemetry, TracedService, shutdown_signal};

/// mimalloc: argon2id's 19 MiB blocks are reused instead of mapped and zeroed anew each
/// verification, and the many small allocations of a request cost less (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "lms-core", version, about = "Learning management core (gRPC)")]
struct Cli {
    #[command(flatten)]
    settings: CoreSettings,
    #[command(flatten)]
    log: LogSettings,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let _telemetry = Telemetry::init(cli.log.log_format, &[TracedService::whole("lms-core")])?;
    let app = App::build(&cli.settings).await?;
    app.run_until(shutdown_signal()).await
}
