//! `GET /learners/results` and `GET /learners/modules/results` (results.md sections 3 and 4):
//! one page of results, one row per enrollment, each list a listing of its own (its tokens do
//! not cross to the other).
//!
//! Both rows end with the same fields from `accessDate` on; a course row starts with
//! `userId`, `courseId`, `courseTitle`, a module row with `userId`, `courseId`, `moduleId`,
//! `moduleTitle`, `courseItemId`. Dates come from the core as the interface writes them; the
//! four optional ones and `nextPageToken` are left out when there is none.

use lms_proto::v1::{
    DateWindow, LearnerModuleResult, LearnerResult, ListLearnerModuleResultsRequest,
    ListLearnerModuleResultsResponse, ListLearnerResultsRequest, ListLearnerResultsResponse,
    PageRequest,
};

use super::score::Score;
use crate::clip::clip;
use crate::error::GatewayError;
use crate::listing::{Filters, Form, Listing, Paged, Window, paged_rpc};
use crate::representation::push_json;
use crate::xml::writer::XmlWriter;

/// The filters both lists take, in the order [`Selection::of`] reads them.
const FILTERS: [&str; 6] = [
    "userIds",
    "courseIds",
    "departmentIds",
    "enrollmentIds",
    "completionStatuses",
    "userStatuses",
];

/// The date windows both lists take.
const WINDOWS: [&str; 3] = ["accessDate", "dueDate", "completionDate"];

/// The learner statuses `userStatuses` may name: active, blocked, employment ended.
const USER_STATUSES: [i32; 3] = [1, 3, 5];

/// What both lists select by, as the core's requests carry it.
#[derive(Debug, Default, PartialEq)]
struct Selection {
    user_ids: Vec<String>,
    course_ids: Vec<String>,
    department_ids: Vec<String>,
    enrollment_ids: Vec<String>,
    completion_statuses: Vec<String>,
    user_statuses: Vec<i32>,
    access_date: Option<DateWindow>,
    due_date: Option<DateWindow>,
    completion_date: Option<DateWindow>,
}

impl Selection {
    /// The selection, and the lists after the common ones (the module list's own filters).
    fn of(filters: Filters) -> Result<(Self, std::vec::IntoIter<Vec<String>>), GatewayError> {
        let (mut lists, mut windows) = filters.into_parts();
        let mut list = || lists.next().unwrap_or_default();
        let mut window = || date_window(windows.next().unwrap_or_default());
        let selection = Self {
            user_ids: list(),
            course_ids: list(),
            department_ids: list(),
            enrollment_ids: list(),
            completion_statuses: list(),
            user_statuses: list()
                .iter()
                .map(|status| user_status(status))
                .collect::<Result<_, _>>()?,
            access_date: window(),
            due_date: window(),
            completion_date: window(),
        };
        Ok((selection, lists))
    }
}

/// `$request` for `$page` holding every field of a [`Selection`], then the fields named after
/// it (the module list's own filters).
macro_rules! selected {
    ($request:ident, $page:expr, $selection:expr $(, $field:ident)*) => {{
        let Selection {
            user_ids,
            course_ids,
            department_ids,
            enrollment_ids,
            completion_statuses,
            user_statuses,
            access_date,
            due_date,
            completion_date,
        } = $selection;
        $request {
            page: Some($page),
            user_ids,
            course_ids,
            department_ids,
            enrollment_ids,
            completion_statuses,
            user_statuses,
            access_date,
            due_date,
            completion_date,
            $($field),*
        }
    }};
}

/// A value of `userStatuses`: it travels as a number, so anything that is not one of the
/// three is refused here.
fn user_status(text: &str) -> Result<i32, GatewayError> {
    text.parse::<i32>()
        .ok()
        .filter(|status| USER_STATUSES.contains(status) && !text.starts_with('+'))
        .ok_or_else(|| {
            GatewayError::BadRequest(format!(
                "userStatuses must be 1 (active), 3 (blocked) or 5 (employment ended); got \"{}\".",
                clip(text)
            ))
        })
}

