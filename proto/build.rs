//! Compiles `lms.v1` with protox (pure Rust), so no `protoc` is needed on the machine.

use std::{env, path::PathBuf};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/lms/v1/lms.proto";
    println!("cargo:rerun-if-changed={proto}");
    let descriptors = protox::compile([proto], ["proto"])?;
    let out_dir = PathBuf::from(env::var("OUT_DIR")?);
    // compile_fds does not write the descriptor set itself; reflection needs it.
    std::fs::write(
        out_dir.join("lms_v1_descriptor.bin"),
        prost::Message::encode_to_vec(&descriptors),
    )?;
    tonic_prost_build::configure().compile_fds(descriptors)?;
    Ok(())
}
