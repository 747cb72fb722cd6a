//! `/Users` (provisioning.md sections 10.1 to 10.4): the User resource of a `users` row, and
//! list, get, create, replace, patch and delete.
//!
//! A write reads the body into a [`UserState`] (the whole of what SCIM may set: `PUT` from the
//! body, `PATCH` from the current user with the operations applied), then stores it through
//! the user service inside one [`write()`]: the uniqueness checks (409 `uniqueness`), the
//! profile change (`users::apply_profile_changes`, the `user.update` row), the status
//! (`users::change_statuses`, `user.set_active`) and the password
//! (`users::set_password_hash`, `user.set_password`), all or nothing.

use std::collections::HashMap;

use sea_orm::{
    ActiveModelTrait as _, ColumnTrait as _, Condition, ConnectionTrait, DatabaseConnection,
    EntityTrait as _, PaginatorTrait as _, QueryFilter as _, QueryOrder as _, QuerySelect as _,
    Select, Set,
    prelude::{Expr, Uuid},
    sea_query::{ExprTrait as _, Func, SimpleExpr},
};
use serde_json::{Map, Value, json};

use super::{
    ENTERPRISE_SCHEMA, ListPage, ListQuery, Page, ScimError, ScimResult, USER_SCHEMA, View,
    body_object, external_id, filter, meta, optional_text,
    patch::{self, Op, Operation},
};
use crate::{
    access::Caller,
    auth::Verifier,
    domain::{
        Invalid,
        ids::{IdList, ResourceRef, parse_uuid},
        login::{EmailAddress, Login, PlainPassword, email_key},
        profile_fields::ProfileFields,
        roles::Role,
    },
    entities::{department, group, group_member, user},
    error::{ServiceError, ServiceResult},
    service::{
        audit::{AuditAction, Change},
        users::{
            self, Names, NewProfile, ProfileChanges, RoleChoice, UserStatus, apply_profile_changes,
            change_statuses, email_of, set_password_hash,
        },
        write,
    },
};

/// The profile field SCIM's `displayName` is.
const DISPLAY_NAME: &str = "DISPLAY_NAME";

/// What the operations work with.
pub struct ScimUsers<'a> {
    pub db: &'a DatabaseConnection,
    pub verifier: &'a Verifier,
    pub caller: &'a Caller,
    pub view: &'a View,
}

/// Everything SCIM sets on a user. `PUT` clears what its body leaves out, but `active`,
/// `password` and the department change only when given.
#[derive(Debug, Clone, Default, PartialEq)]
struct UserState {
    user_name: Option<String>,
    external_id: Option<String>,
    given_name: Option<String>,
    family_name: Option<String>,
    display_name: Option<String>,
    /// The e-mail address; `None`: the login is the address.
    email: Option<String>,
    active: Option<bool>,
    password: Option<String>,
    /// `Some(None)`: the root department.
    department: Option<Option<String>>,
}

