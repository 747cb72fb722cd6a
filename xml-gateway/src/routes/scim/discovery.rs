//! SCIM discovery (provisioning.md section 9; RFC 7644 section 4): what this service
//! supports, its resource types and their schemas. Fixed documents, served without a token;
//! they describe the attributes the core maps (section 10.1 and 10.5).

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::ScimAnswer;

const USER: &str = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP: &str = "urn:ietf:params:scim:schemas:core:2.0:Group";
const ENTERPRISE: &str = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const LIST: &str = "urn:ietf:params:scim:api:messages:2.0:ListResponse";

pub(super) fn service_provider_config(base: &str) -> ScimAnswer {
    ScimAnswer::json(
        StatusCode::OK,
        json!({
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"],
            "documentationUri": "https://github.com/lms/lms/blob/main/docs/spec/provisioning.md",
            "patch": {"supported": true},
            "bulk": {"supported": false, "maxOperations": 0, "maxPayloadSize": 1_048_576},
            "filter": {"supported": true, "maxResults": 1000},
            "changePassword": {"supported": true},
            "sort": {"supported": false},
            "etag": {"supported": false},
            "authenticationSchemes": [{
                "type": "oauthbearertoken",
                "name": "OAuth Bearer Token",
                "description": "A SCIM token made by POST /scim_tokens, sent as Authorization: Bearer <token>.",
                "primary": true,
            }],
            "meta": {
                "resourceType": "ServiceProviderConfig",
                "location": format!("{base}/ServiceProviderConfig"),
            },
        }),
    )
}

fn user_type(base: &str) -> Value {
    json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:ResourceType"],
        "id": "User",
        "name": "User",
        "endpoint": "/Users",
        "description": "A user of the account",
        "schema": USER,
        "schemaExtensions": [{"schema": ENTERPRISE, "required": false}],
        "meta": {"resourceType": "ResourceType", "location": format!("{base}/ResourceTypes/User")},
    })
}

fn group_type(base: &str) -> Value {
    json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:ResourceType"],
        "id": "Group",
        "name": "Group",
        "endpoint": "/Groups",
        "description": "A plain group of the account",
        "schema": GROUP,
        "schemaExtensions": [],
        "meta": {"resourceType": "ResourceType", "location": format!("{base}/ResourceTypes/Group")},
    })
}

/// `GET /ResourceTypes` (a ListResponse) or one of them by name (any case).
pub(super) fn resource_types(base: &str, name: Option<&str>) -> ScimAnswer {
    let all = [user_type(base), group_type(base)];
    one_or_list(all.to_vec(), name, "resource type")
}

/// `GET /Schemas` (a ListResponse) or one of them by URN (any case).
pub(super) fn schemas(base: &str, urn: Option<&str>) -> ScimAnswer {
    let all = [
        user_schema(base),
        enterprise_schema(base),
        group_schema(base),
    ];
    one_or_list(all.to_vec(), urn, "schema")
}

fn one_or_list(all: Vec<Value>, id: Option<&str>, what: &str) -> ScimAnswer {
    match id {
        None => ScimAnswer::json(
            StatusCode::OK,
            json!({
                "schemas": [LIST],
                "totalResults": all.len(),
                "startIndex": 1,
                "itemsPerPage": all.len(),
                "Resources": all,
            }),
        ),
        Some(id) => match all.into_iter().find(|item| {
            item["id"]
                .as_str()
                .is_some_and(|known| known.eq_ignore_ascii_case(id))
        }) {
            Some(item) => ScimAnswer::json(StatusCode::OK, item),
            None => ScimAnswer::error(
                StatusCode::NOT_FOUND,
                None,
                &format!("no {what} \"{}\"", crate::clip::clip(id)),
            ),
        },
    }
}

/// An attribute definition with RFC 7643 section 7's characteristics.
struct Attribute {
    name: &'static str,
    kind: &'static str,
    multi: bool,
    required: bool,
    mutability: &'static str,
    returned: &'static str,
    uniqueness: &'static str,
    case_exact: bool,
    description: &'static str,
    sub: Vec<Value>,
}

impl Attribute {
    fn new(name: &'static str, kind: &'static str, description: &'static str) -> Self {
        Self {
            name,
            kind,
            multi: false,
            required: false,
            mutability: "readWrite",
            returned: "default",
            uniqueness: "none",
            case_exact: false,
            description,
            sub: Vec::new(),
        }
    }

