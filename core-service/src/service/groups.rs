//! Groups (interface 4.3, 4.4; contract section 7; neighbours.md section 7): read one
//! with its members (here: the hottest read of the interface), list them ([`list`]),
//! create, rename and delete them ([`edit`]), and add or replace a plain group's stored
//! members ([`members`]). Each operation is one function, whichever door calls it:
//! `lms.v1.AdminService` for the HTTP interface, `lms.v1.DirectoryService` for internal
//! services (owners and administrators only, whose grant is everything).

mod edit;
mod list;
mod members;

pub use edit::{create_group, delete_group, update_group};
pub use list::{GroupList, list_groups, stream_groups};
pub use members::{Membership, change_members};

use std::sync::OnceLock;

use sea_orm::{DbBackend, Statement, prelude::Uuid};

use crate::{
    access::{Caller, Grant, Operation},
    db::{BatchedStatement, ReadConnections},
    domain::{
        ids::{IdList, ResourceRef},
        names::GroupName,
    },
    error::ServiceResult,
};

/// A group to create: a plain group with its first members, or a smart group, whose
/// members are a department's subtree and are never stored.
#[derive(Debug, Clone)]
pub struct NewGroup {
    pub name: GroupName,
    /// Set for a smart group: its members are this department's subtree.
    pub smart_department_id: Option<Uuid>,
    /// A plain group's first members; may be empty.
    pub user_ids: IdList,
}

/// Absent fields stay as they are.
#[derive(Debug, Clone)]
pub struct GroupChanges {
    pub group: ResourceRef,
    pub name: Option<GroupName>,
}

