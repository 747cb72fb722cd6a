use serde_json::{Value, json};

use super::*;

const ROOT: &str = "0191a000-0000-7000-8000-000000000001";
const SALES: &str = "0191a000-0000-7000-8000-000000000002";
const EAST: &str = "0191a000-0000-7000-8000-000000000003";
const ROLE: &str = "0191a000-0000-7000-8000-000000000101";
const OWNER: &str = "0191a000-0000-7000-8000-000000000201";
const TRAINER: &str = "0191a000-0000-7000-8000-000000000202";
const GROUP: &str = "0191a000-0000-7000-8000-000000000301";
const PROJECT: &str = "0191a000-0000-7000-8000-000000000401";
const ITEM: &str = "0191a000-0000-7000-8000-000000000501";
const ENROLLMENT: &str = "0191a000-0000-7000-8000-000000000601";

fn document() -> Value {
    json!({"accounts": [{
        "url": "HTTPS://Acme.Example.com:443/",
        "rootDepartment": {"id": ROOT, "name": "Acme", "code": "ACME"},
        "departments": [
            {"id": EAST, "name": "Sales East", "parentDepartmentId": SALES},
            {"id": SALES, "name": " Sales ", "code": "", "parentDepartmentId": ROOT}
        ],
        "customRoles": [{"id": ROLE, "name": "Trainer", "permissions": ["group.read", "group.read"]}],
        "users": [
            {"id": OWNER, "email": "Owner@Acme.example.com", "password": "password", "role": "account_owner",
             "departmentId": ROOT},
            {"id": TRAINER, "email": "trainer@acme.example.com", "password": "password", "role": "custom",
             "customRoleId": ROLE, "departmentId": EAST, "managedDepartmentIds": [SALES, SALES]}
        ],
        "groups": [{"id": GROUP, "name": "Interns", "userIds": [TRAINER]}],
        "projects": [{"id": PROJECT, "name": "Onboarding", "authorIds": [OWNER]}],
        "contentItems": [{"id": ITEM, "projectId": PROJECT, "title": "Welcome", "userId": OWNER,
                          "addedDate": "2019-03-26T08:34:57.250+02:00", "type": "Course"}],
        "enrollments": [{"id": ENROLLMENT, "learnerId": TRAINER, "contentItemId": ITEM}],
        "points": [{"userId": TRAINER, "points": 421}]
    }]})
}

fn check(value: Value) -> Result<Plan, ImportError> {
    validate(&serde_json::from_value(value).unwrap())
}

fn refusal(value: Value) -> String {
    check(value).unwrap_err().to_string()
}

#[test]
fn a_valid_document_becomes_a_plan() {
    let plan = check(document()).unwrap();
    let account = &plan.accounts[0];
    assert_eq!(account.url, "https://acme.example.com");
    let names: Vec<&str> = account
        .departments
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(names, ["Acme", "Sales", "Sales East"]);
    assert_eq!(account.departments[1].code, None);
    // 3 self rows, Sales under Acme, East under Sales and Acme.
    assert_eq!(account.closure.len(), 6);
    assert_eq!(account.custom_roles[0].permissions.len(), 1);
    assert_eq!(account.users[0].email, "Owner@Acme.example.com");
    assert_eq!(account.users[0].email_key, "owner@acme.example.com");
    assert_eq!(account.users[1].managed_department_ids.len(), 1);
    assert_eq!(
        account.content_items[0].added_at.to_rfc3339(),
        "2019-03-26T06:34:57+00:00"
    );
    assert_eq!(account.content_items[0].view_url, None);
    assert_eq!(plan.ids.len() + account.enrollments.len(), 10);
}

#[test]
fn a_cycle_is_refused_naming_a_department_in_it() {
    let mut doc = document();
    doc["accounts"][0]["departments"][1]["parentDepartmentId"] = json!(EAST);
    let message = refusal(doc);
    assert!(
        message.starts_with(&format!("accounts[0].departments[0] (id \"{EAST}\"): ")),
        "{message}"
    );
    assert!(message.contains("cycle"), "{message}");
}

