//! gRPC server reflection, the client side: the descriptors of a provider's services asked of the
//! provider itself (`grpc.reflection.v1`, else `grpc.reflection.v1alpha`), so `rudder invoke` needs no
//! `.proto` file when the provider serves reflection (grpc-java, grpc-go, grpcio, tonic-reflection,
//! Dubbo 3's Triple all can).
//!
//! Bounded: each answer by [`MAX_ANSWER`] or the payload limit (tonic's decoding limit), the files asked for by
//! [`MAX_FILES`], the services listed by [`MAX_SERVICES`], every request by the call deadline.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use bytes::Bytes;
use http::uri::PathAndQuery;
use prost::Message as _;
use prost_reflect::DescriptorPool;
use prost_types::FileDescriptorProto;
use protox::file::{FileResolver, GoogleFileResolver};
use tonic::body::Body;
use tonic::client::GrpcService;
use tonic::{Code, Status};
use tonic_prost::ProstCodec;
use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
use tonic_reflection::pb::v1::{ServerReflectionRequest, ServerReflectionResponse};

use crate::proto_descriptors::Descriptors;

/// The most files one reflection walk fetches (a service's file and everything it imports).
pub(crate) const MAX_FILES: usize = 1024;
/// The largest reflection answer read (unless the call's `payload` is larger), bytes: descriptors are
/// not call messages, and a small `payload` must not hide a provider's services.
pub(crate) const MAX_ANSWER: usize = 4 << 20;
/// The most services a `list` answer may name.
pub(crate) const MAX_SERVICES: usize = 1024;

/// The reflection services, newest first. v1alpha's messages are v1's, field for field (v1 is the
/// same file under a new package), so one set of prost types speaks both; only the path differs.
const VERSIONS: [(&str, &str); 2] = [
    (
        "grpc.reflection.v1",
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    ),
    (
        "grpc.reflection.v1alpha",
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
    ),
];

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why reflection gave no descriptors.
#[derive(Debug)]
pub(crate) enum ReflectionError {
    /// The provider serves neither reflection version (or could not be asked at all): the statuses.
    NotServed(String),
    /// It serves reflection, but not for what was asked (`NOT_FOUND`), or a symbol's file is broken.
    Unknown(String),
    /// A request failed.
    Failed(Status),
}

impl std::fmt::Display for ReflectionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReflectionError::NotServed(why) => write!(
                f,
                "the provider serves no gRPC reflection (grpc.reflection.v1 or v1alpha): {why}; give --proto FILE"
            ),
            ReflectionError::Unknown(why) => write!(f, "{why}"),
            ReflectionError::Failed(status) => write!(
                f,
                "server reflection failed: grpc-status {} {:?}: {}",
                i32::from(status.code()),
                status.code(),
                status.message()
            ),
        }
    }
}

impl std::error::Error for ReflectionError {}

/// A reflection client on one transport, speaking the version the provider answered first.
struct Reflection<T> {
    channel: T,
    version: &'static str,
    path: PathAndQuery,
    timeout: Duration,
    payload: usize,
}

impl<T> Reflection<T>
where
    T: GrpcService<Body> + Clone,
    T::ResponseBody: http_body::Body<Data = Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error: Into<BoxError>,
{
    /// One request on a stream of its own, and its one answer; an `ErrorResponse` is its status.
    async fn ask(&self, request: MessageRequest) -> Result<MessageResponse, Status> {
        let mut grpc =
            tonic::client::Grpc::new(self.channel.clone()).max_decoding_message_size(self.payload);
        grpc.ready()
            .await
            .map_err(|e| Status::unavailable(format!("not ready: {}", e.into())))?;
        let message = ServerReflectionRequest {
            host: String::new(),
            message_request: Some(request),
        };
        let mut call = tonic::Request::new(tokio_stream::iter([message]));
        call.set_timeout(self.timeout);
        let codec = ProstCodec::<ServerReflectionRequest, ServerReflectionResponse>::default();
        let exchange = async {
            let mut answers = grpc
                .streaming(call, self.path.clone(), codec)
                .await?
                .into_inner();
            let answer = answers
                .message()
                .await?
                .ok_or_else(|| Status::internal("the reflection stream ended without an answer"))?;
            // Our side ended after one request: the server ends its side too (read it to the end, so
            // the stream closes cleanly instead of being reset).
            if answers.message().await?.is_some() {
                return Err(Status::internal("two answers to one reflection request"));
            }
            Ok(answer)
        };
        let answer = tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| {
                Status::deadline_exceeded(format!(
                    "no reflection answer within {} ms",
                    self.timeout.as_millis()
                ))
            })??;
        match answer.message_response {
            Some(MessageResponse::ErrorResponse(error)) => Err(Status::new(
                Code::from(error.error_code),
                error.error_message,
            )),
            Some(response) => Ok(response),
            None => Err(Status::internal("an empty reflection answer")),
        }
    }

    /// The files of one answer, each decoded (bounded by the answer, which tonic bounded).
    async fn files(&self, request: MessageRequest) -> Result<Vec<FileDescriptorProto>, Status> {
        match self.ask(request).await? {
            MessageResponse::FileDescriptorResponse(response) => response
                .file_descriptor_proto
                .iter()
                .map(|bytes| {
                    FileDescriptorProto::decode(bytes.as_slice()).map_err(|e| {
                        Status::internal(format!(
                            "a reflected file is not a FileDescriptorProto: {e}"
                        ))
                    })
                })
                .collect(),
            _ => Err(Status::internal("the reflection answer holds no files")),
        }
    }

    async fn services(&self) -> Result<Vec<String>, Status> {
        match self
            .ask(MessageRequest::ListServices(String::new()))
            .await?
        {
            MessageResponse::ListServicesResponse(list) if list.service.len() <= MAX_SERVICES => {
                Ok(list.service.into_iter().map(|s| s.name).collect())
            }
            MessageResponse::ListServicesResponse(list) => Err(Status::out_of_range(format!(
                "the provider lists {} services, more than {MAX_SERVICES}",
                list.service.len()
            ))),
            _ => Err(Status::internal(
                "the reflection answer holds no service list",
            )),
        }
    }
}

