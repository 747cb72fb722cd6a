//! `/Groups` (provisioning.md section 10.5): the account's plain groups as Group resources.
//!
//! A create goes through `groups::create_group` and a delete through `groups::delete_group`;
//! `PUT` and `PATCH` change name, `externalId` and members in one [`write()`], with one audit
//! row per kind of change (`group.update`, `group.add_members`, `group.remove_members`,
//! `group.replace_members`). A member named by an id that is no visible user of the account is
//! ignored: identity providers send members removed meanwhile.

use std::collections::{BTreeSet, HashMap};

use sea_orm::{
    ActiveModelTrait as _, ColumnTrait as _, Condition, ConnectionTrait, DatabaseConnection,
    EntityTrait as _, PaginatorTrait as _, QueryFilter as _, QueryOrder as _, QuerySelect as _,
    Select, Set,
    prelude::{Expr, Uuid},
    sea_query::{ExprTrait as _, Func, SimpleExpr},
};
use serde_json::{Map, Value, json};

use super::{
    GROUP_SCHEMA, ListPage, ListQuery, Page, ScimError, ScimResult, View, body_object, external_id,
    filter, meta, optional_text,
    patch::{self, Op},
};
use crate::{
    access::Caller,
    domain::{
        ids::{IdList, ResourceRef, parse_uuid},
        names::GroupName,
    },
    entities::{group, group_member, user},
    error::{ServiceError, ServiceResult},
    service::{
        audit::{AuditAction, Change},
        groups::{self, NewGroup, insert_members, stored_members},
        write,
    },
};

/// What the operations work with.
pub struct ScimGroups<'a> {
    pub db: &'a DatabaseConnection,
    pub caller: &'a Caller,
    pub view: &'a View,
}

/// What a write sets: `members` only when given.
#[derive(Debug, Clone, Default)]
struct GroupState {
    display_name: Option<String>,
    external_id: Option<String>,
    members: Option<BTreeSet<String>>,
}

/// The members a PATCH changes: added, removed, or a whole new set.
#[derive(Debug, Clone, Default)]
struct MemberChanges {
    replaced: Option<BTreeSet<String>>,
    added: BTreeSet<String>,
    removed: BTreeSet<String>,
    remove_all: bool,
}

