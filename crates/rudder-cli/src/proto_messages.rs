//! The messages of `rudder invoke --proto`: `--args` read as proto3 JSON into request messages (with
//! errors that name the field and the fields there are), answers printed as proto3 JSON lines, and
//! `--attachment`s as request headers.

use std::io::Write;

use anyhow::{bail, Context, Result};
use prost_reflect::{
    DynamicMessage, MessageDescriptor, MethodDescriptor, ReflectMessage, SerializeOptions,
};
use serde_json::Value as Json;
use tonic::metadata::{AsciiMetadataKey, BinaryMetadataKey, MetadataMap, MetadataValue};

use crate::proto_descriptors;

/// Prints `reply` as one proto3 JSON line.
pub(crate) fn write_json(
    out: &mut dyn Write,
    reply: &DynamicMessage,
    options: &SerializeOptions,
) -> Result<()> {
    let mut line = Vec::new();
    reply
        .serialize_with_options(&mut serde_json::Serializer::new(&mut line), options)
        .with_context(|| format!("printing a {} as JSON", reply.descriptor().full_name()))?;
    line.push(b'\n');
    out.write_all(&line)?;
    Ok(())
}

/// The request messages from `--args`: one object for a unary or server-streaming method, one or more
/// (the stream) for a client- or bidi-streaming one, each read as proto3 JSON of the input type. A
/// field the message does not have is an error naming it.
pub(crate) fn request_messages(
    method: &MethodDescriptor,
    json: &Json,
) -> Result<Vec<DynamicMessage>> {
    let input = method.input();
    let example = format!("'[{{...}}]' (one {} as JSON)", input.full_name());
    let Some(items) = json.as_array() else {
        bail!("--args must be a JSON array holding the request message: {example}");
    };
    let streamed = method.is_client_streaming();
    match items.len() {
        1 => {}
        0 if streamed => bail!(
            "--args must hold at least one {} (the messages {} streams), got none",
            input.full_name(),
            method.name()
        ),
        n if !streamed => bail!(
            "--args must be an array of one object, the {} of {} ({}), got {n} values: {example}",
            input.full_name(),
            method.name(),
            proto_descriptors::streaming_kind(method)
        ),
        _ => {}
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| message_from_json(&input, i, item))
        .collect()
}

fn message_from_json(
    input: &MessageDescriptor,
    index: usize,
    item: &Json,
) -> Result<DynamicMessage> {
    let Some(object) = item.as_object() else {
        bail!(
            "--args[{index}] must be a JSON object (a {}), got {}",
            input.full_name(),
            json_kind(item)
        );
    };
    DynamicMessage::deserialize(input.clone(), item.clone()).map_err(|e| {
        let mut message = format!("--args[{index}] is not a {}: {e}", input.full_name());
        // A top-level field that is not there: say which there are.
        let unknown_top_level = object.keys().any(|k| {
            input.get_field_by_json_name(k).is_none()
                && input.get_field_by_name(k).is_none()
                && e.to_string().contains(&format!("'{k}'"))
        });
        if unknown_top_level {
            let fields: Vec<String> = input.fields().map(|f| f.json_name().to_owned()).collect();
            message.push_str(&format!(
                " ({} has fields: {})",
                input.name(),
                if fields.is_empty() {
                    "none".to_owned()
                } else {
                    fields.join(", ")
                }
            ));
        }
        anyhow::anyhow!(message)
    })
}

