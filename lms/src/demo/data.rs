//! The built-in demo account that `lms up --demo` imports into an empty database.
//!
//! Ids are fixed, so every run produces the same account, and what the launcher prints
//! (the account URL, the logins, one ready `curl` command) stays true across restarts.
//! Every demo login has the password [`DEMO_PASSWORD`].

use uuid::Uuid;

use lms_core::import::document::{
    AccountEntry, ContentItemEntry, CustomRoleEntry, DepartmentEntry, EnrollmentEntry, GroupEntry,
    ImportDocument, PointsEntry, ProjectEntry, RootDepartmentEntry, UserEntry,
};

/// The URL of the demo account (what `X-Auth-Account-Url` carries).
pub const DEMO_ACCOUNT_URL: &str = "https://demo.lms.example";
/// The password of every demo login.
pub const DEMO_PASSWORD: &str = "demo-password";

/// Fixed ids of the demo account, so that tests and instructions can name them.
pub mod ids {
    pub const ACCOUNT: &str = "019a0000-de00-7000-8000-000000000000";

    pub const ROOT: &str = "019a0000-de00-7000-8000-000000000001";
    pub const SALES: &str = "019a0000-de00-7000-8000-000000000002";
    pub const SALES_EAST: &str = "019a0000-de00-7000-8000-000000000003";
    pub const ENGINEERING: &str = "019a0000-de00-7000-8000-000000000004";

    pub const TRAINER_ROLE: &str = "019a0000-de00-7000-8000-000000000101";

    pub const OWNER: &str = "019a0000-de00-7000-8000-000000000201";
    pub const ADMIN: &str = "019a0000-de00-7000-8000-000000000202";
    pub const DEPT_ADMIN: &str = "019a0000-de00-7000-8000-000000000203";
    pub const PUBLISHER: &str = "019a0000-de00-7000-8000-000000000204";
    pub const AUTHOR: &str = "019a0000-de00-7000-8000-000000000205";
    pub const LEARNER: &str = "019a0000-de00-7000-8000-000000000206";
    pub const TRAINER: &str = "019a0000-de00-7000-8000-000000000207";
    pub const INTERN: &str = "019a0000-de00-7000-8000-000000000208";

    pub const INTERNS: &str = "019a0000-de00-7000-8000-000000000301";
    pub const ALL_OF_SALES: &str = "019a0000-de00-7000-8000-000000000302";

    pub const ONBOARDING: &str = "019a0000-de00-7000-8000-000000000401";

    pub const WELCOME_COURSE: &str = "019a0000-de00-7000-8000-000000000501";
    pub const SALES_BASICS: &str = "019a0000-de00-7000-8000-000000000502";

    pub const LEARNER_WELCOME: &str = "019a0000-de00-7000-8000-000000000601";
    pub const INTERN_WELCOME: &str = "019a0000-de00-7000-8000-000000000602";
    pub const LEARNER_SALES_BASICS: &str = "019a0000-de00-7000-8000-000000000603";
}

/// The demo account: its document, and what a person needs to try it.
#[derive(Debug, Clone)]
pub struct DemoAccount {
    pub document: ImportDocument,
    pub account_id: Uuid,
    pub account_url: String,
    /// The password of every login.
    pub password: String,
    /// The account owner's login, for the example request.
    pub owner_login: String,
    /// Every login with its role (`custom role Trainer` for the custom-role user).
    pub logins: Vec<(String, String)>,
    /// The plain group "Interns", whose members a `GET /group/{id}` lists.
    pub plain_group_id: Uuid,
    /// The smart group "All of Sales".
    pub smart_group_id: Uuid,
}

/// The demo account's import document.
pub fn demo_document() -> ImportDocument {
    demo_account().document
}

