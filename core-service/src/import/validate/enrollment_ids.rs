//! Enrollment ids, checked for uniqueness from the plan's rows instead of the id map.
//!
//! A million enrollment ids in the map would weigh about 50 MiB more than the rows that
//! already hold them. So an enrollment's id is not registered when its entry is checked;
//! the rows are sorted by id and compared with each other and with the map once the
//! document is read, and again before any other refusal is given, so the first entry that
//! repeats an id is still the first refusal, as if every id had been registered in turn.

use std::{cmp::Reverse, collections::BinaryHeap};

use uuid::Uuid;

use super::{Entries, List, Place, plan::EnrollmentRow};
use crate::import::ImportError;

/// One account's enrollment rows.
pub(crate) struct Run<'a> {
    pub(crate) account: usize,
    pub(crate) rows: &'a mut [EnrollmentRow],
}

/// Sorts every run by id and returns the refusal of the first entry, in the order the
/// document is checked, whose id an earlier entry already gave; `None` when every id is
/// unique.
pub(crate) fn first_repeat(ids: &Entries, runs: Vec<Run<'_>>) -> Option<ImportError> {
    let mut runs = runs;
    for run in &mut runs {
        // Rows already in order (a settled account) cost one pass.
        if !run.rows.is_sorted_by_key(|row| (row.id, row.index)) {
            run.rows.sort_unstable_by_key(|row| (row.id, row.index));
        }
    }
    let place = |run: &Run<'_>, row: &EnrollmentRow| {
        Place::new(run.account, List::Enrollments, row.index as usize)
    };
    // Every id once, in id order, over all runs.
    let mut heads: BinaryHeap<Reverse<(Uuid, usize, usize)>> = runs
        .iter()
        .enumerate()
        .filter_map(|(r, run)| run.rows.first().map(|row| Reverse((row.id, r, 0))))
        .collect();
    // (second place, first place, id) of the earliest repeat so far.
    let mut earliest: Option<(Place, Place, Uuid)> = None;
    let mut places: Vec<Place> = Vec::new();
    while let Some(Reverse((id, _, _))) = heads.peek().copied() {
        places.clear();
        while let Some(&Reverse((next, r, i))) = heads.peek() {
            if next != id {
                break;
            }
            heads.pop();
            let run = &runs[r];
            places.push(place(run, &run.rows[i]));
            if let Some(row) = run.rows.get(i + 1) {
                heads.push(Reverse((row.id, r, i + 1)));
            }
        }
        places.extend(ids.place(id));
        if places.len() < 2 {
            continue;
        }
        places.sort_unstable();
        let (first, second) = (places[0], places[1]);
        if earliest.is_none_or(|(earliest, _, _)| second < earliest) {
            earliest = Some((second, first, id));
        }
    }
    earliest.map(|(second, first, id)| {
        ImportError::invalid(
            ids.name(id, second),
            format!(
                "id \"{id}\" is used twice in the document (first by {})",
                ids.name(id, first)
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: u128, index: u32) -> EnrollmentRow {
        EnrollmentRow {
            id: Uuid::from_u128(id),
            index,
            learner_id: Uuid::nil(),
            content_item_id: Uuid::nil(),
            access_at: None,
            due_at: None,
            lock_after_due: false,
        }
    }

    fn refusal(ids: &Entries, runs: &mut [Vec<EnrollmentRow>]) -> Option<String> {
        let runs = runs
            .iter_mut()
            .enumerate()
            .map(|(account, rows)| Run { account, rows })
            .collect();
        first_repeat(ids, runs).map(|err| err.to_string())
    }

    #[test]
    fn unique_ids_pass_and_end_sorted() {
        let mut runs = [vec![row(3, 0), row(1, 1), row(2, 2)], vec![row(4, 0)]];
        assert_eq!(refusal(&Entries::default(), &mut runs), None);
        let order: Vec<u32> = runs[0].iter().map(|row| row.index).collect();
        assert_eq!(order, [1, 2, 0]);
    }

    #[test]
    fn the_earliest_second_entry_is_refused_naming_the_first() {
        // Entry 4 repeats entry 2, entry 3 repeats entry 0: entry 3 is met first.
        let mut runs = [vec![row(9, 0), row(5, 1), row(7, 2), row(9, 3), row(7, 4)]];
        let message = refusal(&Entries::default(), &mut runs).unwrap();
        let id = Uuid::from_u128(9);
        assert!(
            message.starts_with(&format!("accounts[0].enrollments[3] (id \"{id}\")")),
            "{message}"
        );
        assert!(
            message.contains(&format!(
                "(first by accounts[0].enrollments[0] (id \"{id}\"))"
            )),
            "{message}"
        );
    }

    #[test]
    fn an_id_of_another_kind_counts_in_document_order() {
        let id = Uuid::from_u128(5);
        let mut ids = Entries::default();
        // A group of the second account, checked after the first account's enrollments.
        let group = Place::new(1, List::Groups, 0);
        ids.insert(id, &id.to_string(), group, String::new).unwrap();
        let mut runs = [vec![row(5, 0)], vec![row(6, 0)]];
        let message = refusal(&ids, &mut runs).unwrap();
        assert!(message.starts_with("accounts[1].groups[0]"), "{message}");
        assert!(
            message.contains("first by accounts[0].enrollments[0]"),
            "{message}"
        );

        // Across accounts, the later account's entry is refused.
        let mut runs = [vec![row(8, 0)], vec![row(1, 0), row(8, 1)]];
        let message = refusal(&Entries::default(), &mut runs).unwrap();
        assert!(
            message.starts_with("accounts[1].enrollments[1]"),
            "{message}"
        );
        assert!(
            message.contains("first by accounts[0].enrollments[0]"),
            "{message}"
        );
    }
}
