//! `GET /group/{group_id}` (interface 4.4) through the real gateway and core.

use lms_tests::{
    TestStack, on_both_backends,
    world::{self, Login, acme, globex},
    xml::{PROLOGUE, element_names, text_of, texts_of},
};

on_both_backends!(
    owner_reads_a_plain_group_with_its_members_in_order,
    every_role_of_the_permission_table_gets_its_answer,
    an_author_gets_the_count_but_not_the_members,
    a_smart_group_lists_the_users_of_its_department_subtree,
    every_authentication_failure_is_the_same_401,
    unknown_malformed_and_foreign_group_ids_are_404,
    account_url_and_login_are_matched_leniently,
    concurrent_reads_each_get_their_own_answer,
);

async fn owner_reads_a_plain_group_with_its_members_in_order(stack: &TestStack) {
    let reply = stack
        .get(&format!("/group/{}", acme::INTERNS), world::OWNER)
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.header("content-type"),
        Some("application/xml; charset=utf-8")
    );
    assert!(reply.body.starts_with(PROLOGUE), "{}", reply.body);
    assert_eq!(
        element_names(&reply.body),
        [
            "response",
            "group",
            "usersCount",
            "userIds",
            "id",
            "id",
            "groupId",
            "name",
            "isSmart"
        ]
    );
    assert_eq!(text_of(&reply.body, "usersCount").as_deref(), Some("2"));
    // Ascending order, whatever the import order was.
    assert_eq!(texts_of(&reply.body, "id"), [acme::LEARNER, acme::ENGINEER]);
    assert_eq!(
        text_of(&reply.body, "groupId").as_deref(),
        Some(acme::INTERNS)
    );
    assert_eq!(
        text_of(&reply.body, "name").as_deref(),
        Some("Interns & <Juniors>")
    );
    assert!(
        reply.body.contains("Interns &amp; &lt;Juniors&gt;"),
        "text is escaped: {}",
        reply.body
    );
    assert_eq!(text_of(&reply.body, "isSmart").as_deref(), Some("0"));
}

async fn every_role_of_the_permission_table_gets_its_answer(stack: &TestStack) {
    let path = format!("/group/{}", acme::INTERNS);
    let allowed = [
        world::OWNER,
        world::ADMIN,
        world::DEPT_ADMIN,
        world::VIEWER,
        world::COORDINATOR,
    ];
    for login in allowed {
        let reply = stack.get(&path, login).await;
        assert_eq!(
            reply.status, 200,
            "{} should read the group: {}",
            login.email, reply.body
        );
        assert_eq!(
            texts_of(&reply.body, "id").len(),
            2,
            "{} sees the members",
            login.email
        );
    }
    let denied: [Login; 3] = [world::PUBLISHER, world::LEARNER, world::REPORTER];
    for login in denied {
        let reply = stack.get(&path, login).await;
        reply.assert_error(403, "permission");
    }
}

async fn an_author_gets_the_count_but_not_the_members(stack: &TestStack) {
    let reply = stack
        .get(&format!("/group/{}", acme::INTERNS), world::AUTHOR)
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(text_of(&reply.body, "usersCount").as_deref(), Some("2"));
    assert!(
        texts_of(&reply.body, "id").is_empty(),
        "no member ids for an Author: {}",
        reply.body
    );
    assert_eq!(
        element_names(&reply.body),
        [
            "response",
            "group",
            "usersCount",
            "userIds",
            "groupId",
            "name",
            "isSmart"
        ]
    );
}

async fn a_smart_group_lists_the_users_of_its_department_subtree(stack: &TestStack) {
    let reply = stack
        .get(&format!("/group/{}", acme::ALL_OF_SALES), world::ADMIN)
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(text_of(&reply.body, "isSmart").as_deref(), Some("1"));
    // Sales and Sales East: the department administrator, the coordinator, the learner.
    let mut expected = vec![acme::DEPT_ADMIN, acme::LEARNER, acme::COORDINATOR];
    expected.sort();
    assert_eq!(texts_of(&reply.body, "id"), expected);
    assert_eq!(text_of(&reply.body, "usersCount").as_deref(), Some("3"));

    let empty = stack
        .get(&format!("/group/{}", acme::EMPTY_GROUP), world::ADMIN)
        .await;
    assert_eq!(empty.status, 200, "{}", empty.body);
    assert_eq!(text_of(&empty.body, "usersCount").as_deref(), Some("0"));
}

