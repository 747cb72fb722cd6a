//! `POST /department` (create) and `POST /department/{departmentId}` (update).

use axum::extract::State;
use axum::http::StatusCode;
use lms_proto::v1::{CreateDepartmentRequest, UpdateDepartmentRequest};

use crate::body::Body;
use crate::core_client::{Caller, CoreClient};
use crate::error::GatewayError;
use crate::json::{FromJson, JsonError, JsonObject};
use crate::representation::{Answer, Document};
use crate::routes::{NoQuery, PathId};
use crate::xml::writer::XmlWriter;
use crate::xml::{Element, FromXml, XmlError};

/// `<request>` with optional `name`, `parentDepartmentId`, `code`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct DepartmentFields {
    pub(crate) name: Option<String>,
    pub(crate) parent_department_id: Option<String>,
    pub(crate) code: Option<String>,
}

impl FromXml for DepartmentFields {
    const ROOT: &'static str = "request";

    fn from_root(root: &Element) -> Result<Self, XmlError> {
        Ok(Self {
            name: root.optional_text("name")?,
            parent_department_id: root.optional_text("parentDepartmentId")?,
            code: root.optional_text("code")?,
        })
    }
}

impl FromJson for DepartmentFields {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        Ok(Self {
            name: object.optional_text("name")?,
            parent_department_id: object.optional_text("parentDepartmentId")?,
            code: object.optional_text("code")?,
        })
    }
}

/// Absent fields stay as they are; a present but empty `code` clears it (the core decides).
#[tracing::instrument(skip_all, fields(department_id = %department_id))]
pub(crate) async fn update_department(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    PathId(department_id): PathId,
    Body(fields): Body<DepartmentFields>,
) -> Result<StatusCode, GatewayError> {
    let message = UpdateDepartmentRequest {
        department_id,
        name: fields.name,
        parent_department_id: fields.parent_department_id,
        code: fields.code,
    };
    core.unary(&caller, message, |mut admin, request| async move {
        admin.update_department(request).await
    })
    .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Missing `name` or `parentDepartmentId` go to the core as empty strings: the core validates
/// and names the field.
#[tracing::instrument(skip_all)]
pub(crate) async fn create_department(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(fields): Body<DepartmentFields>,
) -> Result<Answer, GatewayError> {
    let message = CreateDepartmentRequest {
        name: fields.name.unwrap_or_default(),
        parent_department_id: fields.parent_department_id.unwrap_or_default(),
        code: fields.code,
    };
    let created = core
        .unary(&caller, message, |mut admin, request| async move {
            admin.create_department(request).await
        })
        .await?;
    Ok(Answer::new(
        StatusCode::CREATED,
        Created(created.department_id),
    ))
}

/// The new id: `<response>NEW-ID</response>`, or the JSON string `"NEW-ID"`.
pub(crate) struct Created(pub(crate) String);

impl Document for Created {
    fn write_xml(&self, xml: &mut XmlWriter) {
        xml.text(&self.0);
    }

    fn to_json(&self) -> String {
        serde_json::Value::from(self.0.as_str()).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xml::reader::parse_document;

    fn fields(body: &str) -> Result<DepartmentFields, XmlError> {
        DepartmentFields::from_root(&parse_document(body.as_bytes(), DepartmentFields::ROOT)?)
    }

    #[test]
    fn absent_fields_are_none_and_empty_ones_are_empty() {
        assert_eq!(fields("<request/>").unwrap(), DepartmentFields::default());
        let parsed = fields("<request><code/><name> Sales </name></request>").unwrap();
        assert_eq!(parsed.code.as_deref(), Some(""));
        assert_eq!(parsed.name.as_deref(), Some("Sales"));
        assert_eq!(parsed.parent_department_id, None);
    }

    #[test]
    fn all_three_fields_are_read_and_unknown_ones_ignored() {
        let parsed = fields(
            "<request><name>Sales</name><parentDepartmentId>p-1</parentDepartmentId>\
             <code>S</code><colour>red</colour></request>",
        )
        .unwrap();
        assert_eq!(
            parsed,
            DepartmentFields {
                name: Some("Sales".into()),
                parent_department_id: Some("p-1".into()),
                code: Some("S".into()),
            }
        );
    }

    #[test]
    fn a_field_given_twice_is_refused() {
        assert_eq!(
            fields("<request><code>A</code><code>B</code></request>").unwrap_err(),
            XmlError::Duplicate("code".into())
        );
    }

    #[test]
    fn the_created_id_is_the_response_text() {
        let created = Created("0190f6c2-aaaa-7bbb-8ccc-123456789abc".to_owned());
        let mut xml = XmlWriter::document();
        xml.open("response");
        created.write_xml(&mut xml);
        xml.close("response");
        assert_eq!(
            xml.finish(),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
             <response>0190f6c2-aaaa-7bbb-8ccc-123456789abc</response>"
        );
        assert_eq!(
            created.to_json(),
            "\"0190f6c2-aaaa-7bbb-8ccc-123456789abc\""
        );
    }
}
