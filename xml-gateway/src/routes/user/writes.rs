//! The user writes: `POST /user` (201 with the new id), `POST /user/{userId}/password` and
//! `POST /user/{userId}/status` (200, no body).
//!
//! `POST /user` takes the profile fields in their write form: XML `<fields><email>…</email>
//! <login>…</login><first_name>…</first_name></fields>`; JSON either the same as an object
//! (`"fields": {"email": …}`) or as `[{"name": "EMAIL", "value": …}]` with `login`/`email`
//! also at the top level (neighbours 4.6, Q6). `login` is the sign-in name and `email` the
//! address; without a login the address is the login. Every other field (`job_title`,
//! `phone`, `user_defined_field1`…) goes to the core by name, which stores it.

use axum::extract::State;
use axum::http::StatusCode;
use lms_proto::v1::{
    AddUserRequest, ChangeUserPasswordRequest, ChangeUserStatusRequest, DeleteUserRequest,
    GroupIds, ManagedDepartmentIds, ProfileField, UpdateUserRequest,
};
use serde_json::Value;

use crate::body::Body;
use crate::core_client::{Caller, CoreClient};
use crate::error::GatewayError;
use crate::json::{FromJson, JsonError, JsonObject};
use crate::listing::xml_list;
use crate::representation::Answer;
use crate::routes::department::Created;
use crate::routes::{NoQuery, PathId};
use crate::xml::{Element, FromXml, XmlError};

/// The body of `POST /user`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct NewUserBody {
    pub(crate) department_id: Option<String>,
    pub(crate) password: Option<String>,
    pub(crate) login: Option<String>,
    pub(crate) email: Option<String>,
    pub(crate) role: Option<String>,
    pub(crate) role_id: Option<String>,
    /// Absent (`None`) leaves an update's managed departments as they are.
    pub(crate) manageable_department_ids: Option<Vec<String>>,
    pub(crate) first_name: Option<String>,
    pub(crate) last_name: Option<String>,
    /// The other profile fields, by the name given.
    pub(crate) fields: Vec<(String, String)>,
    /// `groupIds` (the OpenAPI's name; the help pages say `groups`). Absent (`None`) leaves
    /// an update's groups as they are.
    pub(crate) group_ids: Option<Vec<String>>,
}

/// The profile fields with elements of their own in [`NewUserBody`].
const OWN_FIELDS: [&str; 4] = ["login", "email", "first_name", "last_name"];

impl NewUserBody {
    fn other_fields(&mut self) -> Vec<ProfileField> {
        std::mem::take(&mut self.fields)
            .into_iter()
            .map(|(name, value)| ProfileField { name, value })
            .collect()
    }

    fn into_request(mut self) -> AddUserRequest {
        AddUserRequest {
            group_ids: self.group_ids.take().unwrap_or_default(),
            fields: self.other_fields(),
            email: self.email,
            login: self.login.unwrap_or_default(),
            password: self.password,
            role: self.role.unwrap_or_default(),
            role_id: self.role_id.filter(|id| !id.is_empty()),
            department_id: self.department_id.unwrap_or_default(),
            managed_department_ids: self.manageable_department_ids.unwrap_or_default(),
            first_name: self.first_name,
            last_name: self.last_name,
        }
    }

    /// The fields given, for `POST /user/{id}`; empty role and department mean "unchanged",
    /// as generic array-to-XML clients send every element.
    fn into_update(mut self, user_id: String) -> UpdateUserRequest {
        UpdateUserRequest {
            user_id,
            group_ids: self.group_ids.take().map(|ids| GroupIds { ids }),
            fields: self.other_fields(),
            email: self.email,
            login: self.login,
            role: self.role.filter(|role| !role.is_empty()),
            role_id: self.role_id.filter(|id| !id.is_empty()),
            department_id: self.department_id.filter(|id| !id.is_empty()),
            managed_department_ids: self
                .manageable_department_ids
                .map(|ids| ManagedDepartmentIds { ids }),
            first_name: self.first_name,
            last_name: self.last_name,
        }
    }
}

impl FromXml for NewUserBody {
    const ROOT: &'static str = "request";

