//! `lms-core`: the gRPC core on its own.

use clap::Parser;
use lms_core::{app::App, settings::CoreSettings, telemetry};

#[derive(Parser)]
#[command(name = "lms-core", version, about = "Learning management core (gRPC)")]
struct Cli {
    #[command(flatten)]
    settings: CoreSettings,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let (subscriber, _guard) = telemetry::build_subscriber("lms-core")?;
    telemetry::install(subscriber)?;
    let app = App::build(&cli.settings).await?;
    app.run_until(lms_core::app::shutdown_signal()).await
}
