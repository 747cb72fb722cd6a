//! What `lms import` shows while it works: a bar on a terminal, a plain line every two
//! seconds otherwise (a log file or a CI job has no use for redrawn lines).

use std::{
    io::{IsTerminal as _, Write as _},
    sync::Mutex,
    time::{Duration, Instant},
};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lms_core::import::{ImportProgress, ImportStage};

/// How often a plain line is printed when stdout is not a terminal.
const LINE_EVERY: Duration = Duration::from_secs(2);

/// Shows the progress reports of one import.
pub enum ImportProgressView {
    Bar(Mutex<BarState>),
    Lines(Mutex<LineState>),
}

pub struct BarState {
    bar: ProgressBar,
    stage: Option<ImportStage>,
}

pub struct LineState {
    stage: Option<ImportStage>,
    stage_started: Instant,
    last_line: Option<Instant>,
}

impl ImportProgressView {
    /// A bar when stdout is a terminal, plain lines otherwise.
    pub fn for_stdout() -> Self {
        if std::io::stdout().is_terminal() {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stdout());
            bar.enable_steady_tick(Duration::from_millis(200));
            Self::Bar(Mutex::new(BarState { bar, stage: None }))
        } else {
            let now = Instant::now();
            Self::Lines(Mutex::new(LineState {
                stage: None,
                stage_started: now,
                last_line: None,
            }))
        }
    }

    pub fn update(&self, progress: ImportProgress) {
        match self {
            Self::Bar(state) => {
                if let Ok(mut state) = state.lock() {
                    state.update(progress);
                }
            }
            Self::Lines(state) => {
                if let Ok(mut state) = state.lock() {
                    state.update(progress);
                }
            }
        }
    }

    /// Clears the bar; the caller prints the outcome.
    pub fn finish(&self) {
        if let Self::Bar(state) = self
            && let Ok(state) = state.lock()
        {
            state.bar.finish_and_clear();
        }
    }
}

impl BarState {
    fn update(&mut self, progress: ImportProgress) {
        if self.stage != Some(progress.stage) {
            self.stage = Some(progress.stage);
            let (style, length) = match progress.stage {
                ImportStage::Writing | ImportStage::Hashing => {
                    let unit = if progress.stage == ImportStage::Writing {
                        "rows"
                    } else {
                        "passwords"
                    };
                    let template = format!(
                        "{{msg:>17}} [{{bar:30}}] {{human_pos}}/{{human_len}} {unit}, \
                         {{per_sec}}, {{eta}} left"
                    );
                    (
                        ProgressStyle::with_template(&template)
                            .unwrap_or_else(|_| ProgressStyle::default_bar())
                            .progress_chars("=> "),
                        Some(progress.total),
                    )
                }
                ImportStage::Validating | ImportStage::Analyzing => (
                    ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                    None,
                ),
            };
            self.bar.set_style(style);
            self.bar.reset();
            match length {
                Some(length) => self.bar.set_length(length),
                None => self.bar.unset_length(),
            }
            self.bar.set_message(progress.stage.to_string());
        }
        if progress.total > 0 {
            self.bar.set_position(progress.done);
        }
    }
}

impl LineState {
    fn update(&mut self, progress: ImportProgress) {
        let now = Instant::now();
        let new_stage = self.stage != Some(progress.stage);
        if new_stage {
            self.stage = Some(progress.stage);
            self.stage_started = now;
        }
        let due = self
            .last_line
            .is_none_or(|last| now.duration_since(last) >= LINE_EVERY);
        let last_of_stage = progress.total > 0 && progress.done == progress.total;
        if !(new_stage || due || last_of_stage) {
            return;
        }
        self.last_line = Some(now);
        print_line(&line(progress, now.duration_since(self.stage_started)));
    }
}

/// `import: writing 600,000/1,200,000 rows (50%), 110,000 rows/s, about 5 s left`.
fn line(progress: ImportProgress, in_stage: Duration) -> String {
    let ImportProgress { stage, done, total } = progress;
    if total == 0 {
        return format!("import: {stage}");
    }
    let unit = if stage == ImportStage::Writing {
        "rows"
    } else {
        "passwords"
    };
    let seconds = in_stage.as_secs_f64();
    let rate = if seconds > 0.0 {
        done as f64 / seconds
    } else {
        0.0
    };
    let left = if rate > 0.0 {
        format!(
            ", about {:.0} s left",
            (total - done.min(total)) as f64 / rate
        )
    } else {
        String::new()
    };
    format!(
        "import: {stage} {}/{} {unit} ({}%), {} {unit}/s{left}",
        thousands(done),
        thousands(total),
        done * 100 / total,
        thousands(rate as u64),
    )
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

    #[test]
    fn a_plain_line_gives_rows_rate_and_time_left() {
        let progress = ImportProgress {
            stage: ImportStage::Writing,
            done: 600_000,
            total: 1_200_000,
        };
        assert_eq!(
            line(progress, Duration::from_secs(5)),
            "import: writing 600,000/1,200,000 rows (50%), 120,000 rows/s, about 5 s left"
        );
        let reading = ImportProgress {
            stage: ImportStage::Validating,
            done: 0,
            total: 0,
        };
        assert_eq!(line(reading, Duration::ZERO), "import: validating");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
    }
}
