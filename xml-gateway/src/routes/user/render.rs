//! The user profile (neighbours.md section 4.1) in XML and JSON; alone here, in the lists
//! through [`super::list`].
//!
//! `fields` always carries `FIRST_NAME`, `LAST_NAME`, `LOGIN` and `EMAIL`, empty ones as
//! `<value></value>`/`""`, since clients look fields up by name. Empty id lists are left out
//! (element and key), as iSpring leaves them out.

use lms_proto::v1::{Role, UserProfile};

use super::Version;
use crate::representation::{Document, json_text};
use crate::xml::writer::XmlWriter;

/// iSpring's `role` for ours (neighbours 4.1; Author, Q12: `author`).
fn role_name(role: i32) -> &'static str {
    match Role::try_from(role).unwrap_or(Role::Unspecified) {
        Role::AccountOwner => "owner",
        Role::AccountAdministrator => "administrator",
        Role::DepartmentAdministrator => "department_administrator",
        Role::Publisher => "publisher",
        Role::Author => "author",
        Role::Learner => "learner",
        Role::Custom => "custom",
        Role::Unspecified => "unknown",
    }
}

/// `userRoles/roleType`: as `role`, but an Author is `studio_author`, the only author type
/// seen in real traffic.
fn role_type(role: i32) -> &'static str {
    match role_name(role) {
        "author" => "studio_author",
        other => other,
    }
}

/// 1 active, 3 blocked, 5 employment ended (neighbours 4.10); the core always sends one,
/// a core from before status 5 only `active`.
fn status(profile: &UserProfile) -> u32 {
    match profile.status {
        0 if profile.active => 1,
        0 => 3,
        status => status,
    }
}

/// `YYYY-MM-DD` of the RFC 3339 time the core sends.
fn date(rfc3339: &str) -> &str {
    rfc3339.get(..10).unwrap_or(rfc3339)
}

/// The profile fields by name: the four every profile has, in the order of the real
/// capture, then the others given, by name.
fn fields(profile: &UserProfile) -> impl Iterator<Item = (&str, &str)> {
    [
        ("FIRST_NAME", profile.first_name.as_str()),
        ("LAST_NAME", &profile.last_name),
        ("LOGIN", &profile.login),
        ("EMAIL", &profile.email),
    ]
    .into_iter()
    .chain(
        profile
            .fields
            .iter()
            .map(|field| (field.name.as_str(), field.value.as_str())),
    )
}

/// `lastLoginDate`, when the user ever signed in.
fn last_login_date(profile: &UserProfile) -> Option<&str> {
    Some(date(&profile.last_sign_in_at)).filter(|date| !date.is_empty())
}

/// A stored date the core sends (`YYYY-MM-DD`), when there is one.
fn stored_date(date: &str) -> Option<&str> {
    Some(date).filter(|date| !date.is_empty())
}

fn write_ids(xml: &mut XmlWriter, name: &str, ids: &[String]) {
    if ids.is_empty() {
        return;
    }
    xml.open(name);
    for id in ids {
        xml.text_element("id", id);
    }
    xml.close(name);
}

pub(crate) fn write_profile(xml: &mut XmlWriter, element: &str, profile: &UserProfile) {
    xml.open(element)
        .text_element("role", role_name(profile.role))
        .text_element("roleId", &profile.role_id)
        .text_element("userId", &profile.user_id)
        .text_element("departmentId", &profile.department_id)
        .text_element("status", &status(profile).to_string())
        .open("fields");
    for (name, value) in fields(profile) {
        xml.open("field")
            .text_element("name", name)
            .text_element("value", value)
            .close("field");
    }
    xml.close("fields")
        .text_element("addedDate", date(&profile.added_at));
    if let Some(last) = last_login_date(profile) {
        xml.text_element("lastLoginDate", last);
    }
    // Each shown only while stored (provisioning.md section 6).
    for (name, date) in [
        (
            "scheduledDeactivationDate",
            &profile.scheduled_deactivation_date,
        ),
        (
            "scheduledTerminationDate",
            &profile.scheduled_termination_date,
        ),
    ] {
        if let Some(date) = stored_date(date) {
            xml.text_element(name, date);
        }
    }
    write_ids(xml, "groups", &profile.group_ids);
    write_ids(
        xml,
        "manageableDepartmentIds",
        &profile.managed_department_ids,
    );
    xml.open("userRoles")
        .open("userRole")
        .text_element("roleId", &profile.role_id)
        .text_element("roleType", role_type(profile.role));
    write_ids(
        xml,
        "manageableDepartmentIds",
        &profile.managed_department_ids,
    );
    xml.close("userRole").close("userRoles").close(element);
}

