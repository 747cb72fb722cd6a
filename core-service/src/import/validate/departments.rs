//! The department tree: the root, then every department after its parent, with the
//! closure rows of every (ancestor, descendant) pair.

use uuid::Uuid;

use super::{
    AccountCheck, List, Place, Validator, label, plan::DepartmentRow, reference, refused, require,
};
use crate::{
    domain::{
        ids::clip,
        names::{DepartmentCode, DepartmentName},
    },
    import::{
        ImportError,
        document::{DepartmentEntry, RootDepartmentEntry},
        tree::{Cycle, closure_rows, parents_first},
    },
};

impl AccountCheck {
    /// The whole tree at once: parents may be listed after their children.
    pub(crate) fn departments(
        &mut self,
        validator: &mut Validator,
        root: &RootDepartmentEntry,
        listed_entries: &[DepartmentEntry],
    ) -> Result<(), ImportError> {
        let a = self.a;
        let known = &mut self.known;
        let root_entry = format!("accounts[{a}].rootDepartment (id \"{}\")", clip(&root.id));
        let root_row = DepartmentRow {
            id: validator.register_id(
                Place::new(a, List::RootDepartment, 0),
                &root_entry,
                &root.id,
            )?,
            parent_id: None,
            name: DepartmentName::parse(&root.name)
                .map_err(refused(&root_entry))?
                .into_inner(),
            code: optional_code(&root_entry, root.code.as_deref())?,
        };
        known.departments.insert(root_row.id);

        let mut listed = Vec::with_capacity(listed_entries.len());
        let mut entries = Vec::with_capacity(listed_entries.len());
        for (i, department) in listed_entries.iter().enumerate() {
            let entry = label(a, "departments", i, "id", &department.id);
            let row = DepartmentRow {
                id: validator.register_id(
                    Place::new(a, List::Departments, i),
                    &entry,
                    &department.id,
                )?,
                parent_id: Some(reference(
                    &entry,
                    "parentDepartmentId",
                    &department.parent_department_id,
                )?),
                name: DepartmentName::parse(&department.name)
                    .map_err(refused(&entry))?
                    .into_inner(),
                code: optional_code(&entry, department.code.as_deref())?,
            };
            known.departments.insert(row.id);
            listed.push(row);
            entries.push(entry);
        }
        // Parents may be listed after their children: check them once all are known.
        let mut edges = Vec::with_capacity(listed.len());
        for (row, entry) in listed.iter().zip(&entries) {
            let parent = row.parent_id.unwrap_or(root_row.id);
            require(
                entry,
                "parentDepartmentId",
                parent,
                &known.departments,
                "department",
            )?;
            edges.push((row.id, parent));
        }
        let order = parents_first(root_row.id, &edges).map_err(|Cycle(cycle)| {
            let path: Vec<String> = cycle
                .iter()
                .chain(cycle.first())
                .map(|&i| format!("\"{}\"", edges[i].0))
                .collect();
            ImportError::invalid(
                &entries[cycle.first().copied().unwrap_or_default()],
                format!(
                    "parentDepartmentId makes a cycle that never reaches the root department: {} \
                     (each names the next as its parent)",
                    path.join(" -> ")
                ),
            )
        })?;

        let mut slots: Vec<Option<DepartmentRow>> = listed.into_iter().map(Some).collect();
        let mut departments = Vec::with_capacity(slots.len() + 1);
        departments.push(root_row);
        departments.extend(order.into_iter().filter_map(|index| slots[index].take()));
        let edges: Vec<(Uuid, Option<Uuid>)> = departments
            .iter()
            .map(|row| (row.id, row.parent_id))
            .collect();
        self.plan.closure = closure_rows(&edges);
        self.plan.departments = departments;
        Ok(())
    }
}

/// A department code: empty (or `null`) means none.
fn optional_code(entry: &str, raw: Option<&str>) -> Result<Option<String>, ImportError> {
    match raw {
        Some(raw) => Ok(DepartmentCode::parse(raw)
            .map_err(refused(entry))?
            .into_inner()),
        None => Ok(None),
    }
}
