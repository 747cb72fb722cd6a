//! The docs as references: `docs/benchmarks.md` stays short enough to read (its history lives
//! in `docs/benchmarks-history.md`), no heading of our docs is a date (a dated heading is a lab
//! notebook's, and leaves the reader to guess which verdict is current), and every repository
//! path the docs and the README name in backticks exists.
//!
//! `docs/spec/` is a vendored copy of the shared spec and is not ours to hold to these rules.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Paths the docs name that other parts of the same restructuring add. Each is checked like
/// any other once it exists; an entry that exists is reported, so the list only shrinks.
const NOT_YET_MERGED: &[&str] = &["core-service/src/db/reads/"];

const MAX_BENCHMARK_LINES: usize = 500;

/// File extensions that make a backticked text with a `/` a file path.
const FILE_EXTENSIONS: &[&str] = &[
    "rs", "md", "toml", "yml", "yaml", "proto", "json", "binpb", "sql", "sh", "lock",
];

const MONTHS: &[&str] = &[
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
    "Jan",
    "Feb",
    "Mar",
    "Apr",
    "Jun",
    "Jul",
    "Aug",
    "Sep",
    "Sept",
    "Oct",
    "Nov",
    "Dec",
];

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("the repository root")
}

/// A document's path as the failure messages show it: from the repository root.
fn shown(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// `docs/*.md`, without the vendored `docs/spec/`.
fn our_docs(root: &Path) -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|entry| entry.expect("a docs/ entry").path())
        .filter(|path| path.is_file() && path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    assert!(
        docs.iter()
            .any(|path| path.ends_with("docs/architecture.md")),
        "docs/*.md not found under {}",
        root.display()
    );
    docs
}

/// The text outside fenced code blocks (```` ``` ```` or `~~~`), line by line; fenced lines
/// become empty so that line numbers stay right.
fn outside_fences(text: &str) -> Vec<&str> {
    let mut fence: Option<&str> = None;
    text.lines()
        .map(|line| {
            let trimmed = line.trim_start();
            let marker = ["```", "~~~"]
                .into_iter()
                .find(|marker| trimmed.starts_with(marker));
            match (fence, marker) {
                (None, Some(marker)) => {
                    fence = Some(marker);
                    ""
                }
                (Some(open), Some(marker)) if open == marker => {
                    fence = None;
                    ""
                }
                (Some(_), _) => "",
                (None, None) => line,
            }
        })
        .collect()
}

/// Headings: ATX (`## …`) and setext (a line underlined with `===` or `---`), with their line
/// numbers (1-based).
fn headings(text: &str) -> Vec<(usize, String)> {
    let lines = outside_fences(text);
    let mut found = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let hashes = trimmed.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && trimmed[hashes..].starts_with([' ', '\t']) {
            found.push((index + 1, trimmed[hashes..].trim().to_owned()));
            continue;
        }
        let underline = line.trim();
        let is_underline = underline.len() >= 3
            && (underline.chars().all(|c| c == '=') || underline.chars().all(|c| c == '-'));
        if is_underline && index > 0 {
            let above = lines[index - 1].trim();
            let is_text = !above.is_empty()
                && !above.starts_with(['#', '|', '-', '*', '>'])
                && !above.chars().next().is_some_and(|c| c.is_ascii_digit());
            if is_text {
                found.push((index, above.to_owned()));
            }
        }
    }
    found
}

/// A date in a heading: `YYYY-MM-DD`, or a month's name with a year beside it.
fn names_a_date(heading: &str) -> bool {
    let bytes = heading.as_bytes();
    let iso = bytes.windows(10).any(|w| {
        let digits = |range: std::ops::Range<usize>| w[range].iter().all(u8::is_ascii_digit);
        digits(0..4) && w[4] == b'-' && digits(5..7) && w[7] == b'-' && digits(8..10)
    });
    let words: Vec<&str> = heading
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .collect();
    let month = words.iter().any(|word| MONTHS.contains(word));
    let year = words.iter().any(|word| {
        word.len() == 4
            && word
                .parse::<u32>()
                .is_ok_and(|year| (1900..2200).contains(&year))
    });
    iso || (month && year)
}

/// The contents of inline code spans outside fenced blocks (a span may wrap a line).
fn code_spans(text: &str) -> Vec<String> {
    let prose = outside_fences(text).join("\n");
    let mut spans = Vec::new();
    let mut rest = prose.as_str();
    while let Some(start) = rest.find('`') {
        let after = &rest[start..];
        let run = after.chars().take_while(|&c| c == '`').count();
        let opener = &after[..run];
        let body = &after[run..];
        // The span closes at the next run of exactly as many backticks.
        let mut search = 0;
        let mut close = None;
        while let Some(found) = body[search..].find(opener) {
            let at = search + found;
            let longer = body[at + run..].starts_with('`');
            if !longer && (at == 0 || !body[..at].ends_with('`')) {
                close = Some(at);
                break;
            }
            search = at + body[at..].chars().take_while(|&c| c == '`').count();
        }
        match close {
            Some(at) => {
                spans.push(body[..at].trim().to_owned());
                rest = &body[at + run..];
            }
            None => rest = body,
        }
    }
    spans
}

