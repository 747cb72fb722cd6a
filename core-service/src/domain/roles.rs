//! Built-in roles and the permissions a custom role can carry (contract section 3).
//!
//! Both are stored by name: [`Role`] is the type of `users.role` (the database refuses
//! other names, migration 6), [`Permission`] of `custom_role_permissions.permission`.

use std::fmt;

use sea_orm::{DeriveActiveEnum, EnumIter, sea_query::StringLen};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::N(64))")]
pub enum Role {
    #[sea_orm(string_value = "account_owner")]
    AccountOwner,
    #[sea_orm(string_value = "account_administrator")]
    AccountAdministrator,
    #[sea_orm(string_value = "department_administrator")]
    DepartmentAdministrator,
    #[sea_orm(string_value = "publisher")]
    Publisher,
    #[sea_orm(string_value = "author")]
    Author,
    #[sea_orm(string_value = "learner")]
    Learner,
    #[sea_orm(string_value = "custom")]
    Custom,
}

impl Role {
    pub const ALL: [Role; 7] = [
        Role::AccountOwner,
        Role::AccountAdministrator,
        Role::DepartmentAdministrator,
        Role::Publisher,
        Role::Author,
        Role::Learner,
        Role::Custom,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::AccountOwner => "account_owner",
            Role::AccountAdministrator => "account_administrator",
            Role::DepartmentAdministrator => "department_administrator",
            Role::Publisher => "publisher",
            Role::Author => "author",
            Role::Learner => "learner",
            Role::Custom => "custom",
        }
    }

    pub fn parse(raw: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|role| role.as_str() == raw)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// By name, as the audit record shows it.
impl serde::Serialize for Role {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Permission {
    DepartmentCreate,
    DepartmentUpdate,
    DepartmentRead,
    DepartmentDelete,
    GroupRead,
    GroupUpdate,
    EnrollmentDelete,
    ContentRead,
    PointsRead,
    EnrollmentRead,
    EnrollmentCreate,
    GroupCreate,
    GroupDelete,
    GroupMembers,
    PointsAward,
    UserRead,
    UserCreate,
    UserUpdate,
    UserDelete,
    ResultsRead,
    ResultsWrite,
}

impl Permission {
    pub const ALL: [Permission; 21] = [
        Permission::DepartmentCreate,
        Permission::DepartmentUpdate,
        Permission::DepartmentRead,
        Permission::DepartmentDelete,
        Permission::GroupRead,
        Permission::GroupUpdate,
        Permission::EnrollmentDelete,
        Permission::ContentRead,
        Permission::PointsRead,
        Permission::EnrollmentRead,
        Permission::EnrollmentCreate,
        Permission::GroupCreate,
        Permission::GroupDelete,
        Permission::GroupMembers,
        Permission::PointsAward,
        Permission::UserRead,
        Permission::UserCreate,
        Permission::UserUpdate,
        Permission::UserDelete,
        Permission::ResultsRead,
        Permission::ResultsWrite,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Permission::DepartmentCreate => "department.create",
            Permission::DepartmentUpdate => "department.update",
            Permission::DepartmentRead => "department.read",
            Permission::DepartmentDelete => "department.delete",
            Permission::GroupRead => "group.read",
            Permission::GroupUpdate => "group.update",
            Permission::EnrollmentDelete => "enrollment.delete",
            Permission::ContentRead => "content.read",
            Permission::PointsRead => "points.read",
            Permission::EnrollmentRead => "enrollment.read",
            Permission::EnrollmentCreate => "enrollment.create",
            Permission::GroupCreate => "group.create",
            Permission::GroupDelete => "group.delete",
            Permission::GroupMembers => "group.members",
            Permission::PointsAward => "points.award",
            Permission::UserRead => "user.read",
            Permission::UserCreate => "user.create",
            Permission::UserUpdate => "user.update",
            Permission::UserDelete => "user.delete",
            Permission::ResultsRead => "results.read",
            Permission::ResultsWrite => "results.write",
        }
    }

    pub fn parse(raw: &str) -> Option<Permission> {
        Permission::ALL.into_iter().find(|p| p.as_str() == raw)
    }
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for role in Role::ALL {
            assert_eq!(Role::parse(role.as_str()), Some(role));
        }
        for permission in Permission::ALL {
            assert_eq!(Permission::parse(permission.as_str()), Some(permission));
        }
        assert_eq!(Role::parse("Account_Owner"), None);
    }

    #[test]
    fn roles_are_stored_as_the_names_the_database_accepts() {
        use sea_orm::ActiveEnum as _;
        let stored: Vec<String> = Role::ALL.iter().map(Role::to_value).collect();
        assert_eq!(stored, lms_migrations::USER_ROLE_VALUES);
        for role in Role::ALL {
            assert_eq!(role.to_value(), role.as_str());
        }
    }
}
