//! The world every end-to-end test starts from: two accounts imported through the real
//! import path, with one user of every role, scoped managers, plain and smart groups,
//! projects, content items, enrollments and points. Ids are fixed so tests can name them.

use sea_orm::prelude::Uuid;
use serde_json::{Value, json};

pub const PASSWORD: &str = "correct horse battery staple";

pub const ACME_URL: &str = "https://acme.example.com";
pub const GLOBEX_URL: &str = "https://globex.example.com";

/// Identifiers of the Acme account (the one most tests act in).
pub mod acme {
    pub const ROOT: &str = "0191a000-0000-7000-8000-000000000001";
    pub const SALES: &str = "0191a000-0000-7000-8000-000000000002";
    pub const SALES_EAST: &str = "0191a000-0000-7000-8000-000000000003";
    pub const ENGINEERING: &str = "0191a000-0000-7000-8000-000000000004";
    pub const SUPPORT: &str = "0191a000-0000-7000-8000-000000000005";

    pub const COORDINATOR_ROLE: &str = "0191a000-0000-7000-8000-000000000101";
    pub const VIEWER_ROLE: &str = "0191a000-0000-7000-8000-000000000102";
    pub const REPORTER_ROLE: &str = "0191a000-0000-7000-8000-000000000103";

    pub const OWNER: &str = "0191a000-0000-7000-8000-000000000201";
    pub const ADMIN: &str = "0191a000-0000-7000-8000-000000000202";
    pub const DEPT_ADMIN: &str = "0191a000-0000-7000-8000-000000000203";
    pub const PUBLISHER: &str = "0191a000-0000-7000-8000-000000000204";
    pub const AUTHOR: &str = "0191a000-0000-7000-8000-000000000205";
    pub const LEARNER: &str = "0191a000-0000-7000-8000-000000000206";
    pub const COORDINATOR: &str = "0191a000-0000-7000-8000-000000000207";
    pub const VIEWER: &str = "0191a000-0000-7000-8000-000000000208";
    pub const ENGINEER: &str = "0191a000-0000-7000-8000-000000000209";
    pub const FORMER_ADMIN: &str = "0191a000-0000-7000-8000-00000000020a";
    pub const SUPPORTER: &str = "0191a000-0000-7000-8000-00000000020b";
    /// Custom role with `points.read` only, managing Engineering.
    pub const REPORTER: &str = "0191a000-0000-7000-8000-00000000020c";
    /// Every user above, ascending by id.
    pub const USERS: [&str; 12] = [
        OWNER,
        ADMIN,
        DEPT_ADMIN,
        PUBLISHER,
        AUTHOR,
        LEARNER,
        COORDINATOR,
        VIEWER,
        ENGINEER,
        FORMER_ADMIN,
        SUPPORTER,
        REPORTER,
    ];

    pub const INTERNS: &str = "0191a000-0000-7000-8000-000000000301";
    pub const ALL_OF_SALES: &str = "0191a000-0000-7000-8000-000000000302";
    pub const EMPTY_GROUP: &str = "0191a000-0000-7000-8000-000000000303";

    pub const ONBOARDING: &str = "0191a000-0000-7000-8000-000000000401";
    pub const SECRET_PROJECT: &str = "0191a000-0000-7000-8000-000000000402";

    pub const WELCOME_COURSE: &str = "0191a000-0000-7000-8000-000000000501";
    pub const SECRET_COURSE: &str = "0191a000-0000-7000-8000-000000000502";

    /// Learner (Sales East) in Welcome Course.
    pub const LEARNER_WELCOME: &str = "0191a000-0000-7000-8000-000000000601";
    /// Engineer (Engineering) in Welcome Course.
    pub const ENGINEER_WELCOME: &str = "0191a000-0000-7000-8000-000000000602";
    /// Learner (Sales East) in Secret Course.
    pub const LEARNER_SECRET: &str = "0191a000-0000-7000-8000-000000000603";
    /// Supporter (Support) in Welcome Course.
    pub const SUPPORTER_WELCOME: &str = "0191a000-0000-7000-8000-000000000604";
}

