//! What the Java provider's `GreetingService` answers, whichever protocol carries the calls: the
//! assertions the dubbo:// and tri:// interop tests share.

use rudder::{CallError, Invocation, Reference, Value};
use serde::{Deserialize, Serialize};

/// The Java provider's `org.rudder.it.User` POJO.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename = "org.rudder.it.User")]
pub(crate) struct User {
    pub(crate) name: String,
    pub(crate) age: i32,
    pub(crate) tags: Vec<String>,
}

/// Calls every kind of `GreetingService` method on `greeter` and asserts the Java provider named
/// `instance` answered each as it does: a string, an int, a POJO changed on the way, a null, the
/// provider's exception, and a generic call.
pub(crate) async fn assert_greets_as(greeter: &Reference, instance: &str) {
    let hello = greeter
        .call::<Value, _>("sayHello", &["java.lang.String"], vec![Value::from("rust")])
        .await
        .unwrap();
    assert_eq!(hello, Value::from(format!("Hello rust, from {instance}")));

    let sum = greeter
        .call::<Value, _>("add", &["int", "int"], vec![Value::Int(2), Value::Int(40)])
        .await
        .unwrap();
    assert_eq!(sum, Value::Int(42));

    let alice = User {
        name: "alice".into(),
        age: 30,
        tags: vec!["x".into()],
    };
    let back: User = greeter
        .call("echoUser", &["org.rudder.it.User"], (&alice,))
        .await
        .unwrap();
    assert_eq!(
        back,
        User {
            name: "alice".into(),
            age: 31,
            tags: vec!["x".into(), format!("seen-by:{instance}")]
        }
    );

    assert_eq!(
        greeter
            .call::<Value, _>("nullValue", &[], vec![])
            .await
            .unwrap(),
        Value::Null
    );

    match greeter
        .call::<Value, _>("fail", &["java.lang.String"], vec![Value::from("boom")])
        .await
    {
        Err(CallError::Exception(e)) => {
            assert_eq!(e.class, "org.rudder.it.GreetingException");
            assert_eq!(e.message.as_deref(), Some("boom"));
        }
        other => panic!("expected the provider's exception, got {other:?}"),
    }

    let generic = greeter
        .invoke(
            Invocation::new(
                "sayHello",
                vec!["java.lang.String".into()],
                vec![Value::from("generic")],
            )
            .into_generic(),
        )
        .await
        .unwrap()
        .into_result()
        .unwrap();
    assert_eq!(
        generic,
        Value::from(format!("Hello generic, from {instance}"))
    );
}
