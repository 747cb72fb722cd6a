//! Learner results (results.md): the result of every enrollment, read in lists and changed
//! by administrators and tracking sources.
//!
//! - `list`: the course and module results lists (keyset pages) and a content item's final
//!   statuses (a stream), one walk for all three.
//! - `course_status`: `POST /statistics/course`, the administrator's status.
//! - `reset`: `DELETE /statistics/module`, results started over.
//! - `record`: `RecordResults`, the tracked results of players and LRSs.
//! - `tasks`: the task every administrator's recording answers with, and its status.
//! - `targets`: the results an administrator's request names, checked.
//! - `stored`: a result's row from its two layers, and the set-based reads and writes.
//! - `events`: the course events of a write's changed results, recorded with its rewrite.

mod course_status;
mod events;
mod list;
mod record;
mod reset;
mod stored;
mod targets;
mod tasks;

pub use course_status::{
    CourseStatusUpdate, MAX_REASON_CHARS, RawCourseStatusUpdate, StatusChange, update_course_status,
};
pub use list::{
    RawResultFilter, ResultFilter, ResultList, ResultView, UserStatus, list_results, page,
    stream_final_statuses,
};
pub use record::{MAX_RECORDS, RawRecord, Records, record_results};
pub use reset::{ModuleReset, reset_module_statistics};
pub use stored::AdminStatus;
pub(crate) use stored::{RESULTS, create_untouched, tracked_values};
pub use tasks::task_status;
