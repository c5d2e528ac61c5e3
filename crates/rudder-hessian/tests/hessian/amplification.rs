//! Small bodies that used to decode to gigabytes: one long class or type name, used by reference
//! hundreds of thousands of times. Each test measures the peak of live heap bytes while decoding with
//! a counting global allocator. The counters are per thread (each test decodes on its own test
//! thread), so these tests share the crate's test binary with tests running in parallel and still
//! see only their own allocations.

// A global allocator that tracks live and peak bytes and forwards to `System` needs unsafe.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;

use rudder_common::Value;
use rudder_hessian::{DecodeError, DecodeLimits, Hessian2Reader, Hessian2Writer};

struct PeakAllocator;

thread_local! {
    // `const` cells of a type without `Drop`: no lazy initialisation and no destructor, so the
    // allocator can read them at any point of a thread's life without allocating itself.
    // Signed, because a block allocated on another thread may be freed on this one.
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn grew(bytes: usize) {
    let _ = LIVE.try_with(|live| {
        let now = live.get() + bytes as isize;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

fn shrank(bytes: usize) {
    let _ = LIVE.try_with(|live| live.set(live.get() - bytes as isize));
}

unsafe impl GlobalAlloc for PeakAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrank(layout.size());
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Counted as the new block arriving before the old one leaves, which is the worst case.
        grew(new_size);
        shrank(layout.size());
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: PeakAllocator = PeakAllocator;

/// Peak heap growth allowed while decoding one hostile body.
const PEAK_BOUND: usize = 64 << 20;

/// Runs `f` on this thread and returns its result with the peak of this thread's live heap bytes
/// above the level it started at.
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.with(Cell::get);
    PEAK.with(|peak| peak.set(base));
    let out = f();
    let peak = PEAK.with(Cell::get);
    (out, usize::try_from(peak - base).unwrap_or(0))
}

fn long_name(prefix: &str) -> String {
    let mut name = String::from(prefix);
    name.extend(std::iter::repeat_n('x', (64 << 10) - prefix.len()));
    name
}

/// Hessian bytes of one string (chunked when long, as Java writes it).
fn string_bytes(s: &str) -> Vec<u8> {
    let mut w = Hessian2Writer::new();
    w.write_string(s);
    w.into_bytes()
}

/// The header of a fixed-length untyped list of `n` items.
fn list_header(n: usize) -> Vec<u8> {
    let mut w = Hessian2Writer::new();
    w.write_int(i32::try_from(n).unwrap());
    let mut header = vec![b'X'];
    header.extend_from_slice(w.as_bytes());
    header
}

/// What a Java `Hessian2Output` writes for a list of `n` objects of one class: the definition
/// once, then one byte per object and a null per field. (Built by hand: the writer looks each
/// class name up per object, which for a 64 KiB name is slow.)
fn objects_body(class: &str, fields: &[&str], n: usize) -> Vec<u8> {
    let mut body = list_header(n);
    body.push(b'C');
    body.extend(string_bytes(class));
    body.push(0x90 + u8::try_from(fields.len()).unwrap());
    for field in fields {
        body.extend(string_bytes(field));
    }
    for _ in 0..n {
        body.push(0x60);
        body.extend(std::iter::repeat_n(b'N', fields.len()));
    }
    body
}

/// A list of `n` typed lists of two nulls, all of one type: its name once, then its index (0) per
/// list, as Java writes it.
fn typed_lists_body(type_name: &str, n: usize) -> Vec<u8> {
    let mut body = list_header(n);
    body.push(0x72);
    body.extend(string_bytes(type_name));
    body.extend_from_slice(b"NN");
    for _ in 1..n {
        body.extend_from_slice(b"\x72\x90NN");
    }
    body
}

/// Both bodies are what the writer produces too.
#[test]
fn hand_built_bodies_match_the_writer() {
    let object = Value::Object {
        class: "a.B".into(),
        fields: vec![("value".into(), Value::Null)],
    };
    let mut w = Hessian2Writer::new();
    w.write_value(&Value::list(vec![object; 20]));
    assert_eq!(objects_body("a.B", &["value"], 20), w.into_bytes());

    let typed = Value::List {
        type_name: Some("[a.B".into()),
        items: vec![Value::Null, Value::Null],
    };
    let mut w = Hessian2Writer::new();
    w.write_value(&Value::list(vec![typed; 20]));
    assert_eq!(typed_lists_body("[a.B", 20), w.into_bytes());
}

fn assert_budget_exceeded(body: &[u8]) {
    let (result, peak) = peak_during(|| Hessian2Reader::new(body).read_value());
    match result {
        Err(DecodeError::BudgetExceeded {
            used,
            limit,
            offset,
        }) => {
            assert_eq!(limit, DecodeLimits::default().budget_for(body.len()));
            assert!(used > limit);
            assert!(offset < body.len());
        }
        other => panic!("expected BudgetExceeded, got {other:?}"),
    }
    eprintln!("{} byte body refused, peak {peak} bytes", body.len());
    assert!(
        peak < PEAK_BOUND,
        "peak {peak} bytes while refusing a {} byte body",
        body.len()
    );
}

/// The measured crash: a 64 KiB class name, then 300,000 objects of it (19 GB when each object
/// copied its definition).
#[test]
fn objects_of_a_long_class_name_are_refused_within_bounded_memory() {
    let class = long_name("com.example.");
    for fields in [&[][..], &["value"][..]] {
        let body = objects_body(&class, fields, 300_000);
        assert!(body.len() < 1 << 20);
        assert_budget_exceeded(&body);
    }
}

/// The same through typed lists naming a 64 KiB type by reference (9 GB when each list copied it).
#[test]
fn typed_lists_of_a_long_type_name_are_refused_within_bounded_memory() {
    let body = typed_lists_body(&long_name("[com.example."), 300_000);
    assert!(body.len() < 2 << 20);
    assert_budget_exceeded(&body);
}

/// Within the budget, every object and typed list shares its definition's one copy of a name.
#[test]
fn decoded_values_share_class_field_and_type_names() {
    let class = long_name("com.example.");
    let body = objects_body(&class, &["value"], 1_000);
    let (value, peak) = peak_during(|| Hessian2Reader::new(&body).read_value().unwrap());
    let Value::List { items, .. } = &value else {
        panic!("not a list: {value:?}");
    };
    let Value::Object {
        class: first_class,
        fields: first_fields,
    } = &items[0]
    else {
        panic!("not an object");
    };
    assert_eq!(&**first_class, class);
    for item in items {
        let Value::Object { class, fields } = item else {
            panic!("not an object");
        };
        assert!(Arc::ptr_eq(class, first_class));
        assert!(Arc::ptr_eq(&fields[0].0, &first_fields[0].0));
    }
    // 1,000 copies of the name alone would be 64 MB.
    assert!(peak < 1 << 20, "peak {peak}");

    let body = typed_lists_body(&long_name("[com.example."), 1_000);
    let value = Hessian2Reader::new(&body).read_value().unwrap();
    let Value::List { items, .. } = value else {
        panic!("not a list");
    };
    let names: Vec<Arc<str>> = items
        .into_iter()
        .map(|item| match item {
            Value::List {
                type_name: Some(name),
                ..
            } => name,
            other => panic!("not a typed list: {other:?}"),
        })
        .collect();
    assert!(names.iter().all(|name| Arc::ptr_eq(name, &names[0])));
}

/// An honest large response, 100,000 small objects with strings and numbers, fits the default
/// budget with room to spare.
#[test]
fn honest_bodies_fit_the_default_budget() {
    let user = |i: i32| Value::Object {
        class: "org.apache.dubbo.demo.User".into(),
        fields: vec![
            ("name".into(), Value::from(format!("user-{i}"))),
            ("age".into(), Value::Int(i % 100)),
            ("email".into(), Value::from(format!("user-{i}@example.com"))),
            (
                "tags".into(),
                Value::list(vec![Value::from("admin"), Value::from("ops")]),
            ),
        ],
    };
    let original = Value::list((0..100_000).map(user).collect());
    let mut w = Hessian2Writer::new();
    w.write_value(&original);
    let body = w.into_bytes();
    let (decoded, peak) = peak_during(|| Hessian2Reader::new(&body).read_value());
    assert_eq!(decoded.as_ref(), Ok(&original));
    let budget = DecodeLimits::default().budget_for(body.len());
    eprintln!(
        "{} byte body decoded, peak {peak} bytes, budget {budget}",
        body.len()
    );
    assert!(
        peak * 2 < budget,
        "{} byte body: peak {peak}, budget {budget}",
        body.len()
    );
}