/// The demo account with its logins: root "Demo Corp" with Sales (and Sales East below
/// it) and Engineering; one user of each built-in role plus a "Trainer" custom-role user;
/// a plain and a smart group; a project with two courses, enrollments and points.
pub fn demo_account() -> DemoAccount {
    struct Login {
        id: &'static str,
        local: &'static str,
        role: &'static str,
        custom_role_id: Option<&'static str>,
        department: &'static str,
        managed: &'static [&'static str],
    }
    let logins = [
        Login {
            id: ids::OWNER,
            local: "owner",
            role: "account_owner",
            custom_role_id: None,
            department: ids::ROOT,
            managed: &[],
        },
        Login {
            id: ids::ADMIN,
            local: "admin",
            role: "account_administrator",
            custom_role_id: None,
            department: ids::ROOT,
            managed: &[],
        },
        Login {
            id: ids::DEPT_ADMIN,
            local: "sales.admin",
            role: "department_administrator",
            custom_role_id: None,
            department: ids::SALES,
            managed: &[ids::SALES],
        },
        Login {
            id: ids::PUBLISHER,
            local: "publisher",
            role: "publisher",
            custom_role_id: None,
            department: ids::ENGINEERING,
            managed: &[ids::ENGINEERING],
        },
        Login {
            id: ids::AUTHOR,
            local: "author",
            role: "author",
            custom_role_id: None,
            department: ids::ENGINEERING,
            managed: &[],
        },
        Login {
            id: ids::LEARNER,
            local: "learner",
            role: "learner",
            custom_role_id: None,
            department: ids::SALES_EAST,
            managed: &[],
        },
        Login {
            id: ids::TRAINER,
            local: "trainer",
            role: "custom",
            custom_role_id: Some(ids::TRAINER_ROLE),
            department: ids::SALES,
            managed: &[ids::SALES],
        },
        Login {
            id: ids::INTERN,
            local: "intern",
            role: "learner",
            custom_role_id: None,
            department: ids::ENGINEERING,
            managed: &[],
        },
    ];
    let host = DEMO_ACCOUNT_URL.trim_start_matches("https://");
    let email = |local: &str| format!("{local}@{host}");

    let users = logins
        .iter()
        .map(|login| UserEntry {
            id: login.id.to_owned(),
            email: email(login.local),
            password: Some(DEMO_PASSWORD.to_owned()),
            password_hash: None,
            role: login.role.to_owned(),
            custom_role_id: login.custom_role_id.map(str::to_owned),
            department_id: login.department.to_owned(),
            managed_department_ids: login.managed.iter().map(|id| (*id).to_owned()).collect(),
            active: true,
            external_id: None,
        })
        .collect();
    let printed_logins = logins
        .iter()
        .map(|login| {
            let role = match login.custom_role_id {
                Some(_) => "custom role Trainer".to_owned(),
                None => login.role.to_owned(),
            };
            (email(login.local), role)
        })
        .collect();

    let department = |id: &str, name: &str, code: &str, parent: &str| DepartmentEntry {
        id: id.to_owned(),
        name: name.to_owned(),
        code: Some(code.to_owned()),
        parent_department_id: parent.to_owned(),
    };
    let course = |id: &str, title: &str, description: &str, added: &str| ContentItemEntry {
        id: id.to_owned(),
        project_id: ids::ONBOARDING.to_owned(),
        title: title.to_owned(),
        description: description.to_owned(),
        user_id: ids::AUTHOR.to_owned(),
        added_date: added.to_owned(),
        content_type: "Course".to_owned(),
        view_url: None,
    };
    let enrollment = |id: &str, learner: &str, item: &str| EnrollmentEntry {
        id: id.to_owned(),
        learner_id: learner.to_owned(),
        content_item_id: item.to_owned(),
        access_date: None,
        due_date: None,
        lock_after_due_date: false,
    };
    let points = |user: &str, points: i64| PointsEntry {
        user_id: user.to_owned(),
        points,
    };
    let strings = |ids: &[&str]| ids.iter().map(|id| (*id).to_owned()).collect::<Vec<_>>();

    let account = AccountEntry {
        id: Some(ids::ACCOUNT.to_owned()),
        url: DEMO_ACCOUNT_URL.to_owned(),
        root_department: RootDepartmentEntry {
            id: ids::ROOT.to_owned(),
            name: "Demo Corp".to_owned(),
            code: Some("DEMO".to_owned()),
        },
        departments: vec![
            department(ids::SALES, "Sales", "S", ids::ROOT),
            department(ids::SALES_EAST, "Sales East", "SE", ids::SALES),
            department(ids::ENGINEERING, "Engineering", "ENG", ids::ROOT),
        ],
        custom_roles: vec![CustomRoleEntry {
            id: ids::TRAINER_ROLE.to_owned(),
            name: "Trainer".to_owned(),
            permissions: strings(&[
                "group.read",
                "content.read",
                "points.read",
                "department.update",
            ]),
        }],
        users,
        groups: vec![
            GroupEntry {
                id: ids::INTERNS.to_owned(),
                name: "Interns".to_owned(),
                user_ids: Some(strings(&[ids::LEARNER, ids::INTERN])),
                smart_department_id: None,
            },
            GroupEntry {
                id: ids::ALL_OF_SALES.to_owned(),
                name: "All of Sales".to_owned(),
                user_ids: None,
                smart_department_id: Some(ids::SALES.to_owned()),
            },
        ],
        projects: vec![ProjectEntry {
            id: ids::ONBOARDING.to_owned(),
            name: "Onboarding".to_owned(),
            author_ids: strings(&[ids::AUTHOR]),
        }],
        content_items: vec![
            course(
                ids::WELCOME_COURSE,
                "Welcome to Demo Corp",
                "Everything a new colleague needs on the first day.",
                "2019-03-26T06:34:57+00:00",
            ),
            course(
                ids::SALES_BASICS,
                "Sales basics",
                "How Demo Corp sells, from first call to signed contract.",
                "2024-01-15T09:30:00+01:00",
            ),
        ],
        enrollments: vec![
            enrollment(ids::LEARNER_WELCOME, ids::LEARNER, ids::WELCOME_COURSE),
            enrollment(ids::INTERN_WELCOME, ids::INTERN, ids::WELCOME_COURSE),
            enrollment(ids::LEARNER_SALES_BASICS, ids::LEARNER, ids::SALES_BASICS),
        ],
        points: vec![
            points(ids::LEARNER, 421),
            points(ids::INTERN, 120),
            points(ids::TRAINER, 35),
            points(ids::DEPT_ADMIN, 12),
        ],
        // A published secret would be no secret: the demo's clients are made over the RPC.
        api_clients: Vec::new(),
        results: Vec::new(),
    };

    DemoAccount {
        document: ImportDocument {
            accounts: vec![account],
        },
        account_id: fixed(ids::ACCOUNT),
        account_url: DEMO_ACCOUNT_URL.to_owned(),
        password: DEMO_PASSWORD.to_owned(),
        owner_login: email("owner"),
        logins: printed_logins,
        plain_group_id: fixed(ids::INTERNS),
        smart_group_id: fixed(ids::ALL_OF_SALES),
    }
}