/// What a code span names, when it names a repository path: a file (a `/` and a known
/// extension) or a folder (a trailing `/`, starting at a top-level folder). URL paths
/// (`/group/{id}`), module paths (`lms_core::in_process`), commands, globs and anything with
/// spaces or punctuation are not paths.
#[derive(Debug, PartialEq, Eq)]
enum Named {
    File(String),
    Folder(String),
}

fn named_path(span: &str, top_level: &BTreeSet<String>) -> Option<Named> {
    let mut path = span;
    while let Some(rest) = path.strip_prefix("../").or_else(|| path.strip_prefix("./")) {
        path = rest;
    }
    let forbidden = |c: char| {
        c.is_whitespace()
            || "{}*…<>:?=$#@,()[]|'\"~%+!&;\\".contains(c)
            || !(c.is_ascii() || c.is_alphanumeric())
    };
    if path.is_empty()
        || path.starts_with(['/', '-', '.'])
        || !path.contains('/')
        || path.contains("//")
        || path.chars().any(forbidden)
    {
        return None;
    }
    if let Some(folder) = path.strip_suffix('/') {
        let first = folder.split('/').next().unwrap_or_default();
        return top_level
            .contains(first)
            .then(|| Named::Folder(path.to_owned()));
    }
    let file_name = path.rsplit('/').next().unwrap_or_default();
    let extension = file_name.rsplit_once('.').map(|(_, ext)| ext)?;
    FILE_EXTENSIONS
        .contains(&extension)
        .then(|| Named::File(path.to_owned()))
}