async fn every_authentication_failure_is_the_same_401(stack: &TestStack) {
    let url = format!("{}/group/{}", stack.base_url, acme::INTERNS);
    let headers = |account: Option<&str>, email: Option<&str>, password: Option<&str>| {
        let mut request = stack
            .http
            .get(&url)
            .header("X-Request-Id", "same-for-every-attempt");
        if let Some(account) = account {
            request = request.header("X-Auth-Account-Url", account);
        }
        if let Some(email) = email {
            request = request.header("X-Auth-Email", email);
        }
        if let Some(password) = password {
            request = request.header("X-Auth-Password", password);
        }
        request
    };
    let (url_ok, email_ok, pw_ok) = (world::ACME_URL, world::OWNER.email, world::PASSWORD);
    let attempts = [
        (
            "no account header",
            headers(None, Some(email_ok), Some(pw_ok)),
        ),
        ("no login header", headers(Some(url_ok), None, Some(pw_ok))),
        (
            "no password header",
            headers(Some(url_ok), Some(email_ok), None),
        ),
        (
            "blank login",
            headers(Some(url_ok), Some("   "), Some(pw_ok)),
        ),
        (
            "unknown account",
            headers(
                Some("https://nobody.example.com"),
                Some(email_ok),
                Some(pw_ok),
            ),
        ),
        (
            "unknown login",
            headers(Some(url_ok), Some("ghost@acme.example.com"), Some(pw_ok)),
        ),
        (
            "wrong password",
            headers(Some(url_ok), Some(email_ok), Some("wrong password")),
        ),
        (
            "deactivated user",
            headers(Some(url_ok), Some(world::FORMER_ADMIN.email), Some(pw_ok)),
        ),
        (
            "another account's user",
            headers(Some(url_ok), Some(world::GLOBEX_OWNER.email), Some(pw_ok)),
        ),
    ];
    let mut bodies = Vec::new();
    for (what, request) in attempts {
        let reply = lms_tests::Reply::from(request.send().await.expect("request")).await;
        reply.assert_error(401, "Authentication failed");
        bodies.push((what, reply.body));
    }
    let first = &bodies[0].1;
    for (what, body) in &bodies {
        assert_eq!(body, first, "the 401 for {what} must not differ");
    }
}

async fn unknown_malformed_and_foreign_group_ids_are_404(stack: &TestStack) {
    let unknown = stack
        .get("/group/0191a000-0000-7000-8000-0000000003ff", world::OWNER)
        .await;
    unknown.assert_error(404, "not found");
    let malformed = stack.get("/group/not-a-group", world::OWNER).await;
    malformed.assert_error(404, "not found");
    let foreign = stack
        .get(&format!("/group/{}", globex::CREW), world::OWNER)
        .await;
    foreign.assert_error(404, "not found");
    // Exactly as if it did not exist: same message shape as an unknown id.
    assert_eq!(
        foreign.error_message().replace(globex::CREW, "ID"),
        unknown
            .error_message()
            .replace("0191a000-0000-7000-8000-0000000003ff", "ID")
    );
    // And the other account reads its own group.
    let own = stack
        .get(&format!("/group/{}", globex::CREW), world::GLOBEX_OWNER)
        .await;
    assert_eq!(own.status, 200, "{}", own.body);
}

async fn account_url_and_login_are_matched_leniently(stack: &TestStack) {
    let lenient = Login {
        account_url: "HTTPS://ACME.Example.COM:443/",
        email: "Owner@ACME.example.com",
        id: acme::OWNER,
    };
    let reply = stack
        .get(&format!("/group/{}", acme::INTERNS.to_uppercase()), lenient)
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        text_of(&reply.body, "groupId").as_deref(),
        Some(acme::INTERNS)
    );
}

/// Reads arriving together (on PostgreSQL answered by one statement) each get the answer
/// their own group, account and role call for: members, a count only, a subtree, a 404.
async fn concurrent_reads_each_get_their_own_answer(stack: &TestStack) {
    let mut sorted_sales = vec![acme::DEPT_ADMIN, acme::LEARNER, acme::COORDINATOR];
    sorted_sales.sort();
    // (group, caller, status, usersCount, member ids)
    let cases: [(&str, Login, u16, &str, Vec<&str>); 6] = [
        (
            acme::INTERNS,
            world::OWNER,
            200,
            "2",
            vec![acme::LEARNER, acme::ENGINEER],
        ),
        (acme::INTERNS, world::AUTHOR, 200, "2", vec![]),
        (acme::ALL_OF_SALES, world::ADMIN, 200, "3", sorted_sales),
        (acme::EMPTY_GROUP, world::OWNER, 200, "0", vec![]),
        (globex::CREW, world::OWNER, 404, "", vec![]),
        (
            globex::CREW,
            world::GLOBEX_OWNER,
            200,
            "1",
            vec![globex::WORKER],
        ),
    ];
    // Each login verified once first, so that the reads below arrive together.
    for (group, login, ..) in &cases {
        stack.get(&format!("/group/{group}"), *login).await;
    }
    let reads = (0..8)
        .flat_map(|_| cases.iter())
        .map(
            |(group, login, ..)| async move { stack.get(&format!("/group/{group}"), *login).await },
        );
    let replies = futures::future::join_all(reads).await;
    for (reply, (group, login, status, count, members)) in replies.iter().zip(cases.iter().cycle())
    {
        let what = format!("{group} read by {}", login.email);
        assert_eq!(reply.status, *status, "{what}: {}", reply.body);
        if *status != 200 {
            reply.assert_error(404, "not found");
            continue;
        }
        assert_eq!(
            text_of(&reply.body, "groupId").as_deref(),
            Some(*group),
            "{what}"
        );
        assert_eq!(
            text_of(&reply.body, "usersCount").as_deref(),
            Some(*count),
            "{what}"
        );
        assert_eq!(texts_of(&reply.body, "id"), *members, "{what}");
    }
}
