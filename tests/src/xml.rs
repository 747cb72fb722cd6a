//! Just enough XML reading for assertions: tests compare whole bodies where the
//! interface fixes them, and pick single elements where only one matters.

/// The declaration every XML body of the interface starts with.
pub const PROLOGUE: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>";

/// `<?xml ...?><request>{fields}</request>`, as the interface documents request bodies.
pub fn request(fields: &str) -> String {
    format!("{PROLOGUE}<request>{fields}</request>")
}

/// The text of the first `<tag>...</tag>`, unescaped.
pub fn text_of(body: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = body.find(&open)? + open.len();
    let end = start + body[start..].find(&close)?;
    Some(unescape(&body[start..end]))
}

/// The texts of every `<tag>...</tag>`, in order.
pub fn texts_of(body: &str, tag: &str) -> Vec<String> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let mut found = Vec::new();
    let mut rest = body;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        let Some(end) = after.find(&close) else { break };
        found.push(unescape(&after[..end]));
        rest = &after[end + close.len()..];
    }
    found
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// The names of the start (and empty) tags, in document order: the shape of a body.
pub fn element_names(body: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = body;
    while let Some(start) = rest.find('<') {
        rest = &rest[start + 1..];
        if rest.starts_with('/') || rest.starts_with('?') || rest.starts_with('!') {
            continue;
        }
        let end = rest
            .find(|c: char| c == '>' || c == '/' || c.is_whitespace())
            .unwrap_or(rest.len());
        names.push(rest[..end].to_owned());
    }
    names
}