impl ScimGroups<'_> {
    pub async fn list(&self, query: &ListQuery) -> ScimResult<ListPage> {
        let page = Page::parse(query)?;
        let mut select = plain(self.caller.account_id);
        if let Some(raw) = query.filter.as_deref().filter(|raw| !raw.trim().is_empty()) {
            for comparison in filter::parse(raw)? {
                select = select.filter(condition(&comparison)?);
            }
        }
        let total_results = select.clone().count(self.db).await?;
        let rows = if page.count == 0 {
            Vec::new()
        } else {
            select
                .order_by_asc(group::Column::Id)
                .offset(page.offset())
                .limit(page.count)
                .all(self.db)
                .await?
        };
        Ok(ListPage {
            total_results,
            start_index: page.start_index,
            resources: self.resources(rows).await?,
        })
    }

    pub async fn get(&self, id: &str) -> ScimResult<(Value, String)> {
        let found = find_plain(self.db, self.caller.account_id, id).await?;
        self.resource(found).await
    }

    pub async fn create(&self, body: &str) -> ScimResult<(Value, String)> {
        let state = GroupState::from_body(&body_object(body)?)?;
        let name = display_name(&state)?;
        if let Some(taken) = name_taken(self.db, self.caller.account_id, &name, None).await? {
            return Err(taken);
        }
        let members = visible_users(
            self.db,
            self.caller.account_id,
            state
                .members
                .as_ref()
                .map_or(&BTreeSet::new(), |members| members),
        )
        .await?;
        let ids: Vec<String> = members.iter().map(Uuid::to_string).collect();
        let new = NewGroup {
            name: GroupName::parse(&name).map_err(ScimError::from)?,
            smart_department_id: None,
            user_ids: IdList::parse("members", &ids).map_err(ScimError::from)?,
            external_id: state.external_id,
        };
        let id = groups::create_group(self.db, self.caller, Ok(new)).await?;
        self.get(&id.to_string()).await
    }

    pub async fn replace(&self, id: &str, body: &str) -> ScimResult<(Value, String)> {
        let state = GroupState::from_body(&body_object(body)?)?;
        let name = display_name(&state)?;
        let members = MemberChanges {
            replaced: state.members,
            ..MemberChanges::default()
        };
        self.store(id, Some(name), Some(state.external_id), members)
            .await
    }

    pub async fn patch(&self, id: &str, body: &str) -> ScimResult<(Value, String)> {
        let operations = patch::parse(body)?;
        let mut name = None;
        let mut external = None;
        let mut members = MemberChanges::default();
        for operation in &operations {
            let value = operation.value.clone().unwrap_or(Value::Null);
            let remove = operation.op == Op::Remove;
            match operation.path.as_deref() {
                None => {
                    let Value::Object(object) = &value else {
                        return Err(ScimError::invalid_value(
                            "an operation without a path needs an object value",
                        ));
                    };
                    for (key, value) in object {
                        match super::strip_core_schema(&key.to_ascii_lowercase()) {
                            "displayname" => name = Some(text_value("displayName", value)?),
                            "externalid" => external = Some(external_id("externalId", value)?),
                            "members" => members.apply(operation.op, Some(value))?,
                            _ => {}
                        }
                    }
                }
                Some("displayname") if remove => {
                    return Err(ScimError::invalid_value("displayName cannot be removed"));
                }
                Some("displayname") => name = Some(text_value("displayName", &value)?),
                Some("externalid") => {
                    external = Some(if remove {
                        None
                    } else {
                        external_id("externalId", &value)?
                    });
                }
                Some("members") => members.apply(operation.op, operation.value.as_ref())?,
                Some(path) if path.starts_with("members[") => {
                    let member = member_filter(path)?;
                    match operation.op {
                        Op::Remove => {
                            members.added.remove(&member);
                            members.removed.insert(member);
                        }
                        _ => {
                            members.removed.remove(&member);
                            members.added.insert(member);
                        }
                    }
                }
                Some("id" | "meta") => {
                    return Err(ScimError::mutability("id and meta are read-only"));
                }
                Some(_) => {}
            }
        }
        self.store(id, name, external, members).await
    }

    pub async fn delete(&self, id: &str) -> ScimResult<()> {
        let found = find_plain(self.db, self.caller.account_id, id).await?;
        groups::delete_group(
            self.db,
            self.caller,
            &ResourceRef::parse(found.id.to_string()),
        )
        .await?;
        Ok(())
    }

    /// Changes the plain group `raw`: its name and `externalId` when given, its members as
    /// `members` says; all or nothing.
    async fn store(
        &self,
        raw: &str,
        name: Option<String>,
        external: Option<Option<String>>,
        members: MemberChanges,
    ) -> ScimResult<(Value, String)> {
        let found = find_plain(self.db, self.caller.account_id, raw).await?;
        if let Some(name) = &name {
            GroupName::parse(name).map_err(|mut invalid| {
                invalid.field = "displayName";
                ScimError::from(invalid)
            })?;
        }
        let account_id = self.caller.account_id;
        let named: BTreeSet<String> = members
            .replaced
            .iter()
            .flatten()
            .chain(&members.added)
            .chain(&members.removed)
            .cloned()
            .collect();
        let visible = visible_users(self.db, account_id, &named).await?;
        let ids = |raw: &BTreeSet<String>| -> BTreeSet<Uuid> {
            raw.iter()
                .filter_map(|raw| parse_uuid(raw))
                .filter(|id| visible.contains(id))
                .collect()
        };
        let id = found.id;
        let refused = write(self.db, self.caller, async |w| {
            let txn = w.txn();
            let current = group::Entity::find_by_id(id)
                .filter(group::Column::AccountId.eq(account_id))
                .one(txn)
                .await?
                .ok_or_else(|| ServiceError::not_found(format!("Group \"{raw}\" not found")))?;
            if let Some(name) = &name
                && let Some(taken) = name_taken(txn, account_id, name, Some(id)).await?
            {
                return Ok(Err(taken));
            }
            let mut next = current.clone();
            if let Some(name) = &name {
                next.name = name.trim().to_owned();
            }
            if let Some(external) = &external {
                next.external_id = external.clone();
            }
            if next != current {
                let mut updated: group::ActiveModel = current.clone().into();
                updated.name = Set(next.name.clone());
                updated.external_id = Set(next.external_id.clone());
                updated.updated_at = Set(Some(chrono::Utc::now()));
                updated.update(txn).await?;
                w.record(Change {
                    action: AuditAction::GroupUpdated,
                    entity_id: id,
                    before: Some(
                        json!({ "name": current.name, "externalId": current.external_id }),
                    ),
                    after: Some(json!({ "name": next.name, "externalId": next.external_id })),
                });
            }
            let before: BTreeSet<Uuid> = stored_members(txn, id).await?.into_iter().collect();
            let mut after = match &members.replaced {
                Some(replaced) => ids(replaced),
                None if members.remove_all => BTreeSet::new(),
                None => before.clone(),
            };
            after.extend(ids(&members.added));
            for removed in ids(&members.removed) {
                after.remove(&removed);
            }
            if after != before {
                change_members(
                    w,
                    id,
                    &before,
                    &after,
                    members.replaced.is_some() || members.remove_all,
                )
                .await?;
            }
            Ok(Ok(()))
        })
        .await?;
        refused?;
        self.get(&id.to_string()).await
    }

    async fn resource(&self, found: group::Model) -> ScimResult<(Value, String)> {
        let location = self.location(found.id);
        let resource = self.resources(vec![found]).await?.remove(0);
        Ok((resource, location))
    }

    fn location(&self, id: Uuid) -> String {
        format!("{}/Groups/{id}", self.view.location_base)
    }

    async fn resources(&self, rows: Vec<group::Model>) -> ScimResult<Vec<Value>> {
        let ids: Vec<Uuid> = rows.iter().map(|row| row.id).collect();
        let mut members = members_of(self.db, &ids).await?;
        Ok(rows
            .into_iter()
            .map(|row| {
                let resource = group_resource(
                    &row,
                    members.remove(&row.id).unwrap_or_default(),
                    &self.location(row.id),
                );
                self.view.project(resource)
            })
            .collect())
    }
}

