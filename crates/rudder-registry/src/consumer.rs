//! The consumer: which service it wants, and the node it registers so Java tools can see it.
//!
//! A Dubbo consumer announces itself with an ephemeral node
//! `/dubbo/<interface>/consumers/<URL.encode(consumer URL)>` (`ZookeeperRegistry.doRegister`); dubbo-admin
//! and `dubbo-ops` list consumers from there. [`ConsumerSpec::registration_url`] writes the same URL shape a
//! Java 3.x consumer writes, with `release=rudder-<version>` so the node is recognisably rudder's.
//!
//! ```
//! use rudder_registry::ConsumerSpec;
//!
//! let spec = ConsumerSpec::new("com.acme.Greeter").version("1.0.0").application("shop");
//! let url = spec.registration_url("10.0.0.9", 1_700_000_000_000, 42)?;
//! assert_eq!(url.protocol(), "consumer");
//! assert_eq!(url.parameter("category"), Some("consumers"));
//! assert_eq!(url.parameter("version"), Some("1.0.0"));
//! # Ok::<(), rudder_registry::RegistryError>(())
//! ```

use rudder_common::url::merge::ConsumerParams;
use rudder_common::url::DubboUrl;

use crate::error::RegistryError;

/// What a consumer asks the registry for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerSpec {
    /// The service interface (`com.acme.Greeter`).
    pub interface: String,
    /// The service version; `None` matches providers without one, `*` matches any.
    pub version: Option<String>,
    /// The service group; `None` matches providers without one, `*` any, `a,b` either.
    pub group: Option<String>,
    /// Accepted provider protocols (`dubbo`, `tri`, or a comma list); `None` accepts every protocol rudder
    /// can call.
    pub protocol: Option<String>,
    /// The consumer application name (`application=`).
    pub application: String,
    /// The methods the consumer calls (`methods=`), informational.
    pub methods: Vec<String>,
    /// The address registered for this consumer; `None` uses `DUBBO_IP_TO_REGISTRY` or this machine's
    /// first non-loopback address ([`rudder_common::net::consumer_host`]).
    pub host: Option<String>,
    /// Whether to register the consumer node at all (Dubbo's `register=false` turns it off).
    pub register: bool,
    /// The consumer's own settings (`timeout`, `loadbalance`, `sayHello.timeout`, ...), merged into every
    /// provider URL in Dubbo 3.3's lookup order (see [`ConsumerParams`]) and written into the consumer
    /// node. Empty by default.
    pub parameters: ConsumerParams,
}

impl ConsumerSpec {
    /// A consumer of `interface`, no version or group, application `rudder`.
    pub fn new(interface: impl Into<String>) -> ConsumerSpec {
        ConsumerSpec {
            interface: interface.into(),
            version: None,
            group: None,
            protocol: None,
            application: "rudder".to_owned(),
            methods: Vec::new(),
            host: None,
            register: true,
            parameters: ConsumerParams::default(),
        }
    }

    /// Sets the version.
    pub fn version(mut self, version: impl Into<String>) -> ConsumerSpec {
        self.version = Some(version.into());
        self
    }

    /// Sets the group.
    pub fn group(mut self, group: impl Into<String>) -> ConsumerSpec {
        self.group = Some(group.into());
        self
    }

    /// Restricts the accepted provider protocols.
    pub fn protocol(mut self, protocol: impl Into<String>) -> ConsumerSpec {
        self.protocol = Some(protocol.into());
        self
    }

    /// Sets the application name.
    pub fn application(mut self, application: impl Into<String>) -> ConsumerSpec {
        self.application = application.into();
        self
    }

    /// Sets the consumer's parameters, merged into every provider URL before the configurators apply.
    ///
    /// ```
    /// use rudder_common::url::{merge::ConsumerParams, DubboUrl};
    /// use rudder_registry::ConsumerSpec;
    ///
    /// let settings = DubboUrl::parse("consumer://0.0.0.0/com.acme.Greeter?timeout=3000&loadbalance=roundrobin")?;
    /// let spec = ConsumerSpec::new("com.acme.Greeter").parameters(ConsumerParams::new(&settings));
    /// assert_eq!(spec.parameters.iter().count(), 2);
    /// # Ok::<(), rudder_common::url::UrlError>(())
    /// ```
    pub fn parameters(mut self, parameters: ConsumerParams) -> ConsumerSpec {
        self.parameters = parameters;
        self
    }