#[test]
fn unknown_references_are_refused_naming_the_field() {
    let mut doc = document();
    doc["accounts"][0]["users"][1]["departmentId"] = json!("0191a000-0000-7000-8000-0000000009ff");
    let message = refusal(doc);
    assert!(
        message
            .starts_with("accounts[0].users[1] (email \"trainer@acme.example.com\"): departmentId")
    );
    assert!(
        message.contains("names no department of this account"),
        "{message}"
    );

    let mut doc = document();
    doc["accounts"][0]["departments"][0]["parentDepartmentId"] = json!("nope");
    assert!(refusal(doc).contains("parentDepartmentId \"nope\" is not a UUID"));
}

#[test]
fn duplicate_ids_of_any_kind_are_refused() {
    let mut doc = document();
    doc["accounts"][0]["projects"][0]["id"] = json!(GROUP.to_uppercase());
    let message = refusal(doc);
    assert!(message.starts_with("accounts[0].projects[0]"), "{message}");
    assert!(
        message.contains("used twice") && message.contains("accounts[0].groups[0]"),
        "{message}"
    );
}

#[test]
fn logins_differing_only_in_case_are_refused() {
    let mut doc = document();
    doc["accounts"][0]["users"][1]["email"] = json!("OWNER@acme.example.COM");
    let message = refusal(doc);
    assert!(message.starts_with(
        "accounts[0].users[1] (email \"OWNER@acme.example.COM\"): login is used twice"
    ));
}

#[test]
fn account_urls_differing_only_by_scheme_are_refused() {
    let mut doc = document();
    let second = json!({"url": "http://acme.example.com", "rootDepartment": {
        "id": "0191a000-0000-7000-8000-000000000aaa", "name": "Again"}});
    doc["accounts"].as_array_mut().unwrap().push(second);
    let message = refusal(doc);
    assert!(
        message.starts_with("accounts[1]") && message.contains("whatever the scheme"),
        "{message}"
    );
}

#[test]
fn the_same_account_url_twice_is_refused() {
    let mut doc = document();
    let mut second = json!({"url": "https://acme.example.com", "rootDepartment": {
        "id": "0191a000-0000-7000-8000-000000000aaa", "name": "Again"}});
    second["url"] = json!("https://ACME.example.com/");
    doc["accounts"].as_array_mut().unwrap().push(second);
    let message = refusal(doc);
    assert!(
        message.starts_with("accounts[1]") && message.contains("same account as accounts[0]"),
        "{message}"
    );
}

#[test]
fn references_must_stay_inside_their_account() {
    let mut doc = document();
    doc["accounts"].as_array_mut().unwrap().push(json!({
        "url": "https://globex.example.com",
        "rootDepartment": {"id": "0191b000-0000-7000-8000-000000000001", "name": "Globex"},
        "groups": [{"id": "0191b000-0000-7000-8000-000000000301", "name": "Crew", "userIds": [OWNER]}]
    }));
    let message = refusal(doc);
    assert!(
        message.starts_with("accounts[1].groups[0]") && message.contains("names no user"),
        "{message}"
    );
}

#[test]
fn roles_and_custom_role_ids_must_agree() {
    let mut doc = document();
    doc["accounts"][0]["users"][0]["customRoleId"] = json!(ROLE);
    assert!(refusal(doc).contains("customRoleId is only for role custom"));
    let mut doc = document();
    doc["accounts"][0]["users"][1]["customRoleId"] = Value::Null;
    assert!(refusal(doc).contains("role custom needs a customRoleId"));
    let mut doc = document();
    doc["accounts"][0]["users"][0]["role"] = json!("admin");
    assert!(refusal(doc).contains("role \"admin\" is not one of account_owner"));
    let mut doc = document();
    doc["accounts"][0]["customRoles"][0]["permissions"] = json!(["groups.read"]);
    assert!(refusal(doc).contains("permission \"groups.read\" is not one of"));
}

