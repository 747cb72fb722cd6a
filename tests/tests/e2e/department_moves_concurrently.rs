//! Concurrent department moves (contract section 6: "two concurrent moves can never produce a
//! cycle"): a tree of departments made through the interface, then many moves fired at once,
//! many of them racing to close a cycle, while new departments are added. No request may fail
//! with a 5xx; afterwards `departments.parent_id` must still be one tree and
//! `department_closure` exactly its transitive closure.

use std::collections::{BTreeSet, HashMap};

use futures::future::join_all;
use lms_core::entities::{audit_log, department};
use lms_tests::{
    Reply, TestStack, on_both_backends,
    rows::closure,
    world::{self, acme},
    xml::{PROLOGUE, text_of},
};
use sea_orm::{ColumnTrait as _, EntityTrait as _, QueryFilter as _, prelude::Uuid};

/// Departments created on top of the world's five.
const CREATED: usize = 30;
/// Pairs of moves fired at once that each put one department under the other.
const RACING_PAIRS: usize = 15;
/// Random moves fired at once with the racing pairs.
const RANDOM_MOVES: usize = 30;
/// Departments created while the moves run.
const CONCURRENT_CREATES: usize = 10;

on_both_backends!(concurrent_moves_keep_one_tree_and_an_exact_closure);

/// A fixed pseudo-random sequence (SplitMix64): every run makes the same tree and the same moves.
struct Sequence(u64);

impl Sequence {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }
}

async fn post(stack: &TestStack, path: &str, request_id: &str, body: String) -> Reply {
    let response = stack
        .request(reqwest::Method::POST, path, world::OWNER)
        .header("Content-Type", "application/xml")
        .header("X-Request-Id", request_id)
        .body(body)
        .send()
        .await
        .expect("request");
    Reply::from(response).await
}

async fn create(stack: &TestStack, n: usize, parent: &str) -> String {
    let body = format!(
        "{PROLOGUE}<request><name>Department {n}</name>\
         <parentDepartmentId>{parent}</parentDepartmentId><code>D{n}</code></request>"
    );
    let reply = post(stack, "/department", &format!("create-{n}"), body).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    text_of(&reply.body, "response").expect("the new id")
}

async fn move_under(
    stack: &TestStack,
    request_id: String,
    moved: String,
    new_parent: String,
) -> Reply {
    let body = format!(
        "{PROLOGUE}<request><parentDepartmentId>{new_parent}</parentDepartmentId></request>"
    );
    post(stack, &format!("/department/{moved}"), &request_id, body).await
}

