//! The user profile (neighbours.md section 4.1) in XML and JSON, alone, as an unpaged list
//! and as a page.
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

fn profiles_bytes_hint(profiles: &[UserProfile]) -> usize {
    profiles
        .iter()
        .map(|p| {
            let fields: usize = p
                .fields
                .iter()
                .map(|f| 40 + f.name.len() + f.value.len())
                .sum();
            900 + 2 * (p.login.len() + p.email.len()) + 50 * p.group_ids.len() + fields
        })
        .sum::<usize>()
        + 128
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

/// `GET /user`: profiles directly under `<response>`; a top-level JSON array.
pub(crate) struct ProfileList(pub(crate) Vec<UserProfile>, pub(crate) Version);

impl Document for ProfileList {
    fn xml_bytes_hint(&self) -> usize {
        profiles_bytes_hint(&self.0)
    }

    fn write_xml(&self, xml: &mut XmlWriter) {
        for profile in &self.0 {
            write_profile(xml, self.1.profile_element(), profile);
        }
    }

    fn to_json(&self) -> String {
        json_text(&self.0.iter().map(ProfileJson::of).collect::<Vec<_>>())
    }
}

/// `GET /users`: `<userProfiles>…</userProfiles>` and, while more follow, `nextPageToken`.
pub(crate) struct ProfilePage {
    pub(crate) profiles: Vec<UserProfile>,
    pub(crate) version: Version,
    /// Empty on the last page: then the element (and the JSON key) is left out.
    pub(crate) next_page_token: String,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ProfilePageJson<'a> {
    user_profiles: Vec<ProfileJson<'a>>,
    #[serde(skip_serializing_if = "str::is_empty")]
    next_page_token: &'a str,
}

impl Document for ProfilePage {
    fn xml_bytes_hint(&self) -> usize {
        profiles_bytes_hint(&self.profiles)
    }

    fn write_xml(&self, xml: &mut XmlWriter) {
        if self.profiles.is_empty() {
            xml.empty("userProfiles");
        } else {
            xml.open("userProfiles");
            for profile in &self.profiles {
                write_profile(xml, self.version.profile_element(), profile);
            }
            xml.close("userProfiles");
        }
        if !self.next_page_token.is_empty() {
            xml.text_element("nextPageToken", &self.next_page_token);
        }
    }

    fn to_json(&self) -> String {
        json_text(&ProfilePageJson {
            user_profiles: self.profiles.iter().map(ProfileJson::of).collect(),
            next_page_token: &self.next_page_token,
        })
    }
}

/// `POST /user/list`: `pageNumber`, `totalUsersNumber` and the page's `userProfiles`
/// (always an array in JSON, which clients tolerate either way).
pub(crate) struct NumberedProfiles {
    pub(crate) page_number: u64,
    pub(crate) total: u64,
    pub(crate) profiles: Vec<UserProfile>,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct NumberedProfilesJson<'a> {
    page_number: u64,
    total_users_number: u64,
    user_profiles: Vec<ProfileJson<'a>>,
}

impl Document for NumberedProfiles {
    fn xml_bytes_hint(&self) -> usize {
        profiles_bytes_hint(&self.profiles)
    }

    fn write_xml(&self, xml: &mut XmlWriter) {
        xml.text_element("pageNumber", &self.page_number.to_string())
            .text_element("totalUsersNumber", &self.total.to_string());
        if self.profiles.is_empty() {
            xml.empty("userProfiles");
        } else {
            xml.open("userProfiles");
            for profile in &self.profiles {
                write_profile(xml, Version::V1.profile_element(), profile);
            }
            xml.close("userProfiles");
        }
    }

    fn to_json(&self) -> String {
        json_text(&NumberedProfilesJson {
            page_number: self.page_number,
            total_users_number: self.total,
            user_profiles: self.profiles.iter().map(ProfileJson::of).collect(),
        })
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

    #[test]
    fn a_page_has_its_token_only_while_more_follow() {
        let last = ProfilePage {
            profiles: vec![],
            version: Version::V1,
            next_page_token: String::new(),
        };
        assert_eq!(last.to_json(), r#"{"userProfiles":[]}"#);
        let more = ProfilePage {
            profiles: vec![profile()],
            version: Version::V2,
            next_page_token: "dG9r".into(),
        };
        assert!(more.to_json().ends_with(r#"}],"nextPageToken":"dG9r"}"#));
        let mut xml = XmlWriter::fragment();
        more.write_xml(&mut xml);
        let xml = xml.finish();
        assert!(xml.starts_with("<userProfiles><userProfileV2>"), "{xml}");
        assert!(xml.ends_with("</userProfiles><nextPageToken>dG9r</nextPageToken>"));
    }
}