/// Stores the members `after` in place of `before`, with the audit rows of the change: one
/// `group.replace_members` for a whole new set, else `group.add_members` and
/// `group.remove_members` for what each did.
async fn change_members(
    w: &crate::service::Write,
    id: Uuid,
    before: &BTreeSet<Uuid>,
    after: &BTreeSet<Uuid>,
    replacing: bool,
) -> ServiceResult<()> {
    let txn = w.txn();
    let added: Vec<Uuid> = after.difference(before).copied().collect();
    let removed: Vec<Uuid> = before.difference(after).copied().collect();
    for chunk in crate::db::bulk::in_chunks(&removed) {
        group_member::Entity::delete_many()
            .filter(group_member::Column::GroupId.eq(id))
            .filter(group_member::Column::UserId.is_in(chunk.iter().copied()))
            .exec(txn)
            .await?;
    }
    insert_members(txn, id, &added).await?;
    let change = |action, before: Value, after: Value| Change {
        action,
        entity_id: id,
        before: Some(before),
        after: Some(after),
    };
    if replacing {
        w.record(change(
            AuditAction::GroupMembersReplaced,
            json!({ "userIds": before }),
            json!({ "userIds": after }),
        ));
        return Ok(());
    }
    if !added.is_empty() {
        w.record(change(
            AuditAction::GroupMembersAdded,
            json!({ "userIds": [] }),
            json!({ "userIds": added }),
        ));
    }
    if !removed.is_empty() {
        w.record(change(
            AuditAction::GroupMembersRemoved,
            json!({ "userIds": removed }),
            json!({ "userIds": [] }),
        ));
    }
    Ok(())
}

