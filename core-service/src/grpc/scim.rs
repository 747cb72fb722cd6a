//! `lms.v1.ScimService`: `/scim/v2` for the gateway (provisioning.md section 12). Each call is
//! authenticated by the SCIM token in metadata `x-scim-token`, then handed to
//! `service::scim` with the body, id and list parameters as sent. A SCIM refusal is a status
//! whose metadata carries the HTTP status (`scim-status`) and `scimType` (`scim-type`), its
//! message the `detail`; any other failure is mapped as everywhere ([`super::status`]).
//!
//! SCIM calls are not rate limited: an identity provider's bulk sync of 100,000 users must
//! all answer 201 (section 15), and only an owner or administrator can make the token.

use lms_proto::v1::{self as pb, scim_service_server::ScimService};
use tonic::{Code, Request, Response, Status, metadata::MetadataValue};

use super::SharedState;
use crate::{
    access::Caller,
    service::scim::{ListPage, ListQuery, ScimError, View, groups::ScimGroups, users::ScimUsers},
};

pub struct ScimApi {
    state: SharedState,
}

impl ScimApi {
    pub fn new(state: SharedState) -> Self {
        Self { state }
    }

    async fn caller<T>(&self, request: &Request<T>) -> Result<Caller, Status> {
        let metadata = request.metadata();
        let text = |key: &str| {
            metadata
                .get(key)
                .and_then(|value| value.to_str().ok())
                .map(|value| value.trim().to_owned())
                .unwrap_or_default()
        };
        let request_id = Some(text(lms_proto::metadata::REQUEST_ID)).filter(|id| !id.is_empty());
        let token = lms_runtime::Secret::new(text(lms_proto::metadata::SCIM_TOKEN));
        let (caller, _client) = self
            .state
            .auth
            .authenticate_scim(token.expose(), request_id)
            .await?;
        Ok(caller)
    }

    fn users<'a>(&'a self, caller: &'a Caller, view: &'a View) -> ScimUsers<'a> {
        ScimUsers {
            db: &self.state.db,
            verifier: self.state.auth.verifier(),
            caller,
            view,
        }
    }

    fn groups<'a>(&'a self, caller: &'a Caller, view: &'a View) -> ScimGroups<'a> {
        ScimGroups {
            db: &self.state.db,
            caller,
            view,
        }
    }
}

/// A SCIM refusal as a status: the HTTP status and `scimType` in metadata, the detail as the
/// message; any other error as the rest of the core maps it.
fn status(err: ScimError) -> Status {
    let (http, scim_type, detail) = match err {
        ScimError::Refused {
            status,
            scim_type,
            detail,
        } => (status, scim_type, detail),
        ScimError::Service(err) => return err.into(),
    };
    let code = match http {
        400 => Code::InvalidArgument,
        401 => Code::Unauthenticated,
        403 => Code::PermissionDenied,
        404 => Code::NotFound,
        409 => Code::FailedPrecondition,
        _ => Code::Unknown,
    };
    let mut status = Status::new(code, detail);
    status
        .metadata_mut()
        .insert(lms_proto::metadata::SCIM_STATUS, MetadataValue::from(http));
    if let Some(scim_type) = scim_type {
        status.metadata_mut().insert(
            lms_proto::metadata::SCIM_TYPE,
            MetadataValue::from_static(scim_type),
        );
    }
    status
}

fn view(location_base: String, attributes: Option<String>, excluded: Option<String>) -> View {
    View {
        location_base,
        attributes,
        excluded_attributes: excluded,
    }
}

fn resource_view(request: &pb::ScimResourceRequest) -> View {
    view(
        request.location_base.clone(),
        request.attributes.clone(),
        request.excluded_attributes.clone(),
    )
}

fn list_parts(request: pb::ScimListRequest) -> (ListQuery, View) {
    let query = ListQuery {
        filter: request.filter,
        start_index: request.start_index,
        count: request.count,
    };
    let view = view(
        request.location_base,
        request.attributes,
        request.excluded_attributes,
    );
    (query, view)
}

fn listed(page: Result<ListPage, ScimError>) -> Result<Response<pb::ScimListResponse>, Status> {
    let page = page.map_err(status)?;
    Ok(Response::new(pb::ScimListResponse {
        total_results: page.total_results,
        start_index: page.start_index,
        resources: page.resources.iter().map(ToString::to_string).collect(),
    }))
}

fn resource(
    found: Result<(serde_json::Value, String), ScimError>,
) -> Result<Response<pb::ScimResource>, Status> {
    let (json, location) = found.map_err(status)?;
    Ok(Response::new(pb::ScimResource {
        json: json.to_string(),
        location,
    }))
}

fn deleted(done: Result<(), ScimError>) -> Result<Response<pb::ScimDeleted>, Status> {
    done.map_err(status)?;
    Ok(Response::new(pb::ScimDeleted {}))
}

/// Which resources a call is about.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Users,
    Groups,
}

/// What a call does with one resource.
#[derive(Debug, Clone, Copy)]
enum Op {
    Get,
    Create,
    Replace,
    Patch,
}

impl ScimApi {
    async fn list(
        &self,
        request: Request<pb::ScimListRequest>,
        kind: Kind,
    ) -> Result<Response<pb::ScimListResponse>, Status> {
        let caller = self.caller(&request).await?;
        let (query, view) = list_parts(request.into_inner());
        listed(match kind {
            Kind::Users => self.users(&caller, &view).list(&query).await,
            Kind::Groups => self.groups(&caller, &view).list(&query).await,
        })
    }

