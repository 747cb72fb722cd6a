//! The reader's rules (contract section 5), one behaviour per test, plus property-style checks
//! over generated input.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::xml::writer::XmlWriter;

fn parse(body: &str) -> Result<Element, XmlError> {
    parse_document(body.as_bytes(), "request")
}

fn message(body: &str) -> String {
    match parse(body) {
        Ok(root) => panic!("expected an error for {body:?}, got {root:?}"),
        Err(error) => error.to_string(),
    }
}

fn name_of(body: &str) -> Option<String> {
    parse(body).unwrap().optional_text("name").unwrap()
}

#[test]
fn a_simple_document_becomes_a_tree() {
    let root = parse("<request><name>Sales</name><code/></request>").unwrap();
    assert_eq!(root.name, "request");
    assert_eq!(root.children.len(), 2);
    assert_eq!(
        root.optional_text("name").unwrap().as_deref(),
        Some("Sales")
    );
    assert_eq!(root.optional_text("code").unwrap().as_deref(), Some(""));
    assert_eq!(root.optional_text("parentDepartmentId").unwrap(), None);
}

#[test]
fn a_utf8_byte_order_mark_is_allowed() {
    let mut body = b"\xEF\xBB\xBF".to_vec();
    body.extend_from_slice(br#"<?xml version="1.0" encoding="UTF-8"?><request/>"#);
    assert!(parse_document(&body, "request").is_ok());
}

#[test]
fn a_utf8_declaration_in_any_case_or_none_at_all_is_accepted() {
    for body in [
        r#"<?xml version="1.0" encoding="UTF-8"?><request/>"#,
        r#"<?xml version="1.0" encoding="utf-8"?><request/>"#,
        r#"<?xml version='1.0' encoding='Utf-8' standalone='yes'?><request/>"#,
        r#"<?xml version="1.0"?><request/>"#,
        "<request/>",
    ] {
        assert!(parse(body).is_ok(), "{body}");
    }
}

#[test]
fn a_declaration_naming_another_encoding_is_refused() {
    assert_eq!(
        message(r#"<?xml version="1.0" encoding="ISO-8859-1"?><request/>"#),
        "The XML declaration names encoding \"ISO-8859-1\"; only UTF-8 is accepted."
    );
    assert!(matches!(
        parse(r#"<?xml version="1.0" encoding="UTF-16"?><request/>"#),
        Err(XmlError::Encoding(_))
    ));
}

#[test]
fn a_declaration_must_come_first() {
    assert_eq!(
        message(r#"<!-- hi --><?xml version="1.0"?><request/>"#),
        "The XML declaration must come first in the document."
    );
    assert!(parse(r#"<request/><?xml version="1.0"?>"#).is_err());
}

#[test]
fn bytes_that_are_not_utf8_are_refused() {
    let latin1 = b"<request><name>Caf\xE9</name></request>";
    assert_eq!(parse_document(latin1, "request"), Err(XmlError::NotUtf8));
    let utf16: Vec<u8> = "\u{FEFF}<request/>"
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    assert_eq!(parse_document(&utf16, "request"), Err(XmlError::NotUtf8));
    assert_eq!(
        XmlError::NotUtf8.to_string(),
        "The request body is not valid UTF-8; only UTF-8 is accepted."
    );
}

#[test]
fn a_doctype_is_refused_before_anything_in_it_is_processed() {
    for body in [
        "<!DOCTYPE request><request/>",
        r#"<?xml version="1.0"?><!DOCTYPE request [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><request><name>&xxe;</name></request>"#,
        r#"<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><request>&lol2;</request>"#,
    ] {
        assert_eq!(parse(body), Err(XmlError::DocType), "{body}");
    }
    assert_eq!(
        XmlError::DocType.to_string(),
        "DOCTYPE declarations are not allowed."
    );
}

#[test]
fn an_unknown_entity_reference_is_refused_and_named() {
    assert_eq!(
        message("<request><name>&xxe;</name></request>"),
        "Entity reference &xxe; is not allowed."
    );
    assert_eq!(
        message("<request><name>&nbsp;</name></request>"),
        "Entity reference &nbsp; is not allowed."
    );
}

#[test]
fn an_unknown_entity_in_an_attribute_is_refused_too() {
    assert_eq!(
        message(r#"<request lang="&xxe;"/>"#),
        "Entity reference &xxe; is not allowed."
    );
    assert!(parse(r#"<request lang="a &amp; b"/>"#).is_ok());
}

#[test]
fn predefined_entities_and_character_references_are_decoded() {
    assert_eq!(
        name_of("<request><name>&lt;&gt;&amp;&apos;&quot; &#65;&#x42;&#x1F600;</name></request>")
            .as_deref(),
        Some("<>&'\" AB\u{1F600}")
    );
}

#[test]
fn character_references_to_characters_xml_forbids_are_refused() {
    for reference in [
        "#0", "#1", "#x8", "#xD800", "#xFFFE", "#x110000", "#xZZ", "#",
    ] {
        let body = format!("<request><name>&{reference};</name></request>");
        assert!(
            matches!(
                parse(&body),
                Err(XmlError::CharRef(_) | XmlError::Syntax { .. })
            ),
            "{reference}: {:?}",
            parse(&body)
        );
    }
    assert_eq!(
        message("<request><name>&#1;</name></request>"),
        "Character reference &#1; does not name an allowed XML character."
    );
}

#[test]
fn an_empty_body_is_refused() {
    for body in ["", "   \n\t ", "\u{FEFF}"] {
        assert_eq!(parse(body), Err(XmlError::Empty), "{body:?}");
    }
    assert_eq!(
        parse_document(b"\xEF\xBB\xBF", "request"),
        Err(XmlError::Empty)
    );
    assert_eq!(parse("<!-- only a comment -->"), Err(XmlError::NoRoot));
}

#[test]
fn documents_that_are_not_well_formed_are_refused() {
    for body in [
        "<request></requests>",
        "<request><name></request></name>",
        "<request>",
        "<request><name>x</name>",
        "</request>",
        "<request/>trailing garbage",
        "<request/><request/>",
        "<request/><other/>",
        "text before<request/>",
        "<request>a & b</request>",
        "<request><!-- unterminated </request>",
        "<request><!-- a -- b --></request>",
        "<request lang=en/>",
        r#"<request a="1" a="2"/>"#,
        "<request",
        "<request><![CDATA[unterminated</request>",
        "<request/>&amp;",
        "<request/><![CDATA[x]]>",
        "<>",
    ] {
        assert!(parse(body).is_err(), "{body:?} was accepted");
    }
}

#[test]
fn structural_errors_name_the_problem() {
    assert_eq!(
        message("<request/><other/>"),
        "Only one root element is allowed; found a second one, <other>."
    );
    assert_eq!(
        message("<request/>junk"),
        "Text is not allowed outside the root element."
    );
    assert_eq!(
        message("<request><name>x</name>"),
        "Element <request> is not closed."
    );
    assert!(
        message("<request></requests>").starts_with("The request body is not well-formed XML:"),
        "{}",
        message("<request></requests>")
    );
}

#[test]
fn whitespace_comments_and_processing_instructions_around_the_root_are_fine() {
    let body = "<?xml version=\"1.0\"?>\n<!-- note -->\n<?app hint?>\n<request>\n  <name>A</name>\n</request>\n<!-- end -->\n";
    assert_eq!(name_of(body).as_deref(), Some("A"));
}

#[test]
fn the_wrong_root_element_is_refused_and_named() {
    assert_eq!(
        message("<foo/>"),
        "Root element must be <request>, found <foo>."
    );
    assert_eq!(
        message("<Request/>"),
        "Root element must be <request>, found <Request>."
    );
}

#[test]
fn unknown_child_elements_are_ignored() {
    let root = parse("<request><colour>red</colour><name>A</name><x><y/></x></request>").unwrap();
    assert_eq!(root.optional_text("name").unwrap().as_deref(), Some("A"));
}

#[test]
fn a_single_valued_element_given_twice_is_refused() {
    let root = parse("<request><name>A</name><name>B</name></request>").unwrap();
    assert_eq!(
        root.optional_text("name").unwrap_err().to_string(),
        "Element <name> is given twice."
    );
}

#[test]
fn a_single_valued_element_holding_elements_is_refused() {
    let root = parse("<request><name><first>A</first></name></request>").unwrap();
    assert_eq!(
        root.optional_text("name").unwrap_err().to_string(),
        "Element <name> must hold text, not elements."
    );
}

#[test]
fn text_values_are_trimmed_but_inner_whitespace_is_kept() {
    assert_eq!(
        name_of("<request><name>\n\t  Sales  and   Marketing \r\n</name></request>").as_deref(),
        Some("Sales  and   Marketing")
    );
    // A no-break space is data, not XML whitespace.
    assert_eq!(
        name_of("<request><name>\u{A0}A\u{A0}</name></request>").as_deref(),
        Some("\u{A0}A\u{A0}")
    );
}

#[test]
fn line_ends_are_normalised() {
    assert_eq!(
        name_of("<request><name>a\r\nb\rc</name></request>").as_deref(),
        Some("a\nb\nc")
    );
}

#[test]
fn cdata_is_decoded_literally_and_joined_with_text() {
    assert_eq!(
        name_of("<request><name> R&amp;D <![CDATA[<&xxe;> & more]]> team </name></request>")
            .as_deref(),
        Some("R&D <&xxe;> & more team")
    );
}

#[test]
fn comments_inside_a_value_do_not_split_it() {
    assert_eq!(
        name_of("<request><name>Sa<!-- x -->les</name></request>").as_deref(),
        Some("Sales")
    );
}

fn nested(depth: usize) -> String {
    let mut body = String::from("<request>");
    for _ in 1..depth {
        body.push_str("<a>");
    }
    for _ in 1..depth {
        body.push_str("</a>");
    }
    body.push_str("</request>");
    body
}

#[test]
fn nesting_is_bounded() {
    assert!(parse(&nested(MAX_DEPTH)).is_ok());
    assert_eq!(parse(&nested(MAX_DEPTH + 1)), Err(XmlError::TooDeep));
    assert_eq!(
        XmlError::TooDeep.to_string(),
        "Elements are nested deeper than 16 levels."
    );
}

#[test]
fn the_number_of_elements_is_bounded() {
    let with_children = |count: usize| format!("<request>{}</request>", "<id/>".repeat(count));
    assert!(parse(&with_children(MAX_ELEMENTS - 1)).is_ok());
    assert_eq!(
        parse(&with_children(MAX_ELEMENTS)),
        Err(XmlError::TooManyElements)
    );
    assert_eq!(
        XmlError::TooManyElements.to_string(),
        "The document has more than 20000 elements."
    );
}

#[test]
fn names_with_prefixes_are_kept_as_written() {
    assert_eq!(
        message(r#"<x:request xmlns:x="urn:lms"/>"#),
        "Root element must be <request>, found <x:request>."
    );
    assert!(parse(r#"<request xmlns="urn:lms"><name>A</name></request>"#).is_ok());
}

// ---- property-style checks over generated input ----

const CASES: usize = 500;

/// A random string over an alphabet heavy in what XML treats specially.
fn random_text(rng: &mut StdRng) -> String {
    const PIECES: &[&str] = &[
        "a",
        "Z",
        "0",
        " ",
        "\t",
        "\n",
        "\r",
        "\r\n",
        "<",
        ">",
        "&",
        "'",
        "\"",
        ";",
        "#",
        "]]>",
        "<!--",
        "-->",
        "&amp;",
        "&#65;",
        "é",
        "日本",
        "\u{1F600}",
        "\u{A0}",
        "\u{0}",
        "\u{1}",
        "\u{B}",
        "\u{7F}",
        "\u{FFFE}",
        "\u{FFFF}",
        "\u{FEFF}",
        "/",
        "=",
        "?",
    ];
    let len = rng.random_range(0..24);
    (0..len)
        .map(|_| PIECES[rng.random_range(0..PIECES.len())])
        .collect()
}

/// What the writer promises to carry: every character XML allows, others as U+FFFD.
fn carried(text: &str) -> String {
    text.chars()
        .map(|ch| {
            if is_xml_char(ch) {
                ch
            } else {
                char::REPLACEMENT_CHARACTER
            }
        })
        .collect()
}

#[test]
fn property_written_text_reads_back_as_the_same_trimmed_value() {
    let mut rng = StdRng::seed_from_u64(0x5EED_0001);
    for _ in 0..CASES {
        let text = random_text(&mut rng);
        let mut xml = XmlWriter::document();
        xml.open("request")
            .text_element("name", &text)
            .close("request");
        let body = xml.finish();
        let root = parse(&body).unwrap_or_else(|error| panic!("{body:?}: {error}"));
        let read = root.optional_text("name").unwrap().unwrap_or_default();
        assert_eq!(
            read,
            trim_xml_whitespace(&carried(&text)),
            "{text:?} via {body:?}"
        );
    }
}

#[test]
fn property_every_proper_prefix_of_a_document_is_refused() {
    let body = "<?xml version=\"1.0\"?><request><name>A &amp; B</name><code><![CDATA[x]]></code></request>";
    for end in 0..body.len() {
        if body.is_char_boundary(end) {
            assert!(
                parse(&body[..end]).is_err(),
                "prefix {:?} was accepted",
                &body[..end]
            );
        }
    }
    assert!(parse(body).is_ok());
}

#[test]
fn property_mutated_documents_never_panic_and_never_yield_unknown_entities() {
    let seed =
        "<request><name>A &lt; B</name><parentDepartmentId>p</parentDepartmentId><code/></request>";
    let inserts: &[&[u8]] = &[
        b"<",
        b">",
        b"&",
        b"&xxe;",
        b"<!DOCTYPE x>",
        b"</name>",
        b"<name>",
        b"\xFF",
        b"\xC3",
        b";",
        b"<![CDATA[",
        b"]]>",
        b"\"",
        b"=",
        b"<?xml version=\"1.0\"?>",
        b"&#0;",
    ];
    let mut rng = StdRng::seed_from_u64(0x5EED_0002);
    for _ in 0..CASES * 4 {
        let mut body = seed.as_bytes().to_vec();
        for _ in 0..rng.random_range(1..4) {
            let at = rng.random_range(0..=body.len());
            match rng.random_range(0..3) {
                0 => {
                    let insert = inserts[rng.random_range(0..inserts.len())];
                    body.splice(at..at, insert.iter().copied());
                }
                1 if at < body.len() => {
                    body.remove(at);
                }
                _ => body.truncate(at),
            }
        }
        if let Ok(root) = parse_document(&body, "request") {
            fn no_raw_entities(element: &Element) {
                assert!(!element.text.contains("&xxe;"), "{element:?}");
                element.children.iter().for_each(no_raw_entities);
            }
            no_raw_entities(&root);
        }
    }
}
