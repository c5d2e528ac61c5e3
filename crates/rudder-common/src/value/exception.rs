//! Java `Throwable`s as they arrive in a Dubbo error response.

use std::fmt;

use super::Value;

/// Deepest cause chain followed; Java chains are short, hostile ones need not be.
const MAX_CAUSES: usize = 64;

/// A Java exception decoded from its Hessian object form.
///
/// Java serializes a `Throwable` field by field: `detailMessage`, `cause` (which is the throwable
/// itself, as a back-reference, when there is no cause), `stackTrace`, `suppressedExceptions`, plus
/// any fields of the subclass.
///
/// ```
/// use rudder_common::value::{JavaException, Value};
/// let thrown = Value::Object {
///     class: "java.lang.IllegalStateException".into(),
///     fields: vec![
///         ("detailMessage".into(), Value::from("boom")),
///         ("cause".into(), Value::Ref(0)),
///     ],
/// };
/// let e = JavaException::from_value(&thrown).unwrap();
/// assert_eq!(e.message.as_deref(), Some("boom"));
/// assert!(e.cause.is_none());
/// assert_eq!(e.to_string(), "java.lang.IllegalStateException: boom");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JavaException {
    /// Fully qualified class name, e.g. `java.lang.IllegalStateException`.
    pub class: String,
    /// `getMessage()`: the `detailMessage` field, if it is a string.
    pub message: Option<String>,
    /// `getCause()`, when it is a different throwable.
    pub cause: Option<Box<JavaException>>,
}

impl JavaException {
    /// Reads an exception out of a decoded object, if it looks like a Java `Throwable`: an object
    /// whose class name ends in `Exception`, `Error` or `Throwable`, or which has a `detailMessage`
    /// field. Returns `None` for anything else.
    pub fn from_value(value: &Value) -> Option<JavaException> {
        let mut chain = Vec::new();
        let mut current = value;
        while chain.len() < MAX_CAUSES {
            let Some((class, message)) = throwable_parts(current) else {
                break;
            };
            chain.push((class, message));
            match current.get("cause") {
                // A self-reference (or any cycle) means "no further cause".
                Some(next @ Value::Object { .. }) => current = next,
                _ => break,
            }
        }
        chain
            .into_iter()
            .rev()
            .fold(None, |cause, (class, message)| {
                Some(Box::new(JavaException {
                    class,
                    message,
                    cause,
                }))
            })
            .map(|e| *e)
    }
}

fn throwable_parts(value: &Value) -> Option<(String, Option<String>)> {
    let Value::Object { class, fields } = value else {
        return None;
    };
    let has_message_field = fields.iter().any(|(name, _)| &**name == "detailMessage");
    let named_like_one = ["Exception", "Error", "Throwable"]
        .iter()
        .any(|suffix| class.ends_with(suffix));
    if !(has_message_field || named_like_one) {
        return None;
    }
    let message = value
        .get("detailMessage")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Some((class.to_string(), message))
}

impl fmt::Display for JavaException {
    /// Like Java's `Throwable.toString()`; the cause is reported through `source()`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.message {
            Some(m) => write!(f, "{}: {}", self.class, m),
            None => write!(f, "{}", self.class),
        }
    }
}

impl std::error::Error for JavaException {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause
            .as_deref()
            .map(|c| c as &(dyn std::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error;

    fn throwable(class: &str, message: &str, cause: Value) -> Value {
        Value::Object {
            class: class.into(),
            fields: vec![
                ("detailMessage".into(), Value::from(message)),
                ("cause".into(), cause),
            ],
        }
    }

    /// The cause chain of a decoded exception is walkable with `source()`, as any Rust error's:
    /// `anyhow`, `tracing` and `{:#}` printers see Java's `Caused by:` lines.
    #[test]
    fn the_java_cause_chain_is_the_source_chain() {
        // A Throwable without a cause points at itself (Java's `cause = this`): here Ref(2).
        let root = throwable("java.io.IOException", "disk full", Value::Ref(2));
        let middle = throwable("java.lang.IllegalStateException", "cannot save", root);
        let top = throwable("com.example.OrderException", "order 7 failed", middle);
        let e = JavaException::from_value(&top).unwrap();

        let mut chain = Vec::new();
        let mut current: Option<&(dyn Error + 'static)> = Some(&e);
        while let Some(err) = current {
            chain.push(err.to_string());
            current = err.source();
        }
        assert_eq!(
            chain,
            [
                "com.example.OrderException: order 7 failed",
                "java.lang.IllegalStateException: cannot save",
                "java.io.IOException: disk full",
            ]
        );
        let cause = e.source().unwrap().downcast_ref::<JavaException>().unwrap();
        assert_eq!(cause.class, "java.lang.IllegalStateException");
    }
}
