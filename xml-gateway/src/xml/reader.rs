//! A strict XML reader: quick-xml events folded into a small element tree.
//!
//! Why strict: request bodies come from outside, so anything an XML processor could be tricked
//! with (DTDs, external or custom entities, other encodings, unbounded nesting) is refused with a
//! 400 that names the problem, before any value reaches the core.

use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::reader::Reader;

use crate::clip::{MAX_QUOTED_CHARS, clip, clip_to};

/// Deepest accepted nesting of elements (the root is depth 1).
pub(crate) const MAX_DEPTH: usize = 16;
/// Most elements accepted in one document.
pub(crate) const MAX_ELEMENTS: usize = 20_000;
/// Most attributes accepted on one element. The interface uses none; the cap keeps the
/// duplicate check (pairwise over this short list) and the whole element cheap.
pub(crate) const MAX_ATTRIBUTES: usize = 32;
/// Longest parser detail quoted in a message (it may itself quote two names).
const MAX_DETAIL_CHARS: usize = 4 * MAX_QUOTED_CHARS;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Why a request body is not an acceptable XML document. Each message names the problem; the
/// names and details it quotes are clipped ([`crate::clip`]) where the error is made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum XmlError {
    #[error("The request body is empty; an XML document is expected.")]
    Empty,
    #[error("The request body is not valid UTF-8; only UTF-8 is accepted.")]
    NotUtf8,
    #[error("The XML declaration names encoding \"{0}\"; only UTF-8 is accepted.")]
    Encoding(String),
    #[error("The XML declaration must come first in the document.")]
    MisplacedDeclaration,
    #[error("DOCTYPE declarations are not allowed.")]
    DocType,
    #[error("Entity reference &{0}; is not allowed.")]
    Entity(String),
    #[error("Character reference &{0}; does not name an allowed XML character.")]
    CharRef(String),
    #[error("The request body is not well-formed XML: {detail} (at byte {position}).")]
    Syntax { detail: String, position: u64 },
    #[error("Text is not allowed outside the root element.")]
    TextOutsideRoot,
    #[error("Only one root element is allowed; found a second one, <{0}>.")]
    SecondRoot(String),
    #[error("Element <{0}> is not closed.")]
    Unclosed(String),
    #[error("The document has no root element.")]
    NoRoot,
    #[error("Root element must be {expected}, found <{found}>.")]
    WrongRoot { expected: String, found: String },
    #[error("Element <{0}> has more than {MAX_ATTRIBUTES} attributes.")]
    TooManyAttributes(String),
    #[error("Element <{element}> has attribute {attribute} twice.")]
    DuplicateAttribute { element: String, attribute: String },
    #[error("Elements are nested deeper than {MAX_DEPTH} levels.")]
    TooDeep,
    #[error("The document has more than {MAX_ELEMENTS} elements.")]
    TooManyElements,
    #[error("Element <{0}> is given twice.")]
    Duplicate(String),
    #[error("Element <{0}> must hold text, not elements.")]
    NotText(String),
    #[error("Element <{0}> is required.")]
    Missing(String),
    /// A field's value the representation itself cannot read; the sentence names the field.
    #[error("{0}.")]
    Invalid(String),
    #[error("Element <{element}> contains U+{code:04X}, a character XML cannot carry.")]
    Uncarried { element: String, code: u32 },
}

/// One element of a parsed document: its name as written, its text (every text, CDATA and
/// reference piece directly inside it, concatenated and trimmed) and its child elements.
/// Attributes are checked for well-formedness and then dropped: the interface uses none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Element {
    pub(crate) name: String,
    pub(crate) text: String,
    pub(crate) children: Vec<Element>,
}

impl Element {
    fn new(name: String) -> Self {
        Self {
            name,
            text: String::new(),
            children: Vec::new(),
        }
    }

    /// Children with the given name, in document order.
    pub(crate) fn children_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> {
        self.children.iter().filter(move |child| child.name == name)
    }

    /// The child with the given name, if there is one; a second one is an error.
    pub(crate) fn single_child<'a>(&'a self, name: &str) -> Result<Option<&'a Element>, XmlError> {
        let mut found = self.children.iter().filter(|child| child.name == name);
        let first = found.next();
        if found.next().is_some() {
            return Err(XmlError::Duplicate(clip(name)));
        }
        Ok(first)
    }

    /// The child with the given name; absent or given twice is an error.
    pub(crate) fn required_child<'a>(&'a self, name: &str) -> Result<&'a Element, XmlError> {
        self.single_child(name)?
            .ok_or_else(|| XmlError::Missing(clip(name)))
    }

    /// The text of a single-valued child element: `None` when absent, `Some("")` when present but
    /// empty.
    pub(crate) fn optional_text(&self, name: &str) -> Result<Option<String>, XmlError> {
        self.single_child(name)?
            .map(|child| child.text_value().map(str::to_owned))
            .transpose()
    }

    /// This element's text, when it holds text only.
    pub(crate) fn text_value(&self) -> Result<&str, XmlError> {
        if self.children.is_empty() {
            Ok(&self.text)
        } else {
            Err(XmlError::NotText(clip(&self.name)))
        }
    }
}

