//! Writes the import document of a large generated account (see `lms_tests::large_world`).
//!
//! `cargo run --release -p lms-tests --bin generate-world -- --users 100000 > world.json`,
//! then `lms import world.json`. Every login's password is `large-world-password`.
//! Identifiers are UUID v1 as iSpring issues them unless `--ids random` or `--ids sequential`.

use std::io::{BufWriter, Write as _};

use clap::Parser;
use lms_core::auth::{PasswordHasher, PasswordPolicy};
use lms_tests::large_world::{IdShape, RoleLogin, WORLD_PASSWORD, WorldShape, write_world};

#[derive(Debug, Parser)]
#[command(about = "Writes the import document of a large generated account to standard output")]
struct Args {
    /// Users in the account (the first six are the role logins).
    #[arg(long, default_value_t = 100_000)]
    users: usize,
    /// Departments besides the root (default: one per 100 users).
    #[arg(long)]
    departments: Option<usize>,
    #[arg(long, default_value_t = 10)]
    enrollments_per_user: usize,
    /// Users given a plain password, which the import hashes, instead of a ready hash.
    #[arg(long, default_value_t = 0)]
    plain_passwords: usize,
    /// Part of every identifier, so that several generated accounts fit in one database.
    #[arg(long, default_value_t = 0)]
    world: u16,
    /// The account URL (default: `https://world-{users}.example.com`).
    #[arg(long)]
    account_url: Option<String>,
    /// How identifiers are made: `scattered` (UUID v1 as iSpring issues them, all over the
    /// key space in byte order), `random` (UUID v4) or `sequential` (the best case).
    #[arg(long, value_enum, default_value_t = IdShape::Scattered)]
    ids: IdShape,
    /// Give three enrollments in four a tracked result (untouched, in progress, passed or
    /// failed), as the scale benchmark's accounts have; without, every result is untouched.
    #[arg(long)]
    results: bool,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let mut shape = WorldShape::with_users(args.users);
    if let Some(departments) = args.departments {
        shape.departments = departments;
    }
    if let Some(url) = args.account_url {
        shape.account_url = url;
    }
    shape.world = args.world;
    shape.enrollments_per_user = args.enrollments_per_user;
    shape.plain_passwords = args.plain_passwords;
    shape.id_shape = args.ids;
    shape.results = args.results;

    let hash = PasswordHasher::new(PasswordPolicy::default())?.hash(WORLD_PASSWORD)?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    write_world(&shape, &hash, &mut out)?;
    out.flush()?;

    eprintln!(
        "{} users, {} departments, about {} rows, {} ids; logins (password {WORLD_PASSWORD}):",
        shape.users,
        shape.departments,
        shape.rows(),
        shape.id_shape
    );
    for login in RoleLogin::ALL {
        eprintln!("  {:<40} {login:?}", login.email());
    }
    Ok(())
}