#[derive(serde::Serialize)]
struct FieldJson<'a> {
    name: &'a str,
    value: &'a str,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct UserRoleJson<'a> {
    role_id: &'a str,
    role_type: &'static str,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    manageable_department_ids: &'a [String],
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProfileJson<'a> {
    role: &'static str,
    role_id: &'a str,
    user_id: &'a str,
    department_id: &'a str,
    status: u32,
    fields: Vec<FieldJson<'a>>,
    added_date: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_login_date: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scheduled_deactivation_date: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scheduled_termination_date: Option<&'a str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    groups: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    manageable_department_ids: &'a [String],
    user_roles: [UserRoleJson<'a>; 1],
}

impl<'a> ProfileJson<'a> {
    pub(crate) fn of(profile: &'a UserProfile) -> Self {
        Self {
            role: role_name(profile.role),
            role_id: &profile.role_id,
            user_id: &profile.user_id,
            department_id: &profile.department_id,
            status: status(profile),
            fields: fields(profile)
                .map(|(name, value)| FieldJson { name, value })
                .collect(),
            added_date: date(&profile.added_at),
            last_login_date: last_login_date(profile),
            scheduled_deactivation_date: stored_date(&profile.scheduled_deactivation_date),
            scheduled_termination_date: stored_date(&profile.scheduled_termination_date),
            groups: &profile.group_ids,
            manageable_department_ids: &profile.managed_department_ids,
            user_roles: [UserRoleJson {
                role_id: &profile.role_id,
                role_type: role_type(profile.role),
                manageable_department_ids: &profile.managed_department_ids,
            }],
        }
    }
}

/// `GET /user/{userId}`: the profile element, or in JSON the bare object.
pub(crate) struct OneProfile(pub(crate) UserProfile, pub(crate) Version);

impl Document for OneProfile {
    fn write_xml(&self, xml: &mut XmlWriter) {
        write_profile(xml, self.1.profile_element(), &self.0);
    }

    fn to_json(&self) -> String {
        json_text(&ProfileJson::of(&self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile() -> UserProfile {
        UserProfile {
            user_id: "u-1".into(),
            role: Role::DepartmentAdministrator.into(),
            role_id: "r-1".into(),
            department_id: "d-1".into(),
            active: false,
            login: "a&b@x".into(),
            email: "a&b@x".into(),
            added_at: "2026-11-23T10:00:00Z".into(),
            group_ids: vec![],
            managed_department_ids: vec!["d-1".into()],
            first_name: String::new(),
            last_name: String::new(),
            status: 0,
            last_sign_in_at: String::new(),
            fields: vec![],
            scheduled_deactivation_date: String::new(),
            scheduled_termination_date: String::new(),
        }
    }

    #[test]
    fn a_profile_is_written_in_the_captured_order_in_both_formats() {
        let mut xml = XmlWriter::fragment();
        write_profile(&mut xml, "userProfile", &profile());
        assert_eq!(
            xml.finish(),
            "<userProfile><role>department_administrator</role><roleId>r-1</roleId>\
             <userId>u-1</userId><departmentId>d-1</departmentId><status>3</status><fields>\
             <field><name>FIRST_NAME</name><value></value></field>\
             <field><name>LAST_NAME</name><value></value></field>\
             <field><name>LOGIN</name><value>a&amp;b@x</value></field>\
             <field><name>EMAIL</name><value>a&amp;b@x</value></field></fields>\
             <addedDate>2026-11-23</addedDate>\
             <manageableDepartmentIds><id>d-1</id></manageableDepartmentIds>\
             <userRoles><userRole><roleId>r-1</roleId>\
             <roleType>department_administrator</roleType>\
             <manageableDepartmentIds><id>d-1</id></manageableDepartmentIds>\
             </userRole></userRoles></userProfile>"
        );
        assert_eq!(
            OneProfile(profile(), Version::V2).to_json(),
            r#"{"role":"department_administrator","roleId":"r-1","userId":"u-1","departmentId":"d-1","status":3,"fields":[{"name":"FIRST_NAME","value":""},{"name":"LAST_NAME","value":""},{"name":"LOGIN","value":"a&b@x"},{"name":"EMAIL","value":"a&b@x"}],"addedDate":"2026-11-23","manageableDepartmentIds":["d-1"],"userRoles":[{"roleId":"r-1","roleType":"department_administrator","manageableDepartmentIds":["d-1"]}]}"#
        );
    }

    #[test]
    fn stored_dates_follow_the_last_sign_in_or_the_added_date_and_precede_the_groups() {
        let xml_of = |profile: &UserProfile| {
            let mut xml = XmlWriter::fragment();
            write_profile(&mut xml, "userProfile", profile);
            xml.finish()
        };
        let mut scheduled = profile();
        scheduled.scheduled_termination_date = "2027-01-31".into();
        scheduled.group_ids = vec!["g-1".into()];
        let termination = "<scheduledTerminationDate>2027-01-31</scheduledTerminationDate>";
        let xml = xml_of(&scheduled);
        assert!(
            xml.contains(&format!(
                "<addedDate>2026-11-23</addedDate>{termination}<groups>"
            )),
            "{xml}"
        );
        scheduled.scheduled_deactivation_date = "2026-12-31".into();
        scheduled.last_sign_in_at = "2026-11-25T08:00:00Z".into();
        let xml = xml_of(&scheduled);
        assert!(
            xml.contains(&format!(
                "<lastLoginDate>2026-11-25</lastLoginDate>\
                 <scheduledDeactivationDate>2026-12-31</scheduledDeactivationDate>{termination}<groups>"
            )),
            "{xml}"
        );
        let json = OneProfile(scheduled, Version::V2).to_json();
        assert!(
            json.contains(r#""lastLoginDate":"2026-11-25","scheduledDeactivationDate":"2026-12-31","scheduledTerminationDate":"2027-01-31","groups":["g-1"]"#),
            "{json}"
        );
    }

    #[test]
    fn status_5_other_fields_and_the_last_sign_in_are_shown() {
        let mut ended = profile();
        ended.status = 5;
        ended.login = "jdoe".into();
        ended.last_sign_in_at = "2026-11-25T08:00:00Z".into();
        ended.fields = vec![lms_proto::v1::ProfileField {
            name: "JOB_TITLE".into(),
            value: "Clerk".into(),
        }];
        let mut xml = XmlWriter::fragment();
        write_profile(&mut xml, "userProfile", &ended);
        let xml = xml.finish();
        assert!(xml.contains("<status>5</status>"), "{xml}");
        assert!(
            xml.contains(
                "<field><name>LOGIN</name><value>jdoe</value></field>\
                 <field><name>EMAIL</name><value>a&amp;b@x</value></field>\
                 <field><name>JOB_TITLE</name><value>Clerk</value></field></fields>\
                 <addedDate>2026-11-23</addedDate><lastLoginDate>2026-11-25</lastLoginDate>"
            ),
            "{xml}"
        );
        let json = OneProfile(ended, Version::V1).to_json();
        assert!(json.contains(r#""status":5"#), "{json}");
        assert!(
            json.contains(r#"{"name":"JOB_TITLE","value":"Clerk"}],"addedDate":"2026-11-23","lastLoginDate":"2026-11-25""#),
            "{json}"
        );
    }
}
