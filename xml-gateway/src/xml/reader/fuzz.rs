//! Fuzz targets of the XML reader: arbitrary bytes, and documents built from XML's own pieces
//! (so generated input reaches deep states: attributes, references, CDATA, declarations,
//! nesting). Whatever comes in, the reader answers, never panics, and never quotes more than a
//! bounded amount of it back.

use proptest::prelude::*;

use super::*;
use crate::fuzz::config;

/// Longest message any refusal may have, whatever the input.
const MAX_MESSAGE_BYTES: usize = 512;

fn check(body: &[u8]) {
    match parse_tree(body) {
        Ok(root) => {
            assert!(!root.name.is_empty());
            assert!(!root.text.contains(['\u{0}']), "a NUL got through");
        }
        Err(error) => {
            let message = error.to_string();
            assert!(
                message.len() <= MAX_MESSAGE_BYTES,
                "{} bytes",
                message.len()
            );
        }
    }
}

/// A piece of XML: markup, references (good and bad), text, and the things the reader refuses.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z_][a-zA-Z0-9_.:-]{0,8}".prop_map(|name| format!("<{name}>")),
        "[a-zA-Z_][a-zA-Z0-9_.:-]{0,8}".prop_map(|name| format!("</{name}>")),
        "[a-zA-Z_][a-zA-Z0-9]{0,4}".prop_map(|name| format!("<{name}/>")),
        ("[a-z]{1,3}", "[a-z]{1,3}", "[^<&\"]{0,6}")
            .prop_map(|(tag, attribute, value)| format!("<{tag} {attribute}=\"{value}\">")),
        Just("<a x='1' x='2'/>".to_owned()),
        Just("<a x=1/>".to_owned()),
        Just("&amp;".to_owned()),
        Just("&lt;".to_owned()),
        Just("&ent;".to_owned()),
        Just("&#0;".to_owned()),
        Just("&#x1F600;".to_owned()),
        Just("&#xD800;".to_owned()),
        Just("&".to_owned()),
        Just("<![CDATA[x]]>".to_owned()),
        Just("<!-- c -->".to_owned()),
        Just("<!-- - -- -->".to_owned()),
        Just("<?pi x?>".to_owned()),
        Just("<?xml version=\"1.0\"?>".to_owned()),
        Just("<?xml version=\"1.0\" encoding=\"UTF-16\"?>".to_owned()),
        Just("<!DOCTYPE r [<!ENTITY e \"x\">]>".to_owned()),
        Just("]]>".to_owned()),
        "[ \t\r\n]{1,3}",
        "\\PC{0,8}",
    ]
}

proptest! {
    #![proptest_config(config(4_000))]

    #[test]
    fn fuzz_arbitrary_bytes_are_answered_without_panicking(body in proptest::collection::vec(any::<u8>(), 0..512)) {
        check(&body);
    }
}

proptest! {
    #![proptest_config(config(400))]

    #[test]
    fn fuzz_documents_of_xml_pieces_are_answered_without_panicking(
        pieces in proptest::collection::vec(piece(), 0..40)
    ) {
        check(pieces.concat().as_bytes());
        let wrapped = format!("<request>{}</request>", pieces.concat());
        check(wrapped.as_bytes());
    }

    #[test]
    fn fuzz_names_and_references_of_any_length_are_clipped_in_messages(
        name in "[a-z]{1,4}",
        repeat in 1_usize..5_000,
    ) {
        let long = name.repeat(repeat);
        for body in [
            format!("<{long}/>"),
            format!("<{long}>"),
            format!("<request>&{long};</request>"),
            format!("<request><{long}></x></request>"),
            format!("<request {long}=\"1\" {long}=\"2\"/>"),
            format!("<?xml version=\"1.0\" encoding=\"{long}\"?><request/>"),
        ] {
            check(body.as_bytes());
        }
    }
}
