//! `GET /user/{id}` (and `/v2`), `GET /user` (and `/v2`), `GET|POST /users` (and `/v2`)
//! (neighbours.md section 4) through the real gateway and core: the profile in both
//! formats under every prefix, the role table with its scopes, the filters, keyset pages a
//! client can walk, tenant isolation and refusals.

use lms_tests::{
    TestStack, get_json, json_ids, json_of, on_both_backends, post_json, walk_json_pages,
    world::{self, acme, globex},
    xml::{text_of, texts_of},
    xml_ids,
};
use serde_json::Value;

on_both_backends!(
    the_owner_reads_a_profile_in_xml_and_json_under_every_prefix,
    lists_are_filtered_by_department_subtree_group_login_and_email,
    pages_walk_every_user_once_with_a_token_only_while_more_follow,
    scoped_callers_see_their_subtrees_and_other_roles_are_refused,
    another_accounts_users_are_not_found,
    bad_filters_and_parameters_are_400_naming_them,
    numbered_pages_are_full_until_the_last_and_count_every_match,
);

const PREFIXES: [&str; 3] = ["", "/api/v2", "/index.php/api/v2"];
const NOWHERE: &str = "0191c000-0000-7000-8000-00000000dead";
const ID: &str = "userId";

fn field<'a>(profile: &'a Value, name: &str) -> &'a str {
    profile["fields"]
        .as_array()
        .expect("fields")
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {profile}"))["value"]
        .as_str()
        .expect("text")
}

fn sorted(mut ids: Vec<&str>) -> Vec<String> {
    ids.sort_unstable();
    ids.into_iter().map(str::to_owned).collect()
}

// ---------------------------------------------------------------------------------------------

async fn the_owner_reads_a_profile_in_xml_and_json_under_every_prefix(stack: &TestStack) {
    for prefix in PREFIXES {
        for slash in ["", "/"] {
            let path = format!("{prefix}/user/{}{slash}", acme::DEPT_ADMIN);
            let xml = stack.get(&path, world::OWNER).await;
            assert_eq!(xml.status, 200, "{path}: {}", xml.body);
            assert!(
                xml.body
                    .contains("<response><userProfile><role>department_administrator</role>"),
                "{}",
                xml.body
            );
            assert_eq!(
                text_of(&xml.body, "userId").as_deref(),
                Some(acme::DEPT_ADMIN)
            );
            assert_eq!(
                text_of(&xml.body, "departmentId").as_deref(),
                Some(acme::SALES)
            );
            assert_eq!(text_of(&xml.body, "status").as_deref(), Some("1"));
            let names = texts_of(&xml.body, "name");
            assert_eq!(names, ["FIRST_NAME", "LAST_NAME", "LOGIN", "EMAIL"]);
            assert!(xml.body.contains(
                "<field><name>EMAIL</name><value>sales.admin@acme.example.com</value></field>"
            ));
            assert!(xml.body.contains(&format!(
                "<manageableDepartmentIds><id>{}</id></manageableDepartmentIds>",
                acme::SALES
            )));
            let v2 = stack
                .get(
                    &format!("{prefix}/user/{}/v2{slash}", acme::DEPT_ADMIN),
                    world::OWNER,
                )
                .await;
            assert!(v2.body.contains("<response><userProfileV2>"), "{}", v2.body);
        }
    }
    let learner = json_of(
        &get_json(
            stack,
            &format!("/api/v2/user/{}", acme::LEARNER),
            world::OWNER,
        )
        .await,
    );
    assert_eq!(learner["userId"], acme::LEARNER);
    assert_eq!(learner["role"], "learner");
    assert_eq!(learner["status"], 1);
    assert_eq!(field(&learner, "LOGIN"), "learner@acme.example.com");
    assert_eq!(field(&learner, "EMAIL"), "learner@acme.example.com");
    assert_eq!(field(&learner, "FIRST_NAME"), "");
    assert_eq!(learner["groups"], serde_json::json!([acme::INTERNS]));
    assert!(learner["roleId"].as_str().is_some_and(|id| id.len() == 36));
    assert!(
        learner.get("manageableDepartmentIds").is_none(),
        "{learner}"
    );
    let added = learner["addedDate"].as_str().expect("a date");
    assert_eq!(added.len(), 10, "YYYY-MM-DD: {added}");
    // The same built-in role has the same id on every profile; a custom role its own id.
    let other =
        json_of(&get_json(stack, &format!("/user/{}/v2", acme::ENGINEER), world::OWNER).await);
    assert_eq!(other["roleId"], learner["roleId"]);
    let custom = json_of(&get_json(stack, &format!("/user/{}", acme::VIEWER), world::OWNER).await);
    assert_eq!(custom["role"], "custom");
    assert_eq!(custom["roleId"], acme::VIEWER_ROLE);
    let former = json_of(
        &get_json(
            stack,
            &format!("/user/{}", acme::FORMER_ADMIN),
            world::OWNER,
        )
        .await,
    );
    assert_eq!(former["status"], 3);
    assert_eq!(former["role"], "administrator");
}