/// Identifiers of the Globex account (the other tenant).
pub mod globex {
    pub const ROOT: &str = "0191b000-0000-7000-8000-000000000001";
    pub const PLANT: &str = "0191b000-0000-7000-8000-000000000002";
    pub const OWNER: &str = "0191b000-0000-7000-8000-000000000201";
    pub const WORKER: &str = "0191b000-0000-7000-8000-000000000202";
    pub const CREW: &str = "0191b000-0000-7000-8000-000000000301";
    pub const PROJECT: &str = "0191b000-0000-7000-8000-000000000401";
    pub const COURSE: &str = "0191b000-0000-7000-8000-000000000501";
    pub const ENROLLMENT: &str = "0191b000-0000-7000-8000-000000000601";
}

/// The id `id` (a world id, or one an answer gave) as a [`Uuid`], to look rows up by.
#[track_caller]
pub fn uuid(id: &str) -> Uuid {
    Uuid::parse_str(id).unwrap_or_else(|error| panic!("{id:?} is not a UUID: {error}"))
}

/// A user the tests log in as.
#[derive(Debug, Clone, Copy)]
pub struct Login {
    pub account_url: &'static str,
    pub email: &'static str,
    pub id: &'static str,
}

impl Login {
    /// The headers an XML-interface client sends to act as this user.
    pub fn headers(self) -> [(&'static str, &'static str); 3] {
        [
            ("X-Auth-Account-Url", self.account_url),
            ("X-Auth-Email", self.email),
            ("X-Auth-Password", PASSWORD),
        ]
    }

    /// `message` as a gRPC request carrying this user's credentials.
    pub fn grpc_request<T>(self, message: T) -> tonic::Request<T> {
        use lms_proto::metadata::{ACCOUNT_URL, EMAIL, PASSWORD as PASSWORD_KEY};
        let mut request = tonic::Request::new(message);
        let metadata = request.metadata_mut();
        metadata.insert(ACCOUNT_URL, self.account_url.parse().expect("ascii"));
        metadata.insert(EMAIL, self.email.parse().expect("ascii"));
        metadata.insert(PASSWORD_KEY, PASSWORD.parse().expect("ascii"));
        request
    }
}

macro_rules! login {
    ($name:ident, $url:expr, $email:expr, $id:expr) => {
        pub const $name: Login = Login {
            account_url: $url,
            email: $email,
            id: $id,
        };
    };
}

login!(OWNER, ACME_URL, "owner@acme.example.com", acme::OWNER);
login!(ADMIN, ACME_URL, "admin@acme.example.com", acme::ADMIN);
login!(
    DEPT_ADMIN,
    ACME_URL,
    "sales.admin@acme.example.com",
    acme::DEPT_ADMIN
);
login!(
    PUBLISHER,
    ACME_URL,
    "publisher@acme.example.com",
    acme::PUBLISHER
);
login!(AUTHOR, ACME_URL, "author@acme.example.com", acme::AUTHOR);
login!(LEARNER, ACME_URL, "learner@acme.example.com", acme::LEARNER);
login!(
    COORDINATOR,
    ACME_URL,
    "coordinator@acme.example.com",
    acme::COORDINATOR
);
login!(VIEWER, ACME_URL, "viewer@acme.example.com", acme::VIEWER);
login!(
    REPORTER,
    ACME_URL,
    "reporter@acme.example.com",
    acme::REPORTER
);
login!(
    FORMER_ADMIN,
    ACME_URL,
    "former.admin@acme.example.com",
    acme::FORMER_ADMIN
);
login!(
    GLOBEX_OWNER,
    GLOBEX_URL,
    "owner@globex.example.com",
    globex::OWNER
);

