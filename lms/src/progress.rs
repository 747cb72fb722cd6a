//! What `lms import` shows while it works: a bar on a terminal, a plain line every two
//! seconds otherwise (a log file or a CI job has no use for redrawn lines). Either way each
//! stage, once done, leaves one line saying how long it took, and the last line says what
//! was imported, in how long and at what rate.

use std::{
    io::{IsTerminal as _, Write as _},
    path::Path,
    sync::Mutex,
    time::{Duration, Instant},
};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lms_core::import::{ImportProgress, ImportStage, ImportSummary};

/// How often a plain line is printed when stdout is not a terminal.
const LINE_EVERY: Duration = Duration::from_secs(2);

/// Shows the progress reports of one import.
pub struct ImportProgressView {
    state: Mutex<ViewState>,
}

struct ViewState {
    output: Output,
    stages: Stages,
}

enum Output {
    Bar(ProgressBar),
    Lines { last_line: Option<Instant> },
}

impl ImportProgressView {
    /// A bar when stdout is a terminal, plain lines otherwise.
    pub fn for_stdout() -> Self {
        let output = if std::io::stdout().is_terminal() {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stdout());
            bar.enable_steady_tick(Duration::from_millis(200));
            Output::Bar(bar)
        } else {
            Output::Lines { last_line: None }
        };
        Self {
            state: Mutex::new(ViewState {
                output,
                stages: Stages::default(),
            }),
        }
    }

    pub fn update(&self, progress: ImportProgress) {
        if let Ok(mut state) = self.state.lock() {
            state.update(progress, Instant::now());
        }
    }

    /// Clears the bar and, when the import `succeeded`, says how long its last stage took;
    /// the rows it wrote, when it got as far as writing them.
    pub fn finish(&self, succeeded: bool) -> Option<u64> {
        let mut state = self.state.lock().ok()?;
        if let Output::Bar(bar) = &state.output {
            bar.finish_and_clear();
        }
        let done = state.stages.finish(Instant::now());
        if succeeded && let Some(done) = done {
            print_line(&done);
        }
        state.stages.rows
    }
}

impl ViewState {
    fn update(&mut self, progress: ImportProgress, now: Instant) {
        let finished = self.stages.note(progress, now);
        let new_stage = finished.is_some() || self.stages.just_began;
        match &mut self.output {
            Output::Bar(bar) => {
                if let Some(finished) = finished {
                    bar.println(finished);
                }
                if new_stage {
                    restyle(bar, progress);
                }
                if progress.total > 0 {
                    bar.set_position(progress.done);
                }
            }
            Output::Lines { last_line } => {
                if let Some(finished) = finished {
                    print_line(&finished);
                }
                let due = last_line.is_none_or(|last| now.duration_since(last) >= LINE_EVERY);
                if new_stage || due {
                    *last_line = Some(now);
                    print_line(&line(progress, self.stages.in_stage(now)));
                }
            }
        }
    }
}

/// The bar for the stage `progress` begins.
fn restyle(bar: &ProgressBar, progress: ImportProgress) {
    let counted = |unit: &str| {
        format!(
            "{{msg:>17}} [{{bar:30}}] {{human_pos}}/{{human_len}} {unit}, {{per_sec}}, {{eta}} left"
        )
    };
    let template = match progress.stage {
        ImportStage::Validating if progress.total > 0 => {
            "{msg:>17} [{bar:30}] {percent}%, {eta} left".to_owned()
        }
        ImportStage::Writing => counted("rows"),
        ImportStage::Hashing => counted("passwords"),
        ImportStage::Indexing => counted("indexes"),
        ImportStage::Validating | ImportStage::Analyzing => {
            "{spinner} {msg} ({elapsed})".to_owned()
        }
    };
    let style = ProgressStyle::with_template(&template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    bar.reset();
    if progress.total > 0 {
        bar.set_length(progress.total);
    } else {
        bar.unset_length();
    }
    bar.set_message(stage_name(progress.stage));
}

fn stage_name(stage: ImportStage) -> &'static str {
    match stage {
        ImportStage::Validating => "checking",
        ImportStage::Hashing => "hashing passwords",
        ImportStage::Writing => "writing",
        ImportStage::Indexing => "building indexes",
        ImportStage::Analyzing => "refreshing the planner's statistics (ANALYZE)",
    }
}

