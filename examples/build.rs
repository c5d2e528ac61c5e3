//! Generates the Greeter client and server of `proto/greeter.proto` for the protobuf example, with
//! no system protoc: protox parses the file, tonic's prost codegen writes the Rust.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "../proto/greeter.proto";
    println!("cargo:rerun-if-changed={proto}");
    let descriptors = protox::compile([proto], ["../proto"])?;
    tonic_prost_build::configure()
        .build_transport(false)
        .compile_fds(descriptors)?;
    Ok(())
}
