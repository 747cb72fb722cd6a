//! Built-in roles and the permissions a custom role can carry (contract section 3).

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    AccountOwner,
    AccountAdministrator,
    DepartmentAdministrator,
    Publisher,
    Author,
    Learner,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Permission {
    DepartmentCreate,
    DepartmentUpdate,
    GroupRead,
    GroupUpdate,
    EnrollmentDelete,
    ContentRead,
    PointsRead,
}

impl Permission {
    pub const ALL: [Permission; 7] = [
        Permission::DepartmentCreate,
        Permission::DepartmentUpdate,
        Permission::GroupRead,
        Permission::GroupUpdate,
        Permission::EnrollmentDelete,
        Permission::ContentRead,
        Permission::PointsRead,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Permission::DepartmentCreate => "department.create",
            Permission::DepartmentUpdate => "department.update",
            Permission::GroupRead => "group.read",
            Permission::GroupUpdate => "group.update",
            Permission::EnrollmentDelete => "enrollment.delete",
            Permission::ContentRead => "content.read",
            Permission::PointsRead => "points.read",
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
}
