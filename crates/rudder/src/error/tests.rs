//! Every public error of the facade (each variant), printed the ways users print errors, says each
//! of its parts exactly once: a cause is either in an error's `Display` or its `source()`.

use std::error::Error;

use rudder_test_support::assert_each_once;
use std::time::Duration;

use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::url::UrlError;
use rudder_common::value::{JavaException, SerdeError};
use rudder_rpc::{ProviderError, ResponseStatus};

use super::{BuildError, CallError};

fn thrown(class: &str, message: &str, cause: Option<JavaException>) -> JavaException {
    JavaException {
        class: class.into(),
        message: Some(message.into()),
        cause: cause.map(Box::new),
    }
}

#[test]
fn a_provider_exception_prints_once_and_is_reachable() {
    let cause = thrown("java.io.IOException", "disk full", None);
    let error = CallError::Exception(thrown("com.acme.Oops", "order 7 failed", Some(cause)));
    assert_eq!(error.kind(), RpcErrorKind::Biz);
    assert_eq!(
        error.exception().map(|e| e.class.as_str()),
        Some("com.acme.Oops")
    );
    assert_eq!(
        error.to_string(),
        "provider threw com.acme.Oops: order 7 failed"
    );
    assert_each_once(
        error,
        &[
            "com.acme.Oops: order 7 failed",
            "java.io.IOException: disk full",
        ],
    );

    let bare = CallError::Exception(JavaException {
        class: "java.lang.NullPointerException".into(),
        message: None,
        cause: None,
    });
    assert_eq!(
        bare.to_string(),
        "provider threw java.lang.NullPointerException"
    );
    assert!(bare.source().is_none());
}

/// A failover error over the call's error over the provider's status answer: each once, and the
/// status is found by [`CallError::provider_error`] without downcasting by hand.
#[test]
fn a_status_answer_prints_once_and_is_reachable() {
    let status = ProviderError::new(
        ResponseStatus::ServiceError,
        "Not found exported service: a.B",
    );
    let call = RpcError::new(RpcErrorKind::MethodNotFound, "10.0.0.1:20880").with_source(status);
    let retried =
        RpcError::new(RpcErrorKind::MethodNotFound, "failed after 1 attempt").with_source(call);
    let error = CallError::from(retried);
    let provider = error
        .provider_error()
        .expect("the status answer is in the chain");
    assert_eq!(provider.status(), ResponseStatus::ServiceError);
    assert!(error.exception().is_none());
    assert_each_once(
        error,
        &[
            "failed after 1 attempt",
            "10.0.0.1:20880",
            "70 SERVICE_ERROR",
            "Not found exported service: a.B",
        ],
    );
    let timeout = CallError::from(RpcError::new(RpcErrorKind::Timeout, "no answer in 5 ms"));
    assert!(timeout.provider_error().is_none());
    assert_each_once(timeout, &["timeout: no answer in 5 ms"]);
}

#[test]
fn conversion_and_argument_errors_print_once() {
    let conversion = CallError::from(SerdeError::Message("missing field `name`".into()));
    assert_eq!(conversion.kind(), RpcErrorKind::Serialization);
    assert_each_once(conversion, &["conversion failed", "missing field `name`"]);
    let count = CallError::ArgumentCount {
        types: 2,
        arguments: 1,
    };
    assert!(count.source().is_none());
    assert_each_once(count, &["2 parameter types but 1 arguments"]);
}

#[test]
fn build_errors_print_each_part_once() {
    assert_each_once(
        BuildError::from(UrlError::BadPort("x".into())),
        &["bad URL", "invalid port \"x\""],
    );
    let unknown = rudder_cluster::loadbalance::UnknownLoadBalance {
        name: "nosuch".into(),
        registered: vec!["random".into()],
    };
    assert_each_once(
        BuildError::from(unknown),
        &["unknown load balancer \"nosuch\""],
    );
    let mode = rudder_cluster::cluster::UnsupportedClusterMode("zone-aware".into());
    assert_each_once(
        BuildError::from(mode),
        &["unsupported cluster mode \"zone-aware\""],
    );
    for (error, part) in [
        (
            BuildError::BadParameter("timeout=x is not a number".into()),
            "timeout=x",
        ),
        (BuildError::NoSource, "no providers and no registry"),
        (
            BuildError::ConflictingSources("a directory"),
            "a directory cannot be combined",
        ),
        (BuildError::ShutDown, "the consumer is shut down"),
        (BuildError::NoRuntime, "inside a tokio runtime"),
    ] {
        assert!(error.source().is_none(), "{error}");
        assert_each_once(error, &[part]);
    }
}

#[cfg(feature = "zookeeper")]
#[test]
fn registry_build_errors_print_each_part_once() {
    use rudder_registry::RegistryError;
    let loss = zookeeper_client_error_text();
    let unreachable = || RegistryError::Unreachable {
        hosts: "10.0.0.1:2181".into(),
        waited: Duration::from_secs(10),
        source: Some(zookeeper_client::Error::ConnectionLoss),
    };
    let error = BuildError::RegistryUnreachable {
        registry: "zookeeper://10.0.0.1:2181/dubbo".into(),
        waited: Duration::from_secs(10),
        source: unreachable(),
    };
    assert!(matches!(
        error.registry(),
        Some(RegistryError::Unreachable { .. })
    ));
    assert_each_once(
        error,
        &[
            "registry zookeeper://10.0.0.1:2181/dubbo not ready within 10s (check=true)",
            "ZooKeeper at 10.0.0.1:2181 unreachable after 10s",
            &loss,
        ],
    );
    let error = BuildError::from(unreachable());
    assert!(error.registry().is_some());
    assert_each_once(
        error,
        &["ZooKeeper at 10.0.0.1:2181 unreachable after 10s", &loss],
    );
    let error = BuildError::from(RegistryError::BadRegistryUrl {
        reason: "unknown scheme".into(),
    });
    assert_each_once(error, &["bad registry URL: unknown scheme"]);
}

#[cfg(feature = "zookeeper")]
fn zookeeper_client_error_text() -> String {
    zookeeper_client::Error::ConnectionLoss.to_string()
}
