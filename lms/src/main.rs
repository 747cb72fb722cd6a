//! `lms`: the all-in-one command line for a single machine (contract section 1).
//!
//! - `lms up`: the core and the gateway in one serving process, connected over real gRPC,
//!   watched by `lms up` itself (`lms_runtime::supervisor`).
//! - `lms import FILE`: loads an import document, all or nothing.
//! - `lms migrate`: applies pending migrations.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use lms::{
    Stack, StackSettings, demo, healthcheck,
    progress::{self, ImportProgressView},
    supervisor,
};
use lms_core::{
    auth::{PasswordHasher, PasswordPolicy},
    db::{self, CreateDatabase, DEFAULT_DATABASE_URL},
};
use lms_runtime::{LogSettings, Report, Telemetry, TracedService, shutdown_signal};

/// mimalloc: argon2id's 19 MiB blocks are reused instead of mapped and zeroed anew each
/// verification, and the many small allocations of a request cost less (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "lms",
    version,
    about = "The LMS administration service on one machine: run it, load data into it, or \
             migrate its database",
    long_about = None,
    after_help = "Start with `lms up --demo`: it prints a login and a curl command to try. \
                  `lms help COMMAND` explains each command."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    log: LogSettings,
}

/// Under `lms up` the two halves report as two services, as they would running apart.
const UP_SERVICES: [TracedService; 2] = [
    TracedService {
        name: "lms-gateway",
        targets: &["lms_gateway"],
    },
    TracedService::whole("lms-core"),
];

// Parsed once per process, so the size of its largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Start the core and the gateway (migrating first).
    Up {
        #[command(flatten)]
        settings: StackSettings,
        /// Import the built-in demo account when the database has no accounts (creates the
        /// SQLite file when it is missing, like --create-database).
        #[arg(long)]
        demo: bool,
    },
    /// Load an import document (.json, .yaml or .yml) in one transaction.
    Import {
        /// Database to load into: `sqlite://PATH` or `postgres://USER:PASSWORD@HOST/DB`.
        #[arg(long, env = "DATABASE_URL", default_value = DEFAULT_DATABASE_URL, hide_env_values = true)]
        database_url: String,
        /// Create the SQLite file when it is missing (otherwise only on a first start).
        #[arg(long, env = "LMS_CREATE_DATABASE")]
        create_database: bool,
        /// The import document: accounts with their users, departments, groups and more.
        file: PathBuf,
    },
    /// Check once that a running gateway or core is healthy (exit status 0) or not (1), for
    /// container health checks.
    #[command(
        after_help = "Examples: lms healthcheck http://127.0.0.1:8080/readyz (the gateway), \
                      lms healthcheck grpc://127.0.0.1:50051 (the core's gRPC health)"
    )]
    Healthcheck {
        /// `http://HOST:PORT/PATH` (healthy on a 2xx answer) or `grpc://HOST:PORT` (healthy
        /// when lms.v1.AdminService is SERVING).
        url: String,
        /// How long to wait for the answer, in milliseconds.
        #[arg(long, default_value_t = healthcheck::DEFAULT_TIMEOUT_MS)]
        timeout_ms: u64,
    },
    /// Apply pending database migrations.
    Migrate {
        /// Database to migrate: `sqlite://PATH` or `postgres://USER:PASSWORD@HOST/DB`.
        #[arg(long, env = "DATABASE_URL", default_value = DEFAULT_DATABASE_URL, hide_env_values = true)]
        database_url: String,
        /// Create the SQLite file when it is missing (otherwise only on a first start).
        #[arg(long, env = "LMS_CREATE_DATABASE")]
        create_database: bool,
    },
}

