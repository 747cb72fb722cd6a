//! The whole lists of a generated account, read as a client reads them but never held: each
//! body is scanned as it arrives, its rows counted, their ids checked strictly ascending and
//! the document checked complete (a body the gateway aborted midway is not).

use futures::StreamExt as _;

use crate::TestStack;
use crate::large_world::{RoleLogin, WORLD_PASSWORD, WorldShape};

/// One whole list: its path and the key of the id every row has once.
#[derive(Debug, Clone, Copy)]
pub struct WholeList {
    pub path: &'static str,
    id: &'static str,
}

/// Every whole list of the interface.
pub const WHOLE_LISTS: [WholeList; 7] = [
    WholeList {
        path: "/user",
        id: "userId",
    },
    WholeList {
        path: "/user/v2",
        id: "userId",
    },
    WholeList {
        path: "/enrollment",
        id: "enrollmentId",
    },
    WholeList {
        path: "/department",
        id: "departmentId",
    },
    WholeList {
        path: "/group",
        id: "groupId",
    },
    WholeList {
        path: "/content",
        id: "contentItemId",
    },
    WholeList {
        path: "/gamification/points",
        id: "userId",
    },
];

impl WholeList {
    /// The rows the owner sees in the account `shape` describes.
    pub fn rows_for_the_owner(&self, shape: &WorldShape) -> usize {
        match self.path {
            "/enrollment" => shape.enrollments(),
            "/department" => shape.departments + 1,
            "/group" => shape.plain_groups() + 1,
            "/content" => shape.content_items(),
            _ => shape.users,
        }
    }
}

/// The format a list is asked for in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Xml,
    Json,
}

impl Format {
    pub const BOTH: [Format; 2] = [Format::Xml, Format::Json];

    fn accept(self) -> &'static str {
        match self {
            Format::Xml => "application/xml",
            Format::Json => "application/json",
        }
    }
}

/// What one read of a whole list found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Read {
    pub rows: usize,
    pub bytes: u64,
}

/// Reads `list` whole as `login` in `format`: 200, a complete document, ids strictly
/// ascending. Any other answer is an error that says what was wrong.
pub async fn read(
    stack: &TestStack,
    shape: &WorldShape,
    login: RoleLogin,
    list: WholeList,
    format: Format,
) -> anyhow::Result<Read> {
    let response = stack
        .http
        .get(format!("{}{}", stack.base_url, list.path))
        .header("Accept", format.accept())
        .header("X-Auth-Account-Url", &shape.account_url)
        .header("X-Auth-Email", login.email())
        .header("X-Auth-Password", WORLD_PASSWORD)
        .send()
        .await?;
    let status = response.status();
    if !status.is_success() {
        let body = response.text().await.unwrap_or_default();
        anyhow::bail!("{} in {format:?}: {status}: {body}", list.path);
    }
    let mut rows = Rows::new(list.id, format);
    let mut body = response.bytes_stream();
    while let Some(chunk) = body.next().await {
        let chunk =
            chunk.map_err(|error| anyhow::anyhow!("{} in {format:?}: {error}", list.path))?;
        rows.feed(&chunk)
            .map_err(|error| anyhow::anyhow!("{} in {format:?}: {error}", list.path))?;
    }
    rows.finish()
        .map_err(|error| anyhow::anyhow!("{} in {format:?}: {error}", list.path))
}

/// The scan of one body.
struct Rows {
    /// What comes right before a row's id: `<userId>` or `"userId":"`.
    needle: Vec<u8>,
    /// The byte that ends an id.
    end: u8,
    format: Format,
    /// What is not scanned yet: at most an unfinished id and its needle.
    pending: Vec<u8>,
    head: Vec<u8>,
    tail: Vec<u8>,
    last_id: Vec<u8>,
    read: Read,
}

