//! Every public error of this crate, printed the ways users print errors, says each of its parts
//! exactly once: a cause is either in an error's `Display` or its `source()`, never both.

use std::error::Error;

use rudder_test_support::assert_each_once;

use crate::error::{Attempt, RpcError, RpcErrorKind};
use crate::net::{InvalidHost, IpPatternError};
use crate::url::UrlError;
use crate::value::{JavaException, ParseError, SerdeError, Value};

fn thrown(class: &str, message: &str, cause: Option<JavaException>) -> JavaException {
    JavaException {
        class: class.into(),
        message: Some(message.into()),
        cause: cause.map(Box::new),
    }
}

#[test]
fn an_rpc_error_prints_its_cause_once() {
    assert_each_once(
        RpcError::new(RpcErrorKind::Timeout, "no answer in 3000 ms"),
        &["timeout: no answer in 3000 ms"],
    );
    let io = std::io::Error::other("connection refused");
    assert_each_once(
        RpcError::new(RpcErrorKind::Network, "connect to 10.0.0.1:20880 failed").with_source(io),
        &[
            "network: connect to 10.0.0.1:20880 failed",
            "connection refused",
        ],
    );
}

/// A cluster mode's error wraps the last call's, which wraps what broke it: three links, each once
/// (the alternate form used to print the rest of the chain again from every link).
#[test]
fn a_wrapped_rpc_error_prints_each_link_once() {
    let last = RpcError::new(RpcErrorKind::Network, "connect to 10.0.0.2:20880 failed")
        .with_source(std::io::Error::other("connection refused"));
    let outer = RpcError::new(RpcErrorKind::Network, "failed after 2 attempts")
        .with_attempts(vec![
            Attempt::new("10.0.0.1:20880", RpcErrorKind::Timeout, "no answer"),
            Attempt::new("10.0.0.2:20880", RpcErrorKind::Network, "refused"),
        ])
        .with_source(last);
    assert_each_once(
        outer,
        &[
            "failed after 2 attempts",
            "connect to 10.0.0.2:20880 failed",
            "connection refused",
        ],
    );
}

#[test]
fn a_java_exception_prints_each_cause_once() {
    let root = thrown("java.io.IOException", "disk full", None);
    let middle = thrown("java.lang.IllegalStateException", "cannot save", Some(root));
    let top = thrown("com.example.OrderException", "order 7 failed", Some(middle));
    assert_each_once(
        top.clone(),
        &[
            "com.example.OrderException: order 7 failed",
            "java.lang.IllegalStateException: cannot save",
            "java.io.IOException: disk full",
        ],
    );
    let wrapped = RpcError::new(RpcErrorKind::Biz, "provider threw").with_source(top);
    assert_each_once(wrapped, &["provider threw", "order 7 failed", "disk full"]);
}

/// The leaf errors (no `source()`) print their one message once.
#[test]
fn leaf_errors_print_their_message_once() {
    for (error, part) in [
        (
            SerdeError::Message("missing field `name`".into()),
            "missing field `name`",
        ),
        (SerdeError::Unsupported("u128"), "cannot represent u128"),
        (SerdeError::Cycle(3), "cyclic reference #3"),
        (SerdeError::NotAnObject("a.B".into()), "object of class a.B"),
    ] {
        assert_each_once(error, &[part]);
    }
    for (error, part) in [
        (UrlError::Empty, "empty URL"),
        (UrlError::MissingProtocol, "no protocol"),
        (UrlError::BadProtocol("d b".into()), "invalid protocol"),
        (UrlError::BadPort("99999".into()), "invalid port"),
        (UrlError::BadHost("[::1".into()), "invalid host"),
        (UrlError::BadEscape { offset: 4 }, "byte 4"),
        (UrlError::NotUtf8, "not UTF-8"),
        (
            UrlError::BadNumber {
                key: "weight".into(),
                value: "x".into(),
            },
            "\"weight\" is not a number",
        ),
    ] {
        assert!(error.source().is_none(), "{error}");
        assert_each_once(error, &[part]);
    }
    assert_each_once(IpPatternError::Malformed("bad CIDR".into()), &["bad CIDR"]);
    assert_each_once(IpPatternError::Unresolvable("db".into()), &["\"db\""]);
    let host = InvalidHost {
        source_name: "DUBBO_IP_TO_REGISTRY",
        host: "127.0.0.1".into(),
    };
    assert_each_once(host, &["DUBBO_IP_TO_REGISTRY=\"127.0.0.1\""]);
    assert_each_once(
        ParseError::new("12,5", "BigDecimal"),
        &["\"12,5\" is not a BigDecimal"],
    );
    let from_value = crate::value::from_value::<i32>(Value::from("x")).unwrap_err();
    assert!(from_value.source().is_none());
}
