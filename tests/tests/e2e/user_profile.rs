//! The parts of a user profile beyond the contract's user (neighbours.md section 4): a login
//! apart from the e-mail address, the other profile fields (`JOB_TITLE`, `PHONE`, …), and
//! `lastLoginDate`, through the real gateway and core on both backends.

use lms_core::entities::{user_field, user_sign_in};
use lms_tests::{
    Reply, TestStack, get_json, json_of, on_both_backends,
    world::{self, acme},
    xml::text_of,
};
use sea_orm::{ColumnTrait as _, EntityTrait as _, PaginatorTrait as _, QueryFilter as _};
use serde_json::{Value, json};

on_both_backends!(
    a_login_apart_from_the_email_signs_in_and_both_filter,
    other_profile_fields_are_stored_changed_and_removed,
    the_last_sign_in_date_is_shown_once_the_user_signs_in,
    group_ids_of_a_write_make_and_replace_memberships,
);

const PASSWORD: &str = "a password of the new hire";

/// Adds a learner in Sales with login `jdoe` and its own e-mail address, and returns its id.
async fn add_jdoe(stack: &TestStack) -> String {
    let body = format!(
        "<request><departmentId>{}</departmentId><password>{PASSWORD}</password><fields>\
         <login>jdoe</login><email>John.Doe@Mail.example</email><first_name>John</first_name>\
         <job_title>Clerk</job_title><phone>+1 555 0100</phone>\
         <user_defined_field1>badge 7</user_defined_field1><country></country></fields>\
         <role>learner</role></request>",
        acme::SALES
    );
    let reply = stack.post_xml("/user", world::OWNER, &body).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    text_of(&reply.body, "response").expect("the new id")
}

/// `GET path` signed in as `login`.
async fn get_as(stack: &TestStack, login: &str, path: &str) -> Reply {
    Reply::send(
        stack
            .http
            .get(format!("{}{path}", stack.base_url))
            .header("X-Auth-Account-Url", world::ACME_URL)
            .header("X-Auth-Email", login)
            .header("X-Auth-Password", PASSWORD)
            .header("Accept", "application/json"),
    )
    .await
}

fn fields(profile: &Value) -> Vec<(String, String)> {
    profile["fields"]
        .as_array()
        .expect("fields")
        .iter()
        .map(|field| {
            let text = |key: &str| field[key].as_str().expect("text").to_owned();
            (text("name"), text("value"))
        })
        .collect()
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect()
}

async fn profile(stack: &TestStack, id: &str) -> Value {
    json_of(&get_json(stack, &format!("/user/{id}"), world::OWNER).await)
}

async fn ids_of(stack: &TestStack, query: &str) -> Vec<String> {
    let list = json_of(&get_json(stack, &format!("/user?{query}"), world::OWNER).await);
    list.as_array()
        .expect("a top-level array")
        .iter()
        .map(|profile| profile["userId"].as_str().expect("userId").to_owned())
        .collect()
}

// ---------------------------------------------------------------------------------------------