#[tokio::main]
async fn main() -> Result<(), Report> {
    let cli = Cli::parse();
    // A probe prints one line at most and must not start telemetry (or its exporter).
    if let Command::Healthcheck { url, timeout_ms } = &cli.command {
        healthcheck::probe(url, Duration::from_millis(*timeout_ms)).await?;
        return Ok(());
    }
    if let Command::Up { settings, .. } = &cli.command
        && !supervisor::is_serving_process()?
    {
        let database_file = lms_core::db::sqlite_file::sqlite_path(&settings.core.database_url);
        let code = supervisor::supervise_logged("lms up", "lms", cli.log.log_format, database_file)
            .await?;
        std::process::exit(code);
    }
    let services: &[TracedService] = match cli.command {
        Command::Up { .. } => &UP_SERVICES,
        _ => &[TracedService::whole("lms")],
    };
    let _telemetry = Telemetry::init(cli.log.log_format, services)?;
    let outcome: anyhow::Result<()> = match cli.command {
        Command::Up { settings, demo } => up(settings, demo).await,
        Command::Import {
            database_url,
            create_database,
            file,
        } => import(&database_url, create_database, &file).await,
        Command::Healthcheck { .. } => unreachable!("probed before telemetry starts"),
        Command::Migrate {
            database_url,
            create_database,
        } => {
            db::open(&database_url, CreateDatabase::when(create_database)).await?;
            println!(
                "Database at {} is up to date.",
                db::redact_url(&database_url)
            );
            Ok(())
        }
    };
    Ok(outcome?)
}

async fn import(database_url: &str, create_database: bool, file: &Path) -> anyhow::Result<()> {
    let began = Instant::now();
    // A document that cannot be read refuses the import before any database is created or
    // migrated.
    let unreadable = || {
        format!(
            "cannot read {}; nothing was created or changed",
            file.display()
        )
    };
    let opened = std::fs::File::open(file).with_context(unreadable)?;
    // Opening a folder succeeds on Unix; reading it would fail only after the migration.
    anyhow::ensure!(
        !opened.metadata().with_context(unreadable)?.is_dir(),
        "{} is a folder, not an import document; nothing was created or changed",
        file.display()
    );
    let db = db::open(database_url, CreateDatabase::when(create_database)).await?;
    let hasher = PasswordHasher::new(PasswordPolicy::default())?;
    let view = ImportProgressView::for_stdout();
    let show = |progress| view.update(progress);
    let result = lms_core::import::import_file_with_progress(&db, file, &hasher, Some(&show)).await;
    let rows = view.finish(result.is_ok());
    // Closing the last connection copies SQLite's log into the database file and removes
    // it, so the file holds the import on its own (copied elsewhere without its `-wal`,
    // it would otherwise hold nothing of it). Part of the command's time.
    if let Err(error) = db.close().await {
        tracing::warn!(%error, "closing the database after the import");
    }
    let summary = result
        .with_context(|| format!("import of {} refused; nothing was changed", file.display()))?;
    println!(
        "{}",
        progress::summary_line(file, &summary, began.elapsed(), rows)
    );
    Ok(())
}

async fn up(mut settings: StackSettings, with_demo: bool) -> anyhow::Result<()> {
    // Asking for the demo is asking for a database to put it in.
    settings.core.create_database |= with_demo;
    let stack = Stack::build(&settings).await?;
    let demo_account = if with_demo {
        let hasher = PasswordHasher::new(settings.core.password_policy())?;
        // One start-up trace for the demo's check and import.
        let span = tracing::info_span!("import_demo");
        tracing::Instrument::instrument(demo::ensure_demo(&stack.state().db, &hasher), span).await?
    } else {
        None
    };
    let http_addr = stack.http_addr();
    println!("lms is up.");
    println!("  XML interface: http://{http_addr}");
    println!("  gRPC (lms.v1): {}", stack.grpc_addr());
    if let Some(metrics) = stack.metrics_addr() {
        println!("  metrics:       http://{metrics}/metrics");
    }
    println!(
        "  database:      {}",
        db::redact_url(&settings.core.database_url)
    );
    if let Some(account) = demo_account {
        demo::print_instructions(&account, http_addr);
    }
    println!("Press Ctrl-C to stop.");
    stack.run_until(shutdown_signal()).await?;
    println!("lms stopped.");
    Ok(())
}