impl MemberChanges {
    /// `add` adds the listed members, `replace` makes them the members, `remove` takes the
    /// listed ones out, or every member when no list is given.
    fn apply(&mut self, op: Op, value: Option<&Value>) -> ScimResult<()> {
        let listed = match value {
            None | Some(Value::Null) => None,
            Some(value) => Some(member_values(value)?),
        };
        match (op, listed) {
            (Op::Add, Some(listed)) => {
                for member in listed {
                    self.removed.remove(&member);
                    self.added.insert(member);
                }
            }
            (Op::Replace, listed) => {
                self.replaced = Some(listed.unwrap_or_default());
                self.added.clear();
                self.removed.clear();
                self.remove_all = false;
            }
            (Op::Remove, Some(listed)) => {
                for member in listed {
                    self.added.remove(&member);
                    self.removed.insert(member);
                }
            }
            (Op::Remove, None) => {
                self.replaced = None;
                self.added.clear();
                self.removed.clear();
                self.remove_all = true;
            }
            (Op::Add, None) => {}
        }
        Ok(())
    }
}

impl GroupState {
    fn from_body(body: &Map<String, Value>) -> ScimResult<Self> {
        let mut state = Self::default();
        for (key, value) in body {
            match super::strip_core_schema(&key.to_ascii_lowercase()) {
                "displayname" => state.display_name = optional_text("displayName", value)?,
                "externalid" => state.external_id = external_id("externalId", value)?,
                "members" => {
                    state.members = match value {
                        Value::Null => Some(BTreeSet::new()),
                        value => Some(member_values(value)?),
                    };
                }
                _ => {}
            }
        }
        Ok(state)
    }
}

/// The `value`s of a member list (`display`, `$ref` and `type` are ignored).
fn member_values(value: &Value) -> ScimResult<BTreeSet<String>> {
    let entries = match value {
        Value::Array(entries) => entries.as_slice(),
        Value::Object(_) => std::slice::from_ref(value),
        _ => return Err(ScimError::invalid_value("members must be a list")),
    };
    entries
        .iter()
        .map(|entry| {
            entry
                .as_object()
                .and_then(|entry| {
                    entry
                        .iter()
                        .find(|(key, _)| key.eq_ignore_ascii_case("value"))
                })
                .and_then(|(_, value)| value.as_str())
                .map(|value| value.trim().to_ascii_lowercase())
                .ok_or_else(|| ScimError::invalid_value("each member needs a value, a string"))
        })
        .collect()
}

/// The id of `members[value eq "<id>"]` (as [`patch::Operation::path`] holds it).
fn member_filter(path: &str) -> ScimResult<String> {
    path.strip_prefix("members[valueeq\"")
        .and_then(|rest| rest.strip_suffix("\"]"))
        .map(str::to_owned)
        .ok_or_else(|| {
            ScimError::invalid_path(format!(
                "{path}: only members[value eq \"<id>\"] selects a member"
            ))
        })
}

fn text_value(name: &str, value: &Value) -> ScimResult<String> {
    optional_text(name, value)?
        .ok_or_else(|| ScimError::invalid_value(format!("{name} is required")))
}

/// The `displayName` of a write: required, not blank, at most 255 characters.
fn display_name(state: &GroupState) -> ScimResult<String> {
    let name = state.display_name.as_deref().unwrap_or_default();
    if name.trim().is_empty() {
        return Err(ScimError::invalid_value("displayName is required"));
    }
    GroupName::parse(name).map_err(|mut invalid| {
        invalid.field = "displayName";
        ScimError::from(invalid)
    })?;
    Ok(name.trim().to_owned())
}

/// The plain groups of the account: smart groups are not SCIM's.
fn plain(account_id: Uuid) -> Select<group::Entity> {
    group::Entity::find()
        .filter(group::Column::AccountId.eq(account_id))
        .filter(group::Column::SmartDepartmentId.is_null())
}

