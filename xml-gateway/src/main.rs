//! `lms-gateway`: parse settings, start telemetry, bind, serve until Ctrl-C or SIGTERM.

use clap::Parser;
use lms_gateway::{App, GatewaySettings};
use lms_runtime::{LogSettings, Telemetry, TracedService, shutdown_signal};

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
    #[command(flatten)]
    log: LogSettings,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let _telemetry = Telemetry::init(cli.log.log_format, &[TracedService::whole("lms-gateway")])?;
    let app = App::build(cli.settings).await?;
    println!("lms-gateway listening on http://{}", app.local_addr());
    app.run_until(shutdown_signal()).await
}
