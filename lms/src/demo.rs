//! `lms up --demo`: the built-in demo account ([`demo_account`], fixed data only the launcher
//! needs), imported once into an empty database, and what the launcher prints to try it.

mod data;

use std::net::SocketAddr;

use lms_core::{auth::PasswordHasher, entities::account, import::import_document};

pub use self::data::{
    DEMO_ACCOUNT_URL, DEMO_PASSWORD, DemoAccount, demo_account, demo_document, ids,
};
use sea_orm::{DatabaseConnection, EntityTrait as _, PaginatorTrait as _};

/// Imports the demo account when the database has no accounts. Returns what to print
/// (also when the demo was imported by an earlier start).
pub async fn ensure_demo(
    db: &DatabaseConnection,
    hasher: &PasswordHasher,
) -> anyhow::Result<Option<DemoAccount>> {
    let demo = demo_account();
    let accounts = account::Entity::find().count(db).await?;
    if accounts == 0 {
        import_document(db, demo.document.clone(), hasher).await?;
        println!("Imported the demo account.");
        return Ok(Some(demo));
    }
    let has_demo = account::Entity::find_by_id(demo.account_id)
        .one(db)
        .await?
        .is_some();
    if !has_demo {
        println!("The database already has accounts; the demo account was not imported.");
    }
    Ok(has_demo.then_some(demo))
}

pub fn print_instructions(demo: &DemoAccount, http_addr: SocketAddr) {
    println!();
    println!("Demo account: {}", demo.account_url);
    println!("Password of every demo login: {}", demo.password);
    for (login, role) in &demo.logins {
        println!("  {login:<40} {role}");
    }
    println!();
    println!("Try:");
    println!(
        "  curl -i http://{http_addr}/group/{} \\\n    -H 'X-Auth-Account-Url: {}' \\\n    -H 'X-Auth-Email: {}' \\\n    -H 'X-Auth-Password: {}'",
        demo.plain_group_id, demo.account_url, demo.owner_login, demo.password
    );
    println!();
}
