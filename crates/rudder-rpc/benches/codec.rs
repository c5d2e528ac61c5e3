//! Encode + decode cost of dubbo:// request and response frames (header and hessian2 body).
//!
//! Run with `cargo bench -p rudder-rpc --features wire --bench codec`.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use rudder_common::value::Value;
use rudder_rpc::wire::{
    decode_request_frame, decode_response_frame, encode_request_frame, encode_response_frame,
};

fn user(i: i32) -> Value {
    Value::Object {
        class: "org.apache.dubbo.demo.User".into(),
        fields: vec![
            ("name".into(), Value::from(format!("user-{i}"))),
            ("age".into(), Value::Int(i)),
            ("email".into(), Value::from("someone@example.com")),
        ],
    }
}

fn bench(c: &mut Criterion) {
    let url = DubboUrl::parse(
        "dubbo://127.0.0.1:20880/org.apache.dubbo.demo.DemoService?version=1.0.0&group=g",
    )
    .unwrap();
    let say_hello = Invocation::new(
        "sayHello",
        vec!["java.lang.String".into()],
        vec![Value::from("world")],
    );
    let list_users = Invocation::new(
        "saveUsers",
        vec!["java.util.List".into()],
        vec![Value::list((0..100).map(user).collect())],
    )
    .into_generic();

    let mut group = c.benchmark_group("request");
    for (name, call) in [("sayHello", &say_hello), ("generic_100_users", &list_users)] {
        let frame = encode_request_frame(&url, call);
        group.throughput(Throughput::Bytes(frame.len() as u64));
        group.bench_function(format!("encode/{name}"), |b| {
            b.iter(|| encode_request_frame(black_box(&url), black_box(call)))
        });
        group.bench_function(format!("decode/{name}"), |b| {
            b.iter(|| decode_request_frame(black_box(&frame)).expect("decodes"))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("response");
    let outcomes = [
        ("string", Ok(Value::from("Hello world, from rudder"))),
        ("100_users", Ok(Value::list((0..100).map(user).collect()))),
    ];
    for (name, outcome) in &outcomes {
        let frame = encode_response_frame(outcome);
        group.throughput(Throughput::Bytes(frame.len() as u64));
        group.bench_function(format!("encode/{name}"), |b| {
            b.iter(|| encode_response_frame(black_box(outcome)))
        });
        group.bench_function(format!("decode/{name}"), |b| {
            b.iter(|| decode_response_frame(black_box(&frame)).expect("decodes"))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