async fn lists_are_filtered_by_department_subtree_group_login_and_email(stack: &TestStack) {
    let all = stack.get("/user", world::OWNER).await;
    assert_eq!(xml_ids(&all, ID), sorted(acme::USERS.to_vec()));
    assert!(
        all.body
            .starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?><response><userProfile>")
    );
    let v2 = stack.get("/user/v2", world::OWNER).await;
    assert!(v2.body.contains("<response><userProfileV2>"), "{}", v2.body);
    // A department includes its sub-departments.
    let sales = stack
        .get(
            &format!("/user?departments[]={}", acme::SALES),
            world::OWNER,
        )
        .await;
    assert_eq!(
        xml_ids(&sales, ID),
        sorted(vec![acme::DEPT_ADMIN, acme::LEARNER, acme::COORDINATOR])
    );
    // Values of one filter: any; filters together: all.
    let query = format!(
        "/user?departments%5B%5D={}&departments%5B%5D={}&groups[]={}",
        acme::SALES,
        acme::SUPPORT,
        acme::INTERNS
    );
    assert_eq!(
        xml_ids(&stack.get(&query, world::OWNER).await, ID),
        [acme::LEARNER]
    );
    // A smart group is the subtree it follows.
    let smart = json_of(
        &get_json(
            stack,
            &format!("/user/v2?groups={}", acme::ALL_OF_SALES),
            world::OWNER,
        )
        .await,
    );
    assert_eq!(
        json_ids(&smart, ID),
        sorted(vec![acme::DEPT_ADMIN, acme::LEARNER, acme::COORDINATOR])
    );
    let by_login = json_of(
        &get_json(
            stack,
            "/user?logins[]=LEARNER@acme.example.com&emails[0]=learner@acme.example.com",
            world::OWNER,
        )
        .await,
    );
    assert_eq!(json_ids(&by_login, ID), [acme::LEARNER]);
    let nobody = json_of(
        &get_json(
            stack,
            "/user?emails[]=nobody@acme.example.com",
            world::OWNER,
        )
        .await,
    );
    assert_eq!(nobody, serde_json::json!([]));
    // The paged list takes the same filters, in the query and in a POST body.
    let page = json_of(
        &get_json(
            stack,
            &format!("/users?departments[]={}&pageSize=2", acme::SALES),
            world::OWNER,
        )
        .await,
    );
    assert_eq!(json_ids(&page["userProfiles"], ID).len(), 2);
    assert!(page["nextPageToken"].is_string(), "{page}");
    let posted = stack
        .post_xml(
            "/users/v2",
            world::OWNER,
            &format!(
                "<request><departments><id>{}</id></departments><pageSize>10</pageSize></request>",
                acme::SUPPORT
            ),
        )
        .await;
    assert_eq!(posted.status, 200, "{}", posted.body);
    assert!(
        posted.body.contains("<userProfiles><userProfileV2>"),
        "{}",
        posted.body
    );
    assert_eq!(
        texts_of(&posted.body, "userId"),
        sorted(vec![acme::VIEWER, acme::SUPPORTER])
    );
    assert!(!posted.body.contains("nextPageToken"));
}

async fn pages_walk_every_user_once_with_a_token_only_while_more_follow(stack: &TestStack) {
    for size in [1usize, 5, 12, 1000] {
        let walk = walk_json_pages(
            stack,
            &format!("/users?pageSize={size}"),
            &world::OWNER.headers(),
            "userProfiles",
            ID,
        )
        .await;
        assert!(!walk.sizes.contains(&0), "no token leads to an empty page");
        walk.assert_full_before_last(size);
        assert_eq!(walk.ids, sorted(acme::USERS.to_vec()), "pageSize {size}");
    }
    let xml = stack.get("/api/v2/users?pageSize=3", world::OWNER).await;
    assert!(
        xml.body.contains("<response><userProfiles><userProfile>"),
        "{}",
        xml.body
    );
    assert!(text_of(&xml.body, "nextPageToken").is_some());
}

async fn scoped_callers_see_their_subtrees_and_other_roles_are_refused(stack: &TestStack) {
    let sales = sorted(vec![acme::DEPT_ADMIN, acme::LEARNER, acme::COORDINATOR]);
    assert_eq!(
        xml_ids(&stack.get("/user", world::DEPT_ADMIN).await, ID),
        sales
    );
    let page = json_of(&get_json(stack, "/users", world::DEPT_ADMIN).await);
    assert_eq!(json_ids(&page["userProfiles"], ID), sales);
    assert_eq!(
        xml_ids(
            &stack
                .get(&format!("/user/{}", acme::LEARNER), world::DEPT_ADMIN)
                .await,
            ID
        ),
        [acme::LEARNER]
    );
    // Outside the scope: 403 by id, absent from lists (even when asked for by filter).
    stack
        .get(&format!("/user/{}", acme::ENGINEER), world::DEPT_ADMIN)
        .await
        .assert_error(403, "departments you manage");
    let filtered = stack
        .get(
            &format!("/user?departments[]={}", acme::ENGINEERING),
            world::DEPT_ADMIN,
        )
        .await;
    assert_eq!(xml_ids(&filtered, ID), Vec::<String>::new());
    // An Author may call only the paged list, and sees every user there.
    let author = json_of(&get_json(stack, "/users", world::AUTHOR).await);
    assert_eq!(
        json_ids(&author["userProfiles"], ID),
        sorted(acme::USERS.to_vec())
    );
    stack
        .get("/user", world::AUTHOR)
        .await
        .assert_error(403, "read users");
    stack
        .get(&format!("/user/{}", acme::AUTHOR), world::AUTHOR)
        .await
        .assert_error(403, "read users");
    for login in [
        world::LEARNER,
        world::PUBLISHER,
        world::VIEWER,
        world::COORDINATOR,
    ] {
        stack
            .get("/user", login)
            .await
            .assert_error(403, "read users");
        stack
            .get("/users", login)
            .await
            .assert_error(403, "read users");
        stack
            .get(&format!("/user/{}", acme::LEARNER), login)
            .await
            .assert_error(403, "read users");
    }
}