impl ScimUsers<'_> {
    pub async fn list(&self, query: &ListQuery) -> ScimResult<ListPage> {
        let page = Page::parse(query)?;
        let mut select = visible(self.caller.account_id);
        let filter = query.filter.as_deref().filter(|raw| !raw.trim().is_empty());
        if let Some(raw) = filter {
            for comparison in filter::parse(raw)? {
                select = select.filter(condition(&comparison)?);
            }
        } else {
            select = select.order_by_asc(user::Column::Id);
        }
        // Every filterable attribute is a unique key: a filtered list holds one user at most,
        // found by its index, and sorting it would only add a sort to the plan.
        let total_results = select.clone().count(self.db).await?;
        let rows = if page.count == 0 {
            Vec::new()
        } else {
            select
                .offset(page.offset())
                .limit(page.count)
                .all(self.db)
                .await?
        };
        Ok(ListPage {
            total_results,
            start_index: page.start_index,
            resources: self.resources(self.db, rows).await?,
        })
    }

    pub async fn get(&self, id: &str) -> ScimResult<(Value, String)> {
        let found = find_visible(self.db, self.caller.account_id, id).await?;
        self.resource(self.db, found).await
    }

    /// `POST /Users`: a new learner, or the user SCIM removed under that `userName` brought
    /// back (`reprovisioned` then says so).
    pub async fn create(&self, body: &str) -> ScimResult<(Value, String)> {
        let state = UserState::from_body(&body_object(body)?)?;
        let login = user_name(&state)?;
        let removed = users::login_owner(self.db, self.caller.account_id, &login.key()).await?;
        if let Some(existing) = removed {
            let found = users_row(self.db, self.caller.account_id, existing).await?;
            if !found.is_some_and(|found| found.scim_removed) {
                return Err(ScimError::uniqueness(format!(
                    "userName \"{}\" is already taken",
                    crate::domain::ids::clip(login.as_str())
                )));
            }
            let state = UserState {
                active: Some(state.active.unwrap_or(true)),
                ..state
            };
            return self.store(existing, state, Store::Reprovision).await;
        }
        let password = state.parsed_password()?;
        let email = state.parsed_email()?;
        if let Some(taken) = self
            .external_id_owner(self.db, &state.external_id, None)
            .await?
        {
            return Err(taken);
        }
        let department_id =
            department_for(self.db, self.caller.account_id, state.department.flatten()).await?;
        let new = NewProfile {
            login,
            names: Names {
                first: state.given_name.clone().unwrap_or_default(),
                last: state.family_name.clone().unwrap_or_default(),
            },
            email,
            fields: display_name_field(state.display_name.as_deref())?,
            group_ids: IdList::default(),
            password,
            role: RoleChoice {
                role: Role::Learner,
                custom_role_id: None,
            },
            department_id,
            managed_department_ids: IdList::default(),
            active: state.active.unwrap_or(true),
            external_id: state.external_id.clone(),
        };
        let id = users::add_user(self.db, self.verifier, self.caller, Ok(new))
            .await
            .map_err(|err| match err {
                // Login, address and externalId are the only unique keys a new user meets.
                ServiceError::Conflict(detail) => ScimError::uniqueness(detail),
                other => other.into(),
            })?;
        self.get(&id.to_string()).await
    }

    /// `PUT /Users/{id}`.
    pub async fn replace(&self, id: &str, body: &str) -> ScimResult<(Value, String)> {
        let state = UserState::from_body(&body_object(body)?)?;
        let found = find_visible(self.db, self.caller.account_id, id).await?;
        self.store(found.id, state, Store::Replace).await
    }

    /// `PATCH /Users/{id}`.
    pub async fn patch(&self, id: &str, body: &str) -> ScimResult<(Value, String)> {
        let operations = patch::parse(body)?;
        let found = find_visible(self.db, self.caller.account_id, id).await?;
        let mut state = self.current_state(&found).await?;
        for operation in &operations {
            state.apply(operation)?;
        }
        self.store(found.id, state, Store::Replace).await
    }

    /// `DELETE /Users/{id}`: status 3 (5 stays), out of every plain group, without its
    /// `externalId`, hidden from SCIM; REST still reads it.
    pub async fn delete(&self, id: &str) -> ScimResult<()> {
        let found = find_visible(self.db, self.caller.account_id, id).await?;
        let caller = self.caller;
        write(self.db, caller, async |w| {
            let txn = w.txn();
            let current = users_row(txn, caller.account_id, found.id)
                .await?
                .filter(|current| !current.scim_removed)
                .ok_or_else(|| ServiceError::not_found(format!("User \"{id}\" not found")))?;
            if UserStatus::of(&current) == UserStatus::Active {
                change_statuses(
                    w,
                    caller.account_id,
                    std::slice::from_ref(&current),
                    UserStatus::Blocked,
                )
                .await?;
            }
            let groups: Vec<Uuid> = group_member::Entity::find()
                .select_only()
                .column(group_member::Column::GroupId)
                .filter(group_member::Column::UserId.eq(current.id))
                .into_tuple()
                .all(txn)
                .await?;
            group_member::Entity::delete_many()
                .filter(group_member::Column::UserId.eq(current.id))
                .exec(txn)
                .await?;
            let mut removed: user::ActiveModel = current.clone().into();
            removed.external_id = Set(None);
            removed.scim_removed = Set(true);
            removed.updated_at = Set(chrono::Utc::now());
            removed.update(txn).await?;
            w.record(Change {
                action: AuditAction::UserDeprovisioned,
                entity_id: current.id,
                before: Some(json!({ "externalId": current.external_id, "groupIds": groups })),
                after: Some(json!({ "externalId": null, "groupIds": [] })),
            });
            Ok(())
        })
        .await?;
        Ok(())
    }

    /// Stores `state` on the user `id`, all or nothing; the resource after.
    async fn store(&self, id: Uuid, state: UserState, how: Store) -> ScimResult<(Value, String)> {
        let login = user_name(&state)?;
        let email = state.parsed_email()?;
        let fields = display_name_field(Some(state.display_name.as_deref().unwrap_or_default()))?;
        let password_hash = match state.parsed_password()? {
            Some(password) => Some(self.verifier.hash(password.expose()).await?),
            None => None,
        };
        let department_id = match &state.department {
            Some(department) => {
                Some(department_for(self.db, self.caller.account_id, department.clone()).await?)
            }
            None => None,
        };
        // No address given: the login is the address (when it is one; otherwise the address
        // stays as it is).
        let email = email.or_else(|| EmailAddress::parse(login.as_str()).ok());
        let changes = ProfileChanges {
            login: Some(login.clone()),
            email: email.clone(),
            fields,
            first_name: Some(state.given_name.clone().unwrap_or_default()),
            last_name: Some(state.family_name.clone().unwrap_or_default()),
            department_id,
            external_id: Some(state.external_id.clone()),
            ..ProfileChanges::default()
        };
        let caller = self.caller;
        let user = ResourceRef::parse(id.to_string());
        let refused = write(self.db, caller, async |w| {
            let txn = w.txn();
            let Some(current) = users_row(txn, caller.account_id, id).await? else {
                return Err(user.not_found("User").into());
            };
            if current.scim_removed != (how == Store::Reprovision) {
                return Err(user.not_found("User").into());
            }
            // Checked here, in the transaction, so a taken value is 409 `uniqueness`
            // rather than the profile change's 400.
            if let Some(taken) = taken(txn, caller.account_id, id, &login, email.as_ref()).await? {
                return Ok(Err(taken));
            }
            if let Some(taken) = self
                .external_id_owner(txn, &state.external_id, Some(id))
                .await?
            {
                return Ok(Err(taken));
            }
            if how == Store::Reprovision {
                let mut back: user::ActiveModel = current.clone().into();
                back.scim_removed = Set(false);
                back.update(txn).await?;
                w.record(Change {
                    action: AuditAction::UserReprovisioned,
                    entity_id: id,
                    before: Some(json!({ "scimRemoved": true })),
                    after: Some(json!({ "scimRemoved": false })),
                });
            }
            apply_profile_changes(w, caller, &user, &changes).await?;
            let stored = |txn| users_row(txn, caller.account_id, id);
            if let Some(active) = state.active {
                let current = stored(txn).await?.ok_or_else(|| user.not_found("User"))?;
                let now = UserStatus::of(&current);
                let wanted = match (active, now) {
                    (true, _) => UserStatus::Active,
                    (false, UserStatus::Active) => UserStatus::Blocked,
                    (false, other) => other,
                };
                if wanted != now {
                    change_statuses(w, caller.account_id, &[current], wanted).await?;
                }
            }
            if let Some(hash) = password_hash {
                let current = stored(txn).await?.ok_or_else(|| user.not_found("User"))?;
                set_password_hash(w, current, hash).await?;
            }
            Ok(Ok(()))
        })
        .await?;
        refused?;
        let found = users_row(self.db, self.caller.account_id, id)
            .await?
            .ok_or_else(|| ScimError::not_found("User", &id.to_string()))?;
        self.resource(self.db, found).await
    }

    /// 409 `uniqueness` when `external_id` is another user's.
    async fn external_id_owner(
        &self,
        conn: &impl ConnectionTrait,
        external_id: &Option<String>,
        except: Option<Uuid>,
    ) -> ServiceResult<Option<ScimError>> {
        let Some(external_id) = external_id else {
            return Ok(None);
        };
        let mut query = user::Entity::find()
            .select_only()
            .column(user::Column::Id)
            .filter(user::Column::AccountId.eq(self.caller.account_id))
            .filter(user::Column::ExternalId.eq(external_id.as_str()));
        if let Some(except) = except {
            query = query.filter(user::Column::Id.ne(except));
        }
        let owner: Option<Uuid> = query.into_tuple().one(conn).await?;
        Ok(owner.map(|_| {
            ScimError::uniqueness(format!(
                "externalId \"{}\" is already taken",
                crate::domain::ids::clip(external_id)
            ))
        }))
    }

    /// What `PATCH` starts from: the user as SCIM shows it.
    async fn current_state(&self, found: &user::Model) -> ScimResult<UserState> {
        let display_name = display_names(self.db, &[found.id]).await?.remove(&found.id);
        let email = email_of(found);
        Ok(UserState {
            user_name: Some(found.email.clone()),
            external_id: found.external_id.clone(),
            given_name: Some(found.first_name.clone()).filter(|name| !name.is_empty()),
            family_name: Some(found.last_name.clone()).filter(|name| !name.is_empty()),
            display_name,
            email: Some(email.to_owned()).filter(|email| !email.is_empty()),
            active: None,
            password: None,
            department: None,
        })
    }

    async fn resource(
        &self,
        conn: &impl ConnectionTrait,
        found: user::Model,
    ) -> ScimResult<(Value, String)> {
        let location = self.location(found.id);
        let resource = self.resources(conn, vec![found]).await?.remove(0);
        Ok((resource, location))
    }

    fn location(&self, id: Uuid) -> String {
        format!("{}/Users/{id}", self.view.location_base)
    }

    /// The resources of `rows`, in their order, each projected as the view asks.
    async fn resources(
        &self,
        conn: &impl ConnectionTrait,
        rows: Vec<user::Model>,
    ) -> ScimResult<Vec<Value>> {
        let ids: Vec<Uuid> = rows.iter().map(|row| row.id).collect();
        let mut display = display_names(conn, &ids).await?;
        let mut groups = groups_of(conn, &ids).await?;
        let departments = department_names(conn, &rows).await?;
        Ok(rows
            .into_iter()
            .map(|row| {
                let resource = user_resource(
                    &row,
                    display.remove(&row.id),
                    groups.remove(&row.id).unwrap_or_default(),
                    departments.get(&row.department_id).cloned(),
                    &self.location(row.id),
                );
                self.view.project(resource)
            })
            .collect())
    }
}

