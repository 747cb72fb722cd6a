//! Projects and their content items.

use super::{
    AccountCheck, List, Place, Validator, label,
    plan::{ContentItemRow, ProjectRow},
    reference, references, refused, require,
};
use crate::{
    domain::{
        content::{AddedDate, ViewUrl},
        text::{Description, MAX_NAME_CHARS, MAX_TYPE_CHARS, required_text},
    },
    import::{
        ImportError,
        document::{ContentItemEntry, ProjectEntry},
    },
};

impl AccountCheck {
    pub(crate) fn project(
        &mut self,
        validator: &mut Validator,
        i: usize,
        project: &ProjectEntry,
    ) -> Result<(), ImportError> {
        let entry = label(self.a, "projects", i, "id", &project.id);
        let id =
            validator.register_id(Place::new(self.a, List::Projects, i), &entry, &project.id)?;
        let name = required_text("name", &project.name, MAX_NAME_CHARS).map_err(refused(&entry))?;
        let author_ids = references(
            &entry,
            "authorIds",
            &project.author_ids,
            &self.known.users,
            "user",
        )?;
        self.known.projects.insert(id);
        self.plan.projects.push(ProjectRow {
            id,
            name,
            author_ids,
        });
        Ok(())
    }

    pub(crate) fn content_item(
        &mut self,
        validator: &mut Validator,
        i: usize,
        item: &ContentItemEntry,
    ) -> Result<(), ImportError> {
        let known = &mut self.known;
        let entry = label(self.a, "contentItems", i, "id", &item.id);
        let id =
            validator.register_id(Place::new(self.a, List::ContentItems, i), &entry, &item.id)?;
        let project_id = reference(&entry, "projectId", &item.project_id)?;
        require(&entry, "projectId", project_id, &known.projects, "project")?;
        let user_id = reference(&entry, "userId", &item.user_id)?;
        require(&entry, "userId", user_id, &known.users, "user")?;
        let title = required_text("title", &item.title, MAX_NAME_CHARS).map_err(refused(&entry))?;
        let description = Description::parse(&item.description).map_err(refused(&entry))?;
        let added_at = AddedDate::parse(&item.added_date).map_err(refused(&entry))?;
        let content_type =
            required_text("type", &item.content_type, MAX_TYPE_CHARS).map_err(refused(&entry))?;
        let view_url = ViewUrl::parse_optional(item.view_url.as_deref())
            .map_err(refused(&entry))?
            .map(ViewUrl::into_inner);
        known.content_items.insert(id);
        self.plan.content_items.push(ContentItemRow {
            id,
            project_id,
            title,
            description: description.into_inner(),
            user_id,
            added_at: added_at.into_inner(),
            content_type,
            view_url,
        });
        Ok(())
    }
}
