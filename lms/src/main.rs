//! `lms`: the all-in-one command line for a single machine (contract section 1).
//!
//! - `lms up`: the core and the gateway in one process, connected over real gRPC.
//! - `lms import FILE`: loads an import document, all or nothing.
//! - `lms migrate`: applies pending migrations.

mod demo;

use std::{net::SocketAddr, path::PathBuf, time::Duration};

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use lms_core::{
    app::App as Core,
    auth::{PasswordHasher, PasswordPolicy},
    db::{self, DEFAULT_DATABASE_URL},
    settings::CoreSettings,
};
use lms_gateway::{App as Gateway, GatewaySettings};
use lms_runtime::{Telemetry, shutdown_signal};
use tokio::sync::watch;

/// mimalloc: argon2id's 19 MiB blocks are reused instead of mapped and zeroed anew each
/// verification, and the many small allocations of a request cost less (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "lms", version, about = "Learning management service")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Start the core and the gateway (migrating first).
    Up {
        #[command(flatten)]
        core: CoreSettings,
        /// Address the XML interface listens on (port 0 picks a free port).
        #[arg(long, env = "LMS_HTTP_ADDR", default_value = "127.0.0.1:8080")]
        http_addr: SocketAddr,
        /// Import the built-in demo account when the database has no accounts.
        #[arg(long)]
        demo: bool,
    },
    /// Load an import document (.json, .yaml or .yml) in one transaction.
    Import {
        #[arg(long, env = "DATABASE_URL", default_value = DEFAULT_DATABASE_URL, hide_env_values = true)]
        database_url: String,
        file: PathBuf,
    },
    /// Apply pending database migrations.
    Migrate {
        #[arg(long, env = "DATABASE_URL", default_value = DEFAULT_DATABASE_URL, hide_env_values = true)]
        database_url: String,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let _telemetry = Telemetry::init("lms")?;
    match cli.command {
        Command::Up {
            core,
            http_addr,
            demo,
        } => up(core, http_addr, demo).await,
        Command::Import { database_url, file } => {
            let db = db::open(&database_url).await?;
            let hasher = PasswordHasher::new(PasswordPolicy::default())?;
            let summary = lms_core::import::import_file(&db, &file, &hasher)
                .await
                .with_context(|| {
                    format!("import of {} refused; nothing was changed", file.display())
                })?;
            println!("Imported {}: {summary}", file.display());
            Ok(())
        }
        Command::Migrate { database_url } => {
            db::open(&database_url).await?;
            println!(
                "Database at {} is up to date.",
                db::redact_url(&database_url)
            );
            Ok(())
        }
    }
}

async fn up(settings: CoreSettings, http_addr: SocketAddr, demo: bool) -> anyhow::Result<()> {
    let core = Core::build(&settings).await?;
    let state = core.state();
    let demo_account = if demo {
        demo::ensure_demo(&state.db, &PasswordHasher::new(settings.password_policy())?).await?
    } else {
        None
    };
    let grpc_addr = core.grpc_addr();
    let gateway = Gateway::build(GatewaySettings {
        http_addr,
        core_url: format!("http://{grpc_addr}"),
        core_timeout_ms: 10_000,
    })
    .await?;
    let http_addr = gateway.local_addr();
    println!("lms is up.");
    println!("  XML interface: http://{http_addr}");
    println!("  gRPC (lms.v1): {grpc_addr}");
    println!(
        "  database:      {}",
        db::redact_url(&settings.database_url)
    );
    if let Some(account) = demo_account {
        demo::print_instructions(&account, http_addr);
    }
    println!("Press Ctrl-C to stop.");

    let (stop, stopped) = watch::channel(false);
    let wait = |mut rx: watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|stop| *stop).await;
    };
    let core_task = tokio::spawn(core.run_until(wait(stopped.clone())));
    let gateway_task = tokio::spawn(gateway.run_until(wait(stopped)));
    shutdown_signal().await;
    let _ = stop.send(true);
    // The gateway drains first; the core stops after its last call.
    let results = tokio::time::timeout(Duration::from_secs(30), async {
        (gateway_task.await, core_task.await)
    })
    .await
    .context("services did not stop within 30 s")?;
    results.0??;
    results.1??;
    println!("lms stopped.");
    Ok(())
}