fn json_kind(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// `--attachment KEY=VALUE` as request headers: keys lower-cased, a `-bin` key's value sent as its
/// bytes (base64 on the wire).
pub(crate) fn attachment_headers(attachments: &[(String, String)]) -> Result<MetadataMap> {
    let mut headers = MetadataMap::new();
    for (key, value) in attachments {
        let key = key.to_ascii_lowercase();
        if key.ends_with("-bin") {
            let name = BinaryMetadataKey::from_bytes(key.as_bytes())
                .with_context(|| format!("--attachment {key}: not a header name"))?;
            headers.insert_bin(name, MetadataValue::from_bytes(value.as_bytes()));
        } else {
            let name = AsciiMetadataKey::from_bytes(key.as_bytes())
                .with_context(|| format!("--attachment {key}: not a header name"))?;
            let value = value
                .parse()
                .with_context(|| format!("--attachment {key}: the value is not a header value"))?;
            headers.insert(name, value);
        }
    }
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn greeter() -> proto_descriptors::Descriptors {
        let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../proto/greeter.proto");
        proto_descriptors::load_files(&[file], &[]).unwrap()
    }

    fn method(name: &str) -> MethodDescriptor {
        let descriptors = greeter();
        let service =
            proto_descriptors::find_service(&descriptors, "org.rudder.it.proto.Greeter").unwrap();
        proto_descriptors::find_method(&service, name).unwrap()
    }

    fn error(json: &str) -> String {
        let json: Json = serde_json::from_str(json).unwrap();
        format!(
            "{:#}",
            request_messages(&method("SayHello"), &json).unwrap_err()
        )
    }

    #[test]
    fn args_hold_one_message_as_proto3_json() {
        let json: Json = serde_json::from_str(r#"[{"name":"rust"}]"#).unwrap();
        let messages = request_messages(&method("SayHello"), &json).unwrap();
        assert_eq!(messages.len(), 1);
        assert_eq!(
            messages[0].get_field_by_name("name").unwrap().as_str(),
            Some("rust")
        );
        let json: Json = serde_json::from_str(r#"[{"name":"a","count":3}]"#).unwrap();
        let messages = request_messages(&method("SayHelloStream"), &json).unwrap();
        assert_eq!(
            messages[0].get_field_by_name("count").unwrap().as_u32(),
            Some(3)
        );
    }

    #[test]
    fn wrong_args_are_clear_errors() {
        assert_eq!(
            error(r#"{"name":"x"}"#),
            "--args must be a JSON array holding the request message: '[{...}]' (one org.rudder.it.proto.HelloRequest as JSON)"
        );
        assert!(
            error("[]").starts_with("--args must be an array of one object, the org.rudder.it.proto.HelloRequest of SayHello (unary), got 0 values"),
            "{}",
            error("[]")
        );
        assert!(error(r#"[{}, {}]"#).contains("got 2 values"));
        assert_eq!(
            error(r#"["x"]"#),
            "--args[0] must be a JSON object (a org.rudder.it.proto.HelloRequest), got a string"
        );
        let unknown = error(r#"[{"nme":"x"}]"#);
        assert!(
            unknown.starts_with("--args[0] is not a org.rudder.it.proto.HelloRequest: ")
                && unknown.contains("'nme'")
                && unknown.ends_with("(HelloRequest has fields: name)"),
            "{unknown}"
        );
        let wrong_type = error(r#"[{"name":7}]"#);
        assert!(wrong_type.contains("HelloRequest"), "{wrong_type}");
        assert!(!wrong_type.contains("has fields"), "{wrong_type}");
    }

    #[test]
    fn answers_print_as_proto3_json_lines() {
        let descriptors = greeter();
        let reply = descriptors
            .pool
            .get_message_by_name("org.rudder.it.proto.HelloReply")
            .unwrap();
        let mut message = DynamicMessage::new(reply);
        message.set_field_by_name("served_by", prost_reflect::Value::String("p".into()));
        let mut out = Vec::new();
        write_json(&mut out, &message, &SerializeOptions::new()).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "{\"servedBy\":\"p\"}\n");
        let mut out = Vec::new();
        write_json(
            &mut out,
            &message,
            &SerializeOptions::new().skip_default_fields(false),
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"message\":\"\",\"servedBy\":\"p\"}\n"
        );
    }

    #[test]
    fn attachments_become_lower_case_headers() {
        let headers = attachment_headers(&[
            ("Trace-Id".into(), "abc".into()),
            ("blob-bin".into(), "\u{1}\u{2}".into()),
        ])
        .unwrap();
        assert_eq!(headers.get("trace-id").unwrap(), "abc");
        assert_eq!(
            headers
                .get_bin("blob-bin")
                .unwrap()
                .to_bytes()
                .unwrap()
                .as_ref(),
            [1, 2]
        );
        assert!(attachment_headers(&[("bad key".into(), "v".into())]).is_err());
    }

    fn json_value() -> impl proptest::strategy::Strategy<Value = Json> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Json::Null),
            any::<bool>().prop_map(Json::Bool),
            any::<i64>().prop_map(Json::from),
            any::<f64>().prop_map(Json::from),
            "[a-z_]{0,6}".prop_map(Json::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
                proptest::collection::btree_map(
                    prop_oneof![
                        Just("name".to_owned()),
                        Just("count".to_owned()),
                        "[a-z]{1,5}"
                    ],
                    inner,
                    0..4
                )
                .prop_map(|m| Json::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Any JSON is a request or a clear error, never a panic; a request survives the wire.
        #[test]
        fn any_json_is_a_message_or_an_error(json in json_value()) {
            for name in ["SayHello", "SayHelloStream"] {
                let method = method(name);
                if let Ok(messages) = request_messages(&method, &Json::Array(vec![json.clone()])) {
                    use prost::Message as _;
                    let bytes = messages[0].encode_to_vec();
                    // proto3: a field set to its default is not on the wire, so compare the bytes.
                    let back = DynamicMessage::decode(method.input(), bytes.as_slice()).unwrap();
                    proptest::prop_assert_eq!(back.encode_to_vec(), bytes);
                }
            }
        }

        /// Any bytes decode as an answer or fail, never panic.
        #[test]
        fn any_bytes_decode_or_fail(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64)) {
            let _ = DynamicMessage::decode(method("SayHello").output(), bytes.as_slice());
        }
    }
}