impl XmlError {
    fn syntax(error: &impl std::fmt::Display, position: u64) -> Self {
        Self::Syntax {
            detail: clip_to(&error.to_string(), MAX_DETAIL_CHARS),
            position,
        }
    }
}

/// The root every write accepts besides its own (contract section 5): generic array-to-XML
/// helpers name the root of everything they send `request`.
pub(crate) const ANY_WRITE_ROOT: &str = "request";

/// Parses `body` as a document whose root element must be `expected_root` or
/// [`ANY_WRITE_ROOT`].
pub(crate) fn parse_document(body: &[u8], expected_root: &str) -> Result<Element, XmlError> {
    let root = parse_tree(body)?;
    if root.name != expected_root && root.name != ANY_WRITE_ROOT {
        let expected = if expected_root == ANY_WRITE_ROOT {
            format!("<{ANY_WRITE_ROOT}>")
        } else {
            format!("<{expected_root}> or <{ANY_WRITE_ROOT}>")
        };
        return Err(XmlError::WrongRoot {
            expected,
            found: clip(&root.name),
        });
    }
    Ok(root)
}

/// Parses `body` into its root element, applying every rule except the root's name.
pub(crate) fn parse_tree(body: &[u8]) -> Result<Element, XmlError> {
    let body = body.strip_prefix(UTF8_BOM).unwrap_or(body);
    let text = std::str::from_utf8(body).map_err(|_| XmlError::NotUtf8)?;
    if trim_xml_whitespace(text).is_empty() {
        return Err(XmlError::Empty);
    }

    let mut reader = Reader::from_str(text);
    let config = reader.config_mut();
    config.check_end_names = true;
    config.check_comments = true;
    config.allow_dangling_amp = false;
    config.allow_unmatched_ends = false;
    config.expand_empty_elements = false;

    let mut tree = TreeBuilder::default();
    let mut first_event = true;
    loop {
        let event = reader
            .read_event()
            .map_err(|error| XmlError::syntax(&error, reader.error_position()))?;
        let at_start = std::mem::replace(&mut first_event, false);
        match event {
            Event::Decl(declaration) => {
                if !at_start {
                    return Err(XmlError::MisplacedDeclaration);
                }
                check_declaration(&declaration, reader.buffer_position())?;
            }
            Event::DocType(_) => return Err(XmlError::DocType),
            Event::Start(start) => {
                check_attributes(&start, reader.decoder(), reader.buffer_position())?;
                tree.open(element_name(&start))?;
            }
            Event::Empty(start) => {
                check_attributes(&start, reader.decoder(), reader.buffer_position())?;
                tree.open(element_name(&start))?;
                tree.close();
            }
            // check_end_names makes the reader refuse an end tag that does not match.
            Event::End(_) => tree.close(),
            Event::Text(text) => {
                let content = text
                    .xml10_content()
                    .map_err(|error| XmlError::syntax(&error, reader.buffer_position()))?;
                tree.text(&content)?;
            }
            Event::CData(data) => {
                let content = data
                    .xml10_content()
                    .map_err(|error| XmlError::syntax(&error, reader.buffer_position()))?;
                tree.markup_text(&content)?;
            }
            Event::GeneralRef(reference) => {
                let resolved = resolve_reference(&reference)?;
                tree.markup_text(resolved.encode_utf8(&mut [0; 4]))?;
            }
            Event::Comment(_) | Event::PI(_) => {}
            Event::Eof => return tree.finish(),
        }
    }
}

fn element_name(start: &BytesStart<'_>) -> String {
    String::from_utf8_lossy(start.name().as_ref()).into_owned()
}

fn check_declaration(
    declaration: &quick_xml::events::BytesDecl<'_>,
    position: u64,
) -> Result<(), XmlError> {
    declaration
        .version()
        .map_err(|error| XmlError::syntax(&error, position))?;
    if let Some(encoding) = declaration.encoding() {
        let encoding = encoding.map_err(|error| XmlError::syntax(&error, position))?;
        let encoding = String::from_utf8_lossy(&encoding);
        if !encoding.eq_ignore_ascii_case("utf-8") {
            return Err(XmlError::Encoding(clip(&encoding)));
        }
    }
    Ok(())
}

