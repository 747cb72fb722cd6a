//! Writing XML response documents: the prologue, elements in the order the caller writes them,
//! and escaped text.

use super::reader::is_xml_char;

/// The first line of every XML body the gateway writes.
pub(crate) const PROLOGUE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>"#;

/// Builds one XML document as a string. Element names are the gateway's own constants; only
/// text is escaped.
#[derive(Debug)]
pub(crate) struct XmlWriter {
    out: String,
}

impl XmlWriter {
    /// A document starting with [`PROLOGUE`].
    pub(crate) fn document() -> Self {
        Self::document_with_capacity(256)
    }

    /// A document with room for about `bytes` bytes, so a large answer is written into one
    /// buffer instead of one regrown a dozen times.
    pub(crate) fn document_with_capacity(bytes: usize) -> Self {
        let mut out = String::with_capacity(bytes.max(PROLOGUE.len()));
        out.push_str(PROLOGUE);
        Self { out }
    }

    /// A fragment without the prologue (a piece of a streamed document).
    pub(crate) fn fragment() -> Self {
        Self { out: String::new() }
    }

    pub(crate) fn open(&mut self, name: &str) -> &mut Self {
        self.out.push('<');
        self.out.push_str(name);
        self.out.push('>');
        self
    }

    pub(crate) fn close(&mut self, name: &str) -> &mut Self {
        self.out.push_str("</");
        self.out.push_str(name);
        self.out.push('>');
        self
    }

    /// `<name/>`
    pub(crate) fn empty(&mut self, name: &str) -> &mut Self {
        self.out.push('<');
        self.out.push_str(name);
        self.out.push_str("/>");
        self
    }

    /// `<name>text</name>`, with the text escaped.
    pub(crate) fn text_element(&mut self, name: &str, text: &str) -> &mut Self {
        self.open(name).text(text).close(name)
    }

    /// Escaped character data.
    pub(crate) fn text(&mut self, text: &str) -> &mut Self {
        push_escaped(&mut self.out, text);
        self
    }

    /// How many bytes are written so far.
    pub(crate) fn len(&self) -> usize {
        self.out.len()
    }

    pub(crate) fn finish(self) -> String {
        self.out
    }
}

/// Escapes `<`, `>` and `&` (quotes need no escaping in text, and stay readable in messages
/// that quote a value). Characters XML 1.0 cannot carry at all (most C0 controls,
/// U+FFFE, U+FFFF) become U+FFFD, so one stored in the core never makes the whole response
/// ill-formed: the gateway's readers refuse them, but the core also takes text over gRPC and
/// from the import.
fn push_escaped(out: &mut String, text: &str) {
    // Ids, counts and most names are printable ASCII without markup: copied as they are.
    if text
        .bytes()
        .all(|b| (b' '..=b'~').contains(&b) && !matches!(b, b'<' | b'>' | b'&'))
    {
        out.push_str(text);
        return;
    }
    for ch in text.chars() {
        match ch {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            // A literal CR would be read back as LF; a reference keeps it.
            '\r' => out.push_str("&#13;"),
            ch if is_xml_char(ch) => out.push(ch),
            _ => out.push(char::REPLACEMENT_CHARACTER),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(value: &str) -> String {
        let mut xml = XmlWriter::fragment();
        xml.text(value);
        xml.finish()
    }

    #[test]
    fn markup_characters_in_text_are_escaped() {
        assert_eq!(text("a < b && c > d"), "a &lt; b &amp;&amp; c &gt; d");
        assert_eq!(text("]]>"), "]]&gt;");
        assert_eq!(text("&amp;"), "&amp;amp;");
        assert_eq!(text("\"quoted\" and 'single'"), "\"quoted\" and 'single'");
    }

    #[test]
    fn characters_xml_cannot_carry_are_replaced_and_cr_is_kept() {
        assert_eq!(
            text("a\u{0}b\u{1F}c\u{FFFE}"),
            "a\u{FFFD}b\u{FFFD}c\u{FFFD}"
        );
        assert_eq!(text("line\r\nnext\ttab"), "line&#13;\nnext\ttab");
        assert_eq!(text("日本 \u{1F600}"), "日本 \u{1F600}");
    }

    #[test]
    fn documents_start_with_the_prologue_and_keep_the_written_order() {
        let mut xml = XmlWriter::document();
        xml.open("response")
            .text_element("b", "2")
            .text_element("a", "1")
            .empty("c")
            .close("response");
        assert_eq!(
            xml.finish(),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response><b>2</b><a>1</a><c/></response>"
        );
    }
}
