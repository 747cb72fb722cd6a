//! `lms.v1.AdminService`: one method per operation of the XML interface.

use std::pin::Pin;

use futures::{Stream, StreamExt as _};
use lms_proto::v1::{self as pb, admin_service_server::AdminService};
use tonic::{Request, Response, Status};

use super::{SharedState, convert, request::caller, results as results_convert};
use crate::domain::login::PlainPassword;
use crate::{
    domain::{
        ids::{IdList, ResourceRef},
        page::{Listing, Page},
        schedule::{self, ScheduledDate},
    },
    entities::{department, group},
    error::ServiceResult,
    service::{
        api_clients,
        content::{self, ContentFilter},
        departments, enrollments,
        groups::{self, Membership},
        points::{self, Direction},
        results, users,
    },
};

pub struct AdminApi {
    state: SharedState,
}

impl AdminApi {
    pub fn new(state: SharedState) -> Self {
        Self { state }
    }
}

/// A whole list's messages, each read by one statement.
type ListStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;

type PointsStream = Pin<Box<dyn Stream<Item = Result<pb::UserPoints, Status>> + Send + 'static>>;

#[tonic::async_trait]
impl AdminService for AdminApi {
    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/UpdateDepartment")]
    async fn update_department(
        &self,
        request: Request<pb::UpdateDepartmentRequest>,
    ) -> Result<Response<pb::UpdateDepartmentResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let changes = request.into_inner().try_into();
        departments::update_department(&self.state.db, &caller, changes).await?;
        Ok(Response::new(pb::UpdateDepartmentResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/CreateDepartment")]
    async fn create_department(
        &self,
        request: Request<pb::CreateDepartmentRequest>,
    ) -> Result<Response<pb::CreateDepartmentResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let new = request.into_inner().try_into();
        let id = departments::create_department(&self.state.db, &caller, new).await?;
        Ok(Response::new(pb::CreateDepartmentResponse {
            department_id: id.to_string(),
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/GetDepartment")]
    async fn get_department(
        &self,
        request: Request<pb::GetDepartmentRequest>,
    ) -> Result<Response<pb::GetDepartmentResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let department_ref = ResourceRef::parse(request.into_inner().department_id);
        let found = departments::get_department(&self.state.db, &caller, &department_ref).await?;
        Ok(Response::new(pb::GetDepartmentResponse {
            department: Some(department_message(found)),
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/ListDepartments")]
    async fn list_departments(
        &self,
        request: Request<pb::ListDepartmentsRequest>,
    ) -> Result<Response<pb::ListDepartmentsResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let page = request
            .into_inner()
            .page
            .map(|page| Page::parse(Listing::Departments, page.page_size, &page.page_token));
        let list = departments::list_departments(&self.state.db, &caller, page).await?;
        Ok(Response::new(pb::ListDepartmentsResponse {
            departments: list.items.into_iter().map(department_message).collect(),
            next_page_token: list.next_page_token.unwrap_or_default(),
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/DeleteDepartment")]
    async fn delete_department(
        &self,
        request: Request<pb::DeleteDepartmentRequest>,
    ) -> Result<Response<pb::DeleteDepartmentResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let department_ref = ResourceRef::parse(request.into_inner().department_id);
        departments::delete_department(&self.state.db, &caller, &department_ref).await?;
        Ok(Response::new(pb::DeleteDepartmentResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/UpdateGroup")]
    async fn update_group(
        &self,
        request: Request<pb::UpdateGroupRequest>,
    ) -> Result<Response<pb::UpdateGroupResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let changes = request.into_inner().try_into();
        groups::update_group(&self.state.db, &caller, changes).await?;
        Ok(Response::new(pb::UpdateGroupResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/GetGroup")]
    async fn get_group(
        &self,
        request: Request<pb::GetGroupRequest>,
    ) -> Result<Response<pb::GetGroupResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let group_ref = ResourceRef::parse(request.into_inner().group_id);
        let group = groups::get_group(&self.state.reads, &caller, &group_ref).await?;
        Ok(Response::new(pb::GetGroupResponse {
            group: Some(pb::Group {
                group_id: group.id.to_string(),
                name: group.name,
                users_count: group.users_count,
                user_ids: group.user_ids.iter().map(ToString::to_string).collect(),
                is_smart: group.is_smart,
            }),
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/DeleteEnrollments")]
    async fn delete_enrollments(
        &self,
        request: Request<pb::DeleteEnrollmentsRequest>,
    ) -> Result<Response<pb::DeleteEnrollmentsResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let ids = convert::enrollment_ids(request.get_ref());
        let deleted_count = enrollments::delete_enrollments(&self.state.db, &caller, ids).await?;
        Ok(Response::new(pb::DeleteEnrollmentsResponse {
            deleted_count,
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/GetContentItem")]
    async fn get_content_item(
        &self,
        request: Request<pb::GetContentItemRequest>,
    ) -> Result<Response<pb::GetContentItemResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let item_ref = ResourceRef::parse(request.into_inner().content_item_id);
        let item = content::get_content_item(&self.state.db, &caller, &item_ref).await?;
        Ok(Response::new(pb::GetContentItemResponse {
            content_item: Some(content_item_message(item)),
        }))
    }

    type GetPointsStream = PointsStream;

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/GetPoints")]
    async fn get_points(
        &self,
        request: Request<pb::GetPointsRequest>,
    ) -> Result<Response<Self::GetPointsStream>, Status> {
        let caller = caller(&self.state, &request).await?;
        let filter = convert::points_filter(request.get_ref());
        let rows = points::points(&self.state.db, &caller, filter).await?;
        let span = tracing::Span::current();
        let stream = rows.map(move |row| {
            let _entered = span.enter();
            row.map(|row| {
                crate::metrics::points_rows(1);
                pb::UserPoints {
                    user_id: row.user_id.to_string(),
                    points: row.points,
                }
            })
            .map_err(Status::from)
        });
        Ok(Response::new(Box::pin(stream)))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/IssueToken")]
    async fn issue_token(
        &self,
        request: Request<pb::IssueTokenRequest>,
    ) -> Result<Response<pb::IssueTokenResponse>, Status> {
        let pb::IssueTokenRequest {
            client_id,
            client_secret,
        } = request.into_inner();
        let client_secret = lms_runtime::Secret::new(client_secret);
        let issued = self
            .state
            .auth
            .issue_token(&client_id, client_secret.expose())
            .await?;
        Ok(Response::new(pb::IssueTokenResponse {
            access_token: issued.access_token,
            expires_in: u32::try_from(issued.expires_in.as_secs()).unwrap_or(u32::MAX),
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/ListEnrollments")]
    async fn list_enrollments(
        &self,
        request: Request<pb::ListEnrollmentsRequest>,
    ) -> Result<Response<pb::ListEnrollmentsResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let request = request.into_inner();
        let filter = convert::enrollment_filter([
            &request.learner_ids,
            &request.course_ids,
            &request.enrollment_ids,
        ]);
        let page = request
            .page
            .map(|page| Page::parse(Listing::Enrollments, page.page_size, &page.page_token));
        let list = enrollments::list_enrollments(&self.state.db, &caller, filter, page).await?;
        Ok(Response::new(pb::ListEnrollmentsResponse {
            enrollments: list.items.into_iter().map(enrollment_message).collect(),
            next_page_token: list.next_page_token.unwrap_or_default(),
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/ListContentItems")]
    async fn list_content_items(
        &self,
        request: Request<pb::ListContentItemsRequest>,
    ) -> Result<Response<pb::ListContentItemsResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let request = request.into_inner();
        let filter = ContentFilter::parse(&request.content_item_ids, &request.content_types);
        let page = request
            .page
            .map(|page| Page::parse(Listing::ContentItems, page.page_size, &page.page_token));
        let list = content::list_content_items(&self.state.db, &caller, filter, page).await?;
        Ok(Response::new(pb::ListContentItemsResponse {
            content_items: list.items.into_iter().map(content_item_message).collect(),
            next_page_token: list.next_page_token.unwrap_or_default(),
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/EnrollLearners")]
    async fn enroll_learners(
        &self,
        request: Request<pb::EnrollLearnersRequest>,
    ) -> Result<Response<pb::EnrollLearnersResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let new = convert::new_enrollments(request.get_ref());
        enrollments::enroll_learners(&self.state.db, &caller, new).await?;
        Ok(Response::new(pb::EnrollLearnersResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/ListGroups")]
    async fn list_groups(
        &self,
        request: Request<pb::ListGroupsRequest>,
    ) -> Result<Response<pb::ListGroupsResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let page = request
            .into_inner()
            .page
            .map(|page| Page::parse(Listing::Groups, page.page_size, &page.page_token));
        let list = groups::list_groups(&self.state.db, &caller, page).await?;
        Ok(Response::new(pb::ListGroupsResponse {
            groups: list.items.into_iter().map(group_summary).collect(),
            next_page_token: list.next_page_token.unwrap_or_default(),
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/AddGroup")]
    async fn add_group(
        &self,
        request: Request<pb::AddGroupRequest>,
    ) -> Result<Response<pb::AddGroupResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let new = request.into_inner().try_into();
        let id = groups::create_group(&self.state.db, &caller, new).await?;
        Ok(Response::new(pb::AddGroupResponse {
            group_id: id.to_string(),
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/DeleteGroup")]
    async fn delete_group(
        &self,
        request: Request<pb::DeleteGroupRequest>,
    ) -> Result<Response<pb::DeleteGroupResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let group_ref = ResourceRef::parse(request.into_inner().group_id);
        groups::delete_group(&self.state.db, &caller, &group_ref).await?;
        Ok(Response::new(pb::DeleteGroupResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/ReplaceGroupMembers")]
    async fn replace_group_members(
        &self,
        request: Request<pb::ReplaceGroupMembersRequest>,
    ) -> Result<Response<pb::ReplaceGroupMembersResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let new = request.into_inner().try_into();
        groups::change_members(&self.state.db, &caller, new, Membership::Replacing).await?;
        Ok(Response::new(pb::ReplaceGroupMembersResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/AwardPoints")]
    async fn award_points(
        &self,
        request: Request<pb::AwardPointsRequest>,
    ) -> Result<Response<pb::AwardPointsResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let parsed = request.into_inner().try_into();
        points::move_points(&self.state.db, &caller, Direction::Award, parsed).await?;
        Ok(Response::new(pb::AwardPointsResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/WithdrawPoints")]
    async fn withdraw_points(
        &self,
        request: Request<pb::WithdrawPointsRequest>,
    ) -> Result<Response<pb::WithdrawPointsResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let parsed = request.into_inner().try_into();
        points::move_points(&self.state.db, &caller, Direction::Withdraw, parsed).await?;
        Ok(Response::new(pb::WithdrawPointsResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/GetUser")]
    async fn get_user(
        &self,
        request: Request<pb::GetUserRequest>,
    ) -> Result<Response<pb::GetUserResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let user_ref = ResourceRef::parse(request.into_inner().user_id);
        let found = users::get_user(&self.state.db, &caller, &user_ref).await?;
        Ok(Response::new(pb::GetUserResponse {
            user: Some(convert::user_profile(found)),
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/ListUsers")]
    async fn list_users(
        &self,
        request: Request<pb::ListUsersRequest>,
    ) -> Result<Response<pb::ListUsersResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let request = request.into_inner();
        let filter = convert::user_filter([
            &request.department_ids,
            &request.group_ids,
            &request.logins,
            &request.emails,
        ]);
        if let Some(numbered) = &request.numbered_page {
            let page = users::NumberedPage::parse(numbered.number, numbered.size);
            let (users, total) =
                users::numbered_users(&self.state.db, &caller, filter, page).await?;
            return Ok(Response::new(pb::ListUsersResponse {
                users: users.into_iter().map(convert::user_profile).collect(),
                next_page_token: String::new(),
                total,
            }));
        }
        let page = request
            .page
            .map(|page| Page::parse(Listing::Users, page.page_size, &page.page_token));
        let list = users::list_users(&self.state.db, &caller, filter, page).await?;
        Ok(Response::new(pb::ListUsersResponse {
            users: list.items.into_iter().map(convert::user_profile).collect(),
            next_page_token: list.next_page_token.unwrap_or_default(),
            total: 0,
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/AddUser")]
    async fn add_user(
        &self,
        request: Request<pb::AddUserRequest>,
    ) -> Result<Response<pb::AddUserResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let new = convert::new_profile(request.into_inner());
        let id = users::add_user(&self.state.db, self.state.auth.verifier(), &caller, new).await?;
        Ok(Response::new(pb::AddUserResponse {
            user_id: id.to_string(),
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/ChangeUserPassword")]
    async fn change_user_password(
        &self,
        request: Request<pb::ChangeUserPasswordRequest>,
    ) -> Result<Response<pb::ChangeUserPasswordResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let pb::ChangeUserPasswordRequest { user_id, password } = request.into_inner();
        let parsed = PlainPassword::parse(&password);
        let user = ResourceRef::parse(user_id);
        users::change_password(
            &self.state.db,
            self.state.auth.verifier(),
            &caller,
            user,
            parsed,
        )
        .await?;
        Ok(Response::new(pb::ChangeUserPasswordResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/ChangeUserStatus")]
    async fn change_user_status(
        &self,
        request: Request<pb::ChangeUserStatusRequest>,
    ) -> Result<Response<pb::ChangeUserStatusResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let pb::ChangeUserStatusRequest { user_id, status } = request.into_inner();
        let user = ResourceRef::parse(user_id);
        users::change_status(&self.state.db, &caller, user, convert::user_status(status)).await?;
        Ok(Response::new(pb::ChangeUserStatusResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/UpdateUser")]
    async fn update_user(
        &self,
        request: Request<pb::UpdateUserRequest>,
    ) -> Result<Response<pb::UpdateUserResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let request = request.into_inner();
        let changes = convert::profile_changes(&request);
        let user = ResourceRef::parse(request.user_id);
        users::update_user(&self.state.db, &caller, user, changes).await?;
        Ok(Response::new(pb::UpdateUserResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/DeleteUser")]
    async fn delete_user(
        &self,
        request: Request<pb::DeleteUserRequest>,
    ) -> Result<Response<pb::DeleteUserResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let user = ResourceRef::parse(request.into_inner().user_id);
        users::delete_user(&self.state.db, &caller, &user).await?;
        Ok(Response::new(pb::DeleteUserResponse {}))
    }

    type StreamDepartmentsStream = ListStream<pb::StreamDepartmentsResponse>;

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/StreamDepartments")]
    async fn stream_departments(
        &self,
        request: Request<pb::StreamDepartmentsRequest>,
    ) -> Result<Response<Self::StreamDepartmentsStream>, Status> {
        let caller = caller(&self.state, &request).await?;
        let chunks = departments::stream_departments(&self.state.db, &caller)?;
        Ok(streamed("departments", chunks, |rows| {
            pb::StreamDepartmentsResponse {
                departments: rows.into_iter().map(department_message).collect(),
            }
        }))
    }

    type StreamGroupsStream = ListStream<pb::StreamGroupsResponse>;

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/StreamGroups")]
    async fn stream_groups(
        &self,
        request: Request<pb::StreamGroupsRequest>,
    ) -> Result<Response<Self::StreamGroupsStream>, Status> {
        let caller = caller(&self.state, &request).await?;
        let chunks = groups::stream_groups(&self.state.db, &caller)?;
        Ok(streamed("groups", chunks, |rows| {
            pb::StreamGroupsResponse {
                groups: rows.into_iter().map(group_summary).collect(),
            }
        }))
    }

    type StreamEnrollmentsStream = ListStream<pb::StreamEnrollmentsResponse>;

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/StreamEnrollments")]
    async fn stream_enrollments(
        &self,
        request: Request<pb::StreamEnrollmentsRequest>,
    ) -> Result<Response<Self::StreamEnrollmentsStream>, Status> {
        let caller = caller(&self.state, &request).await?;
        let request = request.into_inner();
        let filter = convert::enrollment_filter([
            &request.learner_ids,
            &request.course_ids,
            &request.enrollment_ids,
        ]);
        let chunks = enrollments::stream_enrollments(&self.state.db, &caller, filter)?;
        Ok(streamed("enrollments", chunks, |rows| {
            pb::StreamEnrollmentsResponse {
                enrollments: rows.into_iter().map(enrollment_message).collect(),
            }
        }))
    }

    type StreamContentItemsStream = ListStream<pb::StreamContentItemsResponse>;

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/StreamContentItems")]
    async fn stream_content_items(
        &self,
        request: Request<pb::StreamContentItemsRequest>,
    ) -> Result<Response<Self::StreamContentItemsStream>, Status> {
        let caller = caller(&self.state, &request).await?;
        let request = request.into_inner();
        let filter = ContentFilter::parse(&request.content_item_ids, &request.content_types);
        let chunks = content::stream_content_items(&self.state.db, &caller, filter).await?;
        Ok(streamed("content_items", chunks, |rows| {
            pb::StreamContentItemsResponse {
                content_items: rows.into_iter().map(content_item_message).collect(),
            }
        }))
    }

    type StreamUsersStream = ListStream<pb::StreamUsersResponse>;

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/StreamUsers")]
    async fn stream_users(
        &self,
        request: Request<pb::StreamUsersRequest>,
    ) -> Result<Response<Self::StreamUsersStream>, Status> {
        let caller = caller(&self.state, &request).await?;
        let request = request.into_inner();
        let filter = convert::user_filter([
            &request.department_ids,
            &request.group_ids,
            &request.logins,
            &request.emails,
        ]);
        let chunks = users::stream_users(&self.state.db, &caller, filter).await?;
        Ok(streamed("users", chunks, |rows| pb::StreamUsersResponse {
            users: rows.into_iter().map(convert::user_profile).collect(),
        }))
    }
    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/ListLearnerResults")]
    async fn list_learner_results(
        &self,
        request: Request<pb::ListLearnerResultsRequest>,
    ) -> Result<Response<pb::ListLearnerResultsResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let (filter, page) = results_convert::results_query(request.get_ref());
        let list = results::list_results(&self.state.db, &caller, filter, page).await?;
        Ok(Response::new(pb::ListLearnerResultsResponse {
            results: list
                .items
                .into_iter()
                .map(results_convert::learner_result)
                .collect(),
            next_page_token: list.next_page_token.unwrap_or_default(),
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/ListLearnerModuleResults")]
    async fn list_learner_module_results(
        &self,
        request: Request<pb::ListLearnerModuleResultsRequest>,
    ) -> Result<Response<pb::ListLearnerModuleResultsResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let (filter, page) = results_convert::module_results_query(request.get_ref());
        let list = results::list_results(&self.state.db, &caller, filter, page).await?;
        Ok(Response::new(pb::ListLearnerModuleResultsResponse {
            results: list
                .items
                .into_iter()
                .map(results_convert::learner_module_result)
                .collect(),
            next_page_token: list.next_page_token.unwrap_or_default(),
        }))
    }

    type GetContentItemFinalStatusesStream = ListStream<pb::GetContentItemFinalStatusesResponse>;

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/GetContentItemFinalStatuses")]
    async fn get_content_item_final_statuses(
        &self,
        request: Request<pb::GetContentItemFinalStatusesRequest>,
    ) -> Result<Response<Self::GetContentItemFinalStatusesStream>, Status> {
        let caller = caller(&self.state, &request).await?;
        let item = ResourceRef::parse(request.into_inner().content_item_id);
        let chunks = results::stream_final_statuses(&self.state.db, &caller, &item).await?;
        Ok(streamed("final_statuses", chunks, |rows| {
            pb::GetContentItemFinalStatusesResponse {
                statuses: rows
                    .into_iter()
                    .map(results_convert::final_status)
                    .collect(),
            }
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/UpdateCourseStatus")]
    async fn update_course_status(
        &self,
        request: Request<pb::UpdateCourseStatusRequest>,
    ) -> Result<Response<pb::UpdateCourseStatusResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let update = results_convert::course_status_update(request.get_ref());
        let task_id = results::update_course_status(&self.state.db, &caller, update).await?;
        Ok(Response::new(pb::UpdateCourseStatusResponse { task_id }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/ResetModuleStatistics")]
    async fn reset_module_statistics(
        &self,
        request: Request<pb::ResetModuleStatisticsRequest>,
    ) -> Result<Response<pb::ResetModuleStatisticsResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let reset = results_convert::module_reset(request.get_ref());
        let task_id = results::reset_module_statistics(&self.state.db, &caller, reset).await?;
        Ok(Response::new(pb::ResetModuleStatisticsResponse { task_id }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/GetTaskStatus")]
    async fn get_task_status(
        &self,
        request: Request<pb::GetTaskStatusRequest>,
    ) -> Result<Response<pb::GetTaskStatusResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let status =
            results::task_status(&self.state.db, &caller, request.get_ref().task_id).await?;
        Ok(Response::new(pb::GetTaskStatusResponse { status }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/SetUsersStatus")]
    async fn set_users_status(
        &self,
        request: Request<pb::SetUsersStatusRequest>,
    ) -> Result<Response<pb::SetUsersStatusResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let request = request.get_ref();
        let ids = convert::user_ids(&request.user_ids);
        let status = convert::user_status(request.status);
        users::set_users_status(&self.state.db, &caller, ids, status).await?;
        Ok(Response::new(pb::SetUsersStatusResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/FindExistingUsers")]
    async fn find_existing_users(
        &self,
        request: Request<pb::FindExistingUsersRequest>,
    ) -> Result<Response<pb::FindExistingUsersResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let ids = convert::user_ids(&request.get_ref().user_ids);
        let found = users::find_existing_users(&self.state.db, &caller, ids).await?;
        Ok(Response::new(pb::FindExistingUsersResponse {
            user_ids: found.iter().map(ToString::to_string).collect(),
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/MoveUsersToDepartment")]
    async fn move_users_to_department(
        &self,
        request: Request<pb::MoveUsersToDepartmentRequest>,
    ) -> Result<Response<pb::MoveUsersToDepartmentResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let pb::MoveUsersToDepartmentRequest {
            department_id,
            user_ids,
        } = request.into_inner();
        let ids = convert::user_ids(&user_ids);
        let department = ResourceRef::parse(department_id);
        users::move_users_to_department(&self.state.db, &caller, &department, ids).await?;
        Ok(Response::new(pb::MoveUsersToDepartmentResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/RemoveUserFromGroups")]
    async fn remove_user_from_groups(
        &self,
        request: Request<pb::RemoveUserFromGroupsRequest>,
    ) -> Result<Response<pb::RemoveUserFromGroupsResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let pb::RemoveUserFromGroupsRequest { user_id, group_ids } = request.into_inner();
        let group_ids = IdList::parse_non_empty("groupIds", &group_ids);
        let user = ResourceRef::parse(user_id);
        users::remove_user_from_groups(&self.state.db, &caller, &user, group_ids).await?;
        Ok(Response::new(pb::RemoveUserFromGroupsResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/ScheduleUserStatus")]
    async fn schedule_user_status(
        &self,
        request: Request<pb::ScheduleUserStatusRequest>,
    ) -> Result<Response<pb::ScheduleUserStatusResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let pb::ScheduleUserStatusRequest {
            user_id,
            kind,
            date,
        } = request.into_inner();
        let kind = convert::schedule_kind(kind);
        let date = ScheduledDate::parse("date", &date);
        let today = schedule::today(self.state.scheduler_date_offset_days);
        let user = ResourceRef::parse(user_id);
        users::schedule_user_status(&self.state.db, &caller, &user, kind, date, today).await?;
        Ok(Response::new(pb::ScheduleUserStatusResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/CancelScheduledUserStatus")]
    async fn cancel_scheduled_user_status(
        &self,
        request: Request<pb::CancelScheduledUserStatusRequest>,
    ) -> Result<Response<pb::CancelScheduledUserStatusResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let pb::CancelScheduledUserStatusRequest { user_id, kind } = request.into_inner();
        let kind = convert::schedule_kind(kind);
        let user = ResourceRef::parse(user_id);
        users::cancel_scheduled_user_status(&self.state.db, &caller, &user, kind).await?;
        Ok(Response::new(pb::CancelScheduledUserStatusResponse {}))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/CreateScimToken")]
    async fn create_scim_token(
        &self,
        request: Request<pb::CreateScimTokenRequest>,
    ) -> Result<Response<pb::CreateScimTokenResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let user_id = request.into_inner().user_id;
        let (made, user_id) =
            api_clients::create_scim_token(&self.state.db, &caller, &user_id).await?;
        Ok(Response::new(pb::CreateScimTokenResponse {
            client_id: made.client_id.to_string(),
            user_id: user_id.to_string(),
            token: made.client_secret,
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/ListScimTokens")]
    async fn list_scim_tokens(
        &self,
        request: Request<pb::ListScimTokensRequest>,
    ) -> Result<Response<pb::ListScimTokensResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let seen = api_clients::ClientsSeen::ScimOnly;
        let clients = api_clients::list_api_clients(&self.state.db, &caller, seen).await?;
        Ok(Response::new(pb::ListScimTokensResponse {
            scim_tokens: clients
                .into_iter()
                .map(super::directory::api_client)
                .collect(),
        }))
    }

    #[tracing::instrument(skip_all, name = "lms.v1.AdminService/RevokeScimToken")]
    async fn revoke_scim_token(
        &self,
        request: Request<pb::RevokeScimTokenRequest>,
    ) -> Result<Response<pb::RevokeScimTokenResponse>, Status> {
        let caller = caller(&self.state, &request).await?;
        let client = ResourceRef::parse(request.into_inner().client_id);
        let seen = api_clients::ClientsSeen::ScimOnly;
        api_clients::revoke_api_client(&self.state.db, &caller, client, seen).await?;
        Ok(Response::new(pb::RevokeScimTokenResponse {}))
    }
}

/// A whole list's chunks as the RPC's messages, each read inside the RPC's span and counted;
/// an error (the database failing midway) ends the stream with its status.
fn streamed<T: 'static, M>(
    list: &'static str,
    chunks: impl Stream<Item = ServiceResult<Vec<T>>> + Send + 'static,
    message: fn(Vec<T>) -> M,
) -> Response<ListStream<M>>
where
    M: Send + 'static,
{
    let span = tracing::Span::current();
    let messages = chunks.map(move |chunk| {
        let _entered = span.enter();
        chunk
            .map(|rows| {
                crate::metrics::list_rows(list, rows.len());
                message(rows)
            })
            .map_err(Status::from)
    });
    Response::new(Box::pin(messages))
}

fn enrollment_message(e: enrollments::EnrollmentView) -> pb::Enrollment {
    pb::Enrollment {
        enrollment_id: e.id.to_string(),
        course_id: e.course_id.to_string(),
        learner_id: e.learner_id.to_string(),
        access_date: e.access_date,
        due_date: e.due_date,
        expiration_date: e.expiration_date,
        should_lock_after_due_date: e.should_lock_after_due_date,
        enrollment_type_group: e.enrollment_type_group,
    }
}

fn content_item_message(item: content::ContentItemView) -> pb::ContentItem {
    pb::ContentItem {
        content_item_id: item.id.to_string(),
        title: item.title,
        description: item.description,
        user_id: item.user_id.to_string(),
        added_date: item.added_date,
        view_url: item.view_url,
        r#type: item.content_type,
    }
}

fn department_message(department: department::Model) -> pb::Department {
    pb::Department {
        department_id: department.id.to_string(),
        name: department.name,
        parent_department_id: department.parent_id.map(|id| id.to_string()),
        code: department.code,
    }
}

fn group_summary(group: group::Model) -> pb::GroupSummary {
    pb::GroupSummary {
        group_id: group.id.to_string(),
        name: group.name,
        is_smart: group.smart_department_id.is_some(),
    }
}
