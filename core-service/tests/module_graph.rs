//! The core's modules depend downwards only (see the crate's documentation): the data layer
//! (`db/`) and the value rules (`domain/`) use none of the modules built on them, and
//! `metrics.rs` uses no module of the crate at all. Read from the source, so a new `use` that
//! breaks the rule fails here, whatever it compiles to.

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
};

/// Modules that `db/` and `domain/` must not use.
const ABOVE_THE_DATA_LAYER: [&str; 7] = [
    "access",
    "auth",
    "service",
    "grpc",
    "import",
    "error",
    "telemetry",
];

#[test]
fn the_data_layer_and_the_value_rules_use_nothing_built_on_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for folder in ["db", "domain"] {
        rust_files(&src.join(folder), &mut files);
    }
    assert!(
        files.len() >= 20,
        "db/ and domain/ hold more files than {}",
        files.len()
    );
    let mut breaches = Vec::new();
    for file in &files {
        let module = module_path(&src, file);
        let text = std::fs::read_to_string(file).unwrap();
        for used in used_modules(&module, &text) {
            if ABOVE_THE_DATA_LAYER.contains(&used.as_str()) {
                breaches.push(format!("{} uses crate::{used}", file.display()));
            }
        }
    }
    assert!(breaches.is_empty(), "{}", breaches.join("\n"));
}

#[test]
fn metrics_is_a_leaf() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let file = src.join("metrics.rs");
    let used = used_modules(
        &["metrics".to_owned()],
        &std::fs::read_to_string(&file).unwrap(),
    );
    let others: Vec<&String> = used.iter().filter(|m| *m != "metrics").collect();
    assert!(others.is_empty(), "metrics.rs uses {others:?}");
}

#[test]
fn every_spelling_of_a_use_is_seen() {
    let module = ["db".to_owned(), "reads".to_owned(), "batches".to_owned()];
    let text = "use crate::{\n    access::Caller,\n    db::{self, fault},\n    error::{ServiceError, ServiceResult},\n};\n\
                use super::super::super::service::groups;\n\
                use super::held::Held;\n\
                fn f() { crate::telemetry::code_name(code); }\n\
                // crate::grpc is named in a comment only.\n\
                /// As [`crate::import`] reads it.\n\
                use crate::{self as core, auth};\n";
    assert_eq!(
        used_modules(&module, text),
        BTreeSet::from(
            ["access", "auth", "db", "error", "service", "telemetry"].map(str::to_owned)
        )
    );
}

fn rust_files(folder: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// `src/db/reads/mod.rs` is `db::reads`; `src/db/reads/batches.rs` is `db::reads::batches`.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut path: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if path.last().is_some_and(|last| last == "mod") {
        path.pop();
    }
    path
}

/// The crate's top-level modules that `text` (the source of `module`) names through
/// `crate::…` or `super::…` paths, in `use` groups too; comments are not read.
fn used_modules(module: &[String], text: &str) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut used = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(at) = next_path(rest) {
        let preceded_by_ident = rest[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':');
        let path = &rest[at..];
        rest = &rest[at + 1..];
        if preceded_by_ident {
            continue;
        }
        let mut segments = path.split("::");
        let mut base: Vec<String> = match segments.next() {
            Some("crate") => Vec::new(),
            _ => module[..module.len() - 1].to_vec(),
        };
        let mut tail = "";
        for segment in segments {
            if segment == "super" {
                base.pop();
                continue;
            }
            tail = segment;
            break;
        }
        if let Some(top) = base.first() {
            used.insert(top.clone());
            continue;
        }
        // `crate::` itself: the first segment, or each first segment of a `{…}` group.
        for name in first_segments(tail, path) {
            if name != "self" {
                used.insert(name);
            }
        }
    }
    used
}

/// Where the next `crate::` or `super::` starts.
fn next_path(text: &str) -> Option<usize> {
    match (text.find("crate::"), text.find("super::")) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The module names right after `crate::`: one, or each of a group's items.
fn first_segments(tail: &str, path: &str) -> Vec<String> {
    let ident = |s: &str| {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect::<String>()
    };
    if !tail.trim_start().starts_with('{') {
        return vec![ident(tail)];
    }
    let group = &path[path.find('{').unwrap() + 1..];
    let mut names = Vec::new();
    let mut depth = 0;
    let mut item_start = true;
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => item_start = true,
            c if item_start && !c.is_whitespace() => {
                names.push(ident(&group[i..]));
                item_start = false;
            }
            _ => {}
        }
    }
    names
}
