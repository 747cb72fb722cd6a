//! The group lists and writes and the points writes (neighbours.md sections 7 and 8) for the
//! query-plan scenario: every statement they run on `users`, `group_members`,
//! `department_closure` and `user_points` must be an index range too.

use std::collections::BTreeSet;

use lms_tests::{
    Backend, TestStack,
    large_world::{RoleLogin, WORLD_PASSWORD, WorldShape},
    query_plan,
    xml::text_of,
};

use super::in_smart_subtree;

/// The lists (whole and paged) as the owner and the scoped department administrator; a group
/// created, its members replaced and deleted by each (the administrator's replacement of the
/// big plain group keeps its members outside the administrator's scope, so that check runs
/// too); points awarded and withdrawn by each.
pub(crate) async fn play_groups_and_points(stack: &TestStack, shape: &WorldShape) {
    let ids = shape.ids();
    let scoped: Vec<String> = [in_smart_subtree(shape, 10), in_smart_subtree(shape, 400)]
        .map(|user| format!("<id>{}</id>", ids.user(user)))
        .to_vec();
    let members = scoped.concat();
    for login in [RoleLogin::Owner, RoleLogin::DepartmentAdministrator] {
        let (status, page) = send(stack, shape, login, "GET", "/groups?pageSize=1", None).await;
        assert_eq!(status, 200, "{login:?}: {page}");
        let token = text_of(&page, "nextPageToken").expect("more pages");
        let path = format!("/groups?pageSize=1&pageToken={token}");
        assert_eq!(send(stack, shape, login, "GET", &path, None).await.0, 200);
        assert_eq!(
            send(stack, shape, login, "GET", "/group", None).await.0,
            200
        );

        let body = format!("<request><name>New</name><userIds>{members}</userIds></request>");
        let (status, created) = send(stack, shape, login, "POST", "/group", Some(&body)).await;
        assert_eq!(status, 201, "{login:?}: {created}");
        let created = text_of(&created, "response").expect("the new id");
        let body = format!("<request><userIds>{}</userIds></request>", scoped[0]);
        for group in [created.clone(), ids.plain_group().to_string()] {
            let path = format!("/group/{group}/members");
            let (status, answer) = send(stack, shape, login, "POST", &path, Some(&body)).await;
            assert_eq!(status, 200, "{login:?} {path}: {answer}");
        }
        let path = format!("/group/{created}");
        let (status, answer) = send(stack, shape, login, "DELETE", &path, None).await;
        assert_eq!(status, 204, "{login:?}: {answer}");

        let user = ids.user(in_smart_subtree(shape, 20));
        for (path, amount) in [("award", 30), ("withdraw", 10)] {
            let body = format!(
                "<request><userId>{user}</userId><amount>{amount}</amount><reason>Quiz</reason></request>"
            );
            let path = format!("/gamification/points/{path}");
            let (status, answer) = send(stack, shape, login, "POST", &path, Some(&body)).await;
            assert_eq!(status, 200, "{login:?} {path}: {answer}");
        }
    }
}

/// `groups` holds a few rows per account, too few for the general check (which a planner may
/// rightly answer with a scan), so the list's statement is checked on its own: on SQLite, whose
/// plan does not depend on the table's size, it walks `(account_id, id)` and sorts nothing.
pub(crate) async fn check_the_group_list(stack: &TestStack, statements: &BTreeSet<String>) {
    let lists: Vec<&String> = statements
        .iter()
        .filter(|s| {
            // The list walks in id order; lookups of named groups (`id IN (…)`) go by the
            // primary key and are not this check's.
            s.starts_with("SELECT")
                && s.contains("FROM \"groups\" WHERE")
                && s.contains("ORDER BY \"groups\".")
        })
        .collect();
    assert!(!lists.is_empty(), "no group list was recorded");
    if stack.backend() != Backend::Sqlite {
        return;
    }
    for statement in lists {
        let plan = query_plan::explain(stack.db(), statement).await;
        // A list filtered by name goes by the name's index, ids in order within a name.
        let index = if statement.contains("LOWER(") {
            "idx_groups_account_id_lower_name_id"
        } else {
            "idx_groups_account_id_id"
        };
        assert!(
            plan.contains(index) && !plan.contains("TEMP B-TREE"),
            "{statement}\nplan:\n{plan}"
        );
    }
}

/// `method path` as `login` with an optional XML body; status and body.
async fn send(
    stack: &TestStack,
    shape: &WorldShape,
    login: RoleLogin,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> (u16, String) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("a method");
    let mut request = stack
        .http
        .request(method, format!("{}{path}", stack.base_url))
        .header("X-Auth-Account-Url", &shape.account_url)
        .header("X-Auth-Email", login.email())
        .header("X-Auth-Password", WORLD_PASSWORD);
    if let Some(body) = body {
        request = request
            .header("Content-Type", "application/xml")
            .body(body.to_owned());
    }
    let response = request.send().await.expect("the gateway answers");
    let status = response.status().as_u16();
    (status, response.text().await.expect("a body"))
}