#[test]
fn passwords_are_plain_xor_argon2id_hashes() {
    let mut doc = document();
    doc["accounts"][0]["users"][0]["passwordHash"] =
        json!("$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaA");
    assert!(refusal(doc).contains("not both"));
    let mut doc = document();
    doc["accounts"][0]["users"][0]["password"] = json!("");
    assert!(refusal(doc).contains("password must not be empty"));
    let mut doc = document();
    doc["accounts"][0]["users"][0]
        .as_object_mut()
        .unwrap()
        .remove("password");
    assert!(refusal(doc).contains("password or passwordHash is required"));
    let mut doc = document();
    doc["accounts"][0]["users"][0]
        .as_object_mut()
        .unwrap()
        .remove("password");
    doc["accounts"][0]["users"][0]["passwordHash"] = json!("$2b$12$abcdefghijklmnopqrstuv");
    assert!(refusal(doc).contains("argon2id PHC"));
}

#[test]
fn an_imported_password_needs_the_same_eight_characters_as_one_set_over_grpc() {
    let mut doc = document();
    doc["accounts"][0]["users"][0]["password"] = json!("seven77");
    let message = refusal(doc);
    assert!(
        message.starts_with("accounts[0].users[0]")
            && message.contains("password must be at least 8 characters"),
        "{message}"
    );
    let mut doc = document();
    doc["accounts"][0]["users"][0]["password"] = json!("eight888");
    assert!(check(doc).is_ok());
}

#[test]
fn groups_are_plain_or_smart_not_both() {
    let mut doc = document();
    doc["accounts"][0]["groups"][0]["smartDepartmentId"] = json!(SALES);
    assert!(refusal(doc).contains("not both"));
    let mut doc = document();
    doc["accounts"][0]["groups"][0] =
        json!({"id": GROUP, "name": "Sales", "smartDepartmentId": SALES});
    let plan = check(doc).unwrap();
    assert!(plan.accounts[0].groups[0].smart_department_id.is_some());
}

#[test]
fn names_codes_dates_and_points_are_bounded() {
    let mut doc = document();
    doc["accounts"][0]["departments"][0]["name"] = json!("  ");
    assert!(refusal(doc).contains("name must not be blank"));
    let mut doc = document();
    doc["accounts"][0]["rootDepartment"]["code"] = json!("c".repeat(65));
    assert!(refusal(doc).contains("code must be at most 64"));
    let mut doc = document();
    doc["accounts"][0]["groups"][0]["name"] = json!("g".repeat(256));
    assert!(refusal(doc).contains("name must be at most 255"));
    let mut doc = document();
    doc["accounts"][0]["contentItems"][0]["addedDate"] = json!("2019-03-26T06:34:57");
    assert!(refusal(doc).contains("addedDate"));
    let mut doc = document();
    doc["accounts"][0]["contentItems"][0]["type"] = json!("");
    assert!(refusal(doc).contains("type must not be blank"));
    let mut doc = document();
    doc["accounts"][0]["points"] =
        json!([{"userId": OWNER, "points": 1}, {"userId": OWNER, "points": 2}]);
    assert!(refusal(doc).contains("at most one entry per user"));
}

/// Both readers' refusal of `value`: the whole document's and the streamed file's.
fn refusals(value: Value) -> [String; 2] {
    let mut file = tempfile::Builder::new().suffix(".json").tempfile().unwrap();
    std::io::Write::write_all(&mut file, value.to_string().as_bytes()).unwrap();
    let streamed = crate::import::stream::read_json(file.path())
        .unwrap_err()
        .to_string();
    [refusal(value), streamed]
}

