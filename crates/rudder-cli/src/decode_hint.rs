//! The hint after a provider's "Fail to decode request" (status 40, BAD_REQUEST): what the
//! provider's own words say went wrong, and what to add to the command line. A Dubbo provider gives
//! that one status for very different mistakes: an enum constant it does not have, a field value of
//! the wrong type, a method (or parameter types) it does not export, an object sent as a map, and a
//! service key (version, group) it does not export.

/// What the failed call was.
#[derive(Debug)]
pub(crate) struct Call<'a> {
    pub(crate) interface: &'a str,
    pub(crate) method: &'a str,
    pub(crate) types: &'a [String],
    pub(crate) version: Option<&'a str>,
    pub(crate) group: Option<&'a str>,
    /// By `--url`: no registry, so no metadata and no method list were checked first.
    pub(crate) by_url: bool,
    pub(crate) given_types: bool,
    pub(crate) generic: bool,
    /// Some argument is a JSON object.
    pub(crate) objects: bool,
    /// Each argument's text when it is a JSON string (enum constants are).
    pub(crate) strings: Vec<Option<String>>,
    /// The metadata gave the field types of every object argument's class.
    pub(crate) fields_known: bool,
}

/// The `hint: ...` line for the provider's answer `said`. Dubbo 3.3 says only "Fail to decode
/// request due to: RpcInvocation [methodName=m, parameterTypes=null]" for every cause, so where its
/// words do not name the cause, the hint names the causes this call's shape allows, most likely
/// first.
pub(crate) fn hint(said: &str, call: &Call<'_>) -> String {
    let signature = format!("{}({})", call.method, call.types.join(", "));
    if let Some(constant) = after(said, "No enum constant ") {
        return format!(
            "hint: the provider has no enum constant {constant}: give one of the enum's constants \
             (as named in Java, case included)"
        );
    }
    if said.contains("HessianFieldException") || said.contains("cannot be assigned") {
        return "hint: a field's JSON value is not of the field's Java type (the provider's message \
                names the field): give the value as the field's type reads it, or add --generic to \
                let the provider convert a map"
            .to_owned();
    }
    let mut causes = Vec::new();
    if call.by_url {
        causes.push(format!(
            "it exports no {signature} in {}: check --method, --types, --version and --group (by \
             --url nothing is checked first; through --registry the methods are)",
            service_key(call)
        ));
    }
    if call.objects && !call.given_types && !call.generic {
        // By --url nothing says the class nor its fields' types: one hint for both, not one
        // after the other.
        causes.push(if call.fields_known {
            "without --types an object argument goes as java.util.Map: give its class with --types"
                .to_owned()
        } else {
            "without --types an object argument goes as java.util.Map: give its class with \
             --types, and add --generic when it has a BigDecimal, date, time or enum field (no \
             metadata describes the class here: --generic lets the provider convert the fields)"
                .to_owned()
        });
    } else if call.objects && !call.generic && !call.fields_known {
        causes.push(
            "an object goes as its class with its fields as JSON gives them (no metadata describes \
             the class), so a BigDecimal, LocalDate or enum field does not decode: add --generic \
             to send a map the provider converts to the field types"
                .to_owned(),
        );
    }
    if let Some((java_type, constant)) = enum_arguments(call).next() {
        causes.push(format!(
            "\"{constant}\" may not be a constant of {java_type} (names as in Java, case included)"
        ));
    }
    if !call.by_url {
        causes.push(format!(
            "it exports no {} (check --version and --group: `rudder list --registry R --interface {}`)",
            service_key(call),
            call.interface
        ));
    }
    match causes.as_slice() {
        [one] => format!("hint: the provider could not read the call: {one}"),
        _ => format!(
            "hint: the provider could not read the call and does not say why; for this call: {}",
            causes
                .iter()
                .enumerate()
                .map(|(i, c)| format!("({}) {c}", i + 1))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    }
}

/// The `hint: ...` line when a `--generic` call's date text did not parse at the provider: Dubbo's
/// `PojoUtils` reads a `java.util.Date` field's text only as `yyyy-MM-dd HH:mm:ss` (in the provider's
/// time zone). `None` for any other failure.
pub(crate) fn generic_date_hint(said: &str, generic: bool) -> Option<&'static str> {
    (generic && (said.contains("Unparseable date") || said.contains("Failed to parse date")))
        .then_some(
            "hint: with --generic the provider reads a java.util.Date field's text as \
         yyyy-MM-dd HH:mm:ss (its own time zone): give epoch milliseconds instead, or call through \
         --registry, where the metadata types the field and ISO-8601 text works",
        )
}

