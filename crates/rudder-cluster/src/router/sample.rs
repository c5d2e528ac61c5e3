//! Reading a URL the way Dubbo's routers read it: `URL.toOriginalMap()` and `URL.getRawParameter`.

use std::borrow::Cow;

use rudder_common::url::DubboUrl;

/// A parameter exactly as written (no `default.` fallback), as `getOriginalParameter` reads it.
pub(crate) fn raw_param<'u>(url: &'u DubboUrl, key: &str) -> Option<&'u str> {
    // A binary search: the consumer's parameters are read on every call (the tag router's
    // `dubbo.tag`, a `when` on `application`), and a scan compared against each of them.
    url.exact_parameter(key)
}

/// `toOriginalMap().get(key)`: the parameters plus `protocol`, `username`, `password`, `host`, `port`
/// (when set), `path` and `address`, which win over parameters of the same name.
pub(crate) fn original<'u>(url: &'u DubboUrl, key: &str) -> Option<Cow<'u, str>> {
    let special = match key {
        "protocol" => (!url.protocol().is_empty()).then(|| Cow::Borrowed(url.protocol())),
        "username" => url.username().map(Cow::Borrowed),
        "password" => url.password().map(Cow::Borrowed),
        "host" => (!url.host().is_empty()).then(|| Cow::Borrowed(url.host())),
        "port" => (url.port() > 0).then(|| Cow::Owned(url.port().to_string())),
        "path" => (!url.path().is_empty()).then(|| Cow::Borrowed(url.path())),
        "address" => (!url.host().is_empty()).then(|| Cow::Owned(url.address())),
        _ => None,
    };
    special.or_else(|| raw_param(url, key).map(Cow::Borrowed))
}

/// `getRawParameter(key)`: what a `$key` pattern reads of the consumer URL (a port of 0 reads `"0"`).
pub(crate) fn raw_parameter<'u>(url: &'u DubboUrl, key: &str) -> Option<Cow<'u, str>> {
    match key {
        "protocol" => Some(Cow::Borrowed(url.protocol())),
        "username" => url.username().map(Cow::Borrowed),
        "password" => url.password().map(Cow::Borrowed),
        "host" => Some(Cow::Borrowed(url.host())),
        "port" => Some(Cow::Owned(url.port().to_string())),
        "path" => Some(Cow::Borrowed(url.path())),
        _ => raw_param(url, key).map(Cow::Borrowed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_keys_win_over_parameters() {
        let url =
            DubboUrl::parse("dubbo://10.0.0.1:20880/S?host=evil&region=hz&default.zone=z").unwrap();
        assert_eq!(original(&url, "host").as_deref(), Some("10.0.0.1"));
        assert_eq!(original(&url, "address").as_deref(), Some("10.0.0.1:20880"));
        assert_eq!(original(&url, "port").as_deref(), Some("20880"));
        assert_eq!(original(&url, "region").as_deref(), Some("hz"));
        assert_eq!(original(&url, "zone"), None, "no default. fallback");
        let consumer = DubboUrl::parse("consumer://10.0.0.9/S").unwrap();
        assert_eq!(original(&consumer, "port"), None);
        assert_eq!(raw_parameter(&consumer, "port").as_deref(), Some("0"));
    }
}
