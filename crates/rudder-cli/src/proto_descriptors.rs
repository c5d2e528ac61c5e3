//! The protobuf descriptors behind `rudder invoke --proto`: `.proto` files parsed at run time with
//! protox (pure Rust, no protoc), the service and method a call names looked up in them with errors
//! that list what there is, and the `--list` view of services and methods.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use miette::Diagnostic;
use prost_reflect::{DescriptorPool, MethodDescriptor, ServiceDescriptor};
use rudder_common::error::{RpcError, RpcErrorKind};

/// Descriptors to call by, and the services they were asked for (those of the given files or those a
/// reflection service listed: not every service of every imported file).
#[derive(Debug, Clone)]
pub(crate) struct Descriptors {
    pub(crate) pool: DescriptorPool,
    /// Full names of the services to list, in the order they were found.
    pub(crate) services: Vec<String>,
    /// Where they came from, for messages: `greeter.proto`, `server reflection (grpc.reflection.v1)`.
    pub(crate) origin: String,
}

/// Parses `files` (and what they import) with `import_paths` as the include path; with no import
/// path, each file's own directory is one (as `protoc` would need `-I` for). A file that does not
/// parse is an error `FILE:LINE:COLUMN: message`.
pub(crate) fn load_files(files: &[PathBuf], import_paths: &[PathBuf]) -> Result<Descriptors> {
    // A file that is not there is said so, before the include paths are searched for it.
    let found = |f: &PathBuf| f.is_file() || import_paths.iter().any(|p| p.join(f).is_file());
    if let Some(missing) = files.iter().find(|f| !found(f)) {
        anyhow::bail!("--proto {}: no such file", missing.display());
    }
    let mut includes: Vec<PathBuf> = import_paths.to_vec();
    if includes.is_empty() {
        for file in files {
            let dir = match file.parent() {
                Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
                _ => PathBuf::from("."),
            };
            if !includes.contains(&dir) {
                includes.push(dir);
            }
        }
    }
    let mut compiler = protox::Compiler::new(&includes).map_err(|e| compile_error(&e, files))?;
    compiler.include_imports(true);
    compiler
        .open_files(files)
        .map_err(|e| compile_error(&e, files))?;
    let pool = compiler.descriptor_pool();
    let mut services = Vec::new();
    for file in compiler.files().filter(|f| !f.is_import()) {
        if let Some(descriptor) = pool.get_file_by_name(file.name()) {
            services.extend(descriptor.services().map(|s| s.full_name().to_owned()));
        }
    }
    let origin = files
        .iter()
        .map(|f| f.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    Ok(Descriptors {
        pool,
        services,
        origin,
    })
}

/// protox's error as one line: `proto/x.proto:3:7: expected ';', but found 'int32'` when it points at a
/// place in a source, else its message (with the file when it names one).
fn compile_error(error: &protox::Error, files: &[PathBuf]) -> anyhow::Error {
    if let Some(place) = place_of(error) {
        return anyhow::anyhow!("{place}: {error}");
    }
    match error.file() {
        Some(file) if !error.to_string().contains(file) => anyhow::anyhow!("{file}: {error}"),
        Some(_) => anyhow::anyhow!("{error}"),
        None => anyhow::anyhow!(
            "{error} (--proto {}; each file must be under an --import-path)",
            files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(" --proto ")
        ),
    }
}

/// `NAME:LINE:COLUMN` (1-based) of the error's first label, read through miette from the source it
/// carries.
fn place_of(error: &protox::Error) -> Option<String> {
    let label = error.labels()?.next()?;
    let source = error.source_code()?;
    let span = source.read_span(label.inner(), 0, 0).ok()?;
    let name = span
        .name()
        .map(str::to_owned)
        .or_else(|| error.file().map(str::to_owned))?;
    Some(format!(
        "{}:{}:{}",
        name,
        span.line() + 1,
        span.column() + 1
    ))
}

/// The service a call names: its full name (`pkg.Greeter`), else the one service of that simple name
/// (a Java interface `com.acme.Greeter` for the proto service `acme.v1.Greeter`). Unknown: a
/// `MethodNotFound` error (exit 1, as the POJO path's unknown method) listing the services there are.
pub(crate) fn find_service(
    descriptors: &Descriptors,
    name: &str,
) -> Result<ServiceDescriptor, RpcError> {
    if let Some(service) = descriptors.pool.get_service_by_name(name) {
        return Ok(service);
    }
    let simple = name.rsplit('.').next().unwrap_or(name);
    let mut same_name = descriptors
        .pool
        .services()
        .filter(|s| s.name() == simple && descriptors.services.iter().any(|n| n == s.full_name()));
    if let (Some(only), None) = (same_name.next(), same_name.next()) {
        return Ok(only);
    }
    Err(RpcError::new(
        RpcErrorKind::MethodNotFound,
        format!(
            "no service {name} in {}; services: {}",
            descriptors.origin,
            listed_or_none(&descriptors.services)
        ),
    ))
}

/// The method a call names in `service`: exactly, else the one method equal ignoring the case of the
/// first letter (Java's `sayHello` for the proto's `SayHello`). Unknown: a `MethodNotFound` error
/// listing the service's methods.
pub(crate) fn find_method(
    service: &ServiceDescriptor,
    name: &str,
) -> Result<MethodDescriptor, RpcError> {
    if let Some(method) = service.methods().find(|m| m.name() == name) {
        return Ok(method);
    }
    let mut near = service
        .methods()
        .filter(|m| first_letter_insensitive(m.name()) == first_letter_insensitive(name));
    if let (Some(only), None) = (near.next(), near.next()) {
        return Ok(only);
    }
    let methods: Vec<String> = service.methods().map(|m| m.name().to_owned()).collect();
    Err(RpcError::new(
        RpcErrorKind::MethodNotFound,
        format!(
            "{} has no method {name}; methods: {}",
            service.full_name(),
            listed_or_none(&methods)
        ),
    ))
}

fn first_letter_insensitive(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn listed_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// How a method streams: `unary`, `server streaming`, `client streaming`, `bidi streaming`.
pub(crate) fn streaming_kind(method: &MethodDescriptor) -> &'static str {
    match (method.is_client_streaming(), method.is_server_streaming()) {
        (false, false) => "unary",
        (false, true) => "server streaming",
        (true, false) => "client streaming",
        (true, true) => "bidi streaming",
    }
}

/// The `--list` text: each service, then one line per method in proto syntax with its streaming kind.
///
/// ```text
/// org.rudder.it.proto.Greeter
///   rpc SayHello(org.rudder.it.proto.HelloRequest) returns (org.rudder.it.proto.HelloReply); unary
/// ```
/// Only `only` when it is given (the service `--url` or `--interface` names).
pub(crate) fn listing(descriptors: &Descriptors, only: Option<&ServiceDescriptor>) -> String {
    let services: Vec<ServiceDescriptor> = match only {
        Some(service) => vec![service.clone()],
        None => descriptors
            .services
            .iter()
            .filter_map(|name| descriptors.pool.get_service_by_name(name))
            .collect(),
    };
    let mut text = String::new();
    for service in services {
        let _ = writeln!(text, "{}", service.full_name());
        for method in service.methods() {
            let stream = |yes: bool| if yes { "stream " } else { "" };
            let _ = writeln!(
                text,
                "  rpc {}({}{}) returns ({}{}); {}",
                method.name(),
                stream(method.is_client_streaming()),
                method.input().full_name(),
                stream(method.is_server_streaming()),
                method.output().full_name(),
                streaming_kind(&method)
            );
        }
    }
    text
}

/// The gRPC path of a method: `/pkg.Service/Method`.
pub(crate) fn grpc_path(method: &MethodDescriptor) -> String {
    format!("/{}/{}", method.parent_service().full_name(), method.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch directory holding `files`, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(tag: &str, files: &[(&str, &str)]) -> Scratch {
            let dir =
                std::env::temp_dir().join(format!("rudder-proto-{tag}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            for (name, text) in files {
                let path = dir.join(name);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, text).unwrap();
            }
            Scratch(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn greeter() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../proto/greeter.proto")
    }

    #[test]
    fn the_greeter_idl_loads_and_lists_with_streaming_kinds() {
        let descriptors = load_files(&[greeter()], &[]).unwrap();
        assert_eq!(descriptors.services, ["org.rudder.it.proto.Greeter"]);
        assert_eq!(
            listing(&descriptors, None),
            "org.rudder.it.proto.Greeter\n\
             \x20 rpc SayHello(org.rudder.it.proto.HelloRequest) returns (org.rudder.it.proto.HelloReply); unary\n\
             \x20 rpc SayHelloStream(org.rudder.it.proto.HelloStreamRequest) returns (stream org.rudder.it.proto.HelloReply); server streaming\n\
             \x20 rpc SayHelloChat(stream org.rudder.it.proto.HelloRequest) returns (stream org.rudder.it.proto.HelloReply); bidi streaming\n"
        );
    }

    #[test]
    fn services_and_methods_are_found_by_their_names_or_said_missing() {
        let descriptors = load_files(&[greeter()], &[]).unwrap();
        let service = find_service(&descriptors, "org.rudder.it.proto.Greeter").unwrap();
        assert_eq!(
            find_service(&descriptors, "com.acme.Greeter")
                .unwrap()
                .full_name(),
            "org.rudder.it.proto.Greeter"
        );
        let err = find_service(&descriptors, "x.Nope").unwrap_err();
        assert_eq!(err.kind(), RpcErrorKind::MethodNotFound);
        let err = err.message();
        assert!(
            err.starts_with("no service x.Nope in ")
                && err.ends_with("services: org.rudder.it.proto.Greeter"),
            "{err}"
        );
        assert_eq!(
            find_method(&service, "SayHello").unwrap().name(),
            "SayHello"
        );
        assert_eq!(
            find_method(&service, "sayHelloStream").unwrap().name(),
            "SayHelloStream"
        );
        assert_eq!(
            grpc_path(&find_method(&service, "sayHello").unwrap()),
            "/org.rudder.it.proto.Greeter/SayHello"
        );
        assert_eq!(
            find_method(&service, "Nope").unwrap_err().message(),
            "org.rudder.it.proto.Greeter has no method Nope; methods: SayHello, SayHelloStream, SayHelloChat"
        );
    }

    #[test]
    fn a_file_that_does_not_parse_names_its_line_and_column() {
        let scratch = Scratch::new(
            "parse",
            &[(
                "bad.proto",
                "syntax = \"proto3\";\npackage p;\nmessage M {\n  string name = 1\n  int32 x = 2;\n}\n",
            )],
        );
        let err = load_files(&[scratch.0.join("bad.proto")], &[])
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("bad.proto:5:3: "), "{err}");
    }

    #[test]
    fn an_unknown_type_and_a_missing_import_are_placed_too() {
        let scratch = Scratch::new(
            "check",
            &[
                (
                    "svc.proto",
                    "syntax = \"proto3\";\npackage p;\nservice S {\n  rpc M(Missing) returns (Missing);\n}\n",
                ),
                (
                    "imp.proto",
                    "syntax = \"proto3\";\nimport \"nowhere.proto\";\n",
                ),
            ],
        );
        let err = load_files(&[scratch.0.join("svc.proto")], &[])
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("svc.proto:4:9: "), "{err}");
        assert!(err.contains("Missing"), "{err}");
        let err = load_files(&[scratch.0.join("imp.proto")], &[])
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("imp.proto:2:"), "{err}");
        assert!(err.contains("nowhere.proto"), "{err}");
    }

    #[test]
    fn a_missing_file_is_said_to_be_missing() {
        let err = load_files(&[PathBuf::from("/no/such.proto")], &[])
            .unwrap_err()
            .to_string();
        assert_eq!(err, "--proto /no/such.proto: no such file");
    }

    #[test]
    fn imports_resolve_through_import_paths() {
        let scratch = Scratch::new(
            "imports",
            &[
                (
                    "lib/common.proto",
                    "syntax = \"proto3\";\npackage c;\nmessage Empty {}\n",
                ),
                (
                    "api/svc.proto",
                    "syntax = \"proto3\";\npackage a;\nimport \"common.proto\";\nimport \"google/protobuf/timestamp.proto\";\n\
                     service S { rpc Now(c.Empty) returns (google.protobuf.Timestamp); }\n",
                ),
            ],
        );
        let err = load_files(&[scratch.0.join("api/svc.proto")], &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("common.proto"), "{err}");
        let descriptors = load_files(
            &[scratch.0.join("api/svc.proto")],
            &[scratch.0.join("api"), scratch.0.join("lib")],
        )
        .unwrap();
        // Services of the files given, not of their imports.
        assert_eq!(descriptors.services, ["a.S"]);
        let missing = load_files(
            &[scratch.0.join("nope.proto")],
            std::slice::from_ref(&scratch.0),
        )
        .unwrap_err();
        assert!(missing.to_string().contains("nope.proto"), "{missing}");
    }
}
