//! `POST /department` (create), `POST /department/{departmentId}` (update),
//! `GET /department` (every department), `GET /department/{departmentId}`,
//! `GET /departments` (paged) and `DELETE /department/{departmentId}` (neighbours.md
//! section 3).

use anyhow::anyhow;
use axum::extract::State;
use axum::http::StatusCode;
use lms_proto::v1::{
    CreateDepartmentRequest, DeleteDepartmentRequest, Department, GetDepartmentRequest,
    ListDepartmentsRequest, ListDepartmentsResponse, PageRequest, StreamDepartmentsRequest,
    StreamDepartmentsResponse, UpdateDepartmentRequest,
};

use crate::body::Body;
use crate::core_client::{Caller, CoreClient};
use crate::error::GatewayError;
use crate::json::{FromJson, JsonError, JsonObject};
use crate::listing::{Filters, Form, Listing, Paged, Streamed, Whole, paged_rpc, streamed_rpc};
use crate::representation::{Answer, Document, json_text, push_json};
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

#[tracing::instrument(skip_all, fields(department_id = %department_id))]
pub(crate) async fn get_department(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    PathId(department_id): PathId,
) -> Result<Answer, GatewayError> {
    let answer = core
        .unary(
            &caller,
            GetDepartmentRequest { department_id },
            |mut admin, request| async move { admin.get_department(request).await },
        )
        .await?;
    let department = answer.department.ok_or_else(|| {
        GatewayError::Internal(anyhow!("GetDepartment answered without a department"))
    })?;
    Ok(Answer::ok(OneDepartment(department)))
}

/// 204 with no body; a department still in use is a 400 from the core, naming why.
#[tracing::instrument(skip_all, fields(department_id = %department_id))]
pub(crate) async fn delete_department(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    PathId(department_id): PathId,
) -> Result<StatusCode, GatewayError> {
    core.unary(
        &caller,
        DeleteDepartmentRequest { department_id },
        |mut admin, request| async move { admin.delete_department(request).await },
    )
    .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `<department>` with `departmentId`, `name`, `parentDepartmentId` (not for the root),
/// `code` (when set), `subordination` and `coSubordination`. We keep no supervisors, so the
/// root has `no_supervisor` and every other department `inherit` (neighbours.md 3.1: clients
/// parse both objects and walk `inherit` up to the root).
fn write_department(xml: &mut XmlWriter, department: &Department) {
    let supervision = subordination_type(department);
    xml.open("department")
        .text_element("departmentId", &department.department_id)
        .text_element("name", &department.name);
    if let Some(parent) = &department.parent_department_id {
        xml.text_element("parentDepartmentId", parent);
    }
    if let Some(code) = &department.code {
        xml.text_element("code", code);
    }
    for element in ["subordination", "coSubordination"] {
        xml.open(element)
            .text_element("subordinationType", supervision)
            .close(element);
    }
    xml.close("department");
}

fn subordination_type(department: &Department) -> &'static str {
    if department.parent_department_id.is_some() {
        "inherit"
    } else {
        "no_supervisor"
    }
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct DepartmentJson<'a> {
    department_id: &'a str,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_department_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'a str>,
    subordination: Subordination,
    co_subordination: Subordination,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Subordination {
    subordination_type: &'static str,
}

impl<'a> DepartmentJson<'a> {
    fn of(department: &'a Department) -> Self {
        let supervision = subordination_type(department);
        Self {
            department_id: &department.department_id,
            name: &department.name,
            parent_department_id: department.parent_department_id.as_deref(),
            code: department.code.as_deref(),
            subordination: Subordination {
                subordination_type: supervision,
            },
            co_subordination: Subordination {
                subordination_type: supervision,
            },
        }
    }
}

/// `GET /department/{departmentId}`: the `<department>`, or in JSON the bare object.
pub(crate) struct OneDepartment(pub(crate) Department);

impl Document for OneDepartment {
    fn write_xml(&self, xml: &mut XmlWriter) {
        write_department(xml, &self.0);
    }

    fn to_json(&self) -> String {
        json_text(&DepartmentJson::of(&self.0))
    }
}

/// `GET /department` (whole) and `GET /departments` (paged): every department the caller may
/// see.
pub(crate) struct Departments;

impl Listing for Departments {
    type Item = Department;
    const NAME: &'static str = "departments";
    const FILTERS: &'static [&'static str] = &[];

    fn write_xml(xml: &mut XmlWriter, department: &Department, _: Form) {
        write_department(xml, department);
    }

    fn write_json(out: &mut String, department: &Department, _: Form) {
        push_json(out, &DepartmentJson::of(department));
    }

    fn xml_bytes_hint(department: &Department) -> usize {
        330 + department.name.len() + department.code.as_ref().map_or(0, String::len)
    }
}

