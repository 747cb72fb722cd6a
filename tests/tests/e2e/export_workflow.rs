//! The export a PHP script runs every night (neighbours.md section 5.3, client C3): walk
//! `GET /enrollments?pageSize=…&pageToken=` page by page, join each enrollment to its course
//! (`GET /content/{id}`) and its learner (`GET /user/{id}`), read the learner's e-mail from
//! `fields/field[name=EMAIL]`, and keep the last token to resume from the next day.

use std::collections::BTreeSet;

use lms_tests::{
    TestStack, on_both_backends,
    world::{self, acme},
    xml::text_of,
};

on_both_backends!(
    an_export_walks_every_enrollment_page_and_joins_courses_and_learners,
    a_saved_token_resumes_the_walk_where_it_stopped,
);

/// The prefix the script calls (`<account>/index.php/api/v2/...`).
const PREFIX: &str = "/index.php/api/v2";

/// (enrollment, course title, learner e-mail) of every Acme enrollment.
fn acme_rows() -> BTreeSet<(String, String, String)> {
    [
        (
            acme::LEARNER_WELCOME,
            "Welcome to Acme",
            "learner@acme.example.com",
        ),
        (
            acme::ENGINEER_WELCOME,
            "Welcome to Acme",
            "engineer@acme.example.com",
        ),
        (
            acme::LEARNER_SECRET,
            "Secret plans",
            "learner@acme.example.com",
        ),
        (
            acme::SUPPORTER_WELCOME,
            "Welcome to Acme",
            "supporter@acme.example.com",
        ),
    ]
    .into_iter()
    .map(|(id, title, email)| (id.to_owned(), title.to_owned(), email.to_owned()))
    .collect()
}

/// One page as the script reads it: (enrollment, course, learner) per `<enrollment>`, and the
/// next token when the page has one.
async fn page(stack: &TestStack, token: &str) -> (Vec<(String, String, String)>, Option<String>) {
    let reply = stack
        .get(
            &format!("{PREFIX}/enrollments?pageSize=2&pageToken={token}"),
            world::OWNER,
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let rows = reply
        .body
        .split("<enrollment>")
        .skip(1)
        .map(|entry| {
            let field = |tag| text_of(entry, tag).unwrap_or_else(|| panic!("{tag} in {entry}"));
            (field("enrollmentId"), field("courseId"), field("learnerId"))
        })
        .collect::<Vec<_>>();
    (rows, text_of(&reply.body, "nextPageToken"))
}

/// The value of the profile field `name` in a `<userProfile>`, found as the script finds it.
fn profile_field(profile: &str, name: &str) -> Option<String> {
    profile
        .split("<field>")
        .skip(1)
        .find(|field| text_of(field, "name").as_deref() == Some(name))
        .map(|field| text_of(field, "value").unwrap_or_default())
}

/// Joins one enrollment to its course title and its learner's e-mail.
async fn join(
    stack: &TestStack,
    (id, course, learner): (String, String, String),
) -> (String, String, String) {
    let content = stack
        .get(&format!("{PREFIX}/content/{course}"), world::OWNER)
        .await;
    assert_eq!(content.status, 200, "{}", content.body);
    let user = stack
        .get(&format!("{PREFIX}/user/{learner}"), world::OWNER)
        .await;
    assert_eq!(user.status, 200, "{}", user.body);
    let email = profile_field(&user.body, "EMAIL").expect("an EMAIL field");
    let title = text_of(&content.body, "title").expect("a title");
    (id, title, email)
}

async fn an_export_walks_every_enrollment_page_and_joins_courses_and_learners(stack: &TestStack) {
    let (mut token, mut exported, mut pages) = (String::new(), Vec::new(), 0);
    loop {
        let (rows, next) = page(stack, &token).await;
        pages += 1;
        assert!(pages <= 10, "the walk ends");
        if next.is_some() {
            assert_eq!(rows.len(), 2, "every page but the last is full");
        }
        for row in rows {
            exported.push(join(stack, row).await);
        }
        match next {
            Some(next) if !next.is_empty() => token = next,
            _ => break,
        }
    }
    assert_eq!(pages, 2, "four enrollments in pages of two");
    assert_eq!(exported.len(), 4, "no enrollment twice: {exported:?}");
    assert_eq!(exported.into_iter().collect::<BTreeSet<_>>(), acme_rows());
}

async fn a_saved_token_resumes_the_walk_where_it_stopped(stack: &TestStack) {
    let (first, saved) = page(stack, "").await;
    let saved = saved.expect("a token after the first page");
    // The next day, in another process: the saved token still starts where the walk stopped.
    let (rest, end) = page(stack, &saved).await;
    assert_eq!(end, None, "the second page is the last");
    let ids: Vec<String> = first.iter().chain(&rest).map(|row| row.0.clone()).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted, "pages follow one another in id order");
    assert_eq!(
        ids.into_iter().collect::<BTreeSet<_>>(),
        acme_rows().into_iter().map(|row| row.0).collect()
    );
}
