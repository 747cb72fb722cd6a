//! Fuzz targets for the import's JSON reader (see docs/fuzzing.md): an import document is
//! untrusted input. Any bytes are answered without a panic and with a bounded message, and
//! the streaming reader agrees with the reader of the whole document on every input:
//! the same plan, or the same refusal.

use std::io::Write as _;

use proptest::prelude::*;

use super::{ImportDocument, ImportError, stream, validate::validate};
use crate::fuzz::config;

/// A small valid document, in the contract's order but for `apiClients`, which comes early
/// so that the streaming reader also holds a list back, and `points`, which comes last so
/// that `results` is checked ahead of its turn.
const DOCUMENT: &str = r#"{"accounts":[{"url":"https://acme.example.com","apiClients":[{"clientId":"0191a000-0000-7000-8000-000000000701","clientSecret":"9f86d081884c7d659a2feaa0c55ad015","userId":"0191a000-0000-7000-8000-000000000201"}],"rootDepartment":{"id":"0191a000-0000-7000-8000-000000000001","name":"Acme"},"departments":[{"id":"0191a000-0000-7000-8000-000000000002","name":"Sales","parentDepartmentId":"0191a000-0000-7000-8000-000000000001"}],"users":[{"id":"0191a000-0000-7000-8000-000000000201","email":"owner@acme.example.com","password":"password","role":"account_owner","departmentId":"0191a000-0000-7000-8000-000000000001"},{"id":"0191a000-0000-7000-8000-000000000202","email":"sam@acme.example.com","password":"password","role":"learner","departmentId":"0191a000-0000-7000-8000-000000000002"}],"groups":[{"id":"0191a000-0000-7000-8000-000000000301","name":"Interns","userIds":["0191a000-0000-7000-8000-000000000202"]}],"projects":[{"id":"0191a000-0000-7000-8000-000000000401","name":"Onboarding","authorIds":["0191a000-0000-7000-8000-000000000201"]}],"contentItems":[{"id":"0191a000-0000-7000-8000-000000000501","projectId":"0191a000-0000-7000-8000-000000000401","title":"Welcome","userId":"0191a000-0000-7000-8000-000000000201","addedDate":"2019-03-26T08:34:57+02:00","type":"Course"}],"enrollments":[{"id":"0191a000-0000-7000-8000-000000000601","learnerId":"0191a000-0000-7000-8000-000000000202","contentItemId":"0191a000-0000-7000-8000-000000000501"}],"results":[{"enrollmentId":"0191a000-0000-7000-8000-000000000601","completionStatus":"passed","progress":100,"awardedScore":92.5,"passingScore":80,"completionDate":"2025-03-01T10:00:00+00:00","lastViewDate":"2025-03-01T10:00:00+00:00"}],"points":[{"userId":"0191a000-0000-7000-8000-000000000202","points":4}]}]}"#;

/// Pieces spliced into the document: JSON syntax, ids that collide, values of the wrong type.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just(",".to_owned()),
        Just("}".to_owned()),
        Just("]".to_owned()),
        Just("null".to_owned()),
        Just("\"\"".to_owned()),
        Just("\"0191a000-0000-7000-8000-000000000201\"".to_owned()),
        Just("\"0191A000-0000-7000-8000-000000000202\"".to_owned()),
        Just("{\"id\":\"0191a000-0000-7000-8000-000000000601\"}".to_owned()),
        Just("-1".to_owned()),
        Just("1e999".to_owned()),
        Just("\"\\ud800\"".to_owned()),
        "\\PC{0,12}".prop_map(|text| format!("\"{text}\"")),
        "[ -~]{0,6}",
    ]
}

/// The streaming reader's answer for `bytes`, read from a file as `lms import` reads it.
fn streamed(bytes: &[u8]) -> Result<String, String> {
    let mut file = tempfile::Builder::new().suffix(".json").tempfile().unwrap();
    file.write_all(bytes).unwrap();
    outcome(stream::read_json(file.path()))
}

/// The whole-document reader's answer, when the bytes parse as a document at all.
fn whole(bytes: &[u8]) -> Option<Result<String, String>> {
    let document: ImportDocument = serde_json::from_slice(bytes).ok()?;
    Some(outcome(validate(&document)))
}

fn outcome(result: Result<super::validate::Plan, ImportError>) -> Result<String, String> {
    result
        .map(|mut plan| {
            // An account given without an id gets a new one on each read.
            for account in &mut plan.accounts {
                account.id = uuid::Uuid::nil();
            }
            format!("{:?}", plan.accounts)
        })
        .map_err(|err| match err {
            // The file's own name differs between runs; the reason is what must agree.
            ImportError::Read { source, .. } => source.to_string(),
            ImportError::Parse { message, .. } => message,
            other => other.to_string(),
        })
}

fn check(bytes: &[u8]) -> Result<(), TestCaseError> {
    let streamed = streamed(bytes);
    if let Err(message) = &streamed {
        prop_assert!(message.len() <= 1_024, "unbounded message: {message}");
    }
    match whole(bytes) {
        Some(whole) => prop_assert_eq!(streamed, whole),
        None => prop_assert!(streamed.is_err(), "accepted what does not parse"),
    }
    Ok(())
}

#[test]
fn the_unmutated_document_is_accepted_by_both_readers() {
    let streamed = streamed(DOCUMENT.as_bytes());
    assert!(streamed.is_ok(), "{streamed:?}");
    assert_eq!(Some(streamed), whole(DOCUMENT.as_bytes()));
}

proptest! {
    #![proptest_config(config(400))]

    #[test]
    fn fuzz_any_bytes_are_refused_without_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        check(&bytes)?;
    }

    #[test]
    fn fuzz_a_spliced_document_gets_the_same_answer_from_both_readers(
        cut in 0..DOCUMENT.len(),
        removed in 0usize..40,
        inserted in piece(),
    ) {
        let start = cut;
        let end = (cut + removed).min(DOCUMENT.len());
        let mut bytes = DOCUMENT.as_bytes()[..start].to_vec();
        bytes.extend_from_slice(inserted.as_bytes());
        bytes.extend_from_slice(&DOCUMENT.as_bytes()[end..]);
        check(&bytes)?;
    }
}