/// How [`ScimUsers::store`] treats the user: one SCIM sees, or one SCIM removed and a `POST`
/// brings back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Store {
    Replace,
    Reprovision,
}

/// The users SCIM sees: the account's, but for those its own `DELETE` removed.
fn visible(account_id: Uuid) -> Select<user::Entity> {
    user::Entity::find()
        .filter(user::Column::AccountId.eq(account_id))
        .filter(user::Column::ScimRemoved.eq(false))
}

/// The condition of one filter comparison, each one index lookup (provisioning.md
/// section 15): `(account_id, email_key)`, `(account_id, external_id)`, the primary key, and
/// the address index on `COALESCE(contact_email_key, email_key)`.
fn condition(comparison: &filter::Comparison) -> ScimResult<SimpleExpr> {
    let value = comparison.value.as_str();
    Ok(match comparison.attribute.as_str() {
        "username" => user::Column::EmailKey.eq(email_key(value)),
        "externalid" => user::Column::ExternalId.eq(value),
        "id" => match parse_uuid(value) {
            Some(id) => user::Column::Id.eq(id),
            // A malformed id names nobody.
            None => Expr::value(false),
        },
        "emails.value" | filter::WORK_EMAIL => {
            let address = Func::coalesce([
                Expr::col(user::Column::ContactEmailKey),
                Expr::col(user::Column::EmailKey),
            ]);
            let key = email_key(value);
            if key.is_empty() {
                Expr::value(false)
            } else {
                // The index is partial (`<> ''`): stated, the planners may use it whatever
                // the bound value, where `= ?` alone lets SQLite read the account whole.
                Expr::expr(address.clone())
                    .eq(key)
                    .and(Expr::expr(address).ne(""))
            }
        }
        other => {
            return Err(ScimError::invalid_filter(format!(
                "Users cannot be filtered by {other}; use userName, externalId, id or emails.value"
            )));
        }
    })
}