/// The stage under way, when it began, and the rows the writing stage counted.
#[derive(Default)]
struct Stages {
    current: Option<(ImportProgress, Instant)>,
    /// Whether the last report began the first stage.
    just_began: bool,
    rows: Option<u64>,
}

impl Stages {
    /// Notes `progress`: the line saying the stage before it is done, when it begins another.
    fn note(&mut self, progress: ImportProgress, now: Instant) -> Option<String> {
        if progress.stage == ImportStage::Writing {
            self.rows = Some(progress.total);
        }
        self.just_began = self.current.is_none();
        match self.current {
            Some((_, began)) if self.stage() == Some(progress.stage) => {
                self.current = Some((progress, began));
                None
            }
            previous => {
                self.current = Some((progress, now));
                previous.map(|(last, began)| finished(last, now.duration_since(began)))
            }
        }
    }

    /// The line saying the last stage is done.
    fn finish(&mut self, now: Instant) -> Option<String> {
        self.current
            .take()
            .map(|(last, began)| finished(last, now.duration_since(began)))
    }

    fn stage(&self) -> Option<ImportStage> {
        self.current.map(|(progress, _)| progress.stage)
    }

    fn in_stage(&self, now: Instant) -> Duration {
        self.current
            .map_or(Duration::ZERO, |(_, began)| now.duration_since(began))
    }
}

/// `import: 1,200,000 rows written in 10.0 s, 120,000 rows/s`: a stage done, `last` its
/// last report.
fn finished(last: ImportProgress, took: Duration) -> String {
    let time = seconds(took);
    match last.stage {
        ImportStage::Validating => format!("import: document checked in {time}"),
        ImportStage::Hashing => format!(
            "import: {} passwords hashed in {time}",
            thousands(last.total)
        ),
        ImportStage::Writing => format!(
            "import: {} rows written in {time}, {} rows/s",
            thousands(last.total),
            thousands(per_second(last.total, took))
        ),
        ImportStage::Indexing => {
            format!("import: {} indexes built in {time}", thousands(last.total))
        }
        ImportStage::Analyzing => format!("import: planner's statistics refreshed in {time}"),
    }
}

/// `import: writing 600,000/1,200,000 rows (50%), 110,000 rows/s, about 5 s left`.
fn line(progress: ImportProgress, in_stage: Duration) -> String {
    let ImportProgress { stage, done, total } = progress;
    let name = stage_name(stage);
    if total == 0 {
        return format!("import: {name}");
    }
    let rate = per_second(done, in_stage);
    let left = if rate > 0 {
        format!(
            ", about {:.0} s left",
            (total - done.min(total)) as f64 / rate as f64
        )
    } else {
        String::new()
    };
    let percent = done * 100 / total;
    if stage == ImportStage::Validating {
        // Read twice: the file's size is half the bytes counted.
        let megabytes = total as f64 / 2.0 / 1e6;
        return format!("import: {name} the document ({megabytes:.0} MB), {percent}%{left}");
    }
    let unit = match stage {
        ImportStage::Writing => "rows",
        ImportStage::Indexing => "indexes",
        _ => "passwords",
    };
    // No rate before there is one to tell.
    let rate = if rate > 0 {
        format!(", {} {unit}/s", thousands(rate))
    } else {
        String::new()
    };
    format!(
        "import: {name} {}/{} {unit} ({percent}%){rate}{left}",
        thousands(done),
        thousands(total),
    )
}

/// The last line of an import: `Imported FILE in 12.0 s (1,200,000 rows, 100,000 rows/s):
/// 1 account, …`. `took` is the whole command's time, migration and checks included.
pub fn summary_line(
    file: &Path,
    summary: &ImportSummary,
    took: Duration,
    rows: Option<u64>,
) -> String {
    let rate = match rows {
        Some(rows) => format!(
            " ({} rows, {} rows/s)",
            thousands(rows),
            thousands(per_second(rows, took))
        ),
        None => String::new(),
    };
    format!(
        "Imported {} in {}{rate}: {summary}",
        file.display(),
        seconds(took)
    )
}

