//! Checks of `lms.v1` itself, over the descriptors protox compiles from the `.proto`:
//!
//! - every service, RPC, message, field, enum and enum value has a leading comment (what
//!   `buf lint`'s COMMENTS rules ask; CI also runs `buf lint` itself when it can install it);
//! - nothing that a deployed client or server relies on changed since the committed descriptor
//!   set `proto/lms.v1.binpb`: no message, field, enum value, service or RPC removed (a field or
//!   value may go only with its number and name reserved), no field renumbered, renamed, retyped
//!   or moved between singular, `optional` and `repeated`, no RPC's types or streaming changed.
//!   Adding is free.
//!
//! An intentional change of the contract is blessed by rewriting the committed set:
//! `LMS_BLESS_PROTO=1 cargo test -p lms-proto --test contract`, then committing
//! `proto/lms.v1.binpb` with the change (docs/decisions.md, "The gRPC contract (`lms.v1`)").

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use prost::Message as _;
use prost_types::{
    DescriptorProto, EnumDescriptorProto, FileDescriptorProto, FileDescriptorSet,
    field_descriptor_proto::Label, source_code_info::Location,
};

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn compile(include_source_info: bool) -> FileDescriptorSet {
    let mut compiler = protox::Compiler::new([crate_dir().join("proto")]).expect("the proto root");
    compiler.include_source_info(include_source_info);
    compiler
        .open_file("lms/v1/lms.proto")
        .expect("lms.v1 compiles");
    compiler.file_descriptor_set()
}

fn lms_file(set: &FileDescriptorSet) -> &FileDescriptorProto {
    set.file
        .iter()
        .find(|file| file.name() == "lms/v1/lms.proto")
        .expect("lms/v1/lms.proto in the set")
}

// ---------------------------------------------------------------------------------------------
// Comments

/// Field numbers of `FileDescriptorProto`, `DescriptorProto`, … as used in source-info paths.
mod path {
    pub(super) const FILE_MESSAGE: i32 = 4;
    pub(super) const FILE_ENUM: i32 = 5;
    pub(super) const FILE_SERVICE: i32 = 6;
    pub(super) const MESSAGE_FIELD: i32 = 2;
    pub(super) const MESSAGE_NESTED: i32 = 3;
    pub(super) const MESSAGE_ENUM: i32 = 4;
    pub(super) const ENUM_VALUE: i32 = 2;
    pub(super) const SERVICE_METHOD: i32 = 2;
}

/// Every element that must be documented: its name for the report and its source-info path.
fn documentable(file: &FileDescriptorProto) -> Vec<(String, Vec<i32>)> {
    fn index(i: usize) -> i32 {
        i32::try_from(i).expect("few elements")
    }
    fn enums(
        out: &mut Vec<(String, Vec<i32>)>,
        prefix: &[i32],
        tag: i32,
        list: &[EnumDescriptorProto],
        scope: &str,
    ) {
        for (i, e) in list.iter().enumerate() {
            let at = [prefix, &[tag, index(i)]].concat();
            let name = format!("{scope}{}", e.name());
            for (j, value) in e.value.iter().enumerate() {
                out.push((
                    format!("enum value {name}.{}", value.name()),
                    [&at[..], &[path::ENUM_VALUE, index(j)]].concat(),
                ));
            }
            out.push((format!("enum {name}"), at));
        }
    }
    fn messages(
        out: &mut Vec<(String, Vec<i32>)>,
        prefix: &[i32],
        tag: i32,
        list: &[DescriptorProto],
        scope: &str,
    ) {
        for (i, m) in list.iter().enumerate() {
            let at = [prefix, &[tag, index(i)]].concat();
            let name = format!("{scope}{}", m.name());
            for (j, field) in m.field.iter().enumerate() {
                out.push((
                    format!("field {name}.{}", field.name()),
                    [&at[..], &[path::MESSAGE_FIELD, index(j)]].concat(),
                ));
            }
            let scope = format!("{name}.");
            messages(out, &at, path::MESSAGE_NESTED, &m.nested_type, &scope);
            enums(out, &at, path::MESSAGE_ENUM, &m.enum_type, &scope);
            out.push((format!("message {name}"), at));
        }
    }
    let mut out = Vec::new();
    messages(&mut out, &[], path::FILE_MESSAGE, &file.message_type, "");
    enums(&mut out, &[], path::FILE_ENUM, &file.enum_type, "");
    for (i, service) in file.service.iter().enumerate() {
        let at = vec![path::FILE_SERVICE, index(i)];
        for (j, method) in service.method.iter().enumerate() {
            out.push((
                format!("rpc {}.{}", service.name(), method.name()),
                [&at[..], &[path::SERVICE_METHOD, index(j)]].concat(),
            ));
        }
        out.push((format!("service {}", service.name()), at));
    }
    out
}