/// The import document of the world.
pub fn document() -> Value {
    use acme as a;
    use globex as g;
    let user = |id: &str, email: &str, role: &str, department: &str, managed: &[&str]| {
        json!({
            "id": id, "email": email, "password": PASSWORD, "role": role,
            "departmentId": department, "managedDepartmentIds": managed, "active": true,
        })
    };
    let custom = |id: &str, email: &str, role_id: &str, department: &str, managed: &[&str]| {
        json!({
            "id": id, "email": email, "password": PASSWORD, "role": "custom",
            "customRoleId": role_id, "departmentId": department,
            "managedDepartmentIds": managed, "active": true,
        })
    };
    let mut former_admin = user(
        a::FORMER_ADMIN,
        FORMER_ADMIN.email,
        "account_administrator",
        a::ROOT,
        &[],
    );
    former_admin["active"] = json!(false);
    json!({
        "accounts": [
            {
                "url": ACME_URL,
                "rootDepartment": {"id": a::ROOT, "name": "Acme", "code": "ACME"},
                // Children before parents on purpose: the import accepts any order.
                "departments": [
                    {"id": a::SALES_EAST, "name": "Sales East", "code": "SE", "parentDepartmentId": a::SALES},
                    {"id": a::SALES, "name": "Sales", "code": "S", "parentDepartmentId": a::ROOT},
                    {"id": a::ENGINEERING, "name": "Engineering", "parentDepartmentId": a::ROOT},
                    {"id": a::SUPPORT, "name": "Support", "parentDepartmentId": a::ROOT}
                ],
                "customRoles": [
                    {"id": a::COORDINATOR_ROLE, "name": "Coordinator", "permissions": [
                        "department.create", "department.update", "group.read", "group.update",
                        "enrollment.delete", "content.read", "points.read"]},
                    {"id": a::VIEWER_ROLE, "name": "Viewer", "permissions": ["group.read"]},
                    {"id": a::REPORTER_ROLE, "name": "Reporter", "permissions": ["points.read"]}
                ],
                "users": [
                    user(a::OWNER, OWNER.email, "account_owner", a::ROOT, &[]),
                    user(a::ADMIN, ADMIN.email, "account_administrator", a::ROOT, &[]),
                    user(a::DEPT_ADMIN, DEPT_ADMIN.email, "department_administrator", a::SALES, &[a::SALES]),
                    user(a::PUBLISHER, PUBLISHER.email, "publisher", a::ENGINEERING, &[a::ENGINEERING]),
                    user(a::AUTHOR, AUTHOR.email, "author", a::ENGINEERING, &[]),
                    user(a::LEARNER, LEARNER.email, "learner", a::SALES_EAST, &[]),
                    custom(a::COORDINATOR, COORDINATOR.email, a::COORDINATOR_ROLE, a::SALES, &[a::SALES]),
                    custom(a::VIEWER, VIEWER.email, a::VIEWER_ROLE, a::SUPPORT, &[]),
                    custom(a::REPORTER, REPORTER.email, a::REPORTER_ROLE, a::ENGINEERING, &[a::ENGINEERING]),
                    user(a::ENGINEER, "engineer@acme.example.com", "learner", a::ENGINEERING, &[]),
                    former_admin,
                    user(a::SUPPORTER, "supporter@acme.example.com", "learner", a::SUPPORT, &[])
                ],
                "groups": [
                    {"id": a::INTERNS, "name": "Interns & <Juniors>", "userIds": [a::ENGINEER, a::LEARNER]},
                    {"id": a::ALL_OF_SALES, "name": "All of Sales", "smartDepartmentId": a::SALES},
                    {"id": a::EMPTY_GROUP, "name": "Nobody yet", "userIds": []}
                ],
                "projects": [
                    {"id": a::ONBOARDING, "name": "Onboarding", "authorIds": [a::AUTHOR]},
                    {"id": a::SECRET_PROJECT, "name": "Secret", "authorIds": []}
                ],
                "contentItems": [
                    {"id": a::WELCOME_COURSE, "projectId": a::ONBOARDING, "title": "Welcome to Acme",
                     "description": "Everything a new colleague needs & more", "userId": a::AUTHOR,
                     "addedDate": "2019-03-26T06:34:57+00:00", "type": "Course", "viewUrl": null},
                    {"id": a::SECRET_COURSE, "projectId": a::SECRET_PROJECT, "title": "Secret plans",
                     "description": "", "userId": a::OWNER,
                     "addedDate": "2020-01-02T03:04:05+02:00", "type": "Course",
                     "viewUrl": "https://cdn.acme.example.com/secret"}
                ],
                "enrollments": [
                    {"id": a::LEARNER_WELCOME, "learnerId": a::LEARNER, "contentItemId": a::WELCOME_COURSE},
                    {"id": a::ENGINEER_WELCOME, "learnerId": a::ENGINEER, "contentItemId": a::WELCOME_COURSE},
                    {"id": a::LEARNER_SECRET, "learnerId": a::LEARNER, "contentItemId": a::SECRET_COURSE},
                    {"id": a::SUPPORTER_WELCOME, "learnerId": a::SUPPORTER, "contentItemId": a::WELCOME_COURSE}
                ],
                "points": [
                    {"userId": a::LEARNER, "points": 421},
                    {"userId": a::ENGINEER, "points": 17},
                    {"userId": a::OWNER, "points": 5}
                ]
            },
            {
                "url": GLOBEX_URL,
                "rootDepartment": {"id": g::ROOT, "name": "Globex"},
                "departments": [{"id": g::PLANT, "name": "Plant", "parentDepartmentId": g::ROOT}],
                "users": [
                    user(g::OWNER, GLOBEX_OWNER.email, "account_owner", g::ROOT, &[]),
                    user(g::WORKER, "worker@globex.example.com", "learner", g::PLANT, &[])
                ],
                "groups": [{"id": g::CREW, "name": "Crew", "userIds": [g::WORKER]}],
                "projects": [{"id": g::PROJECT, "name": "Safety", "authorIds": []}],
                "contentItems": [
                    {"id": g::COURSE, "projectId": g::PROJECT, "title": "Safety first", "description": "",
                     "userId": g::OWNER, "addedDate": "2021-05-06T07:08:09+00:00", "type": "Course"}
                ],
                "enrollments": [{"id": g::ENROLLMENT, "learnerId": g::WORKER, "contentItemId": g::COURSE}],
                "points": [{"userId": g::WORKER, "points": 99}]
            }
        ]
    })
}

