//! `lms-gateway`: parse settings, start telemetry, bind, serve until Ctrl-C or SIGTERM.

use clap::Parser;
use lms_gateway::{App, GatewaySettings};
use lms_runtime::{LogSettings, Report, Telemetry, TracedService, shutdown_signal};

/// mimalloc: argon2id's 19 MiB blocks are reused instead of mapped and zeroed anew each
/// verification, and the many small allocations of a request cost less (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Debug, Parser)]
#[command(
    name = "lms-gateway",
    version,
    about = "The LMS's XML (and JSON) over HTTP interface: authenticates each request by its \
             headers and answers it through lms-core's gRPC API",
    // Without it the settings struct's doc comment would become the long help.
    long_about = None,
    after_help = "Every option can also be set by the environment variable shown with it. \
                  Example: lms-gateway --http-addr 0.0.0.0:8080 --core-url http://core:50051"
)]
struct Cli {
    #[command(flatten)]
    settings: GatewaySettings,
    #[command(flatten)]
    log: LogSettings,
}

#[tokio::main]
async fn main() -> Result<(), Report> {
    let cli = Cli::parse();
    let _telemetry = Telemetry::init(cli.log.log_format, &[TracedService::whole("lms-gateway")])?;
    let app = App::build(cli.settings).await?;
    println!("lms-gateway listening on http://{}", app.local_addr());
    app.run_until(shutdown_signal()).await?;
    Ok(())
}
