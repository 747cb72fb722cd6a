//! `GET /group` and `GET /groups` (neighbours.md 7.1, 7.2) through the real gateway and core:
//! both formats with each list's own `isSmart` spelling, every prefix, who may list (open
//! question 17: a department administrator lists every group), tenant isolation, paging and
//! its refusals, and a token alone.

use lms_proto::v1::{self as pb, directory_service_client::DirectoryServiceClient};
use lms_tests::{
    Reply, TestStack, get_json, json_of, on_both_backends,
    rows::grant,
    walk_xml_pages,
    world::{self, acme, globex},
    xml::{text_of, texts_of},
    xml_ids,
};
use serde_json::json;

on_both_backends!(
    the_owner_lists_groups_in_xml_and_json_under_every_prefix,
    group_readers_list_every_group_and_other_roles_are_refused,
    another_accounts_groups_are_never_listed,
    pages_walk_every_group_once_and_only_a_page_with_more_after_it_has_a_token,
    bad_page_sizes_tokens_and_parameters_are_400_naming_them,
    a_token_alone_lists_groups,
);

const PREFIXES: [&str; 3] = ["", "/api/v2", "/index.php/api/v2"];
/// The world's Acme groups, ascending by id.
const ACME: [&str; 3] = [acme::INTERNS, acme::ALL_OF_SALES, acme::EMPTY_GROUP];
const ID: &str = "groupId";

async fn the_owner_lists_groups_in_xml_and_json_under_every_prefix(stack: &TestStack) {
    for prefix in PREFIXES {
        for slash in ["", "/"] {
            let list = stack
                .get(&format!("{prefix}/group{slash}"), world::OWNER)
                .await;
            assert_eq!(xml_ids(&list, ID), ACME, "{prefix}");
            assert_eq!(
                list.body,
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response>\
                 <group><groupId>0191a000-0000-7000-8000-000000000301</groupId>\
                 <name>Interns &amp; &lt;Juniors&gt;</name><isSmart>false</isSmart></group>\
                 <group><groupId>0191a000-0000-7000-8000-000000000302</groupId>\
                 <name>All of Sales</name><isSmart>true</isSmart></group>\
                 <group><groupId>0191a000-0000-7000-8000-000000000303</groupId>\
                 <name>Nobody yet</name><isSmart>false</isSmart></group></response>"
            );
            let page = stack
                .get(&format!("{prefix}/groups{slash}"), world::OWNER)
                .await;
            assert_eq!(xml_ids(&page, ID), ACME);
            assert_eq!(texts_of(&page.body, "isSmart"), ["0", "1", "0"]);
            assert!(
                page.body.contains("<response><groups><group>"),
                "{}",
                page.body
            );
            assert_eq!(text_of(&page.body, "nextPageToken"), None);
        }
        let list = json_of(&get_json(stack, &format!("{prefix}/group"), world::OWNER).await);
        assert_eq!(
            list,
            json!([
                {"groupId": acme::INTERNS, "name": "Interns & <Juniors>", "isSmart": false},
                {"groupId": acme::ALL_OF_SALES, "name": "All of Sales", "isSmart": true},
                {"groupId": acme::EMPTY_GROUP, "name": "Nobody yet", "isSmart": false},
            ])
        );
        let page = json_of(&get_json(stack, &format!("{prefix}/groups"), world::OWNER).await);
        assert_eq!(
            page,
            json!({"groups": [
                {"groupId": acme::INTERNS, "name": "Interns & <Juniors>", "isSmart": 0},
                {"groupId": acme::ALL_OF_SALES, "name": "All of Sales", "isSmart": 1},
                {"groupId": acme::EMPTY_GROUP, "name": "Nobody yet", "isSmart": 0},
            ]})
        );
    }
}