impl Rows {
    fn new(id: &str, format: Format) -> Self {
        let (needle, end) = match format {
            Format::Xml => (format!("<{id}>"), b'<'),
            Format::Json => (format!("\"{id}\":\""), b'"'),
        };
        Self {
            needle: needle.into_bytes(),
            end,
            format,
            pending: Vec::new(),
            head: Vec::new(),
            tail: Vec::new(),
            last_id: Vec::new(),
            read: Read { rows: 0, bytes: 0 },
        }
    }

    fn feed(&mut self, chunk: &[u8]) -> anyhow::Result<()> {
        self.read.bytes += chunk.len() as u64;
        if self.head.len() < 64 {
            let room = 64 - self.head.len();
            self.head.extend_from_slice(&chunk[..chunk.len().min(room)]);
        }
        self.tail.extend_from_slice(chunk);
        self.tail.drain(..self.tail.len().saturating_sub(16));
        self.pending.extend_from_slice(chunk);
        let mut at = 0;
        while let Some(found) = find(&self.pending[at..], &self.needle) {
            let start = at + found + self.needle.len();
            let Some(length) = self.pending[start..].iter().position(|b| *b == self.end) else {
                // The id goes on in the next chunk: scan it again from its needle.
                self.pending.drain(..at + found);
                return Ok(());
            };
            let id = &self.pending[start..start + length];
            anyhow::ensure!(
                id > self.last_id.as_slice(),
                "row {} has id {} after {}: not strictly ascending",
                self.read.rows + 1,
                String::from_utf8_lossy(id),
                String::from_utf8_lossy(&self.last_id)
            );
            self.last_id = id.to_vec();
            self.read.rows += 1;
            at = start + length;
        }
        // No needle is cut short by what is kept: it is shorter than one.
        let keep = self
            .pending
            .len()
            .saturating_sub(self.needle.len() - 1)
            .max(at);
        self.pending.drain(..keep);
        Ok(())
    }

    fn finish(self) -> anyhow::Result<Read> {
        let (starts, ends): (&[u8], &[u8]) = match self.format {
            Format::Xml => (
                b"<?xml version=\"1.0\" encoding=\"UTF-8\"?><response>",
                b"</response>",
            ),
            Format::Json => (b"[", b"]"),
        };
        anyhow::ensure!(
            self.head.starts_with(starts) && self.tail.ends_with(ends),
            "an incomplete document after {} rows: starts {:?}, ends {:?}",
            self.read.rows,
            String::from_utf8_lossy(&self.head),
            String::from_utf8_lossy(&self.tail)
        );
        Ok(self.read)
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(offset) = haystack[from..].iter().position(|b| *b == needle[0]) {
        let at = from + offset;
        if haystack[at..].starts_with(needle) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(pieces: &[&str], format: Format) -> anyhow::Result<Read> {
        let mut rows = Rows::new("userId", format);
        for piece in pieces {
            rows.feed(piece.as_bytes())?;
        }
        rows.finish()
    }

    #[test]
    fn rows_cut_anywhere_by_chunks_are_counted_once() {
        let document = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response>\
                        <p><userId>a1</userId></p><p><userId>b22</userId></p>\
                        <p><userId>c3</userId></p></response>";
        for cut in 1..document.len() {
            let (first, second) = document.split_at(cut);
            let read = scan(&[first, second], Format::Xml).unwrap();
            assert_eq!(read.rows, 3, "cut at {cut}");
        }
        let json = r#"[{"userId":"a","x":1},{"userId":"b"}]"#;
        let pieces: Vec<String> = json.chars().map(String::from).collect();
        let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
        assert_eq!(scan(&pieces, Format::Json).unwrap().rows, 2);
    }

    #[test]
    fn a_repeated_or_descending_id_and_a_cut_document_are_errors() {
        assert!(scan(&[r#"[{"userId":"b"},{"userId":"a"}]"#], Format::Json).is_err());
        assert!(scan(&[r#"[{"userId":"a"},{"userId":"a"}]"#], Format::Json).is_err());
        assert!(scan(&[r#"[{"userId":"a"},{"userId":"b"}"#], Format::Json).is_err());
        assert!(scan(&["<response><userId>a</userId>"], Format::Xml).is_err());
    }
}
