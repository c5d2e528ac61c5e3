//! One call as it travels down the data path: method, Java parameter types, arguments, attachments.

use crate::value::Value;

/// The method name Dubbo uses for generic calls made without the provider's Java classes.
pub const GENERIC_METHOD: &str = "$invoke";
/// The asynchronous variant of [`GENERIC_METHOD`].
pub const GENERIC_ASYNC_METHOD: &str = "$invokeAsync";

/// A call to one method of a service.
///
/// Balancers read [`Invocation::method_name`] (the real method, even for a generic `$invoke`) and
/// [`Invocation::hash_arguments`] (the real arguments), as Dubbo's `RpcUtils` does.
///
/// ```
/// use rudder_common::invocation::Invocation;
/// use rudder_common::Value;
///
/// let call = Invocation::new("sayHello", vec!["java.lang.String".into()], vec![Value::from("world")]);
/// assert_eq!(call.method_name(), "sayHello");
///
/// let generic = call.clone().into_generic();
/// assert_eq!(generic.wire_method_name(), "$invoke");
/// assert_eq!(generic.method_name(), "sayHello");
/// assert_eq!(generic.hash_arguments(), &[Value::from("world")]);
/// ```
///
/// Cloning is cheap (one reference count): the cluster hands each attempt its own `Invocation` (a
/// provider's endpoint is a `tower::Service<Invocation>`), and a retry or a forking call must not copy
/// the arguments again. Changing a clone ([`Invocation::set_attachment`]) copies it first.
#[derive(Clone, PartialEq)]
pub struct Invocation {
    inner: std::sync::Arc<Inner>,
}

#[derive(Debug, Clone, PartialEq)]
struct Inner {
    method: String,
    parameter_types: Vec<String>,
    arguments: Vec<Value>,
    attachments: Vec<(String, String)>,
    generic: bool,
}

impl Invocation {
    /// A direct call of `method` with Java parameter types (e.g. `java.lang.String`, `int`) and arguments.
    pub fn new(
        method: impl Into<String>,
        parameter_types: Vec<String>,
        arguments: Vec<Value>,
    ) -> Invocation {
        Invocation {
            inner: std::sync::Arc::new(Inner {
                method: method.into(),
                parameter_types,
                arguments,
                attachments: Vec::new(),
                generic: false,
            }),
        }
    }

    /// The same call made generically, through `$invoke(method, types, args)` with `generic=true`.
    pub fn into_generic(mut self) -> Invocation {
        std::sync::Arc::make_mut(&mut self.inner).generic = true;
        self.set_attachment("generic", "true");
        self
    }

    /// The method being called (the real one for a generic call), Dubbo's `RpcUtils.getMethodName`.
    pub fn method_name(&self) -> &str {
        &self.inner.method
    }

    /// The method name sent on the wire: `$invoke` for a generic call.
    pub fn wire_method_name(&self) -> &str {
        if self.inner.generic {
            GENERIC_METHOD
        } else {
            &self.inner.method
        }
    }

    /// Whether this is a generic call.
    pub fn is_generic(&self) -> bool {
        self.inner.generic
    }

    /// The Java parameter types of the real method.
    pub fn parameter_types(&self) -> &[String] {
        &self.inner.parameter_types
    }

    /// The arguments of the real method: what consistent hashing keys on (`RpcUtils.getArguments`).
    pub fn hash_arguments(&self) -> &[Value] {
        &self.inner.arguments
    }

    /// The arguments of the real method.
    pub fn arguments(&self) -> &[Value] {
        &self.inner.arguments
    }

    /// Attachments sent with the call (`timeout`, `generic`, user keys...).
    pub fn attachments(&self) -> &[(String, String)] {
        &self.inner.attachments
    }

    /// The attachment `key`, if set.
    pub fn attachment(&self, key: &str) -> Option<&str> {
        self.inner
            .attachments
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Sets attachment `key`, replacing an earlier value.
    pub fn set_attachment(&mut self, key: &str, value: &str) {
        let attachments = &mut std::sync::Arc::make_mut(&mut self.inner).attachments;
        match attachments.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value.to_owned(),
            None => attachments.push((key.to_owned(), value.to_owned())),
        }
    }
}

impl std::fmt::Debug for Invocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // As the fields would print without the shared box around them.
        f.debug_struct("Invocation")
            .field("method", &self.inner.method)
            .field("parameter_types", &self.inner.parameter_types)
            .field("arguments", &self.inner.arguments)
            .field("attachments", &self.inner.attachments)
            .field("generic", &self.inner.generic)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_shares_until_changed_and_a_change_leaves_the_original_alone() {
        let original = Invocation::new("m", vec!["int".into()], vec![Value::Int(1)]);
        let mut retry = original.clone();
        assert!(std::sync::Arc::ptr_eq(&original.inner, &retry.inner));
        retry.set_attachment("timeout", "5");
        assert!(!std::sync::Arc::ptr_eq(&original.inner, &retry.inner));
        assert_eq!(original.attachment("timeout"), None);
        assert_eq!(retry.attachment("timeout"), Some("5"));
        assert_eq!(retry.arguments(), original.arguments());
        assert_eq!(
            format!("{original:?}"),
            "Invocation { method: \"m\", parameter_types: [\"int\"], arguments: [Int(1)], \
             attachments: [], generic: false }"
        );
    }
}