async fn group_readers_list_every_group_and_other_roles_are_refused(stack: &TestStack) {
    // The department administrator manages Sales only, yet lists every group (Q17), as it
    // reads any of them one by one; the Viewer and the Coordinator hold `group.read`.
    for login in [
        world::ADMIN,
        world::DEPT_ADMIN,
        world::VIEWER,
        world::COORDINATOR,
    ] {
        for path in ["/group", "/groups"] {
            assert_eq!(
                xml_ids(&stack.get(path, login).await, ID),
                ACME,
                "{login:?}"
            );
        }
    }
    for login in [
        world::PUBLISHER,
        world::AUTHOR,
        world::LEARNER,
        world::REPORTER,
    ] {
        for path in ["/group", "/groups"] {
            stack
                .get(path, login)
                .await
                .assert_error(403, "permission to read groups");
        }
    }
    // Permission comes before input: a refused caller learns nothing of the paging rules.
    stack
        .get("/groups?pageSize=0", world::LEARNER)
        .await
        .assert_error(403, "permission");
    // A custom role given `group.read` lists from its next call on.
    grant(stack, acme::REPORTER_ROLE, "group.read").await;
    stack.forget_remembered_callers();
    assert_eq!(
        xml_ids(&stack.get("/group", world::REPORTER).await, ID),
        ACME
    );
}

async fn another_accounts_groups_are_never_listed(stack: &TestStack) {
    for path in ["/group", "/groups"] {
        assert_eq!(
            xml_ids(&stack.get(path, world::GLOBEX_OWNER).await, ID),
            [globex::CREW]
        );
        let acme = xml_ids(&stack.get(path, world::OWNER).await, ID);
        assert!(!acme.contains(&globex::CREW.to_owned()));
    }
}

async fn pages_walk_every_group_once_and_only_a_page_with_more_after_it_has_a_token(
    stack: &TestStack,
) {
    // Enough groups for a few pages: the world's three and seven more.
    let mut directory = DirectoryServiceClient::new(stack.grpc_channel().await);
    let mut all: Vec<String> = ACME.iter().map(|id| (*id).to_owned()).collect();
    for n in 0..7 {
        let made = directory
            .create_group(world::OWNER.grpc_request(pb::CreateGroupRequest {
                name: format!("Group {n}"),
                smart_department_id: None,
            }))
            .await
            .expect("a group")
            .into_inner();
        all.push(made.group_id);
    }
    all.sort();
    for size in [1_usize, 3, 5, 10, 11] {
        let walk = walk_xml_pages(
            stack,
            &format!("/groups?pageSize={size}"),
            &world::OWNER.headers(),
            ID,
        )
        .await;
        walk.assert_full_before_last(size);
        assert_eq!(walk.ids, all, "pageSize {size}");
    }
    let first = json_of(&get_json(stack, "/groups?pageSize=4", world::OWNER).await);
    let token = first["nextPageToken"].as_str().expect("a token");
    let second = json_of(
        &get_json(
            stack,
            &format!("/groups?pageSize=4&pageToken={token}"),
            world::OWNER,
        )
        .await,
    );
    assert_eq!(second["groups"][0]["groupId"], json!(all[4]));
    assert_eq!(
        json_of(&get_json(stack, "/group", world::OWNER).await)
            .as_array()
            .map(Vec::len),
        Some(10)
    );
}

async fn bad_page_sizes_tokens_and_parameters_are_400_naming_them(stack: &TestStack) {
    for size in ["0", "10001", "-1", "ten"] {
        stack
            .get(&format!("/groups?pageSize={size}"), world::OWNER)
            .await
            .assert_error(400, "pageSize");
    }
    // A token of the department listing, and one that was never written.
    let departments = stack.get("/departments?pageSize=1", world::OWNER).await;
    let token = text_of(&departments.body, "nextPageToken").expect("a department token");
    for token in [token.as_str(), "bm9wZQ", "!!"] {
        stack
            .get(&format!("/groups?pageToken={token}"), world::OWNER)
            .await
            .assert_error(400, "pageToken");
    }
    stack
        .get("/groups?page_size=5", world::OWNER)
        .await
        .assert_error(400, "page_size");
    stack
        .get("/group?name=Interns", world::OWNER)
        .await
        .assert_error(400, "name");
    stack
        .request(reqwest::Method::PUT, "/groups", world::OWNER)
        .send()
        .await
        .map(|response| assert_eq!(response.status(), 405))
        .expect("request");
}

async fn a_token_alone_lists_groups(stack: &TestStack) {
    let bearer = stack.bearer_for(acme::ADMIN).await;
    for path in [
        "/api/v2/group",
        "/groups",
        "/index.php/api/v2/groups?pageSize=2",
    ] {
        let reply = Reply::send(
            stack
                .http
                .get(format!("{}{path}", stack.base_url))
                .header("Authorization", bearer.as_str()),
        )
        .await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.body);
        assert!(!xml_ids(&reply, ID).is_empty());
    }
}