/// A window with a bound, for the core to read; none when neither bound is given.
fn date_window(window: Window) -> Option<DateWindow> {
    (!window.is_open()).then_some(DateWindow {
        start_date: window.start,
        end_date: window.end,
    })
}

/// Every enrollment's course result the caller may see that the filters select.
pub(crate) struct CourseResults;

impl Listing for CourseResults {
    type Item = LearnerResult;
    const NAME: &'static str = "course results";
    const FILTERS: &'static [&'static str] = &FILTERS;
    const WINDOWS: &'static [&'static str] = &WINDOWS;

    fn write_xml(xml: &mut XmlWriter, row: &LearnerResult, _: Form) {
        xml.open("result")
            .text_element("userId", &row.user_id)
            .text_element("courseId", &row.course_id)
            .text_element("courseTitle", &row.course_title);
        Outcome::of_course(row).write_xml(xml);
        xml.close("result");
    }

    fn write_json(out: &mut String, row: &LearnerResult, _: Form) {
        push_json(out, &CourseRowJson::of(row));
    }

    fn xml_bytes_hint(row: &LearnerResult) -> usize {
        700 + row.course_title.len()
    }
}

impl Paged for CourseResults {
    const PAGE_ELEMENT: &'static str = "results";

    fn list_request(
        filters: Filters,
        page: PageRequest,
    ) -> Result<ListLearnerResultsRequest, GatewayError> {
        let (selection, _) = Selection::of(filters)?;
        Ok(selected!(ListLearnerResultsRequest, page, selection))
    }

    paged_rpc!(
        list_learner_results(ListLearnerResultsRequest) -> ListLearnerResultsResponse.results
    );
}

/// Every enrollment's module result (each content item being its own single module).
pub(crate) struct ModuleResults;

impl Listing for ModuleResults {
    type Item = LearnerModuleResult;
    const NAME: &'static str = "module results";
    const FILTERS: &'static [&'static str] = &[
        FILTERS[0],
        FILTERS[1],
        FILTERS[2],
        FILTERS[3],
        FILTERS[4],
        FILTERS[5],
        "moduleIds",
        "courseItemIds",
    ];
    const WINDOWS: &'static [&'static str] = &WINDOWS;

    fn write_xml(xml: &mut XmlWriter, row: &LearnerModuleResult, _: Form) {
        xml.open("result")
            .text_element("userId", &row.user_id)
            .text_element("courseId", &row.course_id)
            .text_element("moduleId", &row.module_id)
            .text_element("moduleTitle", &row.module_title)
            .text_element("courseItemId", &row.course_item_id);
        Outcome::of_module(row).write_xml(xml);
        xml.close("result");
    }

    fn write_json(out: &mut String, row: &LearnerModuleResult, _: Form) {
        push_json(out, &ModuleRowJson::of(row));
    }

    fn xml_bytes_hint(row: &LearnerModuleResult) -> usize {
        800 + row.module_title.len()
    }
}

impl Paged for ModuleResults {
    const PAGE_ELEMENT: &'static str = "results";

    fn list_request(
        filters: Filters,
        page: PageRequest,
    ) -> Result<ListLearnerModuleResultsRequest, GatewayError> {
        let (selection, mut own) = Selection::of(filters)?;
        let (module_ids, course_item_ids) = (
            own.next().unwrap_or_default(),
            own.next().unwrap_or_default(),
        );
        Ok(selected!(
            ListLearnerModuleResultsRequest,
            page,
            selection,
            module_ids,
            course_item_ids
        ))
    }

    paged_rpc!(
        list_learner_module_results(ListLearnerModuleResultsRequest) -> ListLearnerModuleResultsResponse.results
    );
}

/// The fields both rows end with, from `accessDate` on, in the interface's order.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Outcome<'a> {
    access_date: &'a str,
    completion_status: &'a str,
    is_overdue: u8,
    enrollment_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    completion_date: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    due_date: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expiration_date: Option<&'a str>,
    progress: u32,
    time_spent: u64,
    awarded_score: Score,
    passing_score: Score,
    views_count: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_view_date: Option<&'a str>,
}