/// Connects: the first version that answers a service list. Every other failure on both versions
/// means the provider serves no reflection we can use.
async fn connect<T>(
    channel: T,
    timeout: Duration,
    payload: usize,
) -> Result<(Reflection<T>, Vec<String>), ReflectionError>
where
    T: GrpcService<Body> + Clone,
    T::ResponseBody: http_body::Body<Data = Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error: Into<BoxError>,
{
    let mut statuses = Vec::new();
    for (version, path) in VERSIONS {
        let reflection = Reflection {
            channel: channel.clone(),
            version,
            path: PathAndQuery::from_static(path),
            timeout,
            payload,
        };
        match reflection.services().await {
            Ok(services) => return Ok((reflection, services)),
            Err(status) if status.code() == Code::Unimplemented => {
                statuses.push(format!("{version}: UNIMPLEMENTED"));
            }
            // Not reachable at all: asking the other version would only wait again.
            Err(status) if matches!(status.code(), Code::Unavailable | Code::DeadlineExceeded) => {
                return Err(ReflectionError::Failed(status));
            }
            Err(status) => statuses.push(format!(
                "{version}: {:?} {}",
                status.code(),
                status.message()
            )),
        }
    }
    Err(ReflectionError::NotServed(statuses.join("; ")))
}

/// The descriptors of `service` (or, without one, of every service the provider lists) through the
/// provider's reflection service, with every file they import.
pub(crate) async fn descriptors<T>(
    channel: T,
    service: Option<&str>,
    timeout: Duration,
    payload: usize,
) -> Result<Descriptors, ReflectionError>
where
    T: GrpcService<Body> + Clone,
    T::ResponseBody: http_body::Body<Data = Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error: Into<BoxError>,
{
    let (reflection, listed) = connect(channel, timeout, payload).await?;
    let wanted: Vec<String> = match service {
        Some(service) => match listed_as(&listed, service) {
            Some(name) => vec![name.to_owned()],
            None => {
                return Err(ReflectionError::Unknown(format!(
                    "the provider's reflection lists no service {service}; it lists: {}",
                    listed.join(", ")
                )))
            }
        },
        None => listed.clone(),
    };
    let mut walk = FileWalk::default();
    for name in &wanted {
        let files = reflection
            .files(MessageRequest::FileContainingSymbol(name.clone()))
            .await
            .map_err(|status| match status.code() {
                Code::NotFound => ReflectionError::Unknown(format!(
                    "the provider's reflection has no descriptor of {name}: {}",
                    status.message()
                )),
                _ => ReflectionError::Failed(status),
            })?;
        walk.add(files)?;
    }
    while let Some(missing) = walk.next_missing() {
        let files = match reflection
            .files(MessageRequest::FileByFilename(missing.clone()))
            .await
        {
            Ok(files) => files,
            // Some servers do not serve the well-known types they import: protox has them built in.
            Err(status) if status.code() == Code::NotFound => {
                match GoogleFileResolver::new().open_file(&missing) {
                    Ok(file) => vec![file.file_descriptor_proto().clone()],
                    Err(_) => {
                        return Err(ReflectionError::Unknown(format!(
                        "the provider's reflection has no file {missing}, which its services import"
                    )))
                    }
                }
            }
            Err(status) => return Err(ReflectionError::Failed(status)),
        };
        walk.add(files)?;
        walk.asked(missing);
    }
    let mut pool = DescriptorPool::new();
    pool.add_file_descriptor_protos(walk.files.into_values())
        .map_err(|e| {
            ReflectionError::Unknown(format!(
                "the reflected descriptors do not fit together: {e}"
            ))
        })?;
    Ok(Descriptors {
        pool,
        services: wanted
            .into_iter()
            .filter(|s| !s.starts_with("grpc.reflection."))
            .collect(),
        origin: format!("the provider's server reflection ({})", reflection.version),
    })
}