    /// Sets the methods listed in the consumer node.
    pub fn methods<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        methods: I,
    ) -> ConsumerSpec {
        self.methods = methods.into_iter().map(Into::into).collect();
        self
    }

    /// Checks that every field can be written into a URL (no `&`, `=`, `?`, `/` where they would break it).
    ///
    /// # Errors
    /// [`RegistryError::BadConsumer`] naming the field.
    pub fn validate(&self) -> Result<(), RegistryError> {
        let bad = |field: &str, why: &str| RegistryError::BadConsumer {
            reason: format!("{field} {why}"),
        };
        if self.interface.trim().is_empty() {
            return Err(bad("interface", "is empty"));
        }
        if self.interface.contains(['/', '?', '&', '=', ' ']) {
            return Err(bad("interface", "contains '/', '?', '&', '=' or a space"));
        }
        let fields = [
            ("version", self.version.as_deref()),
            ("group", self.group.as_deref()),
            ("protocol", self.protocol.as_deref()),
            ("application", Some(self.application.as_str())),
            ("host", self.host.as_deref()),
        ];
        for (name, value) in fields {
            if value.is_some_and(|v| v.contains(['&', '=', '?', '/'])) {
                return Err(bad(name, "contains '&', '=', '?' or '/'"));
            }
        }
        if self.methods.iter().any(|m| m.contains(['&', '=', ','])) {
            return Err(bad("methods", "contain '&', '=' or ','"));
        }
        Ok(())
    }

    /// The URL providers are matched against (`UrlUtils.isMatch`'s consumer side).
    pub fn match_url(&self) -> DubboUrl {
        let mut url = DubboUrl::new("consumer", "", 0, &self.interface)
            .with_parameter("interface", &self.interface);
        if let Some(version) = nonempty(&self.version) {
            url = url.with_parameter("version", version);
        }
        if let Some(group) = nonempty(&self.group) {
            url = url.with_parameter("group", group);
        }
        url
    }

    /// The `consumer://` URL registered under `/dubbo/<interface>/consumers`, as a Java 3.x consumer
    /// writes it (parameters sorted by key by [`DubboUrl::to_full_string`]).
    ///
    /// # Errors
    /// As [`ConsumerSpec::validate`].
    pub fn registration_url(
        &self,
        host: &str,
        timestamp_ms: i64,
        pid: u32,
    ) -> Result<DubboUrl, RegistryError> {
        self.validate()?;
        let mut url = DubboUrl::new("consumer", host, 0, &self.interface);
        // The consumer's settings first, so the keys below (which it cannot hold anyway) are rudder's.
        for (key, value) in self.parameters.iter() {
            url = url.with_parameter(key, value);
        }
        let mut url = url
            .with_parameter("application", &self.application)
            .with_parameter("category", "consumers")
            .with_parameter("check", "false")
            .with_parameter("dubbo", "2.0.2")
            .with_parameter("interface", &self.interface)
            .with_parameter("pid", &pid.to_string())
            .with_parameter("release", concat!("rudder-", env!("CARGO_PKG_VERSION")))
            .with_parameter("side", "consumer")
            .with_parameter("timestamp", &timestamp_ms.to_string());
        if !self.methods.is_empty() {
            url = url.with_parameter("methods", &self.methods.join(","));
        }
        if let Some(version) = nonempty(&self.version) {
            url = url.with_parameter("version", version);
        }
        if let Some(group) = nonempty(&self.group) {
            url = url.with_parameter("group", group);
        }
        if let Some(protocol) = nonempty(&self.protocol) {
            url = url.with_parameter("protocol", protocol);
        }
        Ok(url)
    }
}

fn nonempty(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registration_url_has_the_keys_java_tools_read() {
        let spec = ConsumerSpec::new("com.acme.Greeter")
            .group("blue")
            .methods(["sayHello", "sayBye"]);
        let url = spec.registration_url("10.0.0.9", 1700, 7).unwrap();
        assert_eq!(
            url.to_full_string(),
            format!(
                "consumer://10.0.0.9/com.acme.Greeter?application=rudder&category=consumers&check=false&\
                 dubbo=2.0.2&group=blue&interface=com.acme.Greeter&methods=sayHello,sayBye&pid=7&\
                 release=rudder-{}&side=consumer&timestamp=1700",
                env!("CARGO_PKG_VERSION")
            )
        );
        assert!(url
            .to_node_name()
            .starts_with("consumer%3A%2F%2F10.0.0.9%2Fcom.acme.Greeter%3F"));
    }

    #[test]
    fn consumer_parameters_are_written_into_the_node_and_cannot_override_its_keys() {
        let settings =
            DubboUrl::parse("consumer://0.0.0.0/S?timeout=3000&check=true&pid=1&side=provider")
                .unwrap();
        let spec = ConsumerSpec::new("S").parameters(ConsumerParams::new(&settings));
        let url = spec.registration_url("10.0.0.9", 1700, 7).unwrap();
        assert_eq!(url.parameter("timeout"), Some("3000"));
        assert_eq!(url.parameter("check"), Some("false"));
        assert_eq!(url.parameter("pid"), Some("7"));
        assert_eq!(url.parameter("side"), Some("consumer"));
    }

    #[test]
    fn fields_that_would_corrupt_the_url_are_rejected() {
        assert!(ConsumerSpec::new("a/b").validate().is_err());
        assert!(ConsumerSpec::new("S").version("1&x=2").validate().is_err());
        assert!(ConsumerSpec::new("").validate().is_err());
        assert!(ConsumerSpec::new("S").version("1.0").validate().is_ok());
    }
}