async fn a_login_apart_from_the_email_signs_in_and_both_filter(stack: &TestStack) {
    let id = add_jdoe(stack).await;
    let shown = profile(stack, &id).await;
    assert_eq!(
        fields(&shown)[..4],
        pairs(&[
            ("FIRST_NAME", "John"),
            ("LAST_NAME", ""),
            ("LOGIN", "jdoe"),
            ("EMAIL", "John.Doe@Mail.example"),
        ])
    );
    // The login signs in (case-insensitively), the address does not: a learner gets past
    // authentication and is then refused the directory.
    assert_eq!(get_as(stack, "JDoe", "/user").await.status, 403);
    assert_eq!(
        get_as(stack, "john.doe@mail.example", "/user").await.status,
        401
    );
    // Each filter matches its own value, case-insensitively.
    assert_eq!(ids_of(stack, "logins[]=JDOE").await, [id.as_str()]);
    assert_eq!(
        ids_of(stack, "emails[]=john.doe@mail.example").await,
        [id.as_str()]
    );
    assert!(ids_of(stack, "emails[]=jdoe").await.is_empty());
    assert!(
        ids_of(stack, "logins[]=john.doe@mail.example")
            .await
            .is_empty()
    );
    // E-mail addresses are unique in the account too, held apart or as a login.
    let taken = format!(
        "<request><departmentId>{}</departmentId><fields><login>other</login>\
         <email>JOHN.DOE@mail.example</email></fields></request>",
        acme::SALES
    );
    let reply = stack.post_xml("/user", world::OWNER, &taken).await;
    reply.assert_error(409, "e-mail address");
    assert!(reply.body.contains(&id), "{}", reply.body);
    let taken = format!(
        "<request><departmentId>{}</departmentId><fields><login>other</login>\
         <email>Engineer@acme.example.com</email></fields></request>",
        acme::SALES
    );
    stack
        .post_xml("/user", world::OWNER, &taken)
        .await
        .assert_error(409, acme::ENGINEER);
    // A user whose login is the address is found by either.
    assert_eq!(
        ids_of(stack, &format!("emails[]={}", world::LEARNER.email)).await,
        [acme::LEARNER]
    );

    // Renaming the login keeps the address; a new address keeps the login.
    let path = format!("/user/{id}");
    let reply = stack
        .post_xml(
            &path,
            world::OWNER,
            "<request><fields><login>john.d</login></fields></request>",
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let reply = stack
        .post_xml(
            &path,
            world::OWNER,
            "<request><fields><email>jd@elsewhere.example</email></fields></request>",
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        fields(&profile(stack, &id).await)[2..4],
        pairs(&[("LOGIN", "john.d"), ("EMAIL", "jd@elsewhere.example")])
    );
    assert_eq!(get_as(stack, "john.d", "/user").await.status, 403);

    // A login that is an address carries the e-mail along when renamed (the contract's
    // users), and a login that is not an address is refused where the contract wants one.
    let learner = format!("/user/{}", acme::LEARNER);
    let reply = stack
        .post_xml(
            &learner,
            world::OWNER,
            "<request><fields><login>lea@acme.example.com</login></fields></request>",
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        fields(&profile(stack, acme::LEARNER).await)[2..4],
        pairs(&[
            ("LOGIN", "lea@acme.example.com"),
            ("EMAIL", "lea@acme.example.com")
        ])
    );
    let before = stack.snapshot().await;
    stack
        .post_xml(
            &path,
            world::OWNER,
            "<request><fields><email>not an address</email></fields></request>",
        )
        .await
        .assert_error(400, "email");
    stack
        .post_xml(
            &path,
            world::OWNER,
            "<request><fields><login>two words</login></fields></request>",
        )
        .await
        .assert_error(400, "login");
    // The login is unique whatever its form: another user's login is refused.
    stack
        .post_xml(
            &learner,
            world::OWNER,
            "<request><fields><login>JOHN.D</login></fields></request>",
        )
        .await
        .assert_error(400, &id);
    assert_eq!(stack.snapshot().await, before);
}

async fn other_profile_fields_are_stored_changed_and_removed(stack: &TestStack) {
    let id = add_jdoe(stack).await;
    // Given in lower case, shown in upper case after the four fixed ones, by name; the
    // empty COUNTRY is not stored.
    let expected = pairs(&[
        ("JOB_TITLE", "Clerk"),
        ("PHONE", "+1 555 0100"),
        ("USER_DEFINED_FIELD1", "badge 7"),
    ]);
    assert_eq!(fields(&profile(stack, &id).await)[4..], expected);
    let xml = stack.get(&format!("/user/{id}"), world::OWNER).await;
    assert!(
        xml.body.contains(
            "<field><name>JOB_TITLE</name><value>Clerk</value></field>\
             <field><name>PHONE</name><value>+1 555 0100</value></field>"
        ),
        "{}",
        xml.body
    );

    // JSON update, the name/value list: a new value, an empty one removes, others stay.
    let reply = Reply::send(
        stack
            .request(reqwest::Method::POST, &format!("/user/{id}"), world::OWNER)
            .header("Content-Type", "application/json")
            .body(
                json!({"fields": [
                    {"name": "JOB_TITLE", "value": "Lead"},
                    {"name": "PHONE", "value": ""},
                    {"name": "COUNTRY", "value": "NZ"}
                ]})
                .to_string(),
            ),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        fields(&profile(stack, &id).await)[4..],
        pairs(&[
            ("COUNTRY", "NZ"),
            ("JOB_TITLE", "Lead"),
            ("USER_DEFINED_FIELD1", "badge 7"),
        ])
    );

    // Bad names and values are refused naming the field, and change nothing.
    let before = stack.snapshot().await;
    let long = "x".repeat(1_001);
    for (body, needle) in [
        (json!({"fields": {"job title": "x"}}), "field 'job title'"),
        (json!({"fields": {"PHONE": long}}), "field 'PHONE'"),
        (
            json!({"fields": [{"name": "PHONE", "value": "1"}, {"name": "phone", "value": "2"}]}),
            "more than once",
        ),
    ] {
        Reply::send(
            stack
                .request(reqwest::Method::POST, &format!("/user/{id}"), world::OWNER)
                .header("Content-Type", "application/json")
                .body(body.to_string()),
        )
        .await
        .assert_error(400, needle);
    }
    assert_eq!(stack.snapshot().await, before);

    // Deleting the user removes its fields too.
    let deleted = Reply::send(stack.request(
        reqwest::Method::DELETE,
        &format!("/user/{id}"),
        world::OWNER,
    ))
    .await;
    assert_eq!(deleted.status, 204, "{}", deleted.body);
    let left = user_field::Entity::find()
        .filter(user_field::Column::UserId.eq(id.parse::<uuid::Uuid>().unwrap()))
        .count(stack.db())
        .await
        .unwrap();
    assert_eq!(left, 0);
}

async fn the_last_sign_in_date_is_shown_once_the_user_signs_in(stack: &TestStack) {
    let id = add_jdoe(stack).await;
    let before = profile(stack, &id).await;
    assert!(before.get("lastLoginDate").is_none(), "{before}");
    assert_eq!(get_as(stack, "jdoe", "/user").await.status, 403);

    // Recorded in the background, so wait for it (a few milliseconds in practice).
    let today = chrono::Utc::now().date_naive().to_string();
    let mut shown = Value::Null;
    for _ in 0..200 {
        shown = profile(stack, &id).await;
        if shown.get("lastLoginDate").is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(shown["lastLoginDate"], today, "{shown}");
    let xml = stack.get(&format!("/user/{id}"), world::OWNER).await;
    assert!(
        xml.body.contains(&format!(
            "</addedDate><lastLoginDate>{today}</lastLoginDate>"
        )),
        "{}",
        xml.body
    );
    // One row per user, however many requests it makes that day.
    for _ in 0..3 {
        get_as(stack, "jdoe", "/user").await;
    }
    let rows = user_sign_in::Entity::find()
        .filter(user_sign_in::Column::UserId.eq(id.parse::<uuid::Uuid>().unwrap()))
        .count(stack.db())
        .await
        .unwrap();
    assert_eq!(rows, 1);
    // A wrong password is no sign-in.
    let learner_before = profile(stack, acme::LEARNER).await;
    let refused = Reply::send(
        stack
            .http
            .get(format!("{}/user", stack.base_url))
            .header("X-Auth-Account-Url", world::ACME_URL)
            .header("X-Auth-Email", world::LEARNER.email)
            .header("X-Auth-Password", "not the password"),
    )
    .await;
    assert_eq!(refused.status, 401);
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let after = profile(stack, acme::LEARNER).await;
    assert_eq!(
        learner_before.get("lastLoginDate"),
        after.get("lastLoginDate")
    );
}

async fn group_ids_of_a_write_make_and_replace_memberships(stack: &TestStack) {
    let body = format!(
        "<request><departmentId>{}</departmentId><fields><login>g@acme.example.com</login>\
         </fields><groupIds><id>{}</id><id>{}</id></groupIds>\
         <sendLoginEmail>false</sendLoginEmail></request>",
        acme::SALES,
        acme::INTERNS,
        acme::EMPTY_GROUP
    );
    let reply = stack.post_xml("/user", world::OWNER, &body).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    let id = text_of(&reply.body, "response").expect("the new id");
    let mut expected = [acme::INTERNS, acme::EMPTY_GROUP];
    expected.sort_unstable();
    assert_eq!(profile(stack, &id).await["groups"], json!(expected));
    let group = json_of(
        &get_json(
            stack,
            &format!("/group/{}", acme::EMPTY_GROUP),
            world::OWNER,
        )
        .await,
    );
    assert_eq!(group["userIds"], json!([id]));

    let path = format!("/user/{id}");
    let post = |body: Value| {
        let request = stack
            .request(reqwest::Method::POST, &path, world::OWNER)
            .header("Content-Type", "application/json")
            .body(body.to_string());
        async move { Reply::from(request.send().await.expect("request")).await }
    };
    // Absent: unchanged; given: the whole new set.
    assert_eq!(
        post(json!({"fields": {"first_name": "G"}})).await.status,
        200
    );
    assert_eq!(profile(stack, &id).await["groups"], json!(expected));
    let reply = post(json!({"groupIds": [acme::INTERNS]})).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(profile(stack, &id).await["groups"], json!([acme::INTERNS]));

    // A smart group, another account's group or a non-id: 400 naming groupIds, nothing
    // changes.
    let before = stack.snapshot().await;
    post(json!({"groupIds": [acme::ALL_OF_SALES]}))
        .await
        .assert_error(400, "smart group");
    post(json!({"groupIds": [world::globex::CREW]}))
        .await
        .assert_error(400, "groupIds");
    post(json!({"groupIds": ["nope"]}))
        .await
        .assert_error(400, "groupIds");
    assert_eq!(stack.snapshot().await, before);

    let reply = post(json!({"groupIds": []})).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(profile(stack, &id).await.get("groups").is_none());
}
