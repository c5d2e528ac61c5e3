//! JVM parameter descriptors, the `parameterTypesDesc` string of a Dubbo request.
//!
//! Dubbo's `ReflectUtils.getDesc(Class[])` concatenates one JVM field descriptor per parameter:
//! `int` → `I`, `java.lang.String` → `Ljava/lang/String;`, `int[]` → `[I`,
//! `java.lang.String[][]` → `[[Ljava/lang/String;`. The provider reads the descriptor to know the
//! argument types, so it must be exact.

use super::error::BodyError;

const PRIMITIVES: [(&str, char); 9] = [
    ("boolean", 'Z'),
    ("byte", 'B'),
    ("char", 'C'),
    ("double", 'D'),
    ("float", 'F'),
    ("int", 'I'),
    ("long", 'J'),
    ("short", 'S'),
    ("void", 'V'),
];

/// Appends the descriptor of one Java type name to `out`.
///
/// Accepts source names (`int`, `java.lang.String[]`, `java.util.List<String>`, whose generic part is
/// erased) and `Class.getName()` names of arrays (`[I`, `[Ljava.lang.String;`).
pub(crate) fn push_type_descriptor(java_type: &str, out: &mut String) {
    let java_type = java_type.trim();
    if java_type.starts_with('[') {
        out.push_str(&java_type.replace('.', "/"));
        return;
    }
    let erased = match java_type.find('<') {
        Some(generic) => {
            let suffix = java_type.rfind('>').map_or("", |end| &java_type[end + 1..]);
            (&java_type[..generic], suffix)
        }
        None => (java_type, ""),
    };
    let (mut base, mut dims) = (erased.0.trim(), erased.1.trim());
    let mut depth = 0;
    while let Some(rest) = base.strip_suffix("[]") {
        base = rest.trim_end();
        depth += 1;
    }
    while let Some(rest) = dims.strip_prefix("[]") {
        dims = rest.trim_start();
        depth += 1;
    }
    for _ in 0..depth {
        out.push('[');
    }
    match PRIMITIVES.iter().find(|(name, _)| *name == base) {
        Some((_, code)) => out.push(*code),
        None => {
            out.push('L');
            out.push_str(&base.replace('.', "/"));
            out.push(';');
        }
    }
}

/// The descriptor of a whole parameter list; empty for no parameters.
pub(crate) fn parameter_descriptor<S: AsRef<str>>(types: &[S]) -> String {
    let mut out = String::new();
    for t in types {
        push_type_descriptor(t.as_ref(), &mut out);
    }
    out
}

/// Splits a descriptor back into Java type names (`I` → `int`, `[Ljava/lang/String;` →
/// `java.lang.String[]`), as a provider needs them.
///
/// # Errors
/// [`BodyError::BadDescriptor`] for anything that is not a sequence of JVM field descriptors.
pub(crate) fn parse_descriptor(desc: &str) -> Result<Vec<String>, BodyError> {
    let bad = || BodyError::BadDescriptor(desc.chars().take(200).collect());
    let mut types = Vec::new();
    let mut rest = desc;
    while !rest.is_empty() {
        let depth = rest.len() - rest.trim_start_matches('[').len();
        rest = &rest[depth..];
        let first = rest.chars().next().ok_or_else(bad)?;
        let base = if first == 'L' {
            let end = rest.find(';').ok_or_else(bad)?;
            let name = &rest[1..end];
            if name.is_empty() {
                return Err(bad());
            }
            rest = &rest[end + 1..];
            name.replace('/', ".")
        } else {
            let (name, _) = PRIMITIVES
                .iter()
                .find(|(_, code)| *code == first)
                .ok_or_else(bad)?;
            rest = &rest[first.len_utf8()..];
            (*name).to_owned()
        };
        types.push(format!("{base}{}", "[]".repeat(depth)));
    }
    Ok(types)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_of_common_types() {
        let cases = [
            ("java.lang.String", "Ljava/lang/String;"),
            ("int", "I"),
            ("long", "J"),
            ("boolean", "Z"),
            ("int[]", "[I"),
            ("java.lang.String[][]", "[[Ljava/lang/String;"),
            ("[Ljava.lang.String;", "[Ljava/lang/String;"),
            ("[I", "[I"),
            ("java.util.Map<String, Integer>", "Ljava/util/Map;"),
            ("java.util.List<String>[]", "[Ljava/util/List;"),
        ];
        for (java, desc) in cases {
            assert_eq!(parameter_descriptor(&[java]), desc, "{java}");
        }
    }

    #[test]
    fn generic_invoke_descriptor() {
        let desc = parameter_descriptor(&[
            "java.lang.String",
            "java.lang.String[]",
            "java.lang.Object[]",
        ]);
        assert_eq!(
            desc,
            "Ljava/lang/String;[Ljava/lang/String;[Ljava/lang/Object;"
        );
        assert_eq!(parameter_descriptor::<&str>(&[]), "");
    }

    #[test]
    fn parse_inverts_build() {
        let types = [
            "java.lang.String",
            "int",
            "int[]",
            "java.util.Map[][]",
            "double",
        ];
        let desc = parameter_descriptor(&types);
        assert_eq!(desc, "Ljava/lang/String;I[I[[Ljava/util/Map;D");
        assert_eq!(parse_descriptor(&desc).unwrap(), types);
        assert!(parse_descriptor("").unwrap().is_empty());
    }

    #[test]
    fn malformed_descriptors_are_errors() {
        for bad in ["Ljava/lang/String", "Q", "[", "L;", "I[", "é"] {
            assert!(parse_descriptor(bad).is_err(), "{bad:?}");
        }
    }
}