fn condition(comparison: &filter::Comparison) -> ScimResult<SimpleExpr> {
    let value = comparison.value.as_str();
    Ok(match comparison.attribute.as_str() {
        "displayname" => lower_name().eq(value.to_lowercase()),
        "externalid" => group::Column::ExternalId.eq(value),
        "id" => match parse_uuid(value) {
            Some(id) => group::Column::Id.eq(id),
            None => Expr::value(false),
        },
        other => {
            return Err(ScimError::invalid_filter(format!(
                "Groups cannot be filtered by {other}; use displayName, externalId or id"
            )));
        }
    })
}

fn lower_name() -> Expr {
    Expr::expr(Func::lower(Expr::col(group::Column::Name)))
}

/// 409 `uniqueness` when another plain group of the account has `name` in any case.
async fn name_taken(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    name: &str,
    except: Option<Uuid>,
) -> ServiceResult<Option<ScimError>> {
    let mut query = plain(account_id)
        .select_only()
        .column(group::Column::Id)
        .filter(lower_name().eq(name.trim().to_lowercase()));
    if let Some(except) = except {
        query = query.filter(group::Column::Id.ne(except));
    }
    let owner: Option<Uuid> = query.into_tuple().one(conn).await?;
    Ok(owner.map(|_| {
        ScimError::uniqueness(format!(
            "displayName \"{}\" is already taken",
            crate::domain::ids::clip(name)
        ))
    }))
}

async fn find_plain(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    raw: &str,
) -> ScimResult<group::Model> {
    super::find_by_raw_id(conn, plain(account_id), group::Column::Id, raw, "Group").await
}

/// Those of `raw` ids that name users SCIM sees in the account.
async fn visible_users(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    raw: &BTreeSet<String>,
) -> ScimResult<BTreeSet<Uuid>> {
    let ids: Vec<Uuid> = raw.iter().filter_map(|raw| parse_uuid(raw)).collect();
    let mut found = BTreeSet::new();
    for chunk in crate::db::bulk::in_chunks(&ids) {
        let rows: Vec<Uuid> = user::Entity::find()
            .select_only()
            .column(user::Column::Id)
            .filter(user::Column::AccountId.eq(account_id))
            .filter(user::Column::ScimRemoved.eq(false))
            .filter(user::Column::Id.is_in(chunk.iter().copied()))
            .into_tuple()
            .all(conn)
            .await?;
        found.extend(rows);
    }
    Ok(found)
}

/// The visible members of each of `groups`: `(user id, userName)`, ascending.
async fn members_of(
    conn: &impl ConnectionTrait,
    groups: &[Uuid],
) -> ScimResult<HashMap<Uuid, Vec<(Uuid, String)>>> {
    let visible = Condition::all().add(user::Column::ScimRemoved.eq(false));
    let columns = (user::Column::Id, user::Column::Email);
    super::memberships::<user::Entity>(
        conn,
        groups,
        group_member::Column::GroupId,
        columns,
        visible,
    )
    .await
}

fn group_resource(row: &group::Model, members: Vec<(Uuid, String)>, location: &str) -> Value {
    let mut resource = Map::new();
    resource.insert("schemas".into(), json!([GROUP_SCHEMA]));
    resource.insert("id".into(), json!(row.id));
    resource.insert("displayName".into(), json!(row.name));
    if let Some(external_id) = row.external_id.as_ref().filter(|id| !id.is_empty()) {
        resource.insert("externalId".into(), json!(external_id));
    }
    let members: Vec<Value> = members
        .into_iter()
        .map(|(id, name)| json!({ "value": id, "display": name }))
        .collect();
    resource.insert("members".into(), Value::Array(members));
    // Groups older than SCIM hold the upgrade time and imported ones the import time; one an
    // earlier import left without them falls back to the epoch rather than failing the read.
    let epoch = chrono::DateTime::<chrono::Utc>::UNIX_EPOCH;
    let created = row.created_at.unwrap_or(epoch);
    resource.insert(
        "meta".into(),
        meta(
            "Group",
            created,
            row.updated_at.unwrap_or(created),
            location,
        ),
    );
    Value::Object(resource)
}