    fn multi(mut self) -> Self {
        self.multi = true;
        self
    }

    fn required(mut self) -> Self {
        self.required = true;
        self
    }

    fn mutability(mut self, mutability: &'static str) -> Self {
        self.mutability = mutability;
        self
    }

    fn returned(mut self, returned: &'static str) -> Self {
        self.returned = returned;
        self
    }

    fn unique(mut self, uniqueness: &'static str) -> Self {
        self.uniqueness = uniqueness;
        self
    }

    fn case_exact(mut self) -> Self {
        self.case_exact = true;
        self
    }

    fn sub(mut self, sub: Vec<Value>) -> Self {
        self.sub = sub;
        self
    }

    fn json(self) -> Value {
        let mut value = json!({
            "name": self.name,
            "type": self.kind,
            "multiValued": self.multi,
            "description": self.description,
            "required": self.required,
            "caseExact": self.case_exact,
            "mutability": self.mutability,
            "returned": self.returned,
            "uniqueness": self.uniqueness,
        });
        if !self.sub.is_empty() {
            value["subAttributes"] = Value::Array(self.sub);
        }
        value
    }
}

fn schema(base: &str, id: &str, name: &str, description: &str, attributes: Vec<Value>) -> Value {
    json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Schema"],
        "id": id,
        "name": name,
        "description": description,
        "attributes": attributes,
        "meta": {"resourceType": "Schema", "location": format!("{base}/Schemas/{id}")},
    })
}

fn user_schema(base: &str) -> Value {
    let text = |name, description| Attribute::new(name, "string", description);
    let attributes = vec![
        text(
            "userName",
            "The login: 1 to 255 visible ASCII characters, unique in the account in any case.",
        )
        .required()
        .unique("server")
        .json(),
        text(
            "externalId",
            "The identity provider's id, unique in the account.",
        )
        .case_exact()
        .json(),
        Attribute::new("name", "complex", "The user's names.")
            .sub(vec![
                text("givenName", "The first name.").json(),
                text("familyName", "The last name.").json(),
            ])
            .json(),
        text("displayName", "The name shown for the user.").json(),
        Attribute::new(
            "emails",
            "complex",
            "The e-mail address, unique in the account.",
        )
        .multi()
        .sub(vec![
            text("value", "The address.").json(),
            text("type", "work.").json(),
            Attribute::new("primary", "boolean", "Always true.").json(),
        ])
        .json(),
        Attribute::new(
            "active",
            "boolean",
            "Whether the user may sign in (status 1).",
        )
        .json(),
        text(
            "password",
            "Write-only: 8 to 1,024 printable ASCII characters.",
        )
        .mutability("writeOnly")
        .returned("never")
        .case_exact()
        .json(),
        Attribute::new("groups", "complex", "The plain groups the user is in.")
            .multi()
            .mutability("readOnly")
            .sub(vec![
                text("value", "The group's id.")
                    .mutability("readOnly")
                    .json(),
                text("display", "The group's name.")
                    .mutability("readOnly")
                    .json(),
            ])
            .json(),
    ];
    schema(base, USER, "User", "User Account", attributes)
}

fn enterprise_schema(base: &str) -> Value {
    let attributes = vec![
        Attribute::new(
            "department",
            "string",
            "The department: its code, else its name; returned as its name.",
        )
        .json(),
    ];
    schema(
        base,
        ENTERPRISE,
        "EnterpriseUser",
        "Enterprise User",
        attributes,
    )
}

fn group_schema(base: &str) -> Value {
    let text = |name, description| Attribute::new(name, "string", description);
    let attributes = vec![
        text(
            "displayName",
            "The group's name: unique among the account's plain groups in any case.",
        )
        .required()
        .unique("server")
        .json(),
        text("externalId", "The identity provider's id.")
            .case_exact()
            .json(),
        Attribute::new("members", "complex", "The group's users.")
            .multi()
            .sub(vec![
                text("value", "The user's id.")
                    .mutability("immutable")
                    .json(),
                text("display", "The user's userName.")
                    .mutability("readOnly")
                    .json(),
            ])
            .json(),
    ];
    schema(base, GROUP, "Group", "Group", attributes)
}