/// How `listed` names `service`: exactly, else the one listed service of the same simple name (a Java
/// interface `com.acme.Greeter` for the proto service `acme.v1.Greeter`, as `--proto` files match it).
fn listed_as<'a>(listed: &'a [String], service: &str) -> Option<&'a str> {
    if let Some(exact) = listed.iter().find(|s| *s == service) {
        return Some(exact);
    }
    let simple = |name: &str| name.rsplit('.').next().unwrap_or(name).to_owned();
    let mut same = listed.iter().filter(|s| simple(s) == simple(service));
    match (same.next(), same.next()) {
        (Some(only), None) => Some(only),
        _ => None,
    }
}

/// The files fetched so far and the imports still to fetch.
#[derive(Debug, Default)]
struct FileWalk {
    files: BTreeMap<String, FileDescriptorProto>,
    /// Imports asked for by name whose answer did not hold a file of that name (never asked again).
    asked: BTreeSet<String>,
}

impl FileWalk {
    fn add(&mut self, files: Vec<FileDescriptorProto>) -> Result<(), ReflectionError> {
        for file in files {
            let name = file.name().to_owned();
            self.files.entry(name).or_insert(file);
            if self.files.len() > MAX_FILES {
                return Err(ReflectionError::Unknown(format!(
                    "the provider's descriptors span more than {MAX_FILES} files"
                )));
            }
        }
        Ok(())
    }

    fn asked(&mut self, name: String) {
        self.asked.insert(name);
    }

    /// An import of a fetched file that is neither fetched nor asked for yet.
    fn next_missing(&self) -> Option<String> {
        self.files
            .values()
            .flat_map(|f| f.dependency.iter())
            .find(|d| !self.files.contains_key(*d) && !self.asked.contains(*d))
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, deps: &[&str]) -> FileDescriptorProto {
        FileDescriptorProto {
            name: Some(name.to_owned()),
            dependency: deps.iter().map(|d| (*d).to_owned()).collect(),
            ..FileDescriptorProto::default()
        }
    }

    #[test]
    fn the_walk_asks_each_missing_import_once() {
        let mut walk = FileWalk::default();
        walk.add(vec![file("a.proto", &["b.proto", "c.proto"])])
            .unwrap();
        assert_eq!(walk.next_missing().as_deref(), Some("b.proto"));
        walk.add(vec![file("b.proto", &["c.proto"])]).unwrap();
        walk.asked("b.proto".into());
        assert_eq!(walk.next_missing().as_deref(), Some("c.proto"));
        // An answer that does not hold the file asked for: not asked again, and the walk ends.
        walk.add(vec![file("b.proto", &[])]).unwrap();
        walk.asked("c.proto".into());
        assert_eq!(walk.next_missing(), None);
    }

    #[test]
    fn a_service_is_found_in_the_list_by_its_name_or_its_one_simple_name() {
        let listed = [
            "acme.v1.Greeter".to_owned(),
            "grpc.reflection.v1alpha.ServerReflection".to_owned(),
        ];
        assert_eq!(
            listed_as(&listed, "acme.v1.Greeter"),
            Some("acme.v1.Greeter")
        );
        assert_eq!(
            listed_as(&listed, "com.acme.Greeter"),
            Some("acme.v1.Greeter")
        );
        assert_eq!(listed_as(&listed, "com.acme.Other"), None);
        let twice = ["a.Greeter".to_owned(), "b.Greeter".to_owned()];
        assert_eq!(listed_as(&twice, "c.Greeter"), None);
    }

    #[test]
    fn the_walk_is_bounded() {
        let mut walk = FileWalk::default();
        let many: Vec<FileDescriptorProto> = (0..=MAX_FILES)
            .map(|i| file(&format!("f{i}.proto"), &[]))
            .collect();
        let err = walk.add(many).unwrap_err();
        assert!(err.to_string().contains("more than 1024 files"), "{err}");
    }

    #[test]
    fn reflected_files_build_a_pool_in_any_order() {
        // What a provider answers for the Greeter: its file; the pool is built from the files in
        // name order, whatever the import order.
        let greeter =
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../proto/greeter.proto");
        let compiled = protox::compile([&greeter], [greeter.parent().unwrap()]).unwrap();
        let mut walk = FileWalk::default();
        walk.add(compiled.file).unwrap();
        walk.add(vec![GoogleFileResolver::new()
            .open_file("google/protobuf/empty.proto")
            .unwrap()
            .file_descriptor_proto()
            .clone()])
            .unwrap();
        let mut pool = DescriptorPool::new();
        pool.add_file_descriptor_protos(walk.files.into_values())
            .unwrap();
        assert!(pool
            .get_service_by_name("org.rudder.it.proto.Greeter")
            .is_some());
    }
}