#[derive(Debug, Clone)]
pub struct NewMembers {
    pub group: ResourceRef,
    pub user_ids: IdList,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupView {
    pub id: Uuid,
    pub name: String,
    pub users_count: u64,
    /// Ascending; empty when the caller may see only the count.
    pub user_ids: Vec<Uuid>,
    pub is_smart: bool,
}

/// One query, group and members together: this is the hottest read of the interface.
///
/// On the held read connections ([`ReadConnections`]): no pool ping after it. On
/// PostgreSQL, reads of groups arriving together are answered by one statement
/// ([`GROUPS_WITH_MEMBERS`]).
pub async fn get_group(
    reads: &ReadConnections,
    caller: &Caller,
    group: &ResourceRef,
) -> ServiceResult<GroupView> {
    let grant = caller.grant(Operation::GetGroup)?;
    let id = group.id("Group")?;
    let count_only = grant == Grant::CountOnly;
    let rows = match reads.backend() {
        DbBackend::Postgres => {
            reads
                .query_batched(
                    &GROUPS_WITH_MEMBERS,
                    vec![id.into(), caller.account_id.into(), (!count_only).into()],
                )
                .await?
        }
        _ => {
            reads
                .query_all(&group_with_members(caller.account_id, id, count_only))
                .await?
        }
    };
    let mut found = None;
    let mut user_ids = Vec::new();
    let mut counted = 0;
    for row in rows {
        if row.int(READ_KIND)? == GROUP_ROW {
            let name = row.text("name")?.unwrap_or_default();
            found = Some((name, row.int(READ_SMART)? != 0));
        }
        if let Some(count) = row.optional_int(READ_COUNT)? {
            counted = count;
            if let Some(packed) = row.blob(READ_IDS)? {
                user_ids = unpack_member_ids(&packed)?;
            }
        }
    }
    let (name, is_smart) = found.ok_or_else(|| group.not_found("Group"))?;
    // Byte order of UUIDs is the order of their lower-case text: ascending `userId`.
    user_ids.sort_unstable();
    Ok(GroupView {
        id,
        name,
        users_count: u64::try_from(counted).unwrap_or(0),
        user_ids,
        is_smart,
    })
}

const READ_KIND: &str = "row_kind";
const READ_SMART: &str = "is_smart";
const READ_IDS: &str = "member_ids";
const READ_COUNT: &str = "member_count";
const GROUP_ROW: i64 = 0;

/// The group's row (kind 0: name, smart rule) and one row of its members (kind 1): their
/// count and, unless the caller may see only the count, their ids packed into one binary
/// value of 16 bytes each. Members are the stored ones of a plain group, or the users of the rule's
/// department subtree of a smart one; only users of the group's account. Nothing at all
/// when the group is not in the account (`?2`). SQLite's; PostgreSQL reads groups with
/// [`GROUPS_WITH_MEMBERS`].
///
/// One aggregated row, not a row per member: a smart group has tens of thousands of
/// members, and every row costs the driver a hand-over between threads (SQLite) or a decode
/// (PostgreSQL) that together took several times what the database spent finding them.
///
/// Written out rather than built: this runs on every `GET /group/{id}`, and building it
/// with the query builder cost as much CPU as SQLite took to run it.
///
/// Integers are cast to `BIGINT` so that both backends answer the types [`db::reads::ReadRow`]
/// reads.
///
/// `CROSS JOIN` fixes SQLite's join order (group, then its members or its subtree, then
/// those users): left to choose, SQLite walks every user of the account through the
/// `(account_id, …)` indexes when it has no statistics.
///
/// SQLite stores a UUID as a 16-byte blob; `group_concat` appends each blob's bytes as they
/// are (embedded zero bytes included) and the cast gives them back as one blob, with no hex
/// text of twice the size built and decoded in between.
const GROUP_WITH_MEMBERS: &str = "\
    SELECT CAST(0 AS BIGINT) AS row_kind, g.name AS name, \
           CAST(CASE WHEN g.smart_department_id IS NULL THEN 0 ELSE 1 END AS BIGINT) AS is_smart, \
           NULL AS member_ids, NULL AS member_count \
      FROM groups g WHERE g.id = ?1 AND g.account_id = ?2 \
    UNION ALL \
    SELECT 1, NULL, NULL, MEMBER_IDS, COUNT(*) FROM ( \
      SELECT gm.user_id AS id FROM groups g CROSS JOIN group_members gm CROSS JOIN users u \
       WHERE g.id = ?1 AND g.account_id = ?2 AND g.smart_department_id IS NULL \
         AND gm.group_id = g.id AND u.id = gm.user_id AND u.account_id = g.account_id \
      UNION ALL \
      SELECT u.id FROM groups g CROSS JOIN department_closure c CROSS JOIN users u \
       WHERE g.id = ?1 AND g.account_id = ?2 \
         AND c.ancestor_id = g.smart_department_id \
         AND u.department_id = c.descendant_id AND u.account_id = g.account_id \
    ) m";

/// [`GROUP_WITH_MEMBERS`] for one grant, made once.
fn group_with_members(account_id: Uuid, group_id: Uuid, count_only: bool) -> Statement {
    static SQL: OnceLock<[String; 2]> = OnceLock::new();
    let sql = SQL.get_or_init(|| {
        [
            GROUP_WITH_MEMBERS.replace("MEMBER_IDS", "CAST(group_concat(m.id, '') AS BLOB)"),
            GROUP_WITH_MEMBERS.replace("MEMBER_IDS", "NULL"),
        ]
    });
    Statement::from_sql_and_values(
        DbBackend::Sqlite,
        sql[usize::from(count_only)].as_str(),
        [group_id.into(), account_id.into()],
    )
}

/// PostgreSQL's read of many groups at once ([`ReadConnections::query_batched`]): for each
/// item (group id, account id, whether its member ids are wanted) that names a group of
/// that account, one row with the columns of both of [`GROUP_WITH_MEMBERS`]'s kinds.
///
/// Every step is a lookup by key for one item, fenced by `OFFSET 0` inside `LATERAL`: the
/// generic plan (which every execution from the sixth on a connection gets) cannot know how
/// many items or members there are, and as a join it estimated half the users to match an
/// unknown `account_id` and hashed them all, a scan of `users` for a 2-member group.
/// `FILTER` skips packing the ids of a count-only caller.
const GROUPS_WITH_MEMBERS: BatchedStatement = BatchedStatement {
    sql: "\
    SELECT w.item, CAST(0 AS BIGINT) AS row_kind, g.name AS name, \
           CAST(CASE WHEN g.smart_department_id IS NULL THEN 0 ELSE 1 END AS BIGINT) AS is_smart, \
           m.member_ids, m.member_count \
      FROM unnest($1::uuid[], $2::uuid[], $3::boolean[]) \
           WITH ORDINALITY AS w(group_id, account_id, with_ids, item) \
      CROSS JOIN LATERAL (SELECT g.id, g.account_id, g.name, g.smart_department_id \
                            FROM groups g \
                           WHERE g.id = w.group_id AND g.account_id = w.account_id OFFSET 0) g \
      CROSS JOIN LATERAL ( \
        SELECT string_agg(uuid_send(x.id), ''::bytea) FILTER (WHERE w.with_ids) AS member_ids, \
               COUNT(*) AS member_count \
          FROM ( \
            SELECT gm.user_id AS id FROM group_members gm \
             CROSS JOIN LATERAL (SELECT 1 FROM users u \
                                  WHERE u.id = gm.user_id AND u.account_id = g.account_id \
                                 OFFSET 0) u \
             WHERE gm.group_id = g.id AND g.smart_department_id IS NULL \
            UNION ALL \
            SELECT u.id FROM department_closure c \
             CROSS JOIN LATERAL (SELECT u.id FROM users u \
                                  WHERE u.department_id = c.descendant_id \
                                    AND u.account_id = g.account_id OFFSET 0) u \
             WHERE c.ancestor_id = g.smart_department_id \
          ) x \
      ) m",
};

/// The ids of [`GROUP_WITH_MEMBERS`]'s `member_ids`: 16 bytes each, no separators.
fn unpack_member_ids(packed: &[u8]) -> ServiceResult<Vec<Uuid>> {
    let ids = packed.chunks_exact(16);
    if !ids.remainder().is_empty() {
        return Err(anyhow::anyhow!("member ids packed into {} bytes", packed.len()).into());
    }
    Ok(ids
        .map(|bytes| Uuid::from_bytes(bytes.try_into().expect("16 bytes")))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_ids_are_unpacked_sixteen_bytes_each() {
        let first = Uuid::from_u128(0x0192_0000_0005_7000_8000_0000_0000_00ab);
        let second = Uuid::from_u128(1);
        let packed = [first.as_bytes().as_slice(), second.as_bytes()].concat();
        assert_eq!(unpack_member_ids(&packed).unwrap(), [first, second]);
        assert!(unpack_member_ids(&[]).unwrap().is_empty());
        assert!(unpack_member_ids(&packed[..20]).is_err());
    }
}