/// The elements of `file` without a leading comment.
fn undocumented(file: &FileDescriptorProto) -> Vec<String> {
    let locations: BTreeMap<&[i32], &Location> = file
        .source_code_info
        .as_ref()
        .expect("compiled with source info")
        .location
        .iter()
        .map(|location| (&location.path[..], location))
        .collect();
    documentable(file)
        .into_iter()
        .filter(|(_, at)| {
            locations
                .get(&at[..])
                .is_none_or(|location| location.leading_comments().trim().is_empty())
        })
        .map(|(name, _)| name)
        .collect()
}

#[test]
fn every_service_rpc_message_field_enum_and_value_is_documented() {
    let set = compile(true);
    let file = lms_file(&set);
    let missing = undocumented(file);
    assert!(
        missing.is_empty(),
        "lms.v1 elements without a leading comment:\n  {}",
        missing.join("\n  ")
    );
    // The walk reaches every kind of element it claims to check.
    let checked = documentable(file);
    for kind in [
        "service ",
        "rpc ",
        "message ",
        "field ",
        "enum ",
        "enum value ",
    ] {
        assert!(
            checked.iter().any(|(name, _)| name.starts_with(kind)),
            "{kind}"
        );
    }
}

#[test]
fn the_comment_check_finds_an_undocumented_field() {
    let source =
        std::fs::read_to_string(crate_dir().join("proto/lms/v1/lms.proto")).expect("the proto");
    let stripped = source.replacen("  // The user's new total.\n", "", 1);
    assert_ne!(source, stripped, "the comment to remove is in the proto");
    let temp = tempfile::tempdir().expect("a temporary folder");
    let dir = temp.path();
    std::fs::create_dir_all(dir.join("lms/v1")).expect("a folder");
    std::fs::write(dir.join("lms/v1/lms.proto"), stripped).expect("written");
    let mut compiler = protox::Compiler::new([dir]).expect("the root");
    compiler.include_source_info(true);
    compiler.open_file("lms/v1/lms.proto").expect("compiles");
    let set = compiler.file_descriptor_set();
    assert_eq!(
        undocumented(lms_file(&set)),
        ["field AddPointsResponse.total"]
    );
}

// ---------------------------------------------------------------------------------------------
// Breaking changes

const COMMITTED: &str = "lms.v1.binpb";

/// What a compatible change keeps of a field.
#[derive(Debug, PartialEq, Eq)]
struct FieldShape {
    name: String,
    type_: prost_types::field_descriptor_proto::Type,
    type_name: String,
    cardinality: &'static str,
    oneof: Option<String>,
}

/// An enum's values by number, and its reserved numbers and names.
type EnumValues = (BTreeMap<i32, String>, BTreeSet<i32>, BTreeSet<String>);

/// One way of breaking the contract: the problem expected, and the change to the descriptors.
type Break<'a> = (&'a str, &'a dyn Fn(&mut FileDescriptorSet));

#[derive(Debug, Default)]
struct Contract {
    package: String,
    /// Message full name → field number → shape.
    messages: BTreeMap<String, BTreeMap<i32, FieldShape>>,
    /// Message full name → (reserved numbers, reserved names).
    reserved: BTreeMap<String, (BTreeSet<i32>, BTreeSet<String>)>,
    /// Enum full name → its values.
    enums: BTreeMap<String, EnumValues>,
    /// `Service/Method` → (input, output, client streaming, server streaming).
    methods: BTreeMap<String, (String, String, bool, bool)>,
}

impl Contract {
    fn of(set: &FileDescriptorSet) -> Self {
        let file = lms_file(set);
        let mut contract = Contract {
            package: file.package().to_owned(),
            ..Contract::default()
        };
        let scope = format!(".{}", file.package());
        for message in &file.message_type {
            contract.add_message(&scope, message);
        }
        for e in &file.enum_type {
            contract.add_enum(&scope, e);
        }
        for service in &file.service {
            for method in &service.method {
                contract.methods.insert(
                    format!("{}/{}", service.name(), method.name()),
                    (
                        method.input_type().to_owned(),
                        method.output_type().to_owned(),
                        method.client_streaming(),
                        method.server_streaming(),
                    ),
                );
            }
        }
        contract
    }

