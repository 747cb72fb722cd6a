//! Groups: plain (a list of members) or smart (a department's subtree), never both.

use std::collections::BTreeSet;

use super::{
    AccountCheck, List, Place, Validator, given, label, plan::GroupRow, reference, references,
    refused, require,
};
use crate::{
    domain::names::GroupName,
    import::{ImportError, document::GroupEntry},
};

impl AccountCheck {
    pub(crate) fn group(
        &mut self,
        validator: &mut Validator,
        i: usize,
        group: &GroupEntry,
    ) -> Result<(), ImportError> {
        let known = &self.known;
        let entry = label(self.a, "groups", i, "id", &group.id);
        let id = validator.register_id(Place::new(self.a, List::Groups, i), &entry, &group.id)?;
        let name = GroupName::parse(&group.name)
            .map_err(refused(&entry))?
            .into_inner();
        let (smart_department_id, member_ids) =
            match (&group.user_ids, given(group.smart_department_id.as_deref())) {
                (Some(_), Some(_)) => {
                    return Err(ImportError::invalid(
                        &entry,
                        "a group has either userIds (a plain group) or smartDepartmentId \
                         (a smart group), not both",
                    ));
                }
                (_, Some(raw)) => {
                    let department = reference(&entry, "smartDepartmentId", raw)?;
                    require(
                        &entry,
                        "smartDepartmentId",
                        department,
                        &known.departments,
                        "department",
                    )?;
                    (Some(department), BTreeSet::new())
                }
                (user_ids, None) => {
                    let user_ids = user_ids.as_deref().unwrap_or_default();
                    (
                        None,
                        references(&entry, "userIds", user_ids, &known.users, "user")?,
                    )
                }
            };
        self.plan.groups.push(GroupRow {
            id,
            name,
            smart_department_id,
            member_ids,
        });
        Ok(())
    }
}