/// The visible user `raw` names, or 404.
async fn find_visible(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    raw: &str,
) -> ScimResult<user::Model> {
    super::find_by_raw_id(conn, visible(account_id), user::Column::Id, raw, "User").await
}

async fn users_row(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    id: Uuid,
) -> Result<Option<user::Model>, sea_orm::DbErr> {
    user::Entity::find_by_id(id)
        .filter(user::Column::AccountId.eq(account_id))
        .one(conn)
        .await
}

/// 409 `uniqueness` when `login` or `email` is another user's.
async fn taken(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    id: Uuid,
    login: &Login,
    email: Option<&EmailAddress>,
) -> ServiceResult<Option<ScimError>> {
    let owner = users::login_owner(conn, account_id, &login.key()).await?;
    if owner.is_some_and(|owner| owner != id) {
        return Ok(Some(ScimError::uniqueness(format!(
            "userName \"{}\" is already taken",
            crate::domain::ids::clip(login.as_str())
        ))));
    }
    let address = email.map_or(login.as_str(), EmailAddress::as_str);
    if users::address_taken(conn, account_id, address, Some(id))
        .await?
        .is_some()
    {
        return Ok(Some(ScimError::uniqueness(format!(
            "the e-mail address \"{}\" is already taken",
            crate::domain::ids::clip(address)
        ))));
    }
    Ok(None)
}