    fn add_message(&mut self, scope: &str, message: &DescriptorProto) {
        let name = format!("{scope}.{}", message.name());
        let fields = message
            .field
            .iter()
            .map(|field| {
                let cardinality = if field.label() == Label::Repeated {
                    "repeated"
                } else if field.proto3_optional() {
                    "optional"
                } else {
                    "singular"
                };
                // proto3 `optional` lives in a synthetic oneof, which is not a real one.
                let oneof = field
                    .oneof_index
                    .filter(|_| !field.proto3_optional())
                    .map(|i| {
                        message.oneof_decl[usize::try_from(i).expect("index")]
                            .name()
                            .to_owned()
                    });
                (
                    field.number(),
                    FieldShape {
                        name: field.name().to_owned(),
                        type_: field.r#type(),
                        type_name: field.type_name().to_owned(),
                        cardinality,
                        oneof,
                    },
                )
            })
            .collect();
        let reserved_numbers = message
            .reserved_range
            .iter()
            .flat_map(|range| range.start()..range.end())
            .collect();
        let reserved_names = message.reserved_name.iter().cloned().collect();
        self.messages.insert(name.clone(), fields);
        self.reserved
            .insert(name.clone(), (reserved_numbers, reserved_names));
        for nested in &message.nested_type {
            self.add_message(&name, nested);
        }
        for e in &message.enum_type {
            self.add_enum(&name, e);
        }
    }

    fn add_enum(&mut self, scope: &str, e: &EnumDescriptorProto) {
        let values = e
            .value
            .iter()
            .map(|value| (value.number(), value.name().to_owned()))
            .collect();
        // Enum reserved ranges are inclusive of their end.
        let numbers = e
            .reserved_range
            .iter()
            .flat_map(|range| range.start()..=range.end())
            .collect();
        let names = e.reserved_name.iter().cloned().collect();
        self.enums
            .insert(format!("{scope}.{}", e.name()), (values, numbers, names));
    }
}

/// What `current` breaks of `committed`, one line each.
fn breaking_changes(committed: &Contract, current: &Contract) -> Vec<String> {
    let mut problems = Vec::new();
    if committed.package != current.package {
        problems.push(format!(
            "package renamed from {} to {}",
            committed.package, current.package
        ));
    }
    for (message, fields) in &committed.messages {
        let Some(now) = current.messages.get(message) else {
            problems.push(format!("message {message} removed"));
            continue;
        };
        let (reserved_numbers, reserved_names) = &current.reserved[message];
        for (number, was) in fields {
            match now.get(number) {
                None if reserved_numbers.contains(number) && reserved_names.contains(&was.name) => {
                }
                None => problems.push(format!(
                    "field {message}.{} (= {number}) removed without reserving its number and name",
                    was.name
                )),
                Some(is) if is != was => problems.push(format!(
                    "field {message} = {number} changed from {was:?} to {is:?}"
                )),
                Some(_) => {}
            }
        }
    }
    for (e, (values, _, _)) in &committed.enums {
        let Some((now, reserved_numbers, reserved_names)) = current.enums.get(e) else {
            problems.push(format!("enum {e} removed"));
            continue;
        };
        for (number, name) in values {
            match now.get(number) {
                None if reserved_numbers.contains(number) && reserved_names.contains(name) => {}
                None => problems.push(format!(
                    "enum value {e}.{name} (= {number}) removed without reserving its number and name"
                )),
                Some(is) if is != name => problems.push(format!(
                    "enum value {e} = {number} renamed from {name} to {is}"
                )),
                Some(_) => {}
            }
        }
    }
    for (method, was) in &committed.methods {
        match current.methods.get(method) {
            None => problems.push(format!("rpc {method} removed")),
            Some(is) if is != was => problems.push(format!(
                "rpc {method} changed from {was:?} to {is:?} (input, output, client and server streaming)"
            )),
            Some(_) => {}
        }
    }
    problems
}

/// The committed set as it is written: without source info, so only the contract shows in
/// its diffs.
fn committed_bytes(set: &FileDescriptorSet) -> Vec<u8> {
    set.encode_to_vec()
}

