//! A JSON value that keeps its keys in the order they were written: the document's schemas
//! list properties in the XML's element order, which OpenAPI's XML serialization follows, so
//! a sorted map (what `serde_json::Value` is here) would describe the wrong order.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

/// One JSON value of the document.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    Bool(bool),
    Int(i64),
    Text(String),
    List(Vec<Node>),
    Object(Vec<(String, Node)>),
}

impl Node {
    /// The value under `key`, when this is an object that has it.
    #[cfg(test)]
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Object(entries) => entries
                .iter()
                .find_map(|(name, value)| (name == key).then_some(value)),
            _ => None,
        }
    }

    /// Sets `key` (replacing its value where it already is, else appending it).
    pub(crate) fn set(&mut self, key: &str, value: impl Into<Node>) {
        if let Node::Object(entries) = self {
            let value = value.into();
            match entries.iter_mut().find(|(name, _)| name == key) {
                Some((_, old)) => *old = value,
                None => entries.push((key.to_owned(), value)),
            }
        }
    }

    /// The document as pretty-printed JSON text, ending with a newline.
    pub(crate) fn to_pretty_text(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_else(|error| {
            tracing::error!(error = %error, "the OpenAPI document could not be written");
            "{}".to_owned()
        });
        text.push('\n');
        text
    }
}

impl From<&str> for Node {
    fn from(text: &str) -> Self {
        Node::Text(text.to_owned())
    }
}

impl From<String> for Node {
    fn from(text: String) -> Self {
        Node::Text(text)
    }
}

impl From<bool> for Node {
    fn from(flag: bool) -> Self {
        Node::Bool(flag)
    }
}

impl From<i64> for Node {
    fn from(number: i64) -> Self {
        Node::Int(number)
    }
}

impl From<u64> for Node {
    fn from(number: u64) -> Self {
        Node::Int(i64::try_from(number).unwrap_or(i64::MAX))
    }
}

impl From<usize> for Node {
    fn from(number: usize) -> Self {
        Node::Int(i64::try_from(number).unwrap_or(i64::MAX))
    }
}

impl From<Vec<Node>> for Node {
    fn from(items: Vec<Node>) -> Self {
        Node::List(items)
    }
}

impl From<Vec<&str>> for Node {
    fn from(items: Vec<&str>) -> Self {
        Node::List(items.into_iter().map(Node::from).collect())
    }
}

impl From<&[&str]> for Node {
    fn from(items: &[&str]) -> Self {
        Node::List(items.iter().copied().map(Node::from).collect())
    }
}

impl Serialize for Node {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Node::Bool(flag) => serializer.serialize_bool(*flag),
            Node::Int(number) => serializer.serialize_i64(*number),
            Node::Text(text) => serializer.serialize_str(text),
            Node::List(items) => {
                let mut list = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    list.serialize_element(item)?;
                }
                list.end()
            }
            Node::Object(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }
    }
}

/// An object, its keys in the order written: `object! { "type" => "string", "xml" => … }`.
macro_rules! object {
    ($($key:expr => $value:expr),* $(,)?) => {
        $crate::openapi::node::Node::Object(vec![
            $((::std::string::String::from($key), $crate::openapi::node::Node::from($value))),*
        ])
    };
}

/// A list: `list![a, b]`.
macro_rules! list {
    ($($item:expr),* $(,)?) => {
        $crate::openapi::node::Node::List(vec![$($crate::openapi::node::Node::from($item)),*])
    };
}

pub(crate) use {list, object};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_the_order_they_were_written_in() {
        let mut node = object! { "zeta" => 1_i64, "alpha" => list!["b", "a"], "mid" => true };
        node.set("alpha", "replaced");
        node.set("new", object! {});
        assert_eq!(
            serde_json::to_string(&node).unwrap(),
            r#"{"zeta":1,"alpha":"replaced","mid":true,"new":{}}"#
        );
        assert_eq!(node.get("mid"), Some(&Node::Bool(true)));
        assert_eq!(node.get("absent"), None);
    }
}