/// Attributes are not used, but they must be well-formed, unique and may not smuggle in
/// entities.
///
/// quick-xml's own duplicate check compares every attribute with every earlier one, so it is
/// switched off: the count is capped first, and the pairwise check runs on that short list.
fn check_attributes(
    start: &BytesStart<'_>,
    decoder: quick_xml::encoding::Decoder,
    position: u64,
) -> Result<(), XmlError> {
    let mut attributes = start.attributes();
    attributes.with_checks(false);
    let mut seen: Vec<&[u8]> = Vec::new();
    for attribute in attributes {
        let attribute = attribute.map_err(|error| XmlError::syntax(&error, position))?;
        let key = attribute.key.into_inner();
        if seen.len() == MAX_ATTRIBUTES {
            return Err(XmlError::TooManyAttributes(clip(&element_name(start))));
        }
        if seen.contains(&key) {
            return Err(XmlError::DuplicateAttribute {
                element: clip(&element_name(start)),
                attribute: clip(&String::from_utf8_lossy(key)),
            });
        }
        seen.push(key);
        let mut unknown_entity = None;
        let decoded = attribute.decode_and_unescape_value_with(decoder, |name| {
            let resolved = quick_xml::escape::resolve_predefined_entity(name);
            if resolved.is_none() {
                unknown_entity = Some(clip(name));
            }
            resolved
        });
        if let Err(error) = decoded {
            return Err(match unknown_entity {
                Some(name) => XmlError::Entity(name),
                None => XmlError::syntax(&error, position),
            });
        }
    }
    Ok(())
}

/// Resolves a character reference or one of the five predefined entities; refuses anything else.
fn resolve_reference(reference: &BytesRef<'_>) -> Result<char, XmlError> {
    let raw = String::from_utf8_lossy(reference.as_ref()).into_owned();
    if reference.is_char_ref() {
        return match reference.resolve_char_ref() {
            Ok(Some(ch)) if is_xml_char(ch) => Ok(ch),
            _ => Err(XmlError::CharRef(clip(&raw))),
        };
    }
    match raw.as_str() {
        "lt" => Ok('<'),
        "gt" => Ok('>'),
        "amp" => Ok('&'),
        "apos" => Ok('\''),
        "quot" => Ok('"'),
        _ => Err(XmlError::Entity(clip(&raw))),
    }
}

/// Trims the four XML whitespace characters (not every Unicode space: a no-break space is data).
pub(crate) fn trim_xml_whitespace(text: &str) -> &str {
    text.trim_matches([' ', '\t', '\r', '\n'])
}

/// The `Char` production of XML 1.0.
pub(crate) fn is_xml_char(ch: char) -> bool {
    matches!(ch, '\u{9}' | '\u{A}' | '\u{D}' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

/// Folds start, text and end events into elements, enforcing the document-level rules.
#[derive(Default)]
struct TreeBuilder {
    open: Vec<Element>,
    root: Option<Element>,
    element_count: usize,
}

impl TreeBuilder {
    fn open(&mut self, name: String) -> Result<(), XmlError> {
        if self.open.is_empty() && self.root.is_some() {
            return Err(XmlError::SecondRoot(clip(&name)));
        }
        self.element_count += 1;
        if self.element_count > MAX_ELEMENTS {
            return Err(XmlError::TooManyElements);
        }
        if self.open.len() >= MAX_DEPTH {
            return Err(XmlError::TooDeep);
        }
        self.open.push(Element::new(name));
        Ok(())
    }

    fn close(&mut self) {
        let Some(mut element) = self.open.pop() else {
            // The reader refuses unmatched end tags, so there is always an open element here.
            return;
        };
        let trimmed = trim_xml_whitespace(&element.text);
        if trimmed.len() != element.text.len() {
            element.text = trimmed.to_owned();
        }
        match self.open.last_mut() {
            Some(parent) => parent.children.push(element),
            None => self.root = Some(element),
        }
    }

    /// Character data: whitespace is fine anywhere, anything else only inside the root.
    fn text(&mut self, content: &str) -> Result<(), XmlError> {
        match self.open.last_mut() {
            Some(element) => push_text(element, content),
            None if trim_xml_whitespace(content).is_empty() => Ok(()),
            None => Err(XmlError::TextOutsideRoot),
        }
    }

    /// CDATA and references: never allowed outside the root.
    fn markup_text(&mut self, content: &str) -> Result<(), XmlError> {
        match self.open.last_mut() {
            Some(element) => push_text(element, content),
            None => Err(XmlError::TextOutsideRoot),
        }
    }

    fn finish(self) -> Result<Element, XmlError> {
        if let Some(unclosed) = self.open.last() {
            return Err(XmlError::Unclosed(clip(&unclosed.name)));
        }
        self.root.ok_or(XmlError::NoRoot)
    }
}

/// Adds text to `element`. A raw character outside XML's `Char` production (a C0 control,
/// U+FFFE, U+FFFF) makes the document ill-formed, as its character reference would be: refused,
/// so nothing is stored that no XML answer could carry back.
fn push_text(element: &mut Element, content: &str) -> Result<(), XmlError> {
    if let Some(ch) = content.chars().find(|&ch| !is_xml_char(ch)) {
        return Err(XmlError::Uncarried {
            element: clip(&element.name),
            code: u32::from(ch),
        });
    }
    element.text.push_str(content);
    Ok(())
}

#[cfg(test)]
mod attacks;
#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod tests;