fn committed_path() -> PathBuf {
    crate_dir().join(COMMITTED)
}

fn read_committed(path: &Path) -> FileDescriptorSet {
    let bytes = std::fs::read(path).unwrap_or_else(|error| {
        panic!(
            "cannot read {}: {error}; write it with LMS_BLESS_PROTO=1 cargo test -p lms-proto --test contract",
            path.display()
        )
    });
    FileDescriptorSet::decode(&bytes[..]).expect("the committed descriptor set decodes")
}

#[test]
fn lms_v1_breaks_nothing_of_the_committed_descriptor_set() {
    let current = compile(false);
    let path = committed_path();
    if std::env::var_os("LMS_BLESS_PROTO").is_some() {
        std::fs::write(&path, committed_bytes(&current)).expect("the committed set is written");
    }
    let committed = read_committed(&path);
    let problems = breaking_changes(&Contract::of(&committed), &Contract::of(&current));
    assert!(
        problems.is_empty(),
        "lms.v1 breaks clients of {}:\n  {}\nAn intentional break is blessed with \
         LMS_BLESS_PROTO=1 cargo test -p lms-proto --test contract (see docs/decisions.md).",
        path.display(),
        problems.join("\n  ")
    );
    assert!(
        committed_bytes(&current) == std::fs::read(&path).expect("read"),
        "lms.v1 grew since {} was written: compatible, but bless it (LMS_BLESS_PROTO=1 cargo \
         test -p lms-proto --test contract) so the next change is checked against it",
        path.display()
    );
}

#[test]
fn the_breaking_check_finds_each_kind_of_break() {
    let base = Contract::of(&compile(false));
    let broken = |change: &dyn Fn(&mut FileDescriptorSet)| {
        let mut set = compile(false);
        change(&mut set);
        breaking_changes(&base, &Contract::of(&set))
    };
    fn file(set: &mut FileDescriptorSet) -> &mut FileDescriptorProto {
        set.file
            .iter_mut()
            .find(|f| f.name() == "lms/v1/lms.proto")
            .expect("the file")
    }
    fn message<'a>(set: &'a mut FileDescriptorSet, name: &str) -> &'a mut DescriptorProto {
        file(set)
            .message_type
            .iter_mut()
            .find(|m| m.name() == name)
            .expect("the message")
    }
    let cases: [Break; 7] = [
        ("field .lms.v1.Group.name (= 2) removed", &|set| {
            message(set, "Group").field.retain(|f| f.name() != "name");
        }),
        ("field .lms.v1.Group = 3 changed", &|set| {
            let field = message(set, "Group")
                .field
                .iter_mut()
                .find(|f| f.number() == 3)
                .expect("users_count");
            field.set_type(prost_types::field_descriptor_proto::Type::Int32);
        }),
        ("field .lms.v1.Group = 2 changed", &|set| {
            message(set, "Group")
                .field
                .iter_mut()
                .find(|f| f.number() == 2)
                .expect("name")
                .name = Some("title".to_owned());
        }),
        ("field .lms.v1.Group = 4 changed", &|set| {
            message(set, "Group")
                .field
                .iter_mut()
                .find(|f| f.number() == 4)
                .expect("user_ids")
                .set_label(Label::Optional);
        }),
        ("message .lms.v1.UserPoints removed", &|set| {
            file(set).message_type.retain(|m| m.name() != "UserPoints");
        }),
        (
            "enum value .lms.v1.Role.ROLE_LEARNER (= 6) removed",
            &|set| {
                file(set).enum_type[0]
                    .value
                    .retain(|v| v.name() != "ROLE_LEARNER");
            },
        ),
        ("rpc DirectoryService/AddPoints removed", &|set| {
            file(set)
                .service
                .iter_mut()
                .for_each(|s| s.method.retain(|m| m.name() != "AddPoints"));
        }),
    ];
    for (expected, change) in cases {
        let problems = broken(change);
        assert!(
            problems.iter().any(|p| p.starts_with(expected)),
            "{expected:?} not in {problems:?}"
        );
    }
    // Adding is not a break.
    let added = broken(&|set| {
        let mut field = message(set, "Group").field[0].clone();
        field.name = Some("added".to_owned());
        field.number = Some(99);
        message(set, "Group").field.push(field);
    });
    assert!(added.is_empty(), "{added:?}");
}