/// The constants above are valid UUIDs (checked by the tests); a typo shows as nil.
fn fixed(id: &str) -> Uuid {
    Uuid::try_parse(id).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lms_core::domain::roles::Role;

    // Whether the document imports is checked on a real database by the import tests.
    #[test]
    fn the_demo_document_is_stable() {
        let demo = demo_account();
        let account = &demo.document.accounts[0];
        assert_eq!(account.id.as_deref(), Some(ids::ACCOUNT));
        assert_eq!(fixed(ids::ACCOUNT), demo.account_id);
        assert!(!demo.account_id.is_nil() && !demo.plain_group_id.is_nil());
        assert_eq!(account.url, DEMO_ACCOUNT_URL);
        assert_eq!(account.departments.len() + 1, 4, "root and three below it");
        assert_eq!(account.users.len(), demo.logins.len());
        assert_eq!(demo_document(), demo.document);
        assert_eq!(demo.owner_login, "owner@demo.lms.example");
    }

    #[test]
    fn every_fixed_id_is_a_uuid() {
        for id in [
            ids::ACCOUNT,
            ids::ROOT,
            ids::SALES,
            ids::SALES_EAST,
            ids::ENGINEERING,
            ids::TRAINER_ROLE,
            ids::OWNER,
            ids::ADMIN,
            ids::DEPT_ADMIN,
            ids::PUBLISHER,
            ids::AUTHOR,
            ids::LEARNER,
            ids::TRAINER,
            ids::INTERN,
            ids::INTERNS,
            ids::ALL_OF_SALES,
            ids::ONBOARDING,
            ids::WELCOME_COURSE,
            ids::SALES_BASICS,
            ids::LEARNER_WELCOME,
            ids::INTERN_WELCOME,
            ids::LEARNER_SALES_BASICS,
        ] {
            assert!(Uuid::try_parse(id).is_ok(), "{id}");
        }
    }

    #[test]
    fn the_demo_has_one_login_of_every_role() {
        let demo = demo_account();
        for role in Role::ALL {
            let wanted = match role {
                Role::Custom => "custom role Trainer",
                other => other.as_str(),
            };
            assert!(demo.logins.iter().any(|(_, r)| r == wanted), "{role}");
        }
    }
}