/// Builds an [`Outcome`] from either row type, whose fields have the same names.
macro_rules! outcome_of {
    ($row:expr) => {
        Outcome {
            access_date: &$row.access_date,
            completion_status: &$row.completion_status,
            is_overdue: $row.is_overdue.into(),
            enrollment_id: &$row.enrollment_id,
            completion_date: $row.completion_date.as_deref(),
            due_date: $row.due_date.as_deref(),
            expiration_date: $row.expiration_date.as_deref(),
            progress: $row.progress,
            time_spent: $row.time_spent,
            awarded_score: Score::of($row.awarded_score),
            passing_score: Score::of($row.passing_score),
            views_count: $row.views_count,
            last_view_date: $row.last_view_date.as_deref(),
        }
    };
}

impl<'a> Outcome<'a> {
    fn of_course(row: &'a LearnerResult) -> Self {
        outcome_of!(row)
    }

    fn of_module(row: &'a LearnerModuleResult) -> Self {
        outcome_of!(row)
    }

    fn write_xml(&self, xml: &mut XmlWriter) {
        xml.text_element("accessDate", self.access_date)
            .text_element("completionStatus", self.completion_status)
            .text_element("isOverdue", &self.is_overdue.to_string())
            .text_element("enrollmentId", self.enrollment_id);
        optional(xml, "completionDate", self.completion_date);
        optional(xml, "dueDate", self.due_date);
        optional(xml, "expirationDate", self.expiration_date);
        xml.text_element("progress", &self.progress.to_string())
            .text_element("timeSpent", &self.time_spent.to_string())
            .text_element("awardedScore", &self.awarded_score.text())
            .text_element("passingScore", &self.passing_score.text())
            .text_element("viewsCount", &self.views_count.to_string());
        optional(xml, "lastViewDate", self.last_view_date);
    }
}

fn optional(xml: &mut XmlWriter, name: &str, text: Option<&str>) {
    if let Some(text) = text {
        xml.text_element(name, text);
    }
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct CourseRowJson<'a> {
    user_id: &'a str,
    course_id: &'a str,
    course_title: &'a str,
    #[serde(flatten)]
    outcome: Outcome<'a>,
}

impl<'a> CourseRowJson<'a> {
    fn of(row: &'a LearnerResult) -> Self {
        Self {
            user_id: &row.user_id,
            course_id: &row.course_id,
            course_title: &row.course_title,
            outcome: Outcome::of_course(row),
        }
    }
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ModuleRowJson<'a> {
    user_id: &'a str,
    course_id: &'a str,
    module_id: &'a str,
    module_title: &'a str,
    course_item_id: &'a str,
    #[serde(flatten)]
    outcome: Outcome<'a>,
}