/// The `userName` of a write: required, 1 to 255 visible ASCII characters.
fn user_name(state: &UserState) -> ScimResult<Login> {
    let raw = state.user_name.as_deref().unwrap_or_default();
    if raw.trim().is_empty() {
        return Err(ScimError::invalid_value("userName is required"));
    }
    Login::parse_name(raw).map_err(|invalid| renamed(invalid, "userName"))
}

/// `invalid` naming the SCIM attribute rather than the profile's field.
fn renamed(mut invalid: Invalid, attribute: &'static str) -> ScimError {
    invalid.field = attribute;
    ScimError::invalid_value(invalid.to_string())
}

/// The `DISPLAY_NAME` profile field to set (empty removes it).
fn display_name_field(display_name: Option<&str>) -> ScimResult<ProfileFields> {
    match display_name {
        None => Ok(ProfileFields::default()),
        Some(name) => ProfileFields::parse([(DISPLAY_NAME, name)])
            .map_err(|invalid| renamed(invalid, "displayName")),
    }
}

/// The department `raw` names: the account's whose `code` equals it, else whose name equals
/// it in any case, the lowest id winning a tie; none (or nothing given): the root.
async fn department_for(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    raw: Option<String>,
) -> ScimResult<Uuid> {
    let in_account = || {
        department::Entity::find()
            .select_only()
            .column(department::Column::Id)
            .filter(department::Column::AccountId.eq(account_id))
            .order_by_asc(department::Column::Id)
    };
    if let Some(raw) = raw.filter(|raw| !raw.trim().is_empty()) {
        let by_code: Option<Uuid> = in_account()
            .filter(department::Column::Code.eq(raw.as_str()))
            .into_tuple()
            .one(conn)
            .await?;
        if let Some(id) = by_code {
            return Ok(id);
        }
        let by_name: Option<Uuid> = in_account()
            .filter(
                Expr::expr(Func::lower(Expr::col(department::Column::Name))).eq(raw.to_lowercase()),
            )
            .into_tuple()
            .one(conn)
            .await?;
        if let Some(id) = by_name {
            return Ok(id);
        }
    }
    // An account has one root, so no order: ordered by id, SQLite sorted the roots it found.
    let root: Option<Uuid> = department::Entity::find()
        .select_only()
        .column(department::Column::Id)
        .filter(department::Column::AccountId.eq(account_id))
        .filter(department::Column::ParentId.is_null())
        .into_tuple()
        .one(conn)
        .await?;
    root.ok_or_else(|| {
        ScimError::Service(anyhow::anyhow!("account {account_id} has no root department").into())
    })
}

