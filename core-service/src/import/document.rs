//! The import document as written (contract section 9): serde types with camelCase keys,
//! read from JSON or YAML by file extension.
//!
//! Identifiers stay strings here so that a malformed one is reported by the validator
//! with the entry it belongs to, not by serde with only a line number. Unknown keys are
//! refused (`deny_unknown_fields`): a misspelt optional field would otherwise vanish
//! silently into its default.

use std::{fmt, path::Path};

use serde::{Deserialize, Serialize};

use super::{ImportError, error::Cause};

/// A whole import document: one or more accounts with everything in them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImportDocument {
    pub accounts: Vec<AccountEntry>,
}

/// One account (tenant), named by its URL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AccountEntry {
    /// The account's identifier. Not in the contract's example: when omitted a new
    /// one (UUID v7) is made; giving it keeps re-imports of the same document stable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub url: String,
    pub root_department: RootDepartmentEntry,
    #[serde(default)]
    pub departments: Vec<DepartmentEntry>,
    #[serde(default)]
    pub custom_roles: Vec<CustomRoleEntry>,
    #[serde(default)]
    pub users: Vec<UserEntry>,
    #[serde(default)]
    pub groups: Vec<GroupEntry>,
    #[serde(default)]
    pub projects: Vec<ProjectEntry>,
    #[serde(default)]
    pub content_items: Vec<ContentItemEntry>,
    #[serde(default)]
    pub enrollments: Vec<EnrollmentEntry>,
    #[serde(default)]
    pub points: Vec<PointsEntry>,
    #[serde(default)]
    pub api_clients: Vec<ApiClientEntry>,
    /// Tracked results of the account's enrollments (results.md section 8).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<ResultEntry>,
}

/// The account's root department: it has no parent, and none can be given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RootDepartmentEntry {
    pub id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DepartmentEntry {
    pub id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The root or another department of the same account, listed in any order.
    pub parent_department_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CustomRoleEntry {
    pub id: String,
    pub name: String,
    /// Names from contract section 3, e.g. `group.read`.
    #[serde(default)]
    pub permissions: Vec<String>,
}

/// A user. Exactly one of `password` (plain text, hashed on import) and
/// `passwordHash` (an argon2id PHC string) is given.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UserEntry {
    pub id: String,
    /// The login, unique per account regardless of case.
    pub email: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_hash: Option<String>,
    /// A built-in role name, or `custom` together with `customRoleId`.
    pub role: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_role_id: Option<String>,
    pub department_id: String,
    #[serde(default)]
    pub managed_department_ids: Vec<String>,
    #[serde(default = "active_by_default")]
    pub active: bool,
    /// The identity provider's id (SCIM `externalId`), unique per account, case-sensitive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
}

fn active_by_default() -> bool {
    true
}

/// Passwords never appear in `Debug` output.
impl fmt::Debug for UserEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserEntry")
            .field("id", &self.id)
            .field("email", &self.email)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field(
                "password_hash",
                &self.password_hash.as_ref().map(|_| "<redacted>"),
            )
            .field("role", &self.role)
            .field("custom_role_id", &self.custom_role_id)
            .field("department_id", &self.department_id)
            .field("managed_department_ids", &self.managed_department_ids)
            .field("active", &self.active)
            .finish()
    }
}

/// A plain group (`userIds`) or a smart group (`smartDepartmentId`: its members are the
/// users of that department's subtree). Neither makes an empty plain group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GroupEntry {
    pub id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_ids: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smart_department_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProjectEntry {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub author_ids: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContentItemEntry {
    pub id: String,
    pub project_id: String,
    pub title: String,
    #[serde(default)]
    pub description: String,
    pub user_id: String,
    /// RFC 3339 with a numeric offset, e.g. `2019-03-26T06:34:57+00:00`; stored in UTC.
    pub added_date: String,
    #[serde(rename = "type")]
    pub content_type: String,
    /// `null` (or omitted): `{account URL}/view/{id}`, derived when read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view_url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EnrollmentEntry {
    pub id: String,
    pub learner_id: String,
    pub content_item_id: String,
    /// RFC 3339; omitted: the time of the import.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_date: Option<String>,
    /// RFC 3339; omitted: no due date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_date: Option<String>,
    /// Whether the item locks after `dueDate` (which it then needs).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lock_after_due_date: bool,
}

/// The tracked result of an enrollment the same document gives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResultEntry {
    pub enrollment_id: String,
    pub completion_status: String,
    #[serde(default)]
    pub progress: i64,
    #[serde(default)]
    pub awarded_score: f64,
    #[serde(default)]
    pub passing_score: f64,
    #[serde(default)]
    pub time_spent: i64,
    #[serde(default)]
    pub views_count: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_date: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_view_date: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PointsEntry {
    pub user_id: String,
    pub points: i64,
}

/// An API client (contract section 12), acting as `userId`, a user of the same account. The
/// secret is chosen by whoever writes the document; only its hash is stored.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApiClientEntry {
    pub client_id: String,
    pub client_secret: String,
    pub user_id: String,
    /// A SCIM client (provisioning.md section 13): its secret is the SCIM token, and its user
    /// must be an account owner or administrator.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub scim: bool,
}

/// Secrets never appear in `Debug` output.
impl fmt::Debug for ApiClientEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiClientEntry")
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .field("user_id", &self.user_id)
            .finish()
    }
}

