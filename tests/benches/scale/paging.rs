//! Keyset pages in the scale benchmark: the first page of a listing and its hundredth, in
//! the small and the large account, so that a table shows whether a page costs the same at
//! page 1 and page 100 and in a 1k- and a 100k-user account.

use std::fmt::Write as _;
use std::sync::Arc;

use lms_tests::{
    TestStack,
    large_world::{Call, RoleLogin, WORLD_PASSWORD},
    xml::text_of,
};

use super::{Account, rate};

/// The page whose cost is compared with the first.
const DEEP_PAGE: usize = 100;

/// A paged listing and the page size that gives the large account 100 pages of it.
struct Listing {
    path: &'static str,
    page_size: usize,
}

/// Every paged listing of the directory: the generated large account has 1,001
/// departments, 100,000 users, about a million enrollments, 101 groups and 100 items.
const LISTINGS: [Listing; 5] = [
    Listing {
        path: "/departments",
        page_size: 10,
    },
    Listing {
        path: "/users",
        page_size: 1_000,
    },
    Listing {
        path: "/enrollments",
        page_size: 1_000,
    },
    Listing {
        path: "/groups",
        page_size: 1,
    },
    Listing {
        path: "/contents",
        page_size: 1,
    },
];

/// The table of paged reads, measured `seconds` per cell.
pub(super) async fn table(
    stack: &Arc<TestStack>,
    small: &Account,
    large: &Account,
    seconds: f64,
) -> anyhow::Result<String> {
    let mut out = String::new();
    writeln!(
        out,
        "\n| paged read (owner, XML) | page size | {} users, page 1 | {} users, page 1 | {} users, page {DEEP_PAGE} | page {DEEP_PAGE} / page 1 | large / small, page 1 |\n|---|---|---|---|---|---|---|",
        small.shape.users, large.shape.users, large.shape.users
    )?;
    for listing in &LISTINGS {
        let small_first = rate(stack, small, page_call(listing, String::new()), seconds).await?;
        let large_first = rate(stack, large, page_call(listing, String::new()), seconds).await?;
        let cell =
            |rate: &super::Rate| format!("{:.0} req/s, p50 {:.1} ms", rate.per_second, rate.p50_ms);
        let deep = match token_of_page(stack, large, listing, DEEP_PAGE).await? {
            Some(token) => Some(rate(stack, large, page_call(listing, token), seconds).await?),
            None => None,
        };
        writeln!(
            out,
            "| GET {} | {} | {} | {} | {} | {} | {:.2} |",
            listing.path,
            listing.page_size,
            cell(&small_first),
            cell(&large_first),
            deep.as_ref().map_or_else(|| "fewer pages".to_owned(), cell),
            deep.map_or_else(
                || "–".to_owned(),
                |deep| format!("{:.2}", deep.per_second / large_first.per_second)
            ),
            large_first.per_second / small_first.per_second
        )?;
    }
    Ok(out)
}

/// A request for the page of `listing` that `token` starts (empty: the first).
fn page_call(listing: &Listing, token: String) -> impl Fn(&Account, u64) -> Call + Clone {
    let path = format!(
        "{}?pageSize={}&pageToken={token}",
        listing.path, listing.page_size
    );
    move |_, _| Call::get(path.clone())
}

/// The token that starts page `page` (1-based), walked to through the listing's own
/// `nextPageToken`s as a client would; `None` when the listing has fewer pages.
async fn token_of_page(
    stack: &TestStack,
    account: &Account,
    listing: &Listing,
    page: usize,
) -> anyhow::Result<Option<String>> {
    let mut token = String::new();
    for _ in 1..page {
        let url = format!(
            "{}{}?pageSize={}&pageToken={token}",
            stack.base_url, listing.path, listing.page_size
        );
        let response = stack
            .http
            .get(url)
            .header("X-Auth-Account-Url", &account.shape.account_url)
            .header("X-Auth-Email", RoleLogin::Owner.email())
            .header("X-Auth-Password", WORLD_PASSWORD)
            .send()
            .await?;
        anyhow::ensure!(
            response.status().is_success(),
            "{}: status {}",
            listing.path,
            response.status()
        );
        match text_of(&response.text().await?, "nextPageToken") {
            Some(next) => token = next,
            None => return Ok(None),
        }
    }
    Ok(Some(token))
}
