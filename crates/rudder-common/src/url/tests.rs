use proptest::prelude::*;

use super::*;

#[test]
fn service_key_vectors_from_dubbo_url_test() {
    let base = "10.20.130.230:20880/context/path?interface=org.apache.dubbo.test.interfaceName";
    let u = DubboUrl::parse(base).unwrap();
    assert_eq!(u.service_key(), "org.apache.dubbo.test.interfaceName");
    let u = DubboUrl::parse(&format!("{base}&group=group1&version=1.0.0")).unwrap();
    assert_eq!(
        u.service_key(),
        "group1/org.apache.dubbo.test.interfaceName:1.0.0"
    );
}

#[test]
fn default_alias_loses_to_explicit_key_in_either_order() {
    let both = DubboUrl::parse("dubbo://h:1/S?timeout=1234&default.timeout=5678").unwrap();
    assert_eq!(both.parameter("timeout"), Some("1234"));
    let reversed = DubboUrl::parse("dubbo://h:1/S?default.timeout=5678&timeout=1234").unwrap();
    assert_eq!(reversed.parameter("timeout"), Some("1234"));
    let alias = DubboUrl::parse("dubbo://h:1/S?default.timeout=5678").unwrap();
    assert_eq!(alias.parameter("timeout"), Some("5678"));
    assert_eq!(alias.method_parameter("m", "timeout"), Some("5678"));
}

#[test]
fn method_parameter_falls_back_and_honours_methods_list() {
    let u = DubboUrl::parse("dubbo://h:1/S?weight=10&a.weight=20&b.weight=&methods=a,b").unwrap();
    assert_eq!(u.method_parameter("a", "weight"), Some("20"));
    // Empty method value falls back to the service value, as in Dubbo.
    assert_eq!(u.method_parameter("b", "weight"), Some("10"));
    let unlisted = DubboUrl::parse("dubbo://h:1/S?weight=10&c.weight=30&methods=a,b").unwrap();
    assert_eq!(unlisted.method_parameter("c", "weight"), Some("10"));
}

#[test]
fn numbers_are_typed_errors() {
    let u = DubboUrl::parse("dubbo://h:1/S?weight=abc&warmup=").unwrap();
    assert_eq!(
        u.parameter_number::<i32>("weight"),
        Err(UrlError::BadNumber {
            key: "weight".into(),
            value: "abc".into()
        })
    );
    assert_eq!(u.parameter_number::<i32>("warmup"), Ok(None));
}

#[test]
fn identity_ignores_parameters_and_keeps_credentials() {
    let a = DubboUrl::parse("dubbo://u:p@10.0.0.1:20880/S?weight=1").unwrap();
    let b = DubboUrl::parse("dubbo://u:p@10.0.0.1:20880/S?weight=2").unwrap();
    assert_eq!(a.identity(), "dubbo://u:p@10.0.0.1:20880/S");
    assert_eq!(a.identity(), b.identity());
    assert_ne!(a, b);
}

#[test]
fn display_and_debug_hide_the_password() {
    let u = DubboUrl::parse("zookeeper://admin:s3cret@127.0.0.1:2181/x?a=1").unwrap();
    assert_eq!(u.to_string(), "zookeeper://127.0.0.1:2181/x?a=1");
    assert!(!format!("{u:?}").contains("s3cret"));
    assert!(u.to_full_string().contains("admin:s3cret@"));
}

#[test]
fn sofa_and_python_urls_without_path() {
    let sofa =
        DubboUrl::parse("dubbo://127.0.0.1:12200?interface=com.x.Greeter&version=1.0").unwrap();
    assert_eq!(sofa.service_key(), "com.x.Greeter:1.0");
    let py = DubboUrl::parse("tri://127.0.0.1:50051?service=com.x.Greeter&side=provider").unwrap();
    assert_eq!(py.service_interface(), "com.x.Greeter");
}

#[test]
fn full_string_sorts_parameters_like_tree_map() {
    let u = DubboUrl::parse("dubbo://10.0.0.1:20880/S?weight=200&application=demo&methods=a,b")
        .unwrap();
    assert_eq!(
        u.to_full_string(),
        "dubbo://10.0.0.1:20880/S?application=demo&methods=a,b&weight=200"
    );
    let node = u.to_node_name();
    assert!(node
        .starts_with("dubbo%3A%2F%2F10.0.0.1%3A20880%2FS%3Fapplication%3Ddemo%26methods%3Da%2Cb"));
    assert_eq!(DubboUrl::from_node_name(&node).unwrap(), u);
}

#[test]
fn parse_any_accepts_both_forms() {
    let plain = DubboUrl::parse_any("dubbo://h:1/S?x=a+b").unwrap();
    assert_eq!(plain.parameter("x"), Some("a+b"));
    let encoded = DubboUrl::parse_any("dubbo%3A%2F%2Fh%3A1%2FS%3Fx%3Da%2Bb").unwrap();
    assert_eq!(encoded, plain);
}

fn token() -> impl Strategy<Value = String> {
    "[A-Za-z0-9_.\\-]{1,12}"
}

fn value() -> impl Strategy<Value = String> {
    // Anything but the separators Dubbo itself cannot carry inside a value, and no edge whitespace.
    "[A-Za-z0-9_.,:/@\\- é😀]{0,16}".prop_map(|s| s.trim().to_owned())
}

proptest! {
    #[test]
    fn full_string_round_trips(
        protocol in "[a-z]{1,8}",
        host in "[a-z0-9.]{1,15}",
        port in 0u16..,
        path in "([A-Za-z0-9_.]{1,10}(/[A-Za-z0-9_.]{1,10})?)?",
        params in proptest::collection::vec((token(), value()), 0..8),
    ) {
        let mut url = DubboUrl::new(&protocol, &host, port, &path);
        for (k, v) in &params {
            url = url.with_parameter(k, v);
        }
        let text = url.to_full_string();
        prop_assert_eq!(&DubboUrl::parse(&text).unwrap(), &url);
        prop_assert_eq!(&DubboUrl::from_node_name(&url.to_node_name()).unwrap(), &url);
    }

    #[test]
    fn url_codec_round_trips(s in "\\PC{0,40}") {
        prop_assert_eq!(java_url_decode(&java_url_encode(&s)).unwrap(), s);
    }

    #[test]
    fn parse_never_panics(s in "\\PC{0,80}") {
        let _ = DubboUrl::parse(&s);
        let _ = DubboUrl::from_node_name(&s);
    }
}
