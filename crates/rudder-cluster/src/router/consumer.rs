//! The consumer as routing rules see it: its URL (after consumer-side configurators).

use std::borrow::Cow;

use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;

use super::sample::{original, raw_param};

/// Attachment and consumer parameter carrying the request tag.
pub const TAG_KEY: &str = "dubbo.tag";
/// Attachment and consumer parameter that forbids falling back to untagged providers.
pub const FORCE_TAG_KEY: &str = "dubbo.force.tag";

/// The consumer URL a chain routes for: `when` conditions read its parameters, `host`, `application`;
/// the tag router reads its `dubbo.tag` and `dubbo.force.tag`.
#[derive(Debug, Clone)]
pub struct Consumer {
    url: DubboUrl,
}

impl Consumer {
    /// The consumer described by `url` (`consumer://<ip>/<interface>?application=...`).
    pub fn new(url: DubboUrl) -> Consumer {
        Consumer { url }
    }

    /// The URL.
    pub fn url(&self) -> &DubboUrl {
        &self.url
    }

    /// `toOriginalMap().get(key)` of the consumer URL.
    pub(crate) fn sample(&self, key: &str) -> Option<Cow<'_, str>> {
        original(&self.url, key)
    }

    /// The consumer's own `dubbo.tag` (empty when unset): the request tag of a call without one.
    pub(crate) fn request_tag_of_consumer(&self) -> &str {
        raw_param(&self.url, TAG_KEY).unwrap_or("")
    }

    /// The request tag: the `dubbo.tag` attachment if non-empty, else the consumer's `dubbo.tag`.
    pub(crate) fn request_tag<'a>(&'a self, invocation: &'a Invocation) -> &'a str {
        invocation
            .attachment(TAG_KEY)
            .filter(|t| !t.is_empty())
            .or_else(|| raw_param(&self.url, TAG_KEY))
            .unwrap_or("")
    }

    /// `dubbo.force.tag` from the attachment if non-empty, else the consumer URL, else false; Java's
    /// `Boolean.parseBoolean`.
    pub(crate) fn force_tag(&self, invocation: &Invocation) -> bool {
        invocation
            .attachment(FORCE_TAG_KEY)
            .filter(|t| !t.is_empty())
            .or_else(|| raw_param(&self.url, FORCE_TAG_KEY))
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    }
}
