//! The filters and paging of the user lists: `departments`, `groups`, `logins` and `emails`,
//! each in every list spelling clients use (`name[]=a`, `name[0]=a`, `name=a`, `name=a,b`,
//! brackets percent-encoded or not), plus `pageSize` and `pageToken` on the paged list.
//! Any other parameter is refused naming it: a misspelt filter must not widen the answer.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use lms_proto::v1::{ListUsersRequest, NumberedPage, PageRequest};

use crate::error::GatewayError;
use crate::json::{FromJson, JsonError, JsonObject};
use crate::routes::paging::page_request;
use crate::routes::unknown_query_parameter;
use crate::xml::{Element, FromXml, XmlError};

const FILTERS: [&str; 4] = ["departments", "groups", "logins", "emails"];

/// The filters of a user list. Within one filter any value matches; all given must match.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct UserFilters {
    pub(crate) departments: Vec<String>,
    pub(crate) groups: Vec<String>,
    pub(crate) logins: Vec<String>,
    pub(crate) emails: Vec<String>,
}

impl UserFilters {
    fn slot(&mut self, filter: &str) -> &mut Vec<String> {
        match filter {
            "departments" => &mut self.departments,
            "groups" => &mut self.groups,
            "logins" => &mut self.logins,
            _ => &mut self.emails,
        }
    }

    /// The request for the core; `page` `None` asks for every matching user.
    pub(crate) fn request(self, page: Option<PageRequest>) -> ListUsersRequest {
        ListUsersRequest {
            page,
            department_ids: self.departments,
            group_ids: self.groups,
            logins: self.logins,
            emails: self.emails,
            numbered_page: None,
        }
    }
}

/// The filter a parameter name spells: `name`, `name[]` or `name[N]`.
fn filter_named(name: &str) -> Option<&'static str> {
    FILTERS.into_iter().find(|filter| {
        name.strip_prefix(filter).is_some_and(|rest| {
            rest.is_empty()
                || rest
                    .strip_prefix('[')
                    .and_then(|inner| inner.strip_suffix(']'))
                    .is_some_and(|index| index.bytes().all(|byte| byte.is_ascii_digit()))
        })
    })
}

/// The filters of `query`, and with `paged` its page; empty values are dropped.
pub(crate) fn parse_query(
    query: &str,
    paged: bool,
) -> Result<(UserFilters, Option<PageRequest>), GatewayError> {
    let mut filters = UserFilters::default();
    let (mut size, mut token) = (None, None);
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        if let Some(filter) = filter_named(&name) {
            filters.slot(filter).extend(
                value
                    .split(',')
                    .map(str::trim)
                    .filter(|part| !part.is_empty())
                    .map(str::to_owned),
            );
            continue;
        }
        let slot = match name.as_ref() {
            "pageSize" if paged => &mut size,
            "pageToken" if paged => &mut token,
            other => return Err(unknown_query_parameter(other)),
        };
        if slot.replace(value.into_owned()).is_some() {
            return Err(GatewayError::BadRequest(format!(
                "Query parameter \"{name}\" is given more than once."
            )));
        }
    }
    let page = paged.then(|| page_request(size, token)).transpose()?;
    Ok((filters, page))
}

/// `GET /user` and `GET /user/v2`: the filters, no paging.
#[derive(Debug)]
pub(crate) struct ListQuery(pub(crate) UserFilters);

impl<S: Send + Sync> FromRequestParts<S> for ListQuery {
    type Rejection = GatewayError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let (filters, _) = parse_query(parts.uri.query().unwrap_or_default(), false)?;
        Ok(Self(filters))
    }
}

/// `GET /users` and `GET /users/v2`: the filters and the page.
#[derive(Debug)]
pub(crate) struct PageQuery(pub(crate) UserFilters, pub(crate) PageRequest);

impl<S: Send + Sync> FromRequestParts<S> for PageQuery {
    type Rejection = GatewayError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let (filters, page) = parse_query(parts.uri.query().unwrap_or_default(), true)?;
        Ok(Self(filters, page.unwrap_or_default()))
    }
}