impl Streamed for Departments {
    streamed_rpc!(
        stream_departments(StreamDepartmentsRequest) -> StreamDepartmentsResponse.departments
    );
}

impl Whole for Departments {
    fn stream_request(_: Filters) -> StreamDepartmentsRequest {
        StreamDepartmentsRequest {}
    }
}

impl Paged for Departments {
    const PAGE_ELEMENT: &'static str = "departments";

    fn list_request(_: Filters, page: PageRequest) -> Result<ListDepartmentsRequest, GatewayError> {
        Ok(ListDepartmentsRequest { page: Some(page) })
    }

    paged_rpc!(list_departments(ListDepartmentsRequest) -> ListDepartmentsResponse.departments);
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

    fn department(parent: Option<&str>, code: Option<&str>) -> Department {
        Department {
            department_id: "d-1".into(),
            name: "Sales & <Co>".into(),
            parent_department_id: parent.map(Into::into),
            code: code.map(Into::into),
        }
    }

    fn xml_of(document: &impl Document) -> String {
        let mut xml = XmlWriter::document();
        xml.open("response");
        document.write_xml(&mut xml);
        xml.close("response");
        xml.finish()
    }

    #[test]
    fn a_department_is_written_with_its_subordination_in_both_formats() {
        let one = OneDepartment(department(Some("p-1"), Some("S")));
        assert_eq!(
            xml_of(&one),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response><department>\
             <departmentId>d-1</departmentId><name>Sales &amp; &lt;Co&gt;</name>\
             <parentDepartmentId>p-1</parentDepartmentId><code>S</code>\
             <subordination><subordinationType>inherit</subordinationType></subordination>\
             <coSubordination><subordinationType>inherit</subordinationType></coSubordination>\
             </department></response>"
        );
        assert_eq!(
            one.to_json(),
            r#"{"departmentId":"d-1","name":"Sales & <Co>","parentDepartmentId":"p-1","code":"S","subordination":{"subordinationType":"inherit"},"coSubordination":{"subordinationType":"inherit"}}"#
        );
    }

    #[test]
    fn the_root_has_no_parent_and_no_supervisor_and_an_absent_code_is_left_out() {
        let root = OneDepartment(department(None, None));
        let xml = xml_of(&root);
        assert!(
            !xml.contains("parentDepartmentId") && !xml.contains("<code"),
            "{xml}"
        );
        assert!(xml.contains("<subordinationType>no_supervisor</subordinationType>"));
        assert_eq!(
            root.to_json(),
            r#"{"departmentId":"d-1","name":"Sales & <Co>","subordination":{"subordinationType":"no_supervisor"},"coSubordination":{"subordinationType":"no_supervisor"}}"#
        );
    }

    #[tokio::test]
    async fn a_whole_list_is_unwrapped_and_a_page_wrapped_with_its_token_only_while_more_follow() {
        use crate::listing::testing::{page_text, whole_text};
        use crate::representation::Format;
        let messages = [
            StreamDepartmentsResponse {
                departments: vec![department(None, None)],
            },
            StreamDepartmentsResponse {
                departments: vec![department(Some("p"), None)],
            },
        ];
        let xml = whole_text::<Departments>(&messages, Format::Xml).await;
        assert!(
            xml.contains("<response><department><departmentId>"),
            "{xml}"
        );
        assert_eq!(xml.matches("<department>").count(), 2);
        let json = whole_text::<Departments>(&messages, Format::Json).await;
        assert!(json.starts_with(r#"[{"departmentId":"d-1""#), "{json}");
        assert_eq!(whole_text::<Departments>(&[], Format::Json).await, "[]");

        assert_eq!(
            page_text::<Departments>(vec![], "", Format::Xml).await,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response><departments/></response>"
        );
        assert_eq!(
            page_text::<Departments>(vec![], "", Format::Json).await,
            r#"{"departments":[]}"#
        );
        let more = || vec![department(None, None)];
        assert!(
            page_text::<Departments>(more(), "dG9rZW4", Format::Xml)
                .await
                .ends_with(
                    "</department></departments><nextPageToken>dG9rZW4</nextPageToken></response>"
                )
        );
        assert!(
            page_text::<Departments>(more(), "dG9rZW4", Format::Json)
                .await
                .ends_with(r#"}],"nextPageToken":"dG9rZW4"}"#)
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
