//! Custom roles, users and their passwords.

use std::collections::BTreeSet;

use super::{
    AccountCheck, List, Place, Validator, given, label,
    plan::{CustomRoleRow, Password, UserRow},
    reference, references, refused, require,
};
use crate::{
    auth::password::validate_argon2id_phc,
    domain::{
        ids::clip,
        login::{Login, PlainPassword},
        roles::{Permission, Role},
        text::{MAX_NAME_CHARS, required_text},
    },
    import::{
        ImportError,
        document::{CustomRoleEntry, UserEntry},
    },
};

impl AccountCheck {
    pub(crate) fn custom_role(
        &mut self,
        validator: &mut Validator,
        i: usize,
        role: &CustomRoleEntry,
    ) -> Result<(), ImportError> {
        let entry = label(self.a, "customRoles", i, "id", &role.id);
        let id =
            validator.register_id(Place::new(self.a, List::CustomRoles, i), &entry, &role.id)?;
        let name = required_text("name", &role.name, MAX_NAME_CHARS).map_err(refused(&entry))?;
        let mut permissions = BTreeSet::new();
        for raw in &role.permissions {
            let permission = Permission::parse(raw).ok_or_else(|| {
                let all: Vec<&str> = Permission::ALL.iter().map(|p| p.as_str()).collect();
                ImportError::invalid(
                    &entry,
                    format!(
                        "permission \"{}\" is not one of {}",
                        clip(raw),
                        all.join(", ")
                    ),
                )
            })?;
            permissions.insert(permission);
        }
        self.known.custom_roles.insert(id);
        self.plan.custom_roles.push(CustomRoleRow {
            id,
            name,
            permissions,
        });
        Ok(())
    }

    pub(crate) fn user(
        &mut self,
        validator: &mut Validator,
        i: usize,
        user: &UserEntry,
    ) -> Result<(), ImportError> {
        let known = &mut self.known;
        let entry = label(self.a, "users", i, "email", &user.email);
        let id = validator.register_id(Place::new(self.a, List::Users, i), &entry, &user.id)?;
        let login = Login::parse(&user.email).map_err(refused(&entry))?;
        let key = login.key();
        let email = login.into_inner();
        if let Some(&first) = self.logins.get(&key) {
            let first = self.user_label(first as usize);
            return Err(ImportError::invalid(
                &entry,
                format!(
                    "login is used twice in this account (also by {first}; logins are compared regardless of case)"
                ),
            ));
        }
        self.logins.insert(key.clone(), i as u32);

        let role = Role::parse(&user.role).ok_or_else(|| {
            let all: Vec<&str> = Role::ALL.iter().map(|r| r.as_str()).collect();
            ImportError::invalid(
                &entry,
                format!(
                    "role \"{}\" is not one of {}",
                    clip(&user.role),
                    all.join(", ")
                ),
            )
        })?;
        let custom_role_id = match (role, given(user.custom_role_id.as_deref())) {
            (Role::Custom, None) => {
                return Err(ImportError::invalid(
                    &entry,
                    "role custom needs a customRoleId",
                ));
            }
            (Role::Custom, Some(raw)) => {
                let role_id = reference(&entry, "customRoleId", raw)?;
                require(
                    &entry,
                    "customRoleId",
                    role_id,
                    &known.custom_roles,
                    "custom role",
                )?;
                Some(role_id)
            }
            (_, None) => None,
            (_, Some(_)) => {
                return Err(ImportError::invalid(
                    &entry,
                    format!("customRoleId is only for role custom (this user's role is {role})"),
                ));
            }
        };
        let password = password(
            &entry,
            user.password.as_deref(),
            user.password_hash.as_deref(),
        )?;
        let department_id = reference(&entry, "departmentId", &user.department_id)?;
        require(
            &entry,
            "departmentId",
            department_id,
            &known.departments,
            "department",
        )?;
        let managed_department_ids = references(
            &entry,
            "managedDepartmentIds",
            &user.managed_department_ids,
            &known.departments,
            "department",
        )?;
        let external_id = user.external_id.clone().filter(|given| !given.is_empty());
        if let Some(external_id) = &external_id {
            if external_id.chars().count() > 255 {
                return Err(ImportError::invalid(
                    &entry,
                    "externalId must be at most 255 characters long",
                ));
            }
            if let Some(&first) = self.external_ids.get(external_id) {
                let first = self.user_label(first as usize);
                return Err(ImportError::invalid(
                    &entry,
                    format!("externalId is used twice in this account (also by {first})"),
                ));
            }
            self.external_ids.insert(external_id.clone(), i as u32);
        }
        let known = &mut self.known;
        known.users.insert(id);
        self.plan.users.push(UserRow {
            id,
            email,
            email_key: key,
            password,
            role,
            custom_role_id,
            department_id,
            managed_department_ids,
            active: user.active,
            external_id,
        });
        Ok(())
    }
}

/// Exactly one of a plain password (sendable in `X-Auth-Password`) and an argon2id hash.
fn password(entry: &str, plain: Option<&str>, hash: Option<&str>) -> Result<Password, ImportError> {
    match (plain, hash) {
        (Some(_), Some(_)) => Err(ImportError::invalid(
            entry,
            "give either password or passwordHash, not both",
        )),
        (None, None) => Err(ImportError::invalid(
            entry,
            "password or passwordHash is required",
        )),
        (Some(plain), None) => {
            let plain = PlainPassword::parse(plain).map_err(refused(entry))?;
            Ok(Password::Plain(plain.expose().to_owned()))
        }
        (None, Some(hash)) => {
            let hash = hash.trim();
            validate_argon2id_phc(hash).map_err(|_| {
                ImportError::invalid(
                    entry,
                    "passwordHash must be an argon2id PHC string ($argon2id$v=19$m=…)",
                )
            })?;
            Ok(Password::Hashed(hash.to_owned()))
        }
    }
}