/// Every file of the repository, as a `/`-separated path from the root (build output and
/// version control left out).
fn repository_files(root: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, files: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("a readable folder") {
            let path = entry.expect("a folder entry").path();
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if path.is_dir() {
                if name != "target" && name != ".git" {
                    walk(root, &path, files);
                }
            } else {
                let relative = path.strip_prefix(root).expect("inside the root");
                files.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut files = Vec::new();
    walk(root, root, &mut files);
    files
}

fn top_level_entries(root: &Path) -> BTreeSet<String> {
    std::fs::read_dir(root)
        .expect("the repository root")
        .map(|entry| {
            entry
                .expect("a root entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name != "target" && name != ".git")
        .collect()
}

/// Whether a named path exists: from the repository root or from the naming document's
/// folder; a file path that starts inside a crate (`db/write.rs`, `routes/group/`) is found
/// as the end of some repository file's path.
fn exists(
    named: &Named,
    root: &Path,
    doc_dir: &Path,
    files: &[String],
    top: &BTreeSet<String>,
) -> bool {
    let (path, is_folder) = match named {
        Named::File(path) => (path.as_str(), false),
        Named::Folder(path) => (path.as_str(), true),
    };
    let here = |base: &Path| {
        let candidate = base.join(path.trim_end_matches('/'));
        if is_folder {
            candidate.is_dir()
        } else {
            candidate.is_file()
        }
    };
    if here(root) || here(doc_dir) {
        return true;
    }
    let first = path.split('/').next().unwrap_or_default();
    if is_folder || top.contains(first) {
        return false;
    }
    let suffix = format!("/{path}");
    files.iter().any(|file| file.ends_with(&suffix))
}

#[test]
fn the_benchmarks_page_stays_a_reference() {
    let root = repo_root();
    let text = read(&root.join("docs/benchmarks.md"));
    let lines = text.lines().count();
    assert!(
        lines < MAX_BENCHMARK_LINES,
        "docs/benchmarks.md has {lines} lines; keep it under {MAX_BENCHMARK_LINES}: one current \
         table per benchmark, earlier runs in docs/benchmarks-history.md"
    );
}

#[test]
fn no_heading_of_our_docs_is_dated() {
    let root = repo_root();
    let mut dated = Vec::new();
    for doc in our_docs(&root) {
        for (line, heading) in headings(&read(&doc)) {
            if names_a_date(&heading) {
                dated.push(format!("{}:{line}: {heading}", shown(&root, &doc)));
            }
        }
    }
    assert!(
        dated.is_empty(),
        "headings name a topic, not a date (put the date in the text):\n{}",
        dated.join("\n")
    );
}

#[test]
fn every_path_the_docs_name_exists() {
    let root = repo_root();
    let files = repository_files(&root);
    let top = top_level_entries(&root);
    let mut documents = our_docs(&root);
    documents.push(root.join("README.md"));
    let mut missing = Vec::new();
    let mut checked = 0;
    let mut merged = Vec::new();
    for doc in &documents {
        let doc_dir = doc.parent().expect("a folder");
        for span in code_spans(&read(doc)) {
            let Some(named) = named_path(&span, &top) else {
                continue;
            };
            checked += 1;
            let found = exists(&named, &root, doc_dir, &files, &top);
            let allowed = NOT_YET_MERGED.contains(&span.as_str());
            if found && allowed {
                merged.push(span);
            } else if !found && !allowed {
                missing.push(format!("{}: `{span}`", shown(&root, doc)));
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} paths recognised: the recogniser is broken"
    );
    assert!(
        missing.is_empty(),
        "paths named in the docs that do not exist:\n{}",
        missing.join("\n")
    );
    assert!(
        merged.is_empty(),
        "these exist now; take them out of NOT_YET_MERGED: {merged:?}"
    );
}

#[test]
fn dates_in_headings_are_recognised() {
    assert!(names_a_date("Import (2026-11-26)"));
    assert!(names_a_date("2026-11-27: PostgreSQL batched reads"));
    assert!(names_a_date("Runs of November 2026"));
    assert!(names_a_date("Against the targets (Nov 27, 2026)"));
    assert!(!names_a_date("Hot path: one warm request, layer by layer"));
    assert!(!names_a_date("Scale: 100,000 users and 2,000 groups"));
    assert!(!names_a_date("Points in 2026"));
    assert!(!names_a_date(
        "Postgres, again after the keyset fix (07:32 to 07:36 UTC)"
    ));
}

#[test]
fn headings_are_found_outside_code_blocks_only() {
    let text = "# Title\n\n```sh\n# a shell comment 2026-11-26\n```\n\nSetext 2026-01-01\n---\n\n| a |\n|---|\n";
    let found: Vec<String> = headings(text).into_iter().map(|(_, h)| h).collect();
    assert_eq!(found, ["Title", "Setext 2026-01-01"]);
}

#[test]
fn only_repository_paths_are_recognised() {
    let top: BTreeSet<String> = ["core-service", "docs", "proto", "tests"]
        .map(String::from)
        .into();
    let file = |path: &str| Some(Named::File(path.to_owned()));
    let folder = |path: &str| Some(Named::Folder(path.to_owned()));
    assert_eq!(
        named_path("core-service/src/lib.rs", &top),
        file("core-service/src/lib.rs")
    );
    assert_eq!(
        named_path("../xml-gateway/README.md", &top),
        file("xml-gateway/README.md")
    );
    assert_eq!(named_path("db/write.rs", &top), file("db/write.rs"));
    assert_eq!(
        named_path("proto/lms.v1.binpb", &top),
        file("proto/lms.v1.binpb")
    );
    assert_eq!(
        named_path("tests/tests/e2e/", &top),
        folder("tests/tests/e2e/")
    );
    for not_a_path in [
        "/group/{id}",
        "/api/v2/",
        "GET /users?pageSize=10",
        "lms_core::in_process",
        "plan_cache_mode = force_generic_plan",
        "routes/group/{mod,one,lists,writes}.rs",
        "target/release/deps/hot_path-…",
        "https://example.com/a.md",
        "xml/",
        "lms-data/",
        "a/b",
        "Cargo.toml",
        "`",
    ] {
        assert_eq!(named_path(not_a_path, &top), None, "{not_a_path}");
    }
}

#[test]
fn code_spans_are_read_as_markdown_reads_them() {
    let text = "See `a/b.rs` and ``x `y` z``.\nA span `wraps\nlines`.\n```\n`in/a/fence.rs`\n```\n";
    assert_eq!(code_spans(text), ["a/b.rs", "x `y` z", "wraps\nlines"]);
}

#[test]
fn a_missing_path_is_found_missing() {
    let root = repo_root();
    let files = repository_files(&root);
    let top = top_level_entries(&root);
    let docs = root.join("docs");
    let check = |span: &str| {
        let named = named_path(span, &top).unwrap_or_else(|| panic!("{span} is a path"));
        exists(&named, &root, &docs, &files, &top)
    };
    assert!(check("core-service/src/lib.rs"));
    assert!(check("spec/interface.md"), "relative to the document");
    assert!(check("auth/cache.rs"), "the end of a crate's path");
    assert!(check("tests/tests/e2e/"));
    assert!(!check("core-service/src/nowhere.rs"));
    assert!(
        !check("proto/lms/v1/lms.proto"),
        "a top-level path is read from the root only"
    );
    assert!(!check("auth/nowhere.rs"));
    assert!(!check("tests/nowhere/"));
}