fn per_second(count: u64, took: Duration) -> u64 {
    let seconds = took.as_secs_f64();
    if seconds > 0.0 {
        (count as f64 / seconds) as u64
    } else {
        0
    }
}

/// `0.35 s`, `12.3 s`: enough digits to compare two runs.
fn seconds(took: Duration) -> String {
    let seconds = took.as_secs_f64();
    if seconds < 10.0 {
        format!("{seconds:.2} s")
    } else {
        format!("{seconds:.1} s")
    }
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn print_line(text: &str) {
    let mut out = std::io::stdout().lock();
    // A closed stdout must not fail the import.
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(stage: ImportStage, done: u64, total: u64) -> ImportProgress {
        ImportProgress { stage, done, total }
    }

    #[test]
    fn a_plain_line_gives_rows_rate_and_time_left() {
        assert_eq!(
            line(
                report(ImportStage::Writing, 600_000, 1_200_000),
                Duration::from_secs(5)
            ),
            "import: writing 600,000/1,200,000 rows (50%), 120,000 rows/s, about 5 s left"
        );
        assert_eq!(
            line(report(ImportStage::Writing, 1, 1_200_000), Duration::ZERO),
            "import: writing 1/1,200,000 rows (0%)"
        );
        assert_eq!(
            line(report(ImportStage::Validating, 0, 0), Duration::ZERO),
            "import: checking"
        );
        assert_eq!(
            line(
                report(ImportStage::Validating, 100_000_000, 400_000_000),
                Duration::from_secs(1)
            ),
            "import: checking the document (200 MB), 25%, about 3 s left"
        );
        assert_eq!(
            line(report(ImportStage::Analyzing, 0, 0), Duration::ZERO),
            "import: refreshing the planner's statistics (ANALYZE)"
        );
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
    }

    #[test]
    fn each_stage_leaves_one_line_saying_how_long_it_took() {
        let start = Instant::now();
        let at = |ms| start + Duration::from_millis(ms);
        let mut stages = Stages::default();
        assert_eq!(
            stages.note(report(ImportStage::Validating, 0, 100), at(0)),
            None
        );
        assert_eq!(
            stages.note(report(ImportStage::Validating, 100, 100), at(1_500)),
            None
        );
        assert_eq!(
            stages.note(report(ImportStage::Writing, 0, 1_000_000), at(2_000)),
            Some("import: document checked in 2.00 s".to_owned())
        );
        assert_eq!(
            stages.note(
                report(ImportStage::Writing, 1_000_000, 1_000_000),
                at(9_000)
            ),
            None
        );
        assert_eq!(
            stages.note(report(ImportStage::Indexing, 0, 9), at(12_000)),
            Some("import: 1,000,000 rows written in 10.0 s, 100,000 rows/s".to_owned())
        );
        assert_eq!(
            stages.note(report(ImportStage::Indexing, 9, 9), at(13_000)),
            None
        );
        assert_eq!(
            stages.note(report(ImportStage::Analyzing, 0, 0), at(14_000)),
            Some("import: 9 indexes built in 2.00 s".to_owned())
        );
        assert_eq!(
            stages.finish(at(14_250)),
            Some("import: planner's statistics refreshed in 0.25 s".to_owned())
        );
        assert_eq!(stages.rows, Some(1_000_000));
    }

    #[test]
    fn the_summary_says_the_time_and_the_rate() {
        let summary = ImportSummary {
            accounts: 1,
            departments: 2,
            custom_roles: 0,
            users: 3,
            groups: 0,
            projects: 0,
            content_items: 0,
            enrollments: 0,
            points: 0,
            api_clients: 0,
            results: 0,
        };
        assert_eq!(
            summary_line(
                Path::new("world.json"),
                &summary,
                Duration::from_millis(12_500),
                Some(1_250_000)
            ),
            "Imported world.json in 12.5 s (1,250,000 rows, 100,000 rows/s): 1 account, \
             2 departments, 0 custom roles, 3 users, 0 groups, 0 projects, 0 content items, \
             0 enrollments, 0 points entries, 0 API clients"
        );
    }
}