#[test]
fn a_repeated_enrollment_id_is_refused_before_any_later_refusal() {
    const LATER: &str = "0191a000-0000-7000-8000-000000000602";
    let enrollment = |id: &str| json!({"id": id, "learnerId": TRAINER, "contentItemId": ITEM});
    let mut doc = document();
    doc["accounts"][0]["enrollments"] = json!([
        enrollment(ENROLLMENT),
        enrollment(LATER),
        enrollment(&ENROLLMENT.to_uppercase()),
    ]);
    // A later entry breaks another rule: the repeated id is still met first.
    doc["accounts"][0]["points"][0]["points"] = json!(-1);
    for message in refusals(doc) {
        assert!(
            message.starts_with(&format!(
                "accounts[0].enrollments[2] (id \"{}\"): id \"{ENROLLMENT}\" is used twice \
                 in the document (first by accounts[0].enrollments[0] (id \"{ENROLLMENT}\"))",
                ENROLLMENT.to_uppercase()
            )),
            "{message}"
        );
    }

    // An enrollment repeating a group's id, and a second account reusing an enrollment's.
    let mut doc = document();
    doc["accounts"][0]["enrollments"][0]["id"] = json!(GROUP);
    for message in refusals(doc) {
        assert!(
            message.starts_with("accounts[0].enrollments[0]"),
            "{message}"
        );
        assert!(
            message.contains("first by accounts[0].groups[0]"),
            "{message}"
        );
    }
    let mut doc = document();
    let mut second = json!({"url": "https://initech.example.com",
        "rootDepartment": {"id": ENROLLMENT, "name": "Initech"}});
    second["departments"] = json!([]);
    doc["accounts"].as_array_mut().unwrap().push(second);
    for message in refusals(doc) {
        assert!(
            message.starts_with("accounts[1].rootDepartment"),
            "{message}"
        );
        assert!(
            message.contains("first by accounts[0].enrollments[0]"),
            "{message}"
        );
    }
}

/// The streamed reader's answer for the one account of `value` written with its keys in
/// `keys`' order (a `Value` writes its keys sorted).
fn streamed_in_order(value: &Value, keys: &[&str]) -> Result<Plan, ImportError> {
    let account = &value["accounts"][0];
    let fields: Vec<String> = keys
        .iter()
        .filter(|key| !account[**key].is_null())
        .map(|key| format!("\"{key}\":{}", account[*key]))
        .collect();
    let text = format!("{{\"accounts\":[{{{}}}]}}", fields.join(","));
    let mut file = tempfile::Builder::new().suffix(".json").tempfile().unwrap();
    std::io::Write::write_all(&mut file, text.as_bytes()).unwrap();
    crate::import::stream::read_json(file.path())
}

#[test]
fn results_read_before_points_are_checked_at_once_and_refused_in_turn() {
    // As the world generator writes them: `results` between `enrollments` and `points`.
    const ORDER: &[&str] = &[
        "url",
        "rootDepartment",
        "departments",
        "customRoles",
        "users",
        "groups",
        "projects",
        "contentItems",
        "enrollments",
        "results",
        "points",
        "apiClients",
    ];
    let result = |status: &str| json!({"enrollmentId": ENROLLMENT, "completionStatus": status});
    let mut doc = document();
    doc["accounts"][0]["results"] = json!([result("in_progress")]);
    let plan = streamed_in_order(&doc, ORDER).unwrap();
    assert_eq!(plan.accounts[0].results.len(), 1);
    assert_eq!(plan.accounts[0].points.len(), 1);
    let whole = check(doc.clone()).unwrap();
    assert_eq!(
        format!("{:?}", plan.accounts[0].results),
        format!("{:?}", whole.accounts[0].results)
    );

    // Both lists bad: `points` is checked first, so its entry is refused first.
    doc["accounts"][0]["results"] = json!([result("done")]);
    doc["accounts"][0]["points"][0]["points"] = json!(-1);
    for message in [
        refusal(doc.clone()),
        streamed_in_order(&doc, ORDER).unwrap_err().to_string(),
    ] {
        assert!(
            message.starts_with("accounts[0].points[0]") && message.contains("negative"),
            "{message}"
        );
    }

    // Only `results` bad: its first bad entry, whatever follows it.
    doc["accounts"][0]["points"][0]["points"] = json!(1);
    doc["accounts"][0]["results"] = json!([result("passed"), result("failed"), result("done")]);
    for message in [
        refusal(doc.clone()),
        streamed_in_order(&doc, ORDER).unwrap_err().to_string(),
    ] {
        assert!(
            message.starts_with(&format!(
                "accounts[0].results[0] (enrollmentId \"{ENROLLMENT}\"): completionDate"
            )),
            "{message}"
        );
    }
    doc["accounts"][0]["results"] = json!([result("in_progress"), result("in_progress")]);
    for message in [
        refusal(doc.clone()),
        streamed_in_order(&doc, ORDER).unwrap_err().to_string(),
    ] {
        assert!(
            message.starts_with("accounts[0].results[1]")
                && message.contains("already has a result in accounts[0].results[0]"),
            "{message}"
        );
    }
}
