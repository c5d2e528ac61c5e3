//! The size of a call's future: it is built and moved at every await level of the call path, so
//! its bytes are copied on every call. Inline, tonic's tri:// call future and the rare cluster
//! modes (forking, broadcast, mergeable...) made every call's future 4,440 bytes; boxed, a
//! dubbo:// failover call's is under half of that. A generous bound that fails if one is inlined
//! again.

use rudder::{Invocation, Reference, Value};

/// Twice the bare dubbo:// client's own call future (728 bytes when this was written) plus the
/// cluster path's state, with room to grow.
const MOST_BYTES: usize = 2_600;

#[tokio::test]
async fn a_calls_future_stays_small_whatever_protocols_and_modes_exist() {
    let reference = Reference::builder("org.rudder.test.Greeter")
        .provider("dubbo://127.0.0.1:1/org.rudder.test.Greeter")
        .build()
        .await
        .expect("reference");
    let invocation = Invocation::new(
        "sayHello",
        vec!["java.lang.String".into()],
        vec![Value::from("x")],
    );
    let call = reference.invoke(invocation);
    let bytes = std::mem::size_of_val(&call);
    assert!(
        bytes <= MOST_BYTES,
        "Reference::invoke's future is {bytes} bytes (at most {MOST_BYTES}): is a large \
         protocol or cluster-mode future inlined again?"
    );
}
