//! Client ↔ server round trips over loopback: every answer kind, generic calls, multiplexing.

use std::sync::Arc;

use crate::support::*;
use rudder_common::value::Value;
use rudder_rpc::DubboProtocol;

#[tokio::test]
async fn string_int_object_and_null_results() {
    bounded(async {
        let (server, _entered) = start(0).await;
        let url = url(&server, "");
        let protocol = DubboProtocol::new();

        let hello = protocol.invoke(&url, &say_hello("rust")).await.unwrap();
        assert_eq!(hello.value(), Some(&Value::from("Hello rust")));
        assert_eq!(hello.attachment("dubbo"), Some(&Value::from("2.0.2")));

        let add = call("add", &["int", "int"], vec![Value::Int(2), Value::Int(40)]);
        let sum = protocol.invoke(&url, &add).await.unwrap();
        assert_eq!(sum.value(), Some(&Value::Int(42)));

        let get_user = call("getUser", &["java.lang.String"], vec![Value::from("alice")]);
        let user = protocol
            .invoke(&url, &get_user)
            .await
            .unwrap()
            .into_result()
            .unwrap();
        assert!(
            matches!(&user, Value::Object { class, .. } if &**class == "org.apache.dubbo.demo.User")
        );
        assert_eq!(user.get("name"), Some(&Value::from("alice")));
        assert_eq!(user.get("age"), Some(&Value::Int(42)));

        let nothing = protocol
            .invoke(&url, &call("nothing", &[], vec![]))
            .await
            .unwrap();
        assert_eq!(nothing.value(), Some(&Value::Null));

        protocol.shutdown().await;
        server.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn business_exception_is_a_normal_response() {
    bounded(async {
        let (server, _entered) = start(0).await;
        let protocol = DubboProtocol::new();
        let response = protocol
            .invoke(&url(&server, ""), &call("boom", &[], vec![]))
            .await
            .expect("a business exception is not an RpcError");
        let e = response.exception().expect("the provider threw");
        assert_eq!(e.class, "java.lang.IllegalStateException");
        assert_eq!(e.message.as_deref(), Some("boom from rust"));
        assert!(response.value().is_none());
        server.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn generic_invoke_reaches_the_real_method() {
    bounded(async {
        let (server, _entered) = start(0).await;
        let url = url(&server, "");
        let protocol = DubboProtocol::new();
        let generic = say_hello("generic").into_generic();
        let response = protocol.invoke(&url, &generic).await.unwrap();
        assert_eq!(response.value(), Some(&Value::from("Hello generic")));

        let seen_generic = protocol
            .invoke(&url, &call("isGeneric", &[], vec![]).into_generic())
            .await
            .unwrap();
        assert_eq!(seen_generic.value(), Some(&Value::Bool(true)));
        let seen_direct = protocol
            .invoke(&url, &call("isGeneric", &[], vec![]))
            .await
            .unwrap();
        assert_eq!(seen_direct.value(), Some(&Value::Bool(false)));
        server.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn attachments_version_and_group_reach_the_provider() {
    bounded(async {
        let (server, _entered) = start(0).await;
        let url = url(&server, "version=1.2.3&group=blue&timeout=4321");
        let protocol = DubboProtocol::new();
        let read = |key: &str| call("attachment", &["java.lang.String"], vec![Value::from(key)]);
        for (key, expected) in [
            ("path", Value::from(SERVICE)),
            ("interface", Value::from(SERVICE)),
            ("version", Value::from("1.2.3")),
            ("group", Value::from("blue")),
            ("timeout", Value::from("4321")),
        ] {
            let got = protocol.invoke(&url, &read(key)).await.unwrap();
            assert_eq!(got.value(), Some(&expected), "{key}");
        }
        let mut custom = read("trace-id");
        custom.set_attachment("trace-id", "t-1");
        let got = protocol.invoke(&url, &custom).await.unwrap();
        assert_eq!(got.value(), Some(&Value::from("t-1")));
        server.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn calls_are_multiplexed_and_a_slow_handler_blocks_nobody() {
    bounded(async {
        let (server, mut entered) = start(0).await;
        let url = Arc::new(url(&server, "timeout=10000"));
        let protocol = DubboProtocol::new();

        let slow = {
            let (protocol, url) = (protocol.clone(), Arc::clone(&url));
            tokio::spawn(async move {
                let sleep = call("sleep", &["long"], vec![Value::Long(3000)]);
                protocol.invoke(&url, &sleep).await
            })
        };
        assert_eq!(entered.recv().await.as_deref(), Some("sleep"));

        let mut tasks = Vec::new();
        for i in 0..64 {
            let (protocol, url) = (protocol.clone(), Arc::clone(&url));
            tasks.push(tokio::spawn(async move {
                let add = call(
                    "add",
                    &["int", "int"],
                    vec![Value::Int(i), Value::Int(1000)],
                );
                protocol.invoke(&url, &add).await.map(|r| (i, r))
            }));
        }
        for task in tasks {
            let (i, response) = task.await.unwrap().unwrap();
            assert_eq!(response.value(), Some(&Value::Int(i + 1000)));
        }
        assert!(
            !slow.is_finished(),
            "64 fast calls finished while the slow one still runs"
        );
        assert_eq!(
            slow.await.unwrap().unwrap().value(),
            Some(&Value::from("slept"))
        );
        server.shutdown().await;
    })
    .await;
}