async fn another_accounts_users_are_not_found(stack: &TestStack) {
    let list = stack.get("/user", world::GLOBEX_OWNER).await;
    assert_eq!(
        xml_ids(&list, ID),
        sorted(vec![globex::OWNER, globex::WORKER])
    );
    for id in [acme::LEARNER, NOWHERE, "not-an-id"] {
        stack
            .get(&format!("/user/{id}"), world::GLOBEX_OWNER)
            .await
            .assert_error(404, "User");
    }
    // Another account's department or group in a filter is unknown here: 400 naming it.
    stack
        .get(
            &format!("/user?departments[]={}", acme::SALES),
            world::GLOBEX_OWNER,
        )
        .await
        .assert_error(400, "departments");
    stack
        .get(
            &format!("/user?groups[]={}", acme::INTERNS),
            world::GLOBEX_OWNER,
        )
        .await
        .assert_error(400, "groups");
}

async fn bad_filters_and_parameters_are_400_naming_them(stack: &TestStack) {
    stack
        .get("/user?departments[]=nope", world::OWNER)
        .await
        .assert_error(400, "departments");
    stack
        .get("/user?workLeaveStatus=1", world::OWNER)
        .await
        .assert_error(400, "workLeaveStatus");
    stack
        .get("/user?pageSize=5", world::OWNER)
        .await
        .assert_error(400, "pageSize");
    stack
        .get("/users?pageSize=0", world::OWNER)
        .await
        .assert_error(400, "pageSize");
    stack
        .get("/users?pageToken=garbage", world::OWNER)
        .await
        .assert_error(400, "pageToken");
    stack
        .get(&format!("/user/{}?x=1", acme::LEARNER), world::OWNER)
        .await
        .assert_error(400, "\"x\"");
}

async fn numbered_pages_are_full_until_the_last_and_count_every_match(stack: &TestStack) {
    // As the Node org-sync walks it: until an empty batch or the total is collected.
    let mut seen = Vec::new();
    for page in 1.. {
        let reply = post_json(
            stack,
            "/api/v2/user/list",
            world::OWNER,
            format!(r#"{{"page":{page},"pageSize":5}}"#),
        )
        .await;
        let body = json_of(&reply);
        assert_eq!(body["pageNumber"], page);
        assert_eq!(body["totalUsersNumber"], acme::USERS.len());
        let ids = json_ids(&body["userProfiles"], ID);
        if ids.is_empty() {
            break;
        }
        if seen.len() + ids.len() < acme::USERS.len() {
            assert_eq!(ids.len(), 5, "page {page} is full");
        }
        seen.extend(ids);
        if seen.len() >= acme::USERS.len() {
            break;
        }
    }
    assert_eq!(seen, sorted(acme::USERS.to_vec()));
    let scoped = json_of(
        &post_json(
            stack,
            "/user/list",
            world::DEPT_ADMIN,
            r#"{"page":1}"#.to_owned(),
        )
        .await,
    );
    assert_eq!(scoped["totalUsersNumber"], 3);
    let filtered = stack
        .post_xml(
            "/user/list",
            world::OWNER,
            &format!(
                "<request><page>2</page><pageSize>1</pageSize><departments><id>{}</id></departments></request>",
                acme::SUPPORT
            ),
        )
        .await;
    assert_eq!(filtered.status, 200, "{}", filtered.body);
    assert_eq!(
        text_of(&filtered.body, "totalUsersNumber").as_deref(),
        Some("2")
    );
    assert_eq!(texts_of(&filtered.body, "userId"), [acme::SUPPORTER]);
    for (login, body, status, needle) in [
        (world::OWNER, r#"{"page":0}"#, 400, "page"),
        (world::OWNER, r#"{"page":"two"}"#, 400, "page"),
        (world::OWNER, r#"{"page":1,"pageSize":0}"#, 400, "pageSize"),
        (world::LEARNER, r#"{"page":1}"#, 403, "read users"),
    ] {
        let reply = post_json(stack, "/user/list", login, body.to_owned()).await;
        assert_eq!(reply.status, status, "{body}: {}", reply.body);
        let error: Value = serde_json::from_str(&reply.body).expect("a JSON error");
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|m| m.contains(needle)),
            "{error}"
        );
    }
}