/// A stack holding `document` (usually [`document`] with rows added) instead of the world:
/// scenarios that need thousands of rows import them in one transaction, which takes a
/// fraction of the time of one call each.
pub async fn stack_holding(backend: crate::Backend, document: Value) -> Option<crate::TestStack> {
    let stack = crate::TestStack::start_with(crate::stack::StackOptions {
        with_world: false,
        ..crate::stack::StackOptions::new(backend)
    })
    .await?;
    let document = serde_json::from_value(document).expect("a document of the right shape");
    let hasher = lms_core::auth::PasswordHasher::new(crate::stack::TEST_POLICY).expect("policy");
    lms_core::import::import_document(stack.db(), document, &hasher)
        .await
        .expect("the document imports");
    Some(stack)
}

/// Appends `rows` to the list `list` (`"users"`, `"enrollments"`, ...) of account number
/// `account` of an import document.
pub fn add_rows(document: &mut Value, account: usize, list: &str, rows: Vec<Value>) {
    document["accounts"][account][list]
        .as_array_mut()
        .unwrap_or_else(|| panic!("account {account} has a list {list:?}"))
        .extend(rows);
}

/// Appends a learner `bulk{n}@acme.example.com` in `department` for each of `ids` to Acme's
/// users of `document`. One password hash serves them all (the import stores a given hash as
/// it is instead of hashing each password), so thousands of users import in seconds.
pub fn add_bulk_learners(document: &mut Value, ids: &[String], department: &str) {
    let hash = lms_core::auth::PasswordHasher::new(crate::stack::TEST_POLICY)
        .expect("policy")
        .hash("bulk-password")
        .expect("hash");
    let users = ids
        .iter()
        .enumerate()
        .map(|(n, id)| {
            json!({"id": id, "email": format!("bulk{n}@acme.example.com"),
                   "passwordHash": hash, "role": "learner",
                   "departmentId": department, "active": true})
        })
        .collect();
    add_rows(document, 0, "users", users);
}
