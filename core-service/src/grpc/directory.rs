//! `lms.v1.DirectoryService`: the writes of internal services, one method each:
//! convert the request, call the service, map the error. A committed change to who a
//! user is tells the authenticator by itself (`service::write`), so nothing here has to.
//!
//! The service is the account owners' and administrators' ([`Operation::ManageDirectory`],
//! checked once per call by [`directory_caller`]); each method then calls the same service
//! function as the HTTP interface's operation, whose grant for them is everything.
//! `RecordResults` is the exception: the tracking write of players and LRSs is allowed by
//! the results permissions (results.md section 7), which its service function checks.

use lms_proto::v1::{self as pb, directory_service_server::DirectoryService};
use tonic::{Request, Response, Status};

use super::{SharedState, convert, request::caller};
use crate::{
    access::{Caller, Operation},
    domain::{ids::ResourceRef, login::PlainPassword},
    error::ServiceError,
    service::{
        api_clients, content, enrollments,
        groups::{self, Membership},
        points::{self, Direction},
        results, users,
    },
};

pub struct DirectoryApi {
    state: SharedState,
}

impl DirectoryApi {
    pub fn new(state: SharedState) -> Self {
        Self { state }
    }
}

#[tonic::async_trait]
impl DirectoryService for DirectoryApi {
    #[tracing::instrument(skip_all, name = "lms.v1.DirectoryService/CreateUser")]
    async fn create_user(
        &self,
        request: Request<pb::CreateUserRequest>,
    ) -> Result<Response<pb::CreateUserResponse>, Status> {
        let caller = directory_caller(&self.state, &request).await?;
        let new = request.into_inner().try_into();
        let verifier = self.state.auth.verifier();
        let id = users::add_user(&self.state.db, verifier, &caller, new).await?;
        Ok(Response::new(pb::CreateUserResponse {
            user_id: id.to_string(),
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.DirectoryService/SetUserPassword")]
    async fn set_user_password(
        &self,
        request: Request<pb::SetUserPasswordRequest>,
    ) -> Result<Response<pb::SetUserPasswordResponse>, Status> {
        let caller = directory_caller(&self.state, &request).await?;
        let pb::SetUserPasswordRequest { user_id, password } = request.into_inner();
        let password = PlainPassword::parse(&password);
        let user = ResourceRef::parse(user_id);
        let verifier = self.state.auth.verifier();
        users::change_password(&self.state.db, verifier, &caller, user, password).await?;
        Ok(Response::new(pb::SetUserPasswordResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.DirectoryService/SetUserRole")]
    async fn set_user_role(
        &self,
        request: Request<pb::SetUserRoleRequest>,
    ) -> Result<Response<pb::SetUserRoleResponse>, Status> {
        let caller = directory_caller(&self.state, &request).await?;
        let changes = request.get_ref().try_into();
        let user = ResourceRef::parse(request.into_inner().user_id);
        users::update_user(&self.state.db, &caller, user, changes).await?;
        Ok(Response::new(pb::SetUserRoleResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.DirectoryService/SetUserManagedDepartments")]
    async fn set_user_managed_departments(
        &self,
        request: Request<pb::SetUserManagedDepartmentsRequest>,
    ) -> Result<Response<pb::SetUserManagedDepartmentsResponse>, Status> {
        let caller = directory_caller(&self.state, &request).await?;
        let changes = request.get_ref().try_into();
        let user = ResourceRef::parse(request.into_inner().user_id);
        users::update_user(&self.state.db, &caller, user, changes).await?;
        Ok(Response::new(pb::SetUserManagedDepartmentsResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.DirectoryService/SetUserActive")]
    async fn set_user_active(
        &self,
        request: Request<pb::SetUserActiveRequest>,
    ) -> Result<Response<pb::SetUserActiveResponse>, Status> {
        let caller = directory_caller(&self.state, &request).await?;
        let pb::SetUserActiveRequest { user_id, active } = request.into_inner();
        let status = Ok(convert::active_status(active));
        users::change_status(&self.state.db, &caller, ResourceRef::parse(user_id), status).await?;
        Ok(Response::new(pb::SetUserActiveResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.DirectoryService/CreateGroup")]
    async fn create_group(
        &self,
        request: Request<pb::CreateGroupRequest>,
    ) -> Result<Response<pb::CreateGroupResponse>, Status> {
        let caller = directory_caller(&self.state, &request).await?;
        let new = request.into_inner().try_into();
        let id = groups::create_group(&self.state.db, &caller, new).await?;
        Ok(Response::new(pb::CreateGroupResponse {
            group_id: id.to_string(),
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.DirectoryService/AddGroupMembers")]
    async fn add_group_members(
        &self,
        request: Request<pb::AddGroupMembersRequest>,
    ) -> Result<Response<pb::AddGroupMembersResponse>, Status> {
        let caller = directory_caller(&self.state, &request).await?;
        let new = request.into_inner().try_into();
        groups::change_members(&self.state.db, &caller, new, Membership::Added).await?;
        Ok(Response::new(pb::AddGroupMembersResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.DirectoryService/CreateProject")]
    async fn create_project(
        &self,
        request: Request<pb::CreateProjectRequest>,
    ) -> Result<Response<pb::CreateProjectResponse>, Status> {
        let caller = directory_caller(&self.state, &request).await?;
        let new = request.into_inner().try_into();
        let id = content::create_project(&self.state.db, &caller, new).await?;
        Ok(Response::new(pb::CreateProjectResponse {
            project_id: id.to_string(),
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.DirectoryService/CreateContentItem")]
    async fn create_content_item(
        &self,
        request: Request<pb::CreateContentItemRequest>,
    ) -> Result<Response<pb::CreateContentItemResponse>, Status> {
        let caller = directory_caller(&self.state, &request).await?;
        let new = request.into_inner().try_into();
        let id = content::create_content_item(&self.state.db, &caller, new).await?;
        Ok(Response::new(pb::CreateContentItemResponse {
            content_item_id: id.to_string(),
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.DirectoryService/CreateEnrollment")]
    async fn create_enrollment(
        &self,
        request: Request<pb::CreateEnrollmentRequest>,
    ) -> Result<Response<pb::CreateEnrollmentResponse>, Status> {
        let caller = directory_caller(&self.state, &request).await?;
        let new = request.into_inner().try_into();
        let enrolled = enrollments::enroll_learners(&self.state.db, &caller, new).await?;
        let id = enrolled.first().ok_or_else(|| {
            ServiceError::from(anyhow::anyhow!("enrolling one pair gave no enrollment"))
        })?;
        Ok(Response::new(pb::CreateEnrollmentResponse {
            enrollment_id: id.to_string(),
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.DirectoryService/AddPoints")]
    async fn add_points(
        &self,
        request: Request<pb::AddPointsRequest>,
    ) -> Result<Response<pb::AddPointsResponse>, Status> {
        let caller = directory_caller(&self.state, &request).await?;
        let change = Ok(request.into_inner().into());
        let total = points::move_points(&self.state.db, &caller, Direction::Add, change).await?;
        Ok(Response::new(pb::AddPointsResponse { total }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.DirectoryService/CreateApiClient")]
    async fn create_api_client(
        &self,
        request: Request<pb::CreateApiClientRequest>,
    ) -> Result<Response<pb::CreateApiClientResponse>, Status> {
        let caller = directory_caller(&self.state, &request).await?;
        let pb::CreateApiClientRequest { user_id, scim } = request.into_inner();
        let kind = if scim {
            api_clients::ClientKind::Scim
        } else {
            api_clients::ClientKind::Api
        };
        let made = api_clients::create_api_client(&self.state.db, &caller, &user_id, kind).await?;
        Ok(Response::new(pb::CreateApiClientResponse {
            client_id: made.client_id.to_string(),
            client_secret: made.client_secret,
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.DirectoryService/ListApiClients")]
    async fn list_api_clients(
        &self,
        request: Request<pb::ListApiClientsRequest>,
    ) -> Result<Response<pb::ListApiClientsResponse>, Status> {
        let caller = directory_caller(&self.state, &request).await?;
        let clients =
            api_clients::list_api_clients(&self.state.db, &caller, api_clients::ClientsSeen::All)
                .await?;
        Ok(Response::new(pb::ListApiClientsResponse {
            api_clients: clients.into_iter().map(api_client).collect(),
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.DirectoryService/RevokeApiClient")]
    async fn revoke_api_client(
        &self,
        request: Request<pb::RevokeApiClientRequest>,
    ) -> Result<Response<pb::RevokeApiClientResponse>, Status> {
        let caller = directory_caller(&self.state, &request).await?;
        let client = ResourceRef::parse(request.into_inner().client_id);
        let seen = api_clients::ClientsSeen::All;
        api_clients::revoke_api_client(&self.state.db, &caller, client, seen).await?;
        Ok(Response::new(pb::RevokeApiClientResponse {}))
    }
    #[tracing::instrument(skip_all, name = "lms.v1.DirectoryService/RecordResults")]
    async fn record_results(
        &self,
        request: Request<pb::RecordResultsRequest>,
    ) -> Result<Response<pb::RecordResultsResponse>, Status> {
        // Allowed by the results permissions, not the directory's: a player is a custom role
        // with `results.write`.
        let caller = caller(&self.state, &request).await?;
        let records = super::results::records(request.get_ref());
        let changed = results::record_results(&self.state.db, &caller, records).await?;
        Ok(Response::new(pb::RecordResultsResponse { changed }))
    }
}

/// The authenticated caller of a directory method, refused (PERMISSION_DENIED naming the
/// directory) unless an account owner or administrator.
async fn directory_caller<T>(state: &SharedState, request: &Request<T>) -> Result<Caller, Status> {
    let caller = caller(state, request).await?;
    caller.grant(Operation::ManageDirectory)?;
    Ok(caller)
}

/// An API client as `lms.v1` shows it, without its secret.
pub(super) fn api_client(client: crate::entities::api_client::Model) -> pb::ApiClient {
    pb::ApiClient {
        client_id: client.id.to_string(),
        user_id: client.user_id.to_string(),
        revoked: client.revoked,
        scim: client.scim,
    }
}