    fn from_root(root: &Element) -> Result<Self, XmlError> {
        let fields = root.single_child("fields")?;
        let field = |name: &str| match fields {
            Some(fields) => fields.optional_text(name),
            None => Ok(None),
        };
        let mut others = Vec::new();
        for other in fields.iter().flat_map(|fields| &fields.children) {
            if !OWN_FIELDS.contains(&other.name.as_str()) {
                others.push((other.name.clone(), other.text_value()?.to_owned()));
            }
        }
        let group_ids = match xml_list(root, "groupIds")? {
            Some(ids) => Some(ids),
            None => xml_list(root, "groups")?,
        };
        Ok(Self {
            fields: others,
            group_ids,
            department_id: root.optional_text("departmentId")?,
            password: root.optional_text("password")?,
            login: field("login")?,
            email: field("email")?,
            role: root.optional_text("role")?,
            role_id: root.optional_text("roleId")?,
            manageable_department_ids: xml_list(root, "manageableDepartmentIds")?,
            first_name: field("first_name")?,
            last_name: field("last_name")?,
        })
    }
}

/// `fields` as an object map or a `[{name, value}]` list: every (name, value) given, a
/// `null` value left out.
fn json_fields(object: &JsonObject<'_>) -> Result<Vec<(String, String)>, JsonError> {
    let bad = || JsonError::NotFields("fields".to_owned());
    let text = |value: &Value| match value {
        Value::Null => Ok(None),
        Value::String(text) => Ok(Some(text.trim().to_owned())),
        Value::Number(number) => Ok(Some(number.to_string())),
        _ => Err(bad()),
    };
    let mut fields = Vec::new();
    match object.value("fields") {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (name, value) in map {
                if let Some(value) = text(value)? {
                    fields.push((name.clone(), value));
                }
            }
        }
        Some(Value::Array(items)) => {
            for item in items {
                let Value::Object(pair) = item else {
                    return Err(bad());
                };
                let name = pair.get("name").and_then(Value::as_str).ok_or_else(bad)?;
                if let Some(value) = text(pair.get("value").unwrap_or(&Value::Null))? {
                    fields.push((name.to_owned(), value));
                }
            }
        }
        Some(_) => return Err(bad()),
    }
    Ok(fields)
}

impl FromJson for NewUserBody {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        let mut others = json_fields(object)?;
        // The fields with elements of their own, names compared case-insensitively.
        let mut own = |name: &str| {
            let at = others
                .iter()
                .position(|(given, _)| given.eq_ignore_ascii_case(name));
            at.map(|at| others.remove(at).1)
        };
        let (login, email) = (own("login"), own("email"));
        let (first_name, last_name) = (own("first_name"), own("last_name"));
        let either = |field: Option<String>, name: &str| -> Result<Option<String>, JsonError> {
            Ok(field.or(object.optional_text(name)?))
        };
        Ok(Self {
            login: either(login, "login")?,
            email: either(email, "email")?,
            first_name,
            last_name,
            fields: others,
            group_ids: match object.optional_text_list("groupIds")? {
                Some(ids) => Some(ids),
                None => object.optional_text_list("groups")?,
            },
            department_id: object.optional_text("departmentId")?,
            password: object.optional_text("password")?,
            role: object.optional_text("role")?,
            role_id: object.optional_text("roleId")?,
            manageable_department_ids: object.optional_text_list("manageableDepartmentIds")?,
        })
    }
}

text_body!(
    /// `<request><password>…</password></request>` / `{"password": "…"}`.
    PasswordBody,
    "password"
);

text_body!(
    /// `<request><status>3</status></request>` / `{"status": 3}`.
    StatusBody,
    "status"
);

#[tracing::instrument(skip_all)]
pub(crate) async fn add_user(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(body): Body<NewUserBody>,
) -> Result<Answer, GatewayError> {
    let created = core
        .unary(
            &caller,
            body.into_request(),
            |mut admin, request| async move { admin.add_user(request).await },
        )
        .await?;
    Ok(Answer::new(StatusCode::CREATED, Created(created.user_id)))
}

/// 200 with no body (neighbours Q10: the documented status, which a client checks).
#[tracing::instrument(skip_all, fields(user_id = %user_id))]
pub(crate) async fn update_user(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    PathId(user_id): PathId,
    Body(body): Body<NewUserBody>,
) -> Result<StatusCode, GatewayError> {
    core.unary(
        &caller,
        body.into_update(user_id),
        |mut admin, request| async move { admin.update_user(request).await },
    )
    .await?;
    Ok(StatusCode::OK)
}

