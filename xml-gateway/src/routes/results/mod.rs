//! Learner results (results.md): the two paged lists of results in [`lists`], the final
//! statuses of one content item in [`final_statuses`], setting and resetting results and
//! reading their tasks in [`recording`]; scores written as the interface writes them in
//! [`score`].

mod final_statuses;
mod lists;
mod recording;
mod score;

pub(crate) use final_statuses::final_statuses;
pub(crate) use lists::{CourseResults, ModuleResults};
pub(crate) use recording::{reset_module_statistics, set_course_status, task_status};
