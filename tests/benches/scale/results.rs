//! Learner results in the scale benchmark (results.md section 11): the large account's
//! results walked page by page through the gateway, page 1,000 against page 1 with and
//! without filters, and the two set-based writes of 10,000 results (`RecordResults` and
//! `POST /statistics/course`).

use std::{fmt::Write as _, sync::Arc, time::Instant};

use lms_proto::{
    metadata::{ACCOUNT_URL, EMAIL, PASSWORD},
    v1::{RecordResultsRequest, ResultRecord, directory_service_client::DirectoryServiceClient},
};
use lms_tests::{
    TestStack,
    large_world::{Call, RoleLogin, WORLD_PASSWORD, enrollments_of_item},
    xml::text_of,
};
use uuid::Uuid;

use super::{Account, Rate, median, rate};

/// The page whose cost is compared with the first (results.md section 11).
const DEEP_PAGE: usize = 1_000;

/// Samples of each write; the median is reported, with the lowest and highest.
const WRITE_SAMPLES: usize = 7;

/// Results one write names (the most either write takes).
const WRITE_SIZE: usize = 10_000;

const ROW_ID: &str = "<enrollmentId>";

/// A way of reading the list: its query (without paging) and the page size that gives the
/// large account at least [`DEEP_PAGE`] pages of it.
struct Reading {
    name: &'static str,
    query: String,
    page_size: usize,
}

/// The table of the results benchmark on `large`, rates measured `seconds` per cell.
pub(super) async fn table(
    stack: &Arc<TestStack>,
    large: &Account,
    seconds: f64,
) -> anyhow::Result<String> {
    let mut out = String::new();
    let expected = large.shape.enrollments();
    let full = walk(stack, large, "", 1_000, None).await?;
    anyhow::ensure!(
        full.rows == expected,
        "the walk read {} results of {expected}",
        full.rows
    );
    writeln!(
        out,
        "\n| results (`GET /learners/results`, owner, XML) | figure |\n|---|---|\n\
         | full walk at `pageSize` 1000: rows, pages, time | {} rows (each once, ascending), {} pages, {:.2} s |\n\
         | full walk, rows/s | {:.0} |",
        full.rows,
        full.pages,
        full.seconds,
        full.rows as f64 / full.seconds
    )?;

    let readings = [
        Reading {
            name: "unfiltered",
            query: String::new(),
            page_size: 1_000,
        },
        Reading {
            name: "`completionDate` window (2025-01-01 to 2025-03-31)",
            query: "completionDate[startDate]=2025-01-01&completionDate[endDate]=2025-03-31"
                .to_owned(),
            page_size: 100,
        },
        Reading {
            name: "`departmentIds` (a division: 15 % of the learners)",
            query: format!("departmentIds={}", large.ids.department(1)),
            page_size: 100,
        },
    ];
    writeln!(
        out,
        "\n| results page (owner, XML) | page size | page 1 | page {DEEP_PAGE} | page {DEEP_PAGE} / page 1 |\n|---|---|---|---|---|"
    )?;
    for reading in &readings {
        let deep_token = if reading.query.is_empty() {
            full.deep_token.clone()
        } else {
            walk(
                stack,
                large,
                &reading.query,
                reading.page_size,
                Some(DEEP_PAGE),
            )
            .await?
            .deep_token
        };
        let first = rate(stack, large, page_call(reading, ""), seconds).await?;
        let cell = |rate: &Rate| format!("{:.0} req/s, p50 {:.1} ms", rate.per_second, rate.p50_ms);
        let (deep_cell, ratio) = match deep_token {
            Some(token) => {
                let deep = rate(stack, large, page_call(reading, &token), seconds).await?;
                (
                    cell(&deep),
                    format!("{:.2}", deep.per_second / first.per_second),
                )
            }
            None => ("fewer pages".to_owned(), "–".to_owned()),
        };
        writeln!(
            out,
            "| {} | {} | {} | {deep_cell} | {ratio} |",
            reading.name,
            reading.page_size,
            cell(&first)
        )?;
    }

    eprintln!(
        "scale: results writes ({})",
        chrono::Utc::now().format("%H:%M:%S")
    );
    let (record_times, changed) = record_results(stack, large).await?;
    let course_times = set_course_statuses(stack, large).await?;
    writeln!(
        out,
        "\n| results write (owner) | results | median | lowest to highest |\n|---|---|---|---|"
    )?;
    for (name, count, mut times) in [
        ("`RecordResults` (gRPC)", changed, record_times),
        ("`POST /statistics/course`", course_times.0, course_times.1),
    ] {
        let middle = median(&mut times);
        writeln!(
            out,
            "| {name} | {count} | {middle:.0} ms | {:.0} to {:.0} ms, {WRITE_SAMPLES} writes |",
            times[0],
            times[times.len() - 1]
        )?;
    }
    Ok(out)
}

/// What a walk of the list read.
struct Walk {
    rows: usize,
    pages: usize,
    seconds: f64,
    /// The token that starts page [`DEEP_PAGE`], when the list has that many.
    deep_token: Option<String>,
}