#[tracing::instrument(skip_all, fields(user_id = %user_id))]
pub(crate) async fn delete_user(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    PathId(user_id): PathId,
) -> Result<StatusCode, GatewayError> {
    core.unary(
        &caller,
        DeleteUserRequest { user_id },
        |mut admin, request| async move { admin.delete_user(request).await },
    )
    .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[tracing::instrument(skip_all, fields(user_id = %user_id))]
pub(crate) async fn change_password(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    PathId(user_id): PathId,
    Body(PasswordBody(password)): Body<PasswordBody>,
) -> Result<StatusCode, GatewayError> {
    let message = ChangeUserPasswordRequest {
        user_id,
        password: password.unwrap_or_default(),
    };
    core.unary(&caller, message, |mut admin, request| async move {
        admin.change_user_password(request).await
    })
    .await?;
    Ok(StatusCode::OK)
}

/// A status that is no whole number is refused here with the same message the core gives
/// for an unknown code.
#[tracing::instrument(skip_all, fields(user_id = %user_id))]
pub(crate) async fn change_status(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    PathId(user_id): PathId,
    Body(StatusBody(status)): Body<StatusBody>,
) -> Result<StatusCode, GatewayError> {
    let raw = status.unwrap_or_default();
    let status = raw.parse::<u32>().map_err(|_| {
        GatewayError::BadRequest(format!(
            "status '{}' is not one of 1 (active), 3 (blocked), 5 (employment ended).",
            crate::clip::clip(&raw)
        ))
    })?;
    let message = ChangeUserStatusRequest { user_id, status };
    core.unary(&caller, message, |mut admin, request| async move {
        admin.change_user_status(request).await
    })
    .await?;
    Ok(StatusCode::OK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse_json;
    use crate::xml::reader::parse_document;

    #[test]
    fn the_xml_write_form_of_fields_is_read_with_login_and_email_apart() {
        let body = "<request><departmentId>d</departmentId><fields><login>jdoe</login>\
                    <email>JDoe@x.example</email><first_name>J</first_name>\
                    <job_title>Clerk</job_title><phone></phone></fields>\
                    <role>learner</role><manageableDepartmentIds><id>m</id></manageableDepartmentIds>\
                    </request>";
        let parsed =
            NewUserBody::from_root(&parse_document(body.as_bytes(), "request").unwrap()).unwrap();
        let request = parsed.into_request();
        assert_eq!(request.login, "jdoe");
        assert_eq!(request.email.as_deref(), Some("JDoe@x.example"));
        let others: Vec<(&str, &str)> = request
            .fields
            .iter()
            .map(|field| (field.name.as_str(), field.value.as_str()))
            .collect();
        assert_eq!(others, [("job_title", "Clerk"), ("phone", "")]);
        assert_eq!(request.department_id, "d");
        assert_eq!(request.managed_department_ids, ["m"]);
        assert_eq!(request.first_name.as_deref(), Some("J"));
        assert_eq!(request.password, None);
    }

    #[test]
    fn json_fields_may_be_a_map_or_a_name_value_list_or_top_level() {
        for body in [
            r#"{"departmentId":"d","fields":{"login":"a@x","first_name":"A"}}"#,
            r#"{"departmentId":"d","fields":[{"name":"LOGIN","value":"a@x"}]}"#,
            r#"{"request":{"departmentId":"d","login":"a@x","email":null,"fields":[]}}"#,
        ] {
            let parsed: NewUserBody = parse_json(body.as_bytes()).unwrap();
            let request = parsed.into_request();
            assert_eq!(request.login, "a@x", "{body}");
            assert!(request.fields.is_empty(), "{body}");
        }
        let both = r#"{"login":"jdoe","fields":[{"name":"EMAIL","value":"j@x"},
                       {"name":"JOB_TITLE","value":"Clerk"},{"name":"PHONE","value":null}]}"#;
        let request = parse_json::<NewUserBody>(both.as_bytes())
            .unwrap()
            .into_request();
        assert_eq!(
            (request.login.as_str(), request.email.as_deref()),
            ("jdoe", Some("j@x"))
        );
        assert_eq!(request.fields.len(), 1);
        assert_eq!(
            (
                request.fields[0].name.as_str(),
                request.fields[0].value.as_str()
            ),
            ("JOB_TITLE", "Clerk")
        );
        let bad: Result<NewUserBody, _> = parse_json(br#"{"fields":"a@x"}"#);
        assert!(matches!(bad, Err(JsonError::NotFields(_))));
    }
}
