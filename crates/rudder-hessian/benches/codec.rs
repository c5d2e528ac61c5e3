//! Encode and decode throughput for the bodies rudder sends and receives most.
// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use rudder_common::value::{from_value, to_java_object, JavaClass, Value};
use rudder_hessian::{Hessian2Reader, Hessian2Writer};
use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize)]
struct User {
    name: String,
    age: i32,
    email: Option<String>,
    tags: Vec<String>,
}

impl JavaClass for User {
    const CLASS: &'static str = "org.apache.dubbo.demo.User";
}

const SERVICE: &str = "org.apache.dubbo.demo.DemoService";

/// The body of `DemoService.sayHello("rust")` as a Dubbo consumer writes it.
fn write_request(w: &mut Hessian2Writer) {
    w.write_utf("2.0.2");
    w.write_utf(SERVICE);
    w.write_utf("2.0.0");
    w.write_utf("sayHello");
    w.write_utf("Ljava/lang/String;");
    w.write_string("rust");
    w.write_attachments([
        ("path", SERVICE),
        ("interface", SERVICE),
        ("version", "2.0.0"),
        ("timeout", "3000"),
    ]);
}

fn read_request(body: &[u8]) -> usize {
    let mut r = Hessian2Reader::new(body);
    let mut n = 0;
    for _ in 0..5 {
        n += r.read_string().expect("header").len();
    }
    let _arg = r.read_value().expect("argument");
    let _attachments = r.read_value().expect("attachments");
    n
}

fn bench_request(c: &mut Criterion) {
    let mut w = Hessian2Writer::new();
    write_request(&mut w);
    let body = w.into_bytes();
    c.bench_function("request/encode", |b| {
        b.iter(|| {
            let mut w = Hessian2Writer::from_vec(Vec::with_capacity(256));
            write_request(&mut w);
            black_box(w.into_bytes())
        })
    });
    c.bench_function("request/decode", |b| {
        b.iter(|| read_request(black_box(&body)))
    });
}

fn bench_pojo(c: &mut Criterion) {
    let user = User {
        name: "alice".into(),
        age: 42,
        email: Some("alice@example.com".into()),
        tags: vec!["admin".into(), "ops".into()],
    };
    let value = to_java_object(&user).expect("user converts");
    let mut w = Hessian2Writer::new();
    w.write_value(&value);
    let bytes = w.into_bytes();
    c.bench_function("pojo/encode", |b| {
        b.iter(|| {
            let v = to_java_object(black_box(&user)).expect("user converts");
            let mut w = Hessian2Writer::new();
            w.write_value(&v);
            black_box(w.into_bytes())
        })
    });
    c.bench_function("pojo/decode", |b| {
        b.iter(|| {
            let v: Value = Hessian2Reader::new(black_box(&bytes))
                .read_value()
                .expect("decodes");
            black_box(from_value::<User>(v).expect("user"))
        })
    });
}

criterion_group!(benches, bench_request, bench_pojo);
criterion_main!(benches);