/// The string arguments sent as enum constants (a class outside `java.*` given a JSON string), with
/// their types.
fn enum_arguments<'a>(call: &'a Call<'_>) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
    call.types
        .iter()
        .zip(call.strings.iter())
        .filter(|_| !call.generic)
        .filter_map(|(t, s)| Some((t.as_str(), s.as_deref()?)))
        .filter(|(t, _)| t.contains('.') && !t.starts_with("java."))
}

/// The words after `marker` up to the end of the line, or of the sentence.
fn after<'a>(text: &'a str, marker: &str) -> Option<&'a str> {
    let start = text.find(marker)? + marker.len();
    let rest = &text[start..];
    let end = rest
        .find(|c: char| c == '\n' || c == ',' || c == ';' || c.is_whitespace())
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// `group/interface:version`, as Dubbo names an exported service.
fn service_key(call: &Call<'_>) -> String {
    let mut key = String::new();
    if let Some(group) = call.group.filter(|g| !g.is_empty()) {
        key.push_str(group);
        key.push('/');
    }
    key.push_str(call.interface);
    if let Some(version) = call.version.filter(|v| !v.is_empty()) {
        key.push(':');
        key.push_str(version);
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(types: &[String]) -> Call<'_> {
        Call {
            interface: "peer.Billing",
            method: "charge",
            types,
            version: Some("1.0.0"),
            group: None,
            by_url: true,
            given_types: true,
            generic: false,
            objects: false,
            strings: vec![None],
            fields_known: false,
        }
    }

    /// What Dubbo 3.3.6 answers for every cause.
    const DUBBO: &str =
        "Fail to decode request due to: RpcInvocation [methodName=charge, parameterTypes=null]";

    #[test]
    fn the_hint_names_the_causes_the_call_allows() {
        let invoice = vec!["peer.Invoice".to_owned()];
        let color = vec!["peer.Color".to_owned()];
        let map = vec!["java.util.Map".to_owned()];
        // A provider that says which enum constant it lacks.
        let said = hint(
            "Fail to decode request due to: java.lang.IllegalArgumentException: No enum constant peer.Color.PURPLE",
            &call(&color),
        );
        assert!(
            said.contains("no enum constant peer.Color.PURPLE"),
            "{said}"
        );
        // By --url, a constant: the method, or the constant.
        let constant = hint(
            DUBBO,
            &Call {
                strings: vec![Some("PURPLE".into())],
                ..call(&color)
            },
        );
        assert!(
            constant.contains("(1) it exports no charge(peer.Color) in peer.Billing:1.0.0"),
            "{constant}"
        );
        assert!(
            constant.contains("(2) \"PURPLE\" may not be a constant of peer.Color"),
            "{constant}"
        );
        // An object without --types went as a map.
        let untyped = hint(
            DUBBO,
            &Call {
                objects: true,
                given_types: false,
                ..call(&map)
            },
        );
        // Both flags it may need at once: its class, and --generic for fields nothing types.
        assert!(
            untyped.contains(
                "(2) without --types an object argument goes as java.util.Map: give its class \
                 with --types, and add --generic when it has a BigDecimal, date, time or enum field"
            ),
            "{untyped}"
        );
        // An object of a class no metadata describes: --generic.
        let fields = hint(
            DUBBO,
            &Call {
                objects: true,
                ..call(&invoice)
            },
        );
        assert!(fields.contains("add --generic"), "{fields}");
        // Through the registry (method and fields checked), the service key.
        let key = hint(
            DUBBO,
            &Call {
                by_url: false,
                objects: true,
                fields_known: true,
                ..call(&invoice)
            },
        );
        assert_eq!(
            key,
            "hint: the provider could not read the call: it exports no peer.Billing:1.0.0 (check \
             --version and --group: `rudder list --registry R --interface peer.Billing`)"
        );
    }

    #[test]
    fn a_generic_date_the_provider_cannot_parse_gets_its_own_hint() {
        let said = "failed after 1 attempt: provider answered 70 SERVICE_ERROR: Unparseable date: \"2026-12-01T00:00:00Z\"";
        let hint = generic_date_hint(said, true).unwrap();
        assert!(hint.contains("yyyy-MM-dd HH:mm:ss"), "{hint}");
        assert!(hint.contains("epoch milliseconds"), "{hint}");
        assert_eq!(generic_date_hint(said, false), None);
        assert_eq!(generic_date_hint("SERVICE_ERROR: boom", true), None);
    }
}