/// Walks the list with `query` by its own `nextPageToken`s, one request after another, to
/// its end or to the start of page `stop_at`; every row's id must be above the one before,
/// so no row is read twice.
async fn walk(
    stack: &TestStack,
    account: &Account,
    query: &str,
    page_size: usize,
    stop_at: Option<usize>,
) -> anyhow::Result<Walk> {
    let began = Instant::now();
    let (mut rows, mut pages, mut token) = (0, 0, String::new());
    let mut deep_token = None;
    let mut last = Uuid::nil();
    loop {
        let body = get(stack, account, &page_path(query, page_size, &token)).await?;
        pages += 1;
        for (at, _) in body.match_indices(ROW_ID) {
            let start = at + ROW_ID.len();
            let id = Uuid::parse_str(body.get(start..start + 36).unwrap_or_default())?;
            anyhow::ensure!(id > last, "{id} read after {last}");
            last = id;
            rows += 1;
        }
        let Some(next) = text_of(&body, "nextPageToken") else {
            break;
        };
        if pages + 1 == DEEP_PAGE {
            deep_token = Some(next.clone());
            if stop_at == Some(DEEP_PAGE) {
                break;
            }
        }
        token = next;
    }
    Ok(Walk {
        rows,
        pages,
        seconds: began.elapsed().as_secs_f64(),
        deep_token,
    })
}

fn page_path(query: &str, page_size: usize, token: &str) -> String {
    let separator = if query.is_empty() { "" } else { "&" };
    format!("/learners/results?{query}{separator}pageSize={page_size}&pageToken={token}")
}

fn page_call(reading: &Reading, token: &str) -> impl Fn(&Account, u64) -> Call + Clone + use<> {
    let path = page_path(&reading.query, reading.page_size, token);
    move |_, _| Call::get(path.clone())
}

/// The body of a GET of `path` as the owner, refused unless 200.
async fn get(stack: &TestStack, account: &Account, path: &str) -> anyhow::Result<String> {
    let response = stack
        .http
        .get(format!("{}{path}", stack.base_url))
        .header("X-Auth-Account-Url", &account.shape.account_url)
        .header("X-Auth-Email", RoleLogin::Owner.email())
        .header("X-Auth-Password", WORLD_PASSWORD)
        .send()
        .await?;
    let status = response.status();
    // Checked as UTF-8 and kept, not decoded by charset: a page is about 600 KB, and the
    // client's share of the walk is time the service is not measured by.
    let body = String::from_utf8(response.bytes().await?.into())?;
    anyhow::ensure!(status.is_success(), "{path}: {status}: {body}");
    Ok(body)
}

/// [`WRITE_SAMPLES`] calls of `RecordResults`, each stating new finished results for the
/// enrollments of the account's last 1,000 learners (10,000 results): milliseconds of each,
/// and the results each changed.
async fn record_results(stack: &TestStack, account: &Account) -> anyhow::Result<(Vec<f64>, usize)> {
    let shape = &account.shape;
    let learners = WRITE_SIZE / shape.enrollments_per_user;
    let enrollments: Vec<String> = (shape.users - learners..shape.users)
        .flat_map(|user| {
            (0..shape.enrollments_per_user).map(move |k| account.ids.enrollment(user, k))
        })
        .map(|id| id.to_string())
        .collect();
    let mut directory = DirectoryServiceClient::new(stack.grpc_channel().await)
        .max_decoding_message_size(usize::MAX)
        .max_encoding_message_size(usize::MAX);
    let (mut times, mut changed) = (Vec::new(), 0);
    for round in 0..WRITE_SAMPLES {
        // Finished to finished is a retake, allowed from any tracked status; each round
        // changes every result.
        let date = format!("2025-12-{:02}T10:00:00+00:00", 10 + round);
        let results = enrollments
            .iter()
            .map(|enrollment_id| ResultRecord {
                enrollment_id: enrollment_id.clone(),
                completion_status: if round % 2 == 0 { "passed" } else { "failed" }.into(),
                progress: 100,
                awarded_score: 50.0 + round as f64,
                passing_score: 80.0,
                time_spent: 1_000 + round as u64,
                views_count: 3 + round as u64,
                completion_date: Some(date.clone()),
                last_view_date: Some(date.clone()),
            })
            .collect();
        let mut request = tonic::Request::new(RecordResultsRequest { results });
        let metadata = request.metadata_mut();
        metadata.insert(ACCOUNT_URL, shape.account_url.parse()?);
        metadata.insert(EMAIL, RoleLogin::Owner.email().parse()?);
        metadata.insert(PASSWORD, WORLD_PASSWORD.parse()?);
        let began = Instant::now();
        let answer = directory.record_results(request).await?.into_inner();
        times.push(began.elapsed().as_secs_f64() * 1e3);
        changed = answer.changed as usize;
        anyhow::ensure!(
            changed == enrollments.len(),
            "RecordResults changed {changed} of {}",
            enrollments.len()
        );
    }
    Ok((times, changed))
}

/// [`WRITE_SAMPLES`] administrator's statuses set on (up to) 10,000 enrollments of the
/// account's first course, alternating between passed and failed so each changes every one:
/// the enrollments named and the milliseconds of each.
async fn set_course_statuses(
    stack: &TestStack,
    account: &Account,
) -> anyhow::Result<(usize, Vec<f64>)> {
    let enrollments: Vec<Uuid> = enrollments_of_item(&account.shape, 0)
        .take(WRITE_SIZE)
        .collect();
    let ids: String = enrollments
        .iter()
        .map(|id| format!("<id>{id}</id>"))
        .collect();
    let mut times = Vec::new();
    for round in 0..WRITE_SAMPLES {
        let status = if round % 2 == 0 { "passed" } else { "failed" };
        let body = format!(
            "<request><courseId>{}</courseId><enrollmentIds>{ids}</enrollmentIds>\
             <status>{status}</status><date>2025-11-{:02}</date><awardedScore>{}</awardedScore></request>",
            account.ids.content_item(0),
            10 + round,
            60 + round
        );
        let began = Instant::now();
        let status = Call::post("/statistics/course", body)
            .send(stack, &account.shape, RoleLogin::Owner)
            .await?;
        times.push(began.elapsed().as_secs_f64() * 1e3);
        anyhow::ensure!(status == 200, "POST /statistics/course: status {status}");
    }
    Ok((enrollments.len(), times))
}
