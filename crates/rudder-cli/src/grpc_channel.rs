//! The transports protobuf calls go through: by `--url`, a tonic [`Channel`] to the URL's address
//! carrying what a Dubbo consumer sends on every Triple call (`tri-service-version`,
//! `tri-service-group`, the consumer application) from the URL; through `--registry`, a channel to the
//! reference's providers ([`registry_channel`]).

use std::time::Duration;

use anyhow::{bail, Context, Result};
use rudder::Reference;
use rudder_common::url::transport::{CONNECT_TIMEOUT, PAYLOAD, TIMEOUT};
use rudder_common::url::DubboUrl;
use tonic::metadata::{AsciiMetadataKey, AsciiMetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::service::Interceptor;
use tonic::transport::{Channel, Endpoint};

/// The application name sent as `tri-consumer-appname` (as the POJO path's consumer has it).
pub(crate) const APPLICATION: &str = "rudder-cli";

/// A tonic channel that adds the Triple headers of its provider URL to every request.
pub(crate) type UrlChannel = InterceptedService<Channel, TriHeaders>;

/// The headers a Dubbo 3.3 consumer puts on every Triple call: `tri-service-version` and
/// `tri-service-group` when the URL has them (a provider with several versions picks by them), and
/// `tri-consumer-appname`.
#[derive(Debug, Clone, Default)]
pub(crate) struct TriHeaders(Vec<(AsciiMetadataKey, AsciiMetadataValue)>);

impl TriHeaders {
    /// The headers for calls to `url`.
    pub(crate) fn of(url: &DubboUrl) -> Result<TriHeaders> {
        let mut headers = Vec::new();
        for (header, key) in [
            ("tri-service-version", "version"),
            ("tri-service-group", "group"),
        ] {
            if let Some(value) = url.parameter(key).map(str::trim).filter(|v| !v.is_empty()) {
                let value = value
                    .parse()
                    .with_context(|| format!("{key}={value:?} cannot be sent as a header"))?;
                headers.push((AsciiMetadataKey::from_static(header), value));
            }
        }
        headers.push((
            AsciiMetadataKey::from_static("tri-consumer-appname"),
            AsciiMetadataValue::from_static(APPLICATION),
        ));
        Ok(TriHeaders(headers))
    }
}

impl Interceptor for TriHeaders {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        for (key, value) in &self.0 {
            request.metadata_mut().insert(key.clone(), value.clone());
        }
        Ok(request)
    }
}

/// Where protobuf calls go and with which limits, read from the provider URL as the tri:// client
/// reads them.
#[derive(Debug, Clone)]
pub(crate) struct GrpcTarget {
    /// `tri://HOST:PORT`, for messages.
    pub(crate) shown: String,
    /// `HOST:PORT`, for `-v`.
    pub(crate) address: String,
    /// The provider URL with the consumer's parameters merged in.
    pub(crate) url: DubboUrl,
    /// The connect deadline.
    pub(crate) connect_timeout: Duration,
    /// The largest message either way, bytes.
    pub(crate) payload: usize,
}

impl GrpcTarget {
    /// The target of `url` (already merged with the consumer's parameters).
    pub(crate) fn new(url: DubboUrl) -> GrpcTarget {
        let address = url.address();
        GrpcTarget {
            shown: format!("{}://{address}", url.protocol()),
            address,
            connect_timeout: millis(CONNECT_TIMEOUT.positive_value(&url)),
            payload: usize::try_from(PAYLOAD.positive_value(&url)).unwrap_or(8 << 20),
            url,
        }
    }

    /// The deadline of one call to `method`: `flag` (`--timeout`), else `<method>.timeout`, else
    /// `timeout`, else 1000 ms.
    pub(crate) fn timeout(&self, method: &str, flag: Option<u64>) -> Duration {
        match flag {
            Some(ms) => Duration::from_millis(ms),
            None => millis(TIMEOUT.positive_method_value(&self.url, method)),
        }
    }

    /// A channel to the target's address; it connects on the first call (a provider that is down
    /// fails each call as UNAVAILABLE, counted like any failure), within the connect deadline.
    pub(crate) fn channel(&self) -> Result<UrlChannel> {
        let host = self.url.host();
        let authority = if host.contains(':') && !host.starts_with('[') {
            format!("[{host}]:{}", self.url.port())
        } else {
            format!("{host}:{}", self.url.port())
        };
        let endpoint = Endpoint::from_shared(format!("http://{authority}"))
            .with_context(|| format!("{} is not an address to call", self.shown))?
            .connect_timeout(self.connect_timeout);
        Ok(InterceptedService::new(
            endpoint.connect_lazy(),
            TriHeaders::of(&self.url)?,
        ))
    }
}

fn millis(v: i64) -> Duration {
    Duration::from_millis(u64::try_from(v).unwrap_or(1))
}

/// The transport of protobuf calls through `--registry`: the reference's own
/// [`grpc_channel`](Reference::grpc_channel), so each call is routed, balanced, retried (unary) and
/// counted like any other, and the channel sends the provider URL's version and group itself. The
/// target only gives the deadline and the payload limit, from the first tri:// provider merged with
/// the consumer settings.
pub(crate) fn registry_channel(
    reference: &Reference,
    providers: &[DubboUrl],
    merged: impl Fn(&DubboUrl) -> DubboUrl,
) -> Result<(rudder::GrpcChannel, GrpcTarget)> {
    let Some(url) = providers.iter().find(|p| p.protocol() == "tri") else {
        let protocols: std::collections::BTreeSet<&str> =
            providers.iter().map(DubboUrl::protocol).collect();
        bail!(
            "protobuf calls need a tri:// provider; the registry lists {} (protocols {})",
            providers.len(),
            protocols.into_iter().collect::<Vec<_>>().join(", ")
        );
    };
    Ok((reference.grpc_channel(), GrpcTarget::new(merged(url))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_come_from_the_url_and_empty_ones_are_not_sent() {
        let url =
            DubboUrl::parse_any("tri://127.0.0.1:1/S?version=1.0.0&group=&timeout=250").unwrap();
        let mut headers = TriHeaders::of(&url).unwrap();
        let request = headers.call(tonic::Request::new(())).unwrap();
        let sent = request.metadata();
        assert_eq!(sent.get("tri-service-version").unwrap(), "1.0.0");
        assert!(sent.get("tri-service-group").is_none());
        assert_eq!(sent.get("tri-consumer-appname").unwrap(), APPLICATION);
        let target = GrpcTarget::new(url);
        assert_eq!(target.timeout("SayHello", None), Duration::from_millis(250));
        assert_eq!(
            target.timeout("SayHello", Some(7)),
            Duration::from_millis(7)
        );
        assert_eq!(target.payload, 8 << 20);
        assert_eq!(target.shown, "tri://127.0.0.1:1");
    }

    #[test]
    fn method_timeouts_beat_the_plain_one() {
        let url = DubboUrl::parse_any("tri://h:1/S?timeout=250&SayHello.timeout=90&payload=1024")
            .unwrap();
        let target = GrpcTarget::new(url);
        assert_eq!(target.timeout("SayHello", None), Duration::from_millis(90));
        assert_eq!(target.timeout("Other", None), Duration::from_millis(250));
        assert_eq!(target.payload, 1024);
    }
}
