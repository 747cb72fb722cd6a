//! `lms.v1` learner results messages into the results services' parsed inputs, and their
//! views into messages.

use lms_proto::v1 as pb;

use crate::{
    domain::{
        Invalid,
        page::{Listing, Page},
        results::RawTrackedResult,
    },
    error::ServiceError,
    service::results::{
        CourseStatusUpdate, ModuleReset, RawCourseStatusUpdate, RawRecord, RawResultFilter,
        Records, ResultFilter, ResultView,
    },
};

fn window(window: Option<&pb::DateWindow>) -> (Option<&str>, Option<&str>) {
    window.map_or((None, None), |w| {
        (w.start_date.as_deref(), w.end_date.as_deref())
    })
}

fn page(listing: Listing, page: Option<&pb::PageRequest>) -> Result<Page, Invalid> {
    match page {
        Some(page) => Page::parse(listing, page.page_size, &page.page_token),
        None => Page::parse(listing, None, ""),
    }
}

/// The course results list's filters and page.
pub(super) fn results_query(
    req: &pb::ListLearnerResultsRequest,
) -> (Result<ResultFilter, Invalid>, Result<Page, Invalid>) {
    let filter = ResultFilter::parse(&RawResultFilter {
        user_ids: &req.user_ids,
        course_ids: &req.course_ids,
        department_ids: &req.department_ids,
        enrollment_ids: &req.enrollment_ids,
        completion_statuses: &req.completion_statuses,
        user_statuses: &req.user_statuses,
        access_date: window(req.access_date.as_ref()),
        due_date: window(req.due_date.as_ref()),
        completion_date: window(req.completion_date.as_ref()),
        module_ids: &[],
        course_item_ids: &[],
    });
    (filter, page(Listing::LearnerResults, req.page.as_ref()))
}

/// The module results list's filters and page.
pub(super) fn module_results_query(
    req: &pb::ListLearnerModuleResultsRequest,
) -> (Result<ResultFilter, Invalid>, Result<Page, Invalid>) {
    let filter = ResultFilter::parse(&RawResultFilter {
        user_ids: &req.user_ids,
        course_ids: &req.course_ids,
        department_ids: &req.department_ids,
        enrollment_ids: &req.enrollment_ids,
        completion_statuses: &req.completion_statuses,
        user_statuses: &req.user_statuses,
        access_date: window(req.access_date.as_ref()),
        due_date: window(req.due_date.as_ref()),
        completion_date: window(req.completion_date.as_ref()),
        module_ids: &req.module_ids,
        course_item_ids: &req.course_item_ids,
    });
    (
        filter,
        page(Listing::LearnerModuleResults, req.page.as_ref()),
    )
}

pub(super) fn learner_result(row: ResultView) -> pb::LearnerResult {
    pb::LearnerResult {
        user_id: row.user_id.to_string(),
        course_id: row.course_id.to_string(),
        course_title: row.course_title,
        access_date: row.access_date,
        completion_status: row.completion_status.to_owned(),
        is_overdue: row.is_overdue,
        enrollment_id: row.enrollment_id.to_string(),
        completion_date: row.completion_date,
        due_date: row.due_date,
        expiration_date: row.expiration_date,
        progress: row.progress,
        time_spent: row.time_spent,
        awarded_score: row.awarded_score,
        passing_score: row.passing_score,
        views_count: row.views_count,
        last_view_date: row.last_view_date,
    }
}

/// Every content item is its own single module.
pub(super) fn learner_module_result(row: ResultView) -> pb::LearnerModuleResult {
    let course_id = row.course_id.to_string();
    pb::LearnerModuleResult {
        user_id: row.user_id.to_string(),
        module_id: course_id.clone(),
        module_title: row.course_title,
        course_item_id: course_id.clone(),
        course_id,
        access_date: row.access_date,
        completion_status: row.completion_status.to_owned(),
        is_overdue: row.is_overdue,
        enrollment_id: row.enrollment_id.to_string(),
        completion_date: row.completion_date,
        due_date: row.due_date,
        expiration_date: row.expiration_date,
        progress: row.progress,
        time_spent: row.time_spent,
        awarded_score: row.awarded_score,
        passing_score: row.passing_score,
        views_count: row.views_count,
        last_view_date: row.last_view_date,
    }
}

pub(super) fn final_status(row: ResultView) -> pb::ContentItemFinalStatus {
    pb::ContentItemFinalStatus {
        user_id: row.user_id.to_string(),
        status: row.completion_status.to_owned(),
        progress: row.progress,
        completion_date: row.completion_date,
        last_view_date: row.last_view_date,
        enrollment_id: row.enrollment_id.to_string(),
    }
}

pub(super) fn course_status_update(
    req: &pb::UpdateCourseStatusRequest,
) -> Result<CourseStatusUpdate, Invalid> {
    CourseStatusUpdate::parse(&RawCourseStatusUpdate {
        course_id: &req.course_id,
        enrollment_ids: &req.enrollment_ids,
        status: &req.status,
        date: req.date.as_deref(),
        awarded_score: req.awarded_score,
        reason: req.reason.as_deref(),
    })
}

pub(super) fn module_reset(req: &pb::ResetModuleStatisticsRequest) -> Result<ModuleReset, Invalid> {
    ModuleReset::parse(&req.course_id, &req.enrollment_ids, &req.content_item_ids)
}

/// Numbers beyond the stored range are refused as out of range, naming their field.
pub(super) fn records(req: &pb::RecordResultsRequest) -> Result<Records, ServiceError> {
    let raw: Vec<RawRecord<'_>> = req
        .results
        .iter()
        .map(|record| RawRecord {
            enrollment_id: &record.enrollment_id,
            result: RawTrackedResult {
                completion_status: &record.completion_status,
                progress: i64::from(record.progress),
                awarded_score: record.awarded_score,
                passing_score: record.passing_score,
                time_spent: i64::try_from(record.time_spent).unwrap_or(-1),
                views_count: i64::try_from(record.views_count).unwrap_or(-1),
                completion_date: record.completion_date.as_deref(),
                last_view_date: record.last_view_date.as_deref(),
            },
        })
        .collect();
    Records::parse(&raw)
}
