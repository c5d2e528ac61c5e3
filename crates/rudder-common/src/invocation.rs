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
/// use rudder_common::value::Value;
///
/// let call = Invocation::new("sayHello", vec!["java.lang.String".into()], vec![Value::from("world")]);
/// assert_eq!(call.method_name(), "sayHello");
///
/// let generic = call.clone().into_generic();
/// assert_eq!(generic.wire_method_name(), "$invoke");
/// assert_eq!(generic.method_name(), "sayHello");
/// assert_eq!(generic.hash_arguments(), &[Value::from("world")]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation {
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
            method: method.into(),
            parameter_types,
            arguments,
            attachments: Vec::new(),
            generic: false,
        }
    }

    /// The same call made generically, through `$invoke(method, types, args)` with `generic=true`.
    pub fn into_generic(mut self) -> Invocation {
        self.generic = true;
        self.set_attachment("generic", "true");
        self
    }

    /// The method being called (the real one for a generic call), Dubbo's `RpcUtils.getMethodName`.
    pub fn method_name(&self) -> &str {
        &self.method
    }

    /// The method name sent on the wire: `$invoke` for a generic call.
    pub fn wire_method_name(&self) -> &str {
        if self.generic {
            GENERIC_METHOD
        } else {
            &self.method
        }
    }

    /// Whether this is a generic call.
    pub fn is_generic(&self) -> bool {
        self.generic
    }

    /// The Java parameter types of the real method.
    pub fn parameter_types(&self) -> &[String] {
        &self.parameter_types
    }

    /// The arguments of the real method: what consistent hashing keys on (`RpcUtils.getArguments`).
    pub fn hash_arguments(&self) -> &[Value] {
        &self.arguments
    }

    /// The arguments of the real method.
    pub fn arguments(&self) -> &[Value] {
        &self.arguments
    }

    /// Attachments sent with the call (`timeout`, `generic`, user keys...).
    pub fn attachments(&self) -> &[(String, String)] {
        &self.attachments
    }

    /// The attachment `key`, if set.
    pub fn attachment(&self, key: &str) -> Option<&str> {
        self.attachments
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Sets attachment `key`, replacing an earlier value.
    pub fn set_attachment(&mut self, key: &str, value: &str) {
        match self.attachments.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value.to_owned(),
            None => self.attachments.push((key.to_owned(), value.to_owned())),
        }
    }
}
