//! The department tree of one imported account, checked and flattened in memory:
//! parents-first order (so rows can be inserted without violating the parent foreign
//! key), cycle detection, and the rows of `department_closure`.

use std::collections::{HashMap, VecDeque};

use uuid::Uuid;

/// Departments that never reach the root because they form a cycle, as indexes into
/// the listed departments, each one's parent following it (`[a, b]`: a's parent is b,
/// b's parent is a). Starts at the lowest index of the cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cycle(pub(crate) Vec<usize>);

/// Orders the listed departments (`(id, parent id)`, every parent being `root` or a
/// listed id) so that each comes after its parent: breadth first from the root.
/// Departments that cannot be reached from the root form (or hang below) a cycle; the
/// cycle met first in document order is returned.
pub(crate) fn parents_first(root: Uuid, listed: &[(Uuid, Uuid)]) -> Result<Vec<usize>, Cycle> {
    let mut children: HashMap<Uuid, Vec<usize>> = HashMap::with_capacity(listed.len() + 1);
    for (index, (_, parent)) in listed.iter().enumerate() {
        children.entry(*parent).or_default().push(index);
    }
    let mut order = Vec::with_capacity(listed.len());
    let mut reached = vec![false; listed.len()];
    let mut queue = VecDeque::from([root]);
    while let Some(parent) = queue.pop_front() {
        for &child in children.get(&parent).map(Vec::as_slice).unwrap_or_default() {
            // A listed department has one parent, so it is reached at most once, except
            // when its id is the root's (a duplicate the validator refuses before this).
            if !reached[child] {
                reached[child] = true;
                order.push(child);
                queue.push_back(listed[child].0);
            }
        }
    }
    match reached.iter().position(|reached| !reached) {
        None => Ok(order),
        Some(first) => Err(find_cycle(first, listed, &reached)),
    }
}

/// Walks up from an unreached department: its parent is unreached too (else it would
/// have been reached), so the walk stays among unreached ones and must come round.
fn find_cycle(start: usize, listed: &[(Uuid, Uuid)], reached: &[bool]) -> Cycle {
    let index_of: HashMap<Uuid, usize> = listed
        .iter()
        .enumerate()
        .map(|(index, (id, _))| (*id, index))
        .collect();
    let mut path: Vec<usize> = Vec::new();
    let mut position: HashMap<usize, usize> = HashMap::new();
    let mut current = start;
    loop {
        if let Some(&from) = position.get(&current) {
            let mut cycle = path.split_off(from);
            // Present it from its first department in document order.
            if let Some(lowest) = cycle.iter().enumerate().min_by_key(|(_, index)| **index) {
                let at = lowest.0;
                cycle.rotate_left(at);
            }
            return Cycle(cycle);
        }
        position.insert(current, path.len());
        path.push(current);
        match index_of.get(&listed[current].1) {
            Some(&parent) if !reached[parent] => current = parent,
            // Unreachable by the argument above; end the walk rather than loop.
            _ => return Cycle(path),
        }
    }
}

/// One row of `department_closure`: `ancestor` is `descendant` itself (depth 0) or one
/// of its ancestors, `depth` steps up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ClosureRow {
    pub(crate) ancestor: Uuid,
    pub(crate) descendant: Uuid,
    pub(crate) depth: i32,
}

/// The closure of a tree given parents first (`(id, parent)`, the root with `None`):
/// one row per (ancestor, descendant) pair, each department with itself at depth 0.
pub(crate) fn closure_rows(ordered: &[(Uuid, Option<Uuid>)]) -> Vec<ClosureRow> {
    // Each department's chain of ancestors, nearest first, starting with itself.
    let mut chains: HashMap<Uuid, Vec<Uuid>> = HashMap::with_capacity(ordered.len());
    let mut rows = Vec::new();
    for (id, parent) in ordered {
        let mut chain = vec![*id];
        if let Some(above) = parent.and_then(|parent| chains.get(&parent)) {
            chain.extend_from_slice(above);
        }
        rows.extend(chain.iter().zip(0..).map(|(ancestor, depth)| ClosureRow {
            ancestor: *ancestor,
            descendant: *id,
            depth,
        }));
        chains.insert(*id, chain);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u128) -> Uuid {
        Uuid::from_u128(n)
    }

    #[test]
    fn departments_in_any_order_come_out_parents_first() {
        // root 0; 3 -> 2 -> 1 -> 0, 4 -> 0, listed children first.
        let listed = [
            (id(3), id(2)),
            (id(2), id(1)),
            (id(4), id(0)),
            (id(1), id(0)),
        ];
        let order = parents_first(id(0), &listed).unwrap();
        let ids: Vec<Uuid> = order.iter().map(|&i| listed[i].0).collect();
        assert_eq!(ids, vec![id(4), id(1), id(2), id(3)]);
    }

    #[test]
    fn an_empty_tree_is_just_the_root() {
        assert_eq!(parents_first(id(0), &[]).unwrap(), Vec::<usize>::new());
    }

    #[test]
    fn a_cycle_is_found_and_named_from_its_first_listed_department() {
        // 1 -> 0 fine; 2 -> 4 -> 3 -> 2 is a cycle; 5 hangs below it.
        let listed = [
            (id(1), id(0)),
            (id(5), id(3)),
            (id(3), id(2)),
            (id(2), id(4)),
            (id(4), id(3)),
        ];
        let Cycle(cycle) = parents_first(id(0), &listed).unwrap_err();
        // Starting at index 2 (id 3): its parent 2 (index 3), whose parent 4 (index 4).
        assert_eq!(cycle, vec![2, 3, 4]);
    }

    #[test]
    fn a_department_that_is_its_own_parent_is_a_cycle() {
        let listed = [(id(1), id(0)), (id(2), id(2))];
        assert_eq!(parents_first(id(0), &listed).unwrap_err(), Cycle(vec![1]));
    }

    #[test]
    fn two_departments_naming_each_other_are_a_cycle() {
        let listed = [(id(1), id(2)), (id(2), id(1))];
        assert_eq!(
            parents_first(id(0), &listed).unwrap_err(),
            Cycle(vec![0, 1])
        );
    }

    #[test]
    fn the_closure_has_every_ancestor_pair_with_its_depth() {
        let ordered = [
            (id(0), None),
            (id(1), Some(id(0))),
            (id(2), Some(id(1))),
            (id(3), Some(id(0))),
        ];
        let mut rows: Vec<(u128, u128, i32)> = closure_rows(&ordered)
            .into_iter()
            .map(|r| (r.ancestor.as_u128(), r.descendant.as_u128(), r.depth))
            .collect();
        rows.sort_unstable();
        assert_eq!(
            rows,
            vec![
                (0, 0, 0),
                (0, 1, 1),
                (0, 2, 2),
                (0, 3, 1),
                (1, 1, 0),
                (1, 2, 1),
                (2, 2, 0),
                (3, 3, 0),
            ]
        );
    }

    #[test]
    fn a_long_chain_is_handled_without_recursion() {
        let n = 2_000u128;
        let listed: Vec<(Uuid, Uuid)> = (1..=n).rev().map(|i| (id(i), id(i - 1))).collect();
        let order = parents_first(id(0), &listed).unwrap();
        let mut ordered = vec![(id(0), None)];
        ordered.extend(order.iter().map(|&i| (listed[i].0, Some(listed[i].1))));
        let rows = closure_rows(&ordered);
        let n = n as usize;
        assert_eq!(rows.len(), (n + 1) * (n + 2) / 2);
    }
}