async fn concurrent_moves_keep_one_tree_and_an_exact_closure(stack: &TestStack) {
    let mut sequence = Sequence(0x1D5_2025);
    // The world's departments, then new ones each under a random earlier one.
    let mut ids: Vec<String> = [
        acme::ROOT,
        acme::SALES,
        acme::SALES_EAST,
        acme::ENGINEERING,
        acme::SUPPORT,
    ]
    .map(str::to_owned)
    .to_vec();
    for n in 0..CREATED {
        let parent = ids[sequence.below(ids.len())].clone();
        ids.push(create(stack, n, &parent).await);
    }
    assert_tree_with_exact_closure(stack, ids.len()).await;

    // Moves: every non-root department is a candidate. Pairs that each try to put one
    // department under the other race to close a two-cycle; at most one of a pair may win.
    let mut moves: Vec<(String, String)> = Vec::new();
    for _ in 0..RACING_PAIRS {
        let a = ids[1 + sequence.below(ids.len() - 1)].clone();
        let b = ids[1 + sequence.below(ids.len() - 1)].clone();
        moves.push((a.clone(), b.clone()));
        moves.push((b, a));
    }
    for _ in 0..RANDOM_MOVES {
        let moved = ids[1 + sequence.below(ids.len() - 1)].clone();
        let new_parent = ids[sequence.below(ids.len())].clone();
        moves.push((moved, new_parent));
    }
    // New leaves created meanwhile must get the ancestors their parent has when they land.
    let leaf_parents: Vec<String> = (0..CONCURRENT_CREATES)
        .map(|_| ids[sequence.below(ids.len())].clone())
        .collect();
    let started = std::time::Instant::now();
    let all_moves = join_all(moves.iter().enumerate().map(|(n, (moved, new_parent))| {
        move_under(
            stack,
            format!("move-{n}"),
            moved.clone(),
            new_parent.clone(),
        )
    }));
    let all_creates = join_all(
        leaf_parents
            .iter()
            .enumerate()
            .map(|(n, parent)| create(stack, CREATED + n, parent)),
    );
    let (replies, leaves) = futures::join!(all_moves, all_creates);
    let elapsed = started.elapsed();

    let mut moved_count = 0;
    for (reply, (moved, new_parent)) in replies.iter().zip(&moves) {
        match reply.status {
            204 => {
                assert!(reply.body.is_empty(), "{}", reply.body);
                moved_count += 1;
            }
            // A cycle (the department itself or one of its descendants) at the time of the move.
            400 => reply.assert_error(400, "parentDepartmentId"),
            status => panic!(
                "moving {moved} under {new_parent}: unexpected {status}: {}",
                reply.body
            ),
        }
    }
    assert!(moved_count > 0, "some moves succeed");
    assert!(
        moved_count < moves.len(),
        "some moves are refused as cycles"
    );
    eprintln!(
        "{moved_count} of {} concurrent moves succeeded in {elapsed:?}",
        moves.len()
    );

    ids.extend(leaves);
    assert_tree_with_exact_closure(stack, ids.len()).await;
    // Every successful move, and only those, left its audit row.
    let audited = audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq("department.update"))
        .all(stack.db())
        .await
        .expect("read the audit log");
    assert_eq!(
        audited.len(),
        moved_count,
        "one audit row per successful move"
    );
    for row in &audited {
        let request_id = row.request_id.as_deref().expect("a request id");
        let n: usize = request_id
            .strip_prefix("move-")
            .expect("a move")
            .parse()
            .expect("a number");
        assert_eq!(
            replies[n].status, 204,
            "{request_id} was audited but refused"
        );
        assert_eq!(row.entity_id, Uuid::parse_str(&moves[n].0).expect("a UUID"));
    }
}

/// Asserts that the Acme departments form one tree through `parent_id` (one root, every
/// department reaches it, no cycles) and that `department_closure` holds exactly every
/// (ancestor, descendant, depth) of that tree, each department with itself at depth 0.
async fn assert_tree_with_exact_closure(stack: &TestStack, expected_count: usize) {
    let root = Uuid::parse_str(acme::ROOT).expect("a UUID");
    let account = department::Entity::find_by_id(root)
        .one(stack.db())
        .await
        .expect("read the root")
        .expect("the root exists")
        .account_id;
    let departments = department::Entity::find()
        .filter(department::Column::AccountId.eq(account))
        .all(stack.db())
        .await
        .expect("read departments");
    assert_eq!(departments.len(), expected_count);
    let parents: HashMap<Uuid, Option<Uuid>> =
        departments.iter().map(|d| (d.id, d.parent_id)).collect();
    let roots: Vec<Uuid> = parents
        .iter()
        .filter(|(_, parent)| parent.is_none())
        .map(|(id, _)| *id)
        .collect();
    assert_eq!(roots, [root], "exactly one root, the account's");

    let mut expected = BTreeSet::new();
    for &id in parents.keys() {
        let (mut current, mut depth) = (id, 0);
        loop {
            expected.insert((current, id, depth));
            match parents[&current] {
                None => break,
                Some(parent) => {
                    let parent_known = parents.contains_key(&parent);
                    assert!(
                        parent_known,
                        "{current} has a parent outside the account: {parent}"
                    );
                    current = parent;
                    depth += 1;
                    assert!(depth < parents.len() as i32, "a cycle through {id}");
                }
            }
        }
        assert_eq!(current, root, "{id} reaches the root");
    }
    let closure: BTreeSet<(Uuid, Uuid, i32)> = closure(stack, account).await;
    let missing: Vec<_> = expected.difference(&closure).collect();
    let extra: Vec<_> = closure.difference(&expected).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "department_closure differs from the closure of parent_id\nmissing: {missing:#?}\nextra: {extra:#?}"
    );
}
