//! A demo provider and helpers shared by the integration tests.
#![allow(dead_code, unreachable_pub)]

use std::future::Future;
use std::time::Duration;

use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use rudder_common::value::{JavaException, Value};
use rudder_rpc::server::{BoxFuture, DubboServer, Handler};
use tokio::sync::mpsc;

pub const SERVICE: &str = "org.apache.dubbo.demo.DemoService";
/// Every test finishes well within this, or fails instead of hanging.
pub const TEST_DEADLINE: Duration = Duration::from_secs(20);

/// The demo service. `block` reports on `entered` and then never answers.
pub struct Demo {
    pub entered: mpsc::UnboundedSender<String>,
}

impl Handler for Demo {
    fn call(&self, call: Invocation) -> BoxFuture<Result<Value, JavaException>> {
        let entered = self.entered.clone();
        Box::pin(async move {
            let args = call.arguments();
            let _ = entered.send(call.method_name().to_owned());
            match call.method_name() {
                "sayHello" => Ok(Value::from(format!(
                    "Hello {}",
                    args.first().and_then(Value::as_str).unwrap_or("?")
                ))),
                "add" => Ok(Value::Int(args.iter().filter_map(Value::as_i32).sum())),
                "getUser" => Ok(Value::Object {
                    class: "org.apache.dubbo.demo.User".into(),
                    fields: vec![
                        ("name".into(), args.first().cloned().unwrap_or(Value::Null)),
                        ("age".into(), Value::Int(42)),
                    ],
                }),
                "nothing" => Ok(Value::Null),
                "isGeneric" => Ok(Value::Bool(call.is_generic())),
                "attachment" => Ok(Value::from(
                    call.attachment(args.first().and_then(Value::as_str).unwrap_or(""))
                        .map(str::to_owned),
                )),
                "sleep" => {
                    let ms = args.first().and_then(Value::as_i64).unwrap_or(0);
                    tokio::time::sleep(Duration::from_millis(ms as u64)).await;
                    Ok(Value::from("slept"))
                }
                "big" => Ok(Value::from(
                    "x".repeat(args.first().and_then(Value::as_i64).unwrap_or(0) as usize),
                )),
                "block" => std::future::pending().await,
                "boom" => Err(JavaException {
                    class: "java.lang.IllegalStateException".into(),
                    message: Some("boom from rust".into()),
                    cause: None,
                }),
                other => Err(JavaException {
                    class: "java.lang.NoSuchMethodException".into(),
                    message: Some(other.to_owned()),
                    cause: None,
                }),
            }
        })
    }
}

/// Starts the demo service on `port` (0 = any); the receiver sees each method as it is entered.
pub async fn start(port: u16) -> (DubboServer, mpsc::UnboundedReceiver<String>) {
    let (entered, rx) = mpsc::unbounded_channel();
    let server = DubboServer::bind(port, Demo { entered })
        .await
        .expect("bind 127.0.0.1");
    (server, rx)
}

pub fn url(server: &DubboServer, params: &str) -> DubboUrl {
    let sep = if params.is_empty() { "" } else { "?" };
    DubboUrl::parse(&format!(
        "dubbo://{}/{SERVICE}{sep}{params}",
        server.local_addr()
    ))
    .expect("valid URL")
}

pub fn call(method: &str, types: &[&str], args: Vec<Value>) -> Invocation {
    Invocation::new(method, types.iter().map(|t| t.to_string()).collect(), args)
}

pub fn say_hello(name: &str) -> Invocation {
    call("sayHello", &["java.lang.String"], vec![Value::from(name)])
}

/// Runs a test body under [`TEST_DEADLINE`].
pub async fn bounded<F: Future>(body: F) -> F::Output {
    tokio::time::timeout(TEST_DEADLINE, body)
        .await
        .expect("test exceeded its deadline")
}
