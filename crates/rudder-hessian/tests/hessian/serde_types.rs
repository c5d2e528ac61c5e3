//! Rust types through serde, to Value, to bytes and back.

use std::collections::BTreeMap;

use rudder_common::value::{
    from_value, to_java_object, to_object_value, to_value, JavaClass, SerdeError, Value,
};

use rudder_hessian::{Hessian2Reader, Hessian2Writer};
use serde::{Deserialize, Serialize};

#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename = "org.example.Address")]
struct Address {
    city: String,
    zip: Option<String>,
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct User {
    user_name: String,
    age: u8,
    score: f64,
    id: i64,
    active: bool,
    initial: char,
    home: Address,
    tags: Vec<String>,
    extra: BTreeMap<String, i32>,
    role: Role,
    nickname: Option<String>,
}

impl JavaClass for User {
    const CLASS: &'static str = "org.example.User";
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
enum Role {
    Admin,
    Guest,
}

fn alice() -> User {
    User {
        user_name: "alice".into(),
        age: 42,
        score: 2.5,
        id: 1 << 40,
        active: true,
        initial: 'a',
        home: Address {
            city: "Zürich".into(),
            zip: None,
        },
        tags: vec!["a".into(), "b".into()],
        extra: [("k".to_owned(), 7)].into(),
        role: Role::Admin,
        nickname: Some("al".into()),
    }
}

fn through_bytes(v: &Value) -> Value {
    let mut w = Hessian2Writer::new();
    w.write_value(v);
    let bytes = w.into_bytes();
    Hessian2Reader::new(&bytes).read_value().unwrap()
}

#[test]
fn a_java_class_becomes_an_object_and_comes_back() {
    let v = to_java_object(&alice()).unwrap();
    let Value::Object { class, fields } = &v else {
        panic!("not an object: {v:?}");
    };
    assert_eq!(&**class, "org.example.User");
    assert_eq!(fields[0], ("userName".into(), Value::from("alice")));
    assert_eq!(v.get("age"), Some(&Value::Int(42)));
    assert_eq!(v.get("id"), Some(&Value::Long(1 << 40)));
    assert_eq!(v.get("role"), Some(&Value::from("Admin")));
    assert!(
        matches!(v.get("home"), Some(Value::Object { class, .. }) if &**class == "org.example.Address")
    );
    assert_eq!(from_value::<User>(through_bytes(&v)).unwrap(), alice());
}

#[test]
fn structs_without_a_class_are_untyped_maps() {
    #[derive(Serialize)]
    struct Plain {
        a: i32,
    }
    let v = to_value(&Plain { a: 1 }).unwrap();
    assert_eq!(v, Value::map(vec![("a".into(), Value::Int(1))]));
    let named = to_object_value(&Plain { a: 1 }, "com.x.Plain").unwrap();
    assert_eq!(named.get("a"), Some(&Value::Int(1)));
    assert!(matches!(named, Value::Object { class, .. } if &*class == "com.x.Plain"));
    assert_eq!(
        to_object_value(&5, "com.x.Five"),
        Err(SerdeError::NotAnObject("com.x.Five".into()))
    );
}

#[test]
fn integer_widths_follow_java() {
    assert_eq!(to_value(&7u32).unwrap(), Value::Long(7));
    assert_eq!(to_value(&7i16).unwrap(), Value::Int(7));
    assert_eq!(
        to_value(&u64::MAX),
        Err(SerdeError::Unsupported("u64 above i64::MAX"))
    );
    assert_eq!(from_value::<u8>(Value::Long(200)).unwrap(), 200);
    assert!(from_value::<u8>(Value::Int(300)).is_err());
    assert_eq!(from_value::<f64>(Value::Int(3)).unwrap(), 3.0);
}

#[test]
fn enums_accept_java_enum_objects_and_variant_maps() {
    let java_enum = Value::Object {
        class: "org.example.Role".into(),
        fields: vec![("name".into(), "Guest".into())],
    };
    assert_eq!(from_value::<Role>(java_enum).unwrap(), Role::Guest);

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    enum Shape {
        Circle(f64),
        Rect { w: i32, h: i32 },
        Pair(i32, i32),
    }
    for shape in [
        Shape::Circle(1.5),
        Shape::Rect { w: 2, h: 3 },
        Shape::Pair(4, 5),
    ] {
        let v = to_value(&shape).unwrap();
        assert_eq!(from_value::<Shape>(through_bytes(&v)).unwrap(), shape);
    }
}

#[test]
fn cycles_and_mismatches_are_errors() {
    assert_eq!(
        from_value::<Vec<i32>>(Value::list(vec![Value::Ref(0)])),
        Err(SerdeError::Cycle(0))
    );
    assert!(matches!(
        from_value::<User>(Value::Int(1)),
        Err(SerdeError::Message(_))
    ));
    assert_eq!(from_value::<Option<i32>>(Value::Null).unwrap(), None);
    assert_eq!(
        from_value::<Vec<u8>>(Value::Binary(vec![1, 2])).unwrap(),
        vec![1, 2]
    );
}