/// The formats a document file may have, chosen by its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Json,
    Yaml,
}

impl Format {
    pub(crate) fn of(path: &Path) -> Option<Format> {
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        match extension.as_str() {
            "json" => Some(Format::Json),
            "yaml" | "yml" => Some(Format::Yaml),
            _ => None,
        }
    }
}

impl ImportDocument {
    /// Parses `text` as JSON.
    pub fn from_json(text: &str) -> Result<ImportDocument, ImportError> {
        Self::parse(Path::new("<json>"), Format::Json, text)
    }

    /// Parses `text` as YAML.
    pub fn from_yaml(text: &str) -> Result<ImportDocument, ImportError> {
        Self::parse(Path::new("<yaml>"), Format::Yaml, text)
    }

    /// Reads and parses the file at `path`: `.json` as JSON, `.yaml`/`.yml` as YAML.
    pub fn read(path: &Path) -> Result<ImportDocument, ImportError> {
        let format = Format::of(path).ok_or_else(|| ImportError::UnsupportedFormat {
            file: path.to_path_buf(),
        })?;
        let text = std::fs::read_to_string(path).map_err(|source| ImportError::Read {
            file: path.to_path_buf(),
            source,
        })?;
        Self::parse(path, format, &text)
    }

    pub(crate) fn parse(
        path: &Path,
        format: Format,
        text: &str,
    ) -> Result<ImportDocument, ImportError> {
        // A UTF-8 byte order mark is harmless; serde_json would refuse it.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let parse_error =
            |line: Option<usize>, column: Option<usize>, source: Cause| ImportError::Parse {
                file: path.to_path_buf(),
                line,
                column,
                message: source.to_string(),
                source,
            };
        match format {
            Format::Json => serde_json::from_str(text).map_err(|err| {
                let (line, column) = (err.line(), err.column());
                let known = line > 0;
                parse_error(known.then_some(line), known.then_some(column), err.into())
            }),
            Format::Yaml => serde_norway::from_str(text).map_err(|err| {
                let location = err.location();
                parse_error(
                    location.as_ref().map(|l| l.line()),
                    location.as_ref().map(|l| l.column()),
                    err.into(),
                )
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"{
        "accounts": [{
            "url": "https://acme.example.com",
            "rootDepartment": {"id": "0191a000-0000-7000-8000-000000000001", "name": "Acme"},
            "users": [{"id": "0191a000-0000-7000-8000-000000000002", "email": "o@acme.example.com",
                       "password": "pw", "role": "account_owner",
                       "departmentId": "0191a000-0000-7000-8000-000000000001"}],
            "apiClients": [{"clientId": "0191a000-0000-7000-8000-000000000003",
                            "clientSecret": "s3cr3t-s3cr3t-s3cr3t-s3cr3t-s3cr3t",
                            "userId": "0191a000-0000-7000-8000-000000000002"}]
        }]
    }"#;

    #[test]
    fn omitted_optional_fields_take_their_defaults() {
        let doc = ImportDocument::from_json(MINIMAL).unwrap();
        let account = &doc.accounts[0];
        assert!(account.departments.is_empty() && account.groups.is_empty());
        assert_eq!(account.root_department.code, None);
        let user = &account.users[0];
        assert!(user.active);
        assert!(user.managed_department_ids.is_empty());
        assert_eq!(user.custom_role_id, None);
    }

    #[test]
    fn unknown_keys_are_refused_with_their_position() {
        let text = MINIMAL.replace("\"role\"", "\"rol\"");
        let err = ImportDocument::from_json(&text).unwrap_err();
        let ImportError::Parse { line, message, .. } = &err else {
            panic!("{err}")
        };
        assert_eq!(*line, Some(6));
        assert!(message.contains("unknown field `rol`"), "{message}");
    }

    #[test]
    fn yaml_reads_the_same_document() {
        let json = ImportDocument::from_json(MINIMAL).unwrap();
        let yaml = serde_norway::to_string(&json).unwrap();
        assert_eq!(ImportDocument::from_yaml(&yaml).unwrap(), json);
        let err = ImportDocument::from_yaml("accounts:\n  - url: [\n").unwrap_err();
        assert!(
            matches!(err, ImportError::Parse { line: Some(_), .. }),
            "{err}"
        );
    }

    #[test]
    fn the_format_follows_the_extension() {
        assert_eq!(Format::of(Path::new("a/b.JSON")), Some(Format::Json));
        assert_eq!(Format::of(Path::new("b.yml")), Some(Format::Yaml));
        assert_eq!(Format::of(Path::new("b.yaml")), Some(Format::Yaml));
        assert_eq!(Format::of(Path::new("b.toml")), None);
        assert_eq!(Format::of(Path::new("b")), None);
        let err = ImportDocument::read(Path::new("accounts.xml")).unwrap_err();
        assert!(err.to_string().contains(".json"), "{err}");
    }

    #[test]
    fn passwords_stay_out_of_debug_output() {
        let doc = ImportDocument::from_json(MINIMAL).unwrap();
        let debug = format!("{doc:?}");
        assert!(!debug.contains("\"pw\""), "{debug}");
        assert!(!debug.contains("s3cr3t"), "{debug}");
        assert!(debug.contains("<redacted>"));
    }
}