/// The body of `POST /users` and `POST /users/v2`: the same filters as id lists
/// (`<departments><id>…</id></departments>`, `{"departments": ["…"]}`), `pageSize` and
/// `pageToken`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct PageBody {
    pub(crate) filters: UserFilters,
    pub(crate) page_size: Option<String>,
    pub(crate) page_token: Option<String>,
    /// The 1-based page of `POST /user/list`.
    pub(crate) page: Option<String>,
}

impl PageBody {
    pub(crate) fn into_request(self) -> Result<ListUsersRequest, GatewayError> {
        let page = page_request(self.page_size, self.page_token)?;
        Ok(self.filters.request(Some(page)))
    }

    /// `POST /user/list`: `page` (1-based, default 1) of `pageSize` users.
    pub(crate) fn into_numbered(self) -> Result<(u64, ListUsersRequest), GatewayError> {
        let whole = |name: &str, raw: Option<String>| -> Result<Option<u64>, GatewayError> {
            match raw.as_deref().map(str::trim) {
                None | Some("") => Ok(None),
                Some(text) => text.parse::<u64>().map(Some).map_err(|_| {
                    GatewayError::BadRequest(format!(
                        "{name} must be a whole number; got \"{}\".",
                        crate::clip::clip(text)
                    ))
                }),
            }
        };
        let number = whole("page", self.page)?.unwrap_or(1);
        let size = whole("pageSize", self.page_size)?;
        let mut request = self.filters.request(None);
        request.numbered_page = Some(NumberedPage { number, size });
        Ok((number, request))
    }
}

impl FromXml for PageBody {
    const ROOT: &'static str = "request";

    fn from_root(root: &Element) -> Result<Self, XmlError> {
        let mut filters = UserFilters::default();
        for filter in FILTERS {
            if let Some(list) = root.single_child(filter)? {
                // Any child name is read (`id`, `login`, `email`): the documents disagree.
                for item in &list.children {
                    let value = item.text_value()?;
                    if !value.is_empty() {
                        filters.slot(filter).push(value.to_owned());
                    }
                }
            }
        }
        Ok(Self {
            filters,
            page_size: root.optional_text("pageSize")?,
            page_token: root.optional_text("pageToken")?,
            page: root.optional_text("page")?,
        })
    }
}

impl FromJson for PageBody {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        let mut filters = UserFilters::default();
        for filter in FILTERS {
            let values = object.optional_text_list(filter)?.unwrap_or_default();
            filters
                .slot(filter)
                .extend(values.into_iter().filter(|value| !value.is_empty()));
        }
        Ok(Self {
            filters,
            page_size: object.optional_text("pageSize")?,
            page_token: object.optional_text("pageToken")?,
            page: object.optional_text("page")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filters(query: &str) -> UserFilters {
        parse_query(query, false).unwrap().0
    }

    #[test]
    fn every_list_spelling_gives_the_same_filter() {
        for query in [
            "departments[]=a&departments[]=b",
            "departments%5B%5D=a&departments%5B%5D=b",
            "departments[0]=a&departments[1]=b",
            "departments=a&departments=b",
            "departments=a,b",
        ] {
            assert_eq!(filters(query).departments, ["a", "b"], "{query}");
        }
    }

    #[test]
    fn the_four_filters_are_kept_apart() {
        let parsed = filters("groups[]=g&logins[]=L&emails[]=e@x&departments[]=d");
        assert_eq!(
            parsed,
            UserFilters {
                departments: vec!["d".into()],
                groups: vec!["g".into()],
                logins: vec!["L".into()],
                emails: vec!["e@x".into()],
            }
        );
    }

    #[test]
    fn paging_is_known_only_to_the_paged_list_and_others_are_refused() {
        assert!(parse_query("pageSize=5", false).is_err());
        assert!(parse_query("workLeaveStatus=1", true).is_err());
        assert!(parse_query("departmentsX=1", true).is_err());
        let (_, page) = parse_query("pageSize=5&pageToken=", true).unwrap();
        let page = page.unwrap();
        assert_eq!((page.page_size, page.page_token.as_str()), (Some(5), ""));
    }
}