/// `DISPLAY_NAME` of each of `users` that has one.
async fn display_names(
    conn: &impl ConnectionTrait,
    users: &[Uuid],
) -> ScimResult<HashMap<Uuid, String>> {
    Ok(users::fields_of(conn, users)
        .await?
        .into_iter()
        .filter_map(|(user, fields)| {
            fields
                .into_iter()
                .find(|field| field.name == DISPLAY_NAME)
                .map(|field| (user, field.value))
        })
        .collect())
}

/// The plain groups of each of `users`: `(id, name)`, ascending id.
async fn groups_of(
    conn: &impl ConnectionTrait,
    users: &[Uuid],
) -> ScimResult<HashMap<Uuid, Vec<(Uuid, String)>>> {
    let plain = Condition::all().add(group::Column::SmartDepartmentId.is_null());
    let columns = (group::Column::Id, group::Column::Name);
    super::memberships::<group::Entity>(conn, users, group_member::Column::UserId, columns, plain)
        .await
}

/// The names of the departments of `rows`.
async fn department_names(
    conn: &impl ConnectionTrait,
    rows: &[user::Model],
) -> ScimResult<HashMap<Uuid, String>> {
    let mut ids: Vec<Uuid> = rows.iter().map(|row| row.department_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut names = HashMap::new();
    for chunk in crate::db::bulk::in_chunks(&ids) {
        let found: Vec<(Uuid, String)> = department::Entity::find()
            .select_only()
            .columns([department::Column::Id, department::Column::Name])
            .filter(department::Column::Id.is_in(chunk.iter().copied()))
            .into_tuple()
            .all(conn)
            .await?;
        names.extend(found);
    }
    Ok(names)
}

/// The User resource of a row (section 10.1).
fn user_resource(
    row: &user::Model,
    display_name: Option<String>,
    groups: Vec<(Uuid, String)>,
    department: Option<String>,
    location: &str,
) -> Value {
    let mut resource = Map::new();
    resource.insert("schemas".into(), json!([USER_SCHEMA, ENTERPRISE_SCHEMA]));
    resource.insert("id".into(), json!(row.id));
    resource.insert("userName".into(), json!(row.email));
    if let Some(external_id) = &row.external_id {
        resource.insert("externalId".into(), json!(external_id));
    }
    let mut name = Map::new();
    if !row.first_name.is_empty() {
        name.insert("givenName".into(), json!(row.first_name));
    }
    if !row.last_name.is_empty() {
        name.insert("familyName".into(), json!(row.last_name));
    }
    if !name.is_empty() {
        resource.insert("name".into(), Value::Object(name));
    }
    if let Some(display_name) = display_name.filter(|name| !name.is_empty()) {
        resource.insert("displayName".into(), json!(display_name));
    }
    let email = email_of(row);
    if !email.is_empty() {
        resource.insert(
            "emails".into(),
            json!([{ "value": email, "type": "work", "primary": true }]),
        );
    }
    resource.insert("active".into(), json!(row.active));
    let groups: Vec<Value> = groups
        .into_iter()
        .map(|(id, name)| json!({ "value": id, "display": name }))
        .collect();
    resource.insert("groups".into(), Value::Array(groups));
    resource.insert(
        ENTERPRISE_SCHEMA.into(),
        json!({ "department": department.unwrap_or_default() }),
    );
    resource.insert(
        "meta".into(),
        meta("User", row.created_at, row.updated_at, location),
    );
    Value::Object(resource)
}

impl UserState {
    /// The attributes of a `POST` or `PUT` body; read-only attributes and attributes of no
    /// row of section 10.1 are ignored.
    fn from_body(body: &Map<String, Value>) -> ScimResult<Self> {
        let mut state = Self::default();
        for (key, value) in body {
            let key = super::strip_core_schema(&key.to_ascii_lowercase()).to_owned();
            // Read-only attributes are sent back as they were read: ignored here.
            if matches!(key.as_str(), "id" | "meta" | "groups" | "schemas") {
                continue;
            }
            state.set(Op::Replace, &key, value)?;
        }
        Ok(state)
    }

    /// Applies one PATCH operation.
    fn apply(&mut self, operation: &Operation) -> ScimResult<()> {
        let value = operation.value.clone().unwrap_or(Value::Null);
        match (&operation.path, operation.op) {
            (Some(path), Op::Remove) => self.set(Op::Remove, path, &Value::Null),
            (Some(path), op) => self.set(op, path, &value),
            (None, op) => {
                let Value::Object(object) = &value else {
                    return Err(ScimError::invalid_value(
                        "an operation without a path needs an object value",
                    ));
                };
                for (key, value) in object {
                    let key = super::strip_core_schema(&key.to_ascii_lowercase()).to_owned();
                    self.set(op, &key, value)?;
                }
                Ok(())
            }
        }
    }

    /// Sets (or, for `remove`, clears) the attribute at `path` (lower-case).
    fn set(&mut self, op: Op, path: &str, value: &Value) -> ScimResult<()> {
        let remove = op == Op::Remove;
        let enterprise = ENTERPRISE_SCHEMA.to_ascii_lowercase();
        if path == enterprise {
            if let Value::Object(extension) = value {
                for (key, value) in extension {
                    let path = format!("{enterprise}:{}", key.to_ascii_lowercase());
                    self.set(op, &path, value)?;
                }
            } else if remove {
                self.department = Some(None);
            }
            return Ok(());
        }
        if let Some(attribute) = path.strip_prefix(&format!("{enterprise}:")) {
            if attribute == "department" {
                self.department = Some(if remove {
                    None
                } else {
                    optional_text("department", value)?
                });
            }
            return Ok(());
        }
        match path {
            "username" if remove => {
                return Err(ScimError::mutability("userName cannot be removed"));
            }
            "username" => {
                self.user_name = Some(
                    optional_text("userName", value)?
                        .ok_or_else(|| ScimError::invalid_value("userName is required"))?,
                );
            }
            "active" if remove => return Err(ScimError::mutability("active cannot be removed")),
            "active" => self.active = Some(boolean("active", value)?),
            "externalid" => {
                self.external_id = if remove {
                    None
                } else {
                    external_id("externalId", value)?
                };
            }
            "displayname" => {
                self.display_name = if remove {
                    None
                } else {
                    optional_text("displayName", value)?
                };
            }
            "password" if remove => {}
            "password" => {
                self.password = Some(
                    optional_text("password", value)?
                        .ok_or_else(|| ScimError::invalid_value("password must be a string"))?,
                );
            }
            "name" => self.set_name(op, value)?,
            "name.givenname" => {
                self.given_name = if remove {
                    None
                } else {
                    optional_text("name.givenName", value)?
                };
            }
            "name.familyname" => {
                self.family_name = if remove {
                    None
                } else {
                    optional_text("name.familyName", value)?
                };
            }
            "emails" => self.email = if remove { None } else { chosen_email(value)? },
            filter::WORK_EMAIL | "emails.value" => {
                self.email = if remove {
                    None
                } else {
                    optional_text("emails.value", value)?
                };
            }
            "id" | "meta" | "groups" => {
                return Err(ScimError::mutability(format!("{path} is read-only")));
            }
            other
                if other.starts_with("meta.")
                    || other.starts_with("groups[")
                    || other.starts_with("groups.") =>
            {
                return Err(ScimError::mutability(format!("{other} is read-only")));
            }
            // Read-only attributes in a POST or PUT body, and attributes with no place here.
            _ => {}
        }
        Ok(())
    }

    fn set_name(&mut self, op: Op, value: &Value) -> ScimResult<()> {
        if op == Op::Remove {
            self.given_name = None;
            self.family_name = None;
            return Ok(());
        }
        let Value::Object(name) = value else {
            if value.is_null() {
                self.given_name = None;
                self.family_name = None;
                return Ok(());
            }
            return Err(ScimError::invalid_value("name must be an object"));
        };
        if op == Op::Replace {
            self.given_name = None;
            self.family_name = None;
        }
        for (key, value) in name {
            match key.to_ascii_lowercase().as_str() {
                "givenname" => self.given_name = optional_text("name.givenName", value)?,
                "familyname" => self.family_name = optional_text("name.familyName", value)?,
                _ => {}
            }
        }
        Ok(())
    }

    fn parsed_password(&self) -> ScimResult<Option<PlainPassword>> {
        self.password
            .as_deref()
            .map(|raw| PlainPassword::parse(raw).map_err(|invalid| renamed(invalid, "password")))
            .transpose()
    }

    fn parsed_email(&self) -> ScimResult<Option<EmailAddress>> {
        self.email
            .as_deref()
            .filter(|raw| !raw.trim().is_empty())
            .map(|raw| EmailAddress::parse(raw).map_err(|invalid| renamed(invalid, "emails")))
            .transpose()
    }
}

/// `true`/`false`, or those words as strings in any case (Entra sends `"False"`).
fn boolean(name: &str, value: &Value) -> ScimResult<bool> {
    match value {
        Value::Bool(flag) => Ok(*flag),
        Value::String(text) if text.eq_ignore_ascii_case("true") => Ok(true),
        Value::String(text) if text.eq_ignore_ascii_case("false") => Ok(false),
        _ => Err(ScimError::invalid_value(format!(
            "{name} must be true or false"
        ))),
    }
}

/// The address an `emails` list gives: the entry with `primary: true`, else with `type`
/// `work`, else the first; an empty list (or none): `None`.
fn chosen_email(value: &Value) -> ScimResult<Option<String>> {
    let entries = match value {
        Value::Null => return Ok(None),
        Value::Array(entries) => entries.as_slice(),
        Value::Object(_) => std::slice::from_ref(value),
        _ => return Err(ScimError::invalid_value("emails must be a list")),
    };
    let is = |entry: &Value, key: &str, wanted: &Value| {
        entry
            .as_object()
            .and_then(|entry| {
                entry
                    .iter()
                    .find(|(name, _)| name.eq_ignore_ascii_case(key))
            })
            .is_some_and(|(_, value)| {
                value == wanted
                    || value
                        .as_str()
                        .zip(wanted.as_str())
                        .is_some_and(|(a, b)| a.eq_ignore_ascii_case(b))
            })
    };
    let chosen = entries
        .iter()
        .find(|entry| is(entry, "primary", &json!(true)))
        .or_else(|| {
            entries
                .iter()
                .find(|entry| is(entry, "type", &json!("work")))
        })
        .or_else(|| entries.first());
    let Some(chosen) = chosen else {
        return Ok(None);
    };
    let value = chosen
        .as_object()
        .and_then(|entry| {
            entry
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case("value"))
        })
        .map(|(_, value)| value);
    match value {
        Some(value) => optional_text("emails.value", value),
        None => Err(ScimError::invalid_value("emails entries need a value")),
    }
}
