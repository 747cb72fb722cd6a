//! `lms-core`: the gRPC core on its own, serving from a child process of its own that it
//! starts again when a signal kills it, as `lms up` does (`lms_runtime::supervisor`).

use clap::Parser;
use lms_core::{app::App, settings::CoreSettings};
use lms_runtime::{LogSettings, Report, Telemetry, TracedService, shutdown_signal, supervisor};

/// mimalloc: argon2id's 19 MiB blocks are reused instead of mapped and zeroed anew each
/// verification, and the many small allocations of a request cost less (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "lms-core",
    version,
    about = "The LMS core: the lms.v1 gRPC API over the database (SQLite or PostgreSQL), with \
             authentication and permissions; migrates the database at start",
    // Without it the settings struct's doc comment would become the long help.
    long_about = None,
    after_help = "Every option can also be set by the environment variable shown with it. \
                  Example: lms-core --database-url postgres://lms:PASSWORD@db/lms \
                  --grpc-addr 0.0.0.0:50051"
)]
struct Cli {
    #[command(flatten)]
    settings: CoreSettings,
    #[command(flatten)]
    log: LogSettings,
}

#[tokio::main]
async fn main() -> Result<(), Report> {
    let cli = Cli::parse();
    if !supervisor::is_serving_process()? {
        let database_file = lms_core::db::sqlite_file::sqlite_path(&cli.settings.database_url);
        let code =
            supervisor::supervise_logged("lms-core", "lms-core", cli.log.log_format, database_file)
                .await?;
        std::process::exit(code);
    }
    let _telemetry = Telemetry::init(cli.log.log_format, &[TracedService::whole("lms-core")])?;
    let app = App::build(&cli.settings).await?;
    app.run_until(shutdown_signal()).await?;
    Ok(())
}