impl<'a> ModuleRowJson<'a> {
    fn of(row: &'a LearnerModuleResult) -> Self {
        Self {
            user_id: &row.user_id,
            course_id: &row.course_id,
            module_id: &row.module_id,
            module_title: &row.module_title,
            course_item_id: &row.course_item_id,
            outcome: Outcome::of_module(row),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listing::testing::{page_text, query};
    use crate::representation::Format;

    fn full() -> LearnerResult {
        LearnerResult {
            user_id: "u-1".into(),
            course_id: "c-1".into(),
            course_title: "Safety <101> & more".into(),
            access_date: "2025-01-10T09:00:00+00:00".into(),
            completion_status: "passed".into(),
            is_overdue: false,
            enrollment_id: "e-1".into(),
            completion_date: Some("2025-02-01T12:30:00+00:00".into()),
            due_date: Some("2025-02-10T00:00:00+00:00".into()),
            expiration_date: Some("2025-02-10T00:00:00+00:00".into()),
            progress: 100,
            time_spent: 5400,
            awarded_score: 92.5,
            passing_score: 80.0,
            views_count: 4,
            last_view_date: Some("2025-02-01T12:30:00+00:00".into()),
        }
    }

    fn bare() -> LearnerResult {
        LearnerResult {
            user_id: "u-2".into(),
            course_id: "c-1".into(),
            course_title: "T".into(),
            access_date: "2025-01-10T09:00:00+00:00".into(),
            completion_status: "not_started".into(),
            is_overdue: true,
            enrollment_id: "e-2".into(),
            completion_date: None,
            due_date: None,
            expiration_date: None,
            progress: 0,
            time_spent: 0,
            awarded_score: 83.33,
            passing_score: 0.0,
            views_count: 0,
            last_view_date: None,
        }
    }

    #[tokio::test]
    async fn a_course_row_is_written_in_the_specs_order_with_omissions() {
        assert_eq!(
            page_text::<CourseResults>(vec![full(), bare()], "next", Format::Xml).await,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response><results><result>\
             <userId>u-1</userId><courseId>c-1</courseId>\
             <courseTitle>Safety &lt;101&gt; &amp; more</courseTitle>\
             <accessDate>2025-01-10T09:00:00+00:00</accessDate>\
             <completionStatus>passed</completionStatus><isOverdue>0</isOverdue>\
             <enrollmentId>e-1</enrollmentId>\
             <completionDate>2025-02-01T12:30:00+00:00</completionDate>\
             <dueDate>2025-02-10T00:00:00+00:00</dueDate>\
             <expirationDate>2025-02-10T00:00:00+00:00</expirationDate>\
             <progress>100</progress><timeSpent>5400</timeSpent>\
             <awardedScore>92.5</awardedScore><passingScore>80</passingScore>\
             <viewsCount>4</viewsCount><lastViewDate>2025-02-01T12:30:00+00:00</lastViewDate>\
             </result><result><userId>u-2</userId><courseId>c-1</courseId>\
             <courseTitle>T</courseTitle><accessDate>2025-01-10T09:00:00+00:00</accessDate>\
             <completionStatus>not_started</completionStatus><isOverdue>1</isOverdue>\
             <enrollmentId>e-2</enrollmentId><progress>0</progress><timeSpent>0</timeSpent>\
             <awardedScore>83.33</awardedScore><passingScore>0</passingScore>\
             <viewsCount>0</viewsCount></result></results>\
             <nextPageToken>next</nextPageToken></response>"
        );
        assert_eq!(
            page_text::<CourseResults>(vec![full(), bare()], "", Format::Json).await,
            r#"{"results":[{"userId":"u-1","courseId":"c-1","courseTitle":"Safety <101> & more","accessDate":"2025-01-10T09:00:00+00:00","completionStatus":"passed","isOverdue":0,"enrollmentId":"e-1","completionDate":"2025-02-01T12:30:00+00:00","dueDate":"2025-02-10T00:00:00+00:00","expirationDate":"2025-02-10T00:00:00+00:00","progress":100,"timeSpent":5400,"awardedScore":92.5,"passingScore":80,"viewsCount":4,"lastViewDate":"2025-02-01T12:30:00+00:00"},{"userId":"u-2","courseId":"c-1","courseTitle":"T","accessDate":"2025-01-10T09:00:00+00:00","completionStatus":"not_started","isOverdue":1,"enrollmentId":"e-2","progress":0,"timeSpent":0,"awardedScore":83.33,"passingScore":0,"viewsCount":0}]}"#
        );
    }

    #[tokio::test]
    async fn an_empty_page_is_an_empty_results_element_or_array() {
        assert_eq!(
            page_text::<CourseResults>(vec![], "", Format::Xml).await,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response><results/></response>"
        );
        assert_eq!(
            page_text::<ModuleResults>(vec![], "", Format::Json).await,
            r#"{"results":[]}"#
        );
    }

    #[tokio::test]
    async fn a_module_row_names_the_item_as_its_module_and_course_item() {
        let row = bare();
        let module = LearnerModuleResult {
            user_id: row.user_id,
            course_id: row.course_id.clone(),
            module_id: row.course_id.clone(),
            module_title: "T".into(),
            course_item_id: row.course_id,
            access_date: row.access_date,
            completion_status: row.completion_status,
            is_overdue: row.is_overdue,
            enrollment_id: row.enrollment_id,
            completion_date: None,
            due_date: Some("2025-02-10T00:00:00+00:00".into()),
            expiration_date: None,
            progress: 0,
            time_spent: 0,
            awarded_score: 0.0,
            passing_score: 0.0,
            views_count: 0,
            last_view_date: None,
        };
        assert_eq!(
            page_text::<ModuleResults>(vec![module], "", Format::Json).await,
            r#"{"results":[{"userId":"u-2","courseId":"c-1","moduleId":"c-1","moduleTitle":"T","courseItemId":"c-1","accessDate":"2025-01-10T09:00:00+00:00","completionStatus":"not_started","isOverdue":1,"enrollmentId":"e-2","dueDate":"2025-02-10T00:00:00+00:00","progress":0,"timeSpent":0,"awardedScore":0,"passingScore":0,"viewsCount":0}]}"#
        );
    }

    #[test]
    fn every_filter_and_window_reaches_the_core_in_its_place() {
        let (filters, page) = query::<ModuleResults>(
            "userIds=u&courseIds[]=c&departmentIds%5B0%5D=d&enrollmentIds=e1,e2\
             &completionStatuses=passed,failed&userStatuses[]=1&userStatuses[]=5\
             &accessDate[startDate]=2025-01-01&dueDate%5BendDate%5D=2025-02-01\
             &completionDate[startDate]=2025-01-01T00:00:00+02:00\
             &moduleIds=m&courseItemIds=i&pageSize=7",
        );
        let request = ModuleResults::list_request(filters, page).unwrap();
        assert_eq!(request.page.unwrap().page_size, Some(7));
        assert_eq!(
            (
                request.user_ids,
                request.course_ids,
                request.department_ids,
                request.enrollment_ids,
                request.completion_statuses,
                request.module_ids,
                request.course_item_ids
            ),
            (
                vec!["u".to_owned()],
                vec!["c".to_owned()],
                vec!["d".to_owned()],
                vec!["e1".to_owned(), "e2".to_owned()],
                vec!["passed".to_owned(), "failed".to_owned()],
                vec!["m".to_owned()],
                vec!["i".to_owned()]
            )
        );
        assert_eq!(request.user_statuses, [1, 5]);
        let window = |start: Option<&str>, end: Option<&str>| {
            Some(DateWindow {
                start_date: start.map(str::to_owned),
                end_date: end.map(str::to_owned),
            })
        };
        assert_eq!(request.access_date, window(Some("2025-01-01"), None));
        assert_eq!(request.due_date, window(None, Some("2025-02-01")));
        assert_eq!(
            request.completion_date,
            window(Some("2025-01-01T00:00:00+02:00"), None)
        );
    }

    #[test]
    fn no_filter_leaves_every_list_empty_and_every_window_out() {
        let (filters, page) = query::<CourseResults>("pageToken=&accessDate[endDate]=");
        let request = CourseResults::list_request(filters, page).unwrap();
        assert_eq!(
            request,
            ListLearnerResultsRequest {
                page: Some(PageRequest::default()),
                ..Default::default()
            }
        );
    }

    #[test]
    fn a_user_status_other_than_the_three_is_refused_naming_the_parameter() {
        for status in ["2", "0", "-1", "%2B1", "active", "1.0", "99999999999"] {
            let (filters, page) = query::<CourseResults>(&format!("userStatuses={status}"));
            match CourseResults::list_request(filters, page) {
                Err(GatewayError::BadRequest(message)) => {
                    assert!(message.starts_with("userStatuses must be"), "{message}");
                }
                other => panic!("{status}: {other:?}"),
            }
        }
    }

    #[test]
    fn module_filters_are_unknown_to_the_course_list() {
        for name in ["moduleIds", "courseItemIds", "contentItemIds"] {
            let refused = crate::listing::testing::try_query::<CourseResults>(&format!("{name}=a"));
            assert!(
                matches!(&refused, Err(GatewayError::BadRequest(m)) if m.contains(name)),
                "{name}: {refused:?}"
            );
        }
    }
}
