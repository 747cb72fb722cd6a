//! Keyset pages and their tokens (neighbours.md section 0.5).
//!
//! A page token is opaque to clients and to the gateway: `base64url("v1:LISTING:ID")`, where
//! `ID` is the last id of the page before. The next page holds the rows with a greater id, so
//! a page costs one index range scan wherever it starts, and rows added or removed meanwhile
//! never shift what the following pages hold. The listing's name is inside so that a token
//! from `/users` sent to `/departments` is refused instead of silently starting somewhere.
//!
//! A token carries no secret and no signature: it only says where to start, and every page is
//! read with the caller's own scope, so a hand-made token reveals nothing the caller could not
//! list anyway. What is refused is anything this module did not write.

use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
use uuid::Uuid;

use super::{Invalid, Reason};

/// Items per page when the client names no size.
pub const DEFAULT_PAGE_SIZE: u64 = 1_000;
/// The largest page a client may ask for.
pub const MAX_PAGE_SIZE: u64 = 10_000;

const VERSION: &str = "v1";

/// The paged listings; each has its own tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    Departments,
    Users,
    Enrollments,
    ContentItems,
    Groups,
    LearnerResults,
    LearnerModuleResults,
}

impl Listing {
    pub fn as_str(self) -> &'static str {
        match self {
            Listing::Departments => "departments",
            Listing::Users => "users",
            Listing::Enrollments => "enrollments",
            Listing::ContentItems => "content",
            Listing::Groups => "groups",
            Listing::LearnerResults => "learner_results",
            Listing::LearnerModuleResults => "learner_module_results",
        }
    }
}

/// One page to read: at most `size` rows with ids greater than `after`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub listing: Listing,
    pub size: u64,
    /// `None` for the first page.
    pub after: Option<Uuid>,
}

impl Page {
    /// The page a client asked for: `size` absent means [`DEFAULT_PAGE_SIZE`]; an empty
    /// `token` means the first page.
    pub fn parse(listing: Listing, size: Option<u64>, token: &str) -> Result<Page, Invalid> {
        let size = size.unwrap_or(DEFAULT_PAGE_SIZE);
        if !(1..=MAX_PAGE_SIZE).contains(&size) {
            return Err(Invalid::new(
                "pageSize",
                Reason::OutOfRange {
                    min: 1,
                    max: MAX_PAGE_SIZE,
                },
            ));
        }
        let after = match token {
            "" => None,
            token => Some(decode(listing, token).ok_or(Invalid::new(
                "pageToken",
                Reason::NotAPageToken {
                    listing: listing.as_str(),
                },
            ))?),
        };
        Ok(Page {
            listing,
            size,
            after,
        })
    }

    /// The token of the page after this one, whose last row is `last`.
    pub fn next_token(&self, last: Uuid) -> String {
        URL_SAFE_NO_PAD.encode(format!(
            "{VERSION}:{}:{}",
            self.listing.as_str(),
            last.hyphenated()
        ))
    }
}

fn decode(listing: Listing, token: &str) -> Option<Uuid> {
    let text = String::from_utf8(URL_SAFE_NO_PAD.decode(token).ok()?).ok()?;
    let mut parts = text.splitn(3, ':');
    let (version, name, id) = (parts.next()?, parts.next()?, parts.next()?);
    if version != VERSION || name != listing.as_str() {
        return None;
    }
    // Only the exact spelling this module writes: anything else was not made here.
    Uuid::try_parse(id)
        .ok()
        .filter(|parsed| parsed.hyphenated().to_string() == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: Uuid = Uuid::from_u128(0x0191a000_0000_7000_8000_000000000002);

    fn first(size: Option<u64>) -> Result<Page, Invalid> {
        Page::parse(Listing::Departments, size, "")
    }

    #[test]
    fn absent_size_is_the_default_and_an_empty_token_the_first_page() {
        let page = first(None).unwrap();
        assert_eq!(page.size, DEFAULT_PAGE_SIZE);
        assert_eq!(page.after, None);
    }

    #[test]
    fn sizes_from_one_to_the_maximum_are_allowed_and_others_refused_naming_page_size() {
        assert_eq!(first(Some(1)).unwrap().size, 1);
        assert_eq!(first(Some(MAX_PAGE_SIZE)).unwrap().size, MAX_PAGE_SIZE);
        for size in [0, MAX_PAGE_SIZE + 1, u64::MAX] {
            let err = first(Some(size)).unwrap_err();
            assert_eq!(
                err.to_string(),
                "pageSize must be a whole number from 1 to 10000"
            );
        }
    }

    #[test]
    fn a_next_token_leads_to_the_rows_after_the_last_one() {
        let page = first(Some(5)).unwrap();
        let token = page.next_token(ID);
        assert!(
            token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "{token} needs no escaping in a query string"
        );
        let next = Page::parse(Listing::Departments, Some(5), &token).unwrap();
        assert_eq!(next.after, Some(ID));
    }

    #[test]
    fn tampered_foreign_and_malformed_tokens_are_refused_naming_page_token() {
        let good = first(None).unwrap().next_token(ID);
        let foreign = URL_SAFE_NO_PAD.encode(format!("v1:users:{ID}"));
        let old = URL_SAFE_NO_PAD.encode(format!("v0:departments:{ID}"));
        let upper = URL_SAFE_NO_PAD.encode(format!(
            "v1:departments:{}",
            ID.hyphenated().to_string().to_uppercase()
        ));
        let bare_id = URL_SAFE_NO_PAD.encode(ID.to_string());
        let mut flipped = good.clone().into_bytes();
        flipped[3] ^= 1;
        let flipped = String::from_utf8(flipped).unwrap();
        for token in [
            foreign.as_str(),
            old.as_str(),
            upper.as_str(),
            bare_id.as_str(),
            flipped.as_str(),
            &good[..good.len() - 2],
            "not base64!",
            " ",
        ] {
            let err = Page::parse(Listing::Departments, None, token).unwrap_err();
            assert_eq!(err.field, "pageToken", "{token}");
            assert!(err.to_string().contains("departments"), "{err}");
        }
    }
}