    async fn resource(
        &self,
        request: Request<pb::ScimResourceRequest>,
        kind: Kind,
        op: Op,
    ) -> Result<Response<pb::ScimResource>, Status> {
        let caller = self.caller(&request).await?;
        let request = request.into_inner();
        let view = resource_view(&request);
        let (id, body) = (request.id.as_str(), request.body.as_str());
        let (users, groups) = (self.users(&caller, &view), self.groups(&caller, &view));
        resource(match (kind, op) {
            (Kind::Users, Op::Get) => users.get(id).await,
            (Kind::Users, Op::Create) => users.create(body).await,
            (Kind::Users, Op::Replace) => users.replace(id, body).await,
            (Kind::Users, Op::Patch) => users.patch(id, body).await,
            (Kind::Groups, Op::Get) => groups.get(id).await,
            (Kind::Groups, Op::Create) => groups.create(body).await,
            (Kind::Groups, Op::Replace) => groups.replace(id, body).await,
            (Kind::Groups, Op::Patch) => groups.patch(id, body).await,
        })
    }

    async fn delete(
        &self,
        request: Request<pb::ScimResourceRequest>,
        kind: Kind,
    ) -> Result<Response<pb::ScimDeleted>, Status> {
        let caller = self.caller(&request).await?;
        let request = request.into_inner();
        let view = resource_view(&request);
        deleted(match kind {
            Kind::Users => self.users(&caller, &view).delete(&request.id).await,
            Kind::Groups => self.groups(&caller, &view).delete(&request.id).await,
        })
    }
}

#[tonic::async_trait]
impl ScimService for ScimApi {
    #[tracing::instrument(skip_all, name = "lms.v1.ScimService/ListUsers")]
    async fn list_users(
        &self,
        request: Request<pb::ScimListRequest>,
    ) -> Result<Response<pb::ScimListResponse>, Status> {
        self.list(request, Kind::Users).await
    }

    #[tracing::instrument(skip_all, name = "lms.v1.ScimService/GetUser")]
    async fn get_user(
        &self,
        request: Request<pb::ScimResourceRequest>,
    ) -> Result<Response<pb::ScimResource>, Status> {
        self.resource(request, Kind::Users, Op::Get).await
    }

    #[tracing::instrument(skip_all, name = "lms.v1.ScimService/CreateUser")]
    async fn create_user(
        &self,
        request: Request<pb::ScimResourceRequest>,
    ) -> Result<Response<pb::ScimResource>, Status> {
        self.resource(request, Kind::Users, Op::Create).await
    }

    #[tracing::instrument(skip_all, name = "lms.v1.ScimService/ReplaceUser")]
    async fn replace_user(
        &self,
        request: Request<pb::ScimResourceRequest>,
    ) -> Result<Response<pb::ScimResource>, Status> {
        self.resource(request, Kind::Users, Op::Replace).await
    }

    #[tracing::instrument(skip_all, name = "lms.v1.ScimService/PatchUser")]
    async fn patch_user(
        &self,
        request: Request<pb::ScimResourceRequest>,
    ) -> Result<Response<pb::ScimResource>, Status> {
        self.resource(request, Kind::Users, Op::Patch).await
    }

    #[tracing::instrument(skip_all, name = "lms.v1.ScimService/DeleteUser")]
    async fn delete_user(
        &self,
        request: Request<pb::ScimResourceRequest>,
    ) -> Result<Response<pb::ScimDeleted>, Status> {
        self.delete(request, Kind::Users).await
    }

    #[tracing::instrument(skip_all, name = "lms.v1.ScimService/ListGroups")]
    async fn list_groups(
        &self,
        request: Request<pb::ScimListRequest>,
    ) -> Result<Response<pb::ScimListResponse>, Status> {
        self.list(request, Kind::Groups).await
    }

    #[tracing::instrument(skip_all, name = "lms.v1.ScimService/GetGroup")]
    async fn get_group(
        &self,
        request: Request<pb::ScimResourceRequest>,
    ) -> Result<Response<pb::ScimResource>, Status> {
        self.resource(request, Kind::Groups, Op::Get).await
    }

    #[tracing::instrument(skip_all, name = "lms.v1.ScimService/CreateGroup")]
    async fn create_group(
        &self,
        request: Request<pb::ScimResourceRequest>,
    ) -> Result<Response<pb::ScimResource>, Status> {
        self.resource(request, Kind::Groups, Op::Create).await
    }

    #[tracing::instrument(skip_all, name = "lms.v1.ScimService/ReplaceGroup")]
    async fn replace_group(
        &self,
        request: Request<pb::ScimResourceRequest>,
    ) -> Result<Response<pb::ScimResource>, Status> {
        self.resource(request, Kind::Groups, Op::Replace).await
    }

    #[tracing::instrument(skip_all, name = "lms.v1.ScimService/PatchGroup")]
    async fn patch_group(
        &self,
        request: Request<pb::ScimResourceRequest>,
    ) -> Result<Response<pb::ScimResource>, Status> {
        self.resource(request, Kind::Groups, Op::Patch).await
    }

    #[tracing::instrument(skip_all, name = "lms.v1.ScimService/DeleteGroup")]
    async fn delete_group(
        &self,
        request: Request<pb::ScimResourceRequest>,
    ) -> Result<Response<pb::ScimDeleted>, Status> {
        self.delete(request, Kind::Groups).await
    }
}
