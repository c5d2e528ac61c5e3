//! The registry's [`MetadataFetcher`] over rudder's own clients: application-level discovery asks an
//! instance for the services of its revision by calling its MetadataService, as a Java 3.3 consumer
//! does (`MetadataUtils.referMetadataService`), over the protocol the instance names for it
//! (`dubbo.metadata-service.url-params`):
//!
//! * an instance that says `meta-v=2.0.0` and whose MetadataService is tri:// exports
//!   MetadataServiceV2 (a Java 3.3 provider does when one of its protocols is tri and protobuf-java
//!   is on its classpath): asked `GetMetadataInfo` in protobuf ([`v2`]);
//! * any other, or one whose V2 service turns out not to be there (`UNIMPLEMENTED`): asked
//!   `getMetadataInfo(String)` on the V1 interface with hessian2 ([`v1`]), over dubbo:// or tri://.
//!
//! Java does not fall back: a `meta-v=2.0.0` instance that does not answer V2 gives it no metadata.
//! rudder asks V1 then (counted in [`MetadataServiceCalls::v2_fallbacks`], one warning per consumer),
//! so a peer that advertises V2 without serving it (a partial implementation, V2 left unexported)
//! still works where its V1 answers.

mod v1;
#[cfg(feature = "triple")]
mod v2;

#[cfg(feature = "triple")]
use std::sync::atomic::AtomicBool;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::protocols::Protocols;
use rudder_registry::{MetadataFetcher, MetadataFuture, MetadataInfo, MetadataRequest};

/// What a consumer's MetadataService calls got (application-level discovery with
/// `storage-type=local`; one call per revision of an application): which of the two MetadataServices
/// answered, and how often an instance that said it serves MetadataServiceV2 did not.
///
/// ```
/// let consumer = rudder::Consumer::builder().application("shop").build();
/// let calls = consumer.diagnostics().metadata_service_calls();
/// assert_eq!((calls.v1_answered, calls.v2_answered, calls.v2_fallbacks), (0, 0, 0));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MetadataServiceCalls {
    /// Answers of `org.apache.dubbo.metadata.MetadataService.getMetadataInfo` (hessian2).
    pub v1_answered: u64,
    /// Answers of `org.apache.dubbo.metadata.MetadataServiceV2/GetMetadataInfo` (protobuf, tri://).
    pub v2_answered: u64,
    /// V2 calls refused as not served (`UNIMPLEMENTED`, `NOT_FOUND`), after which V1 was asked.
    pub v2_fallbacks: u64,
}

/// The counters behind [`MetadataServiceCalls`], shared by a client and its consumer.
#[derive(Debug, Default)]
pub(crate) struct CallCounts {
    v1_answered: AtomicU64,
    v2_answered: AtomicU64,
    v2_fallbacks: AtomicU64,
    /// The fallback warning was logged (once per consumer; then debug).
    #[cfg(feature = "triple")]
    warned: AtomicBool,
}

impl CallCounts {
    pub(crate) fn snapshot(&self) -> MetadataServiceCalls {
        MetadataServiceCalls {
            v1_answered: self.v1_answered.load(Ordering::Relaxed),
            v2_answered: self.v2_answered.load(Ordering::Relaxed),
            v2_fallbacks: self.v2_fallbacks.load(Ordering::Relaxed),
        }
    }
}

/// Calls MetadataServices through the consumer's connections (shut down with them).
#[derive(Debug, Clone)]
pub(crate) struct MetadataClient {
    protocol: Protocols,
    counts: Arc<CallCounts>,
}

impl MetadataClient {
    pub(crate) fn new(protocol: Protocols) -> MetadataClient {
        MetadataClient {
            protocol,
            counts: Arc::default(),
        }
    }

    /// The counters of this client's calls.
    pub(crate) fn counts(&self) -> &Arc<CallCounts> {
        &self.counts
    }

    async fn fetch(&self, request: MetadataRequest) -> Result<MetadataInfo, String> {
        #[cfg(feature = "triple")]
        let v1_url = if serves_v2(&request) {
            match self.fetch_v2(&request).await? {
                Some(info) => return Ok(info),
                // V1 is exported as 1.0.0 whatever `meta-v` says.
                None => request.url.clone().with_parameter("version", "1.0.0"),
            }
        } else {
            request.url.clone()
        };
        #[cfg(not(feature = "triple"))]
        let v1_url = request.url.clone();
        let info = v1::fetch(&self.protocol, &v1_url, &request.revision).await?;
        self.counts.v1_answered.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(
            address = %v1_url.address(),
            protocol = v1_url.protocol(),
            revision = %request.revision,
            services = info.services.len(),
            "MetadataInfo answered by MetadataService (V1)"
        );
        Ok(info)
    }

    /// Asks MetadataServiceV2; `None` when the instance does not serve it (ask V1).
    #[cfg(feature = "triple")]
    async fn fetch_v2(&self, request: &MetadataRequest) -> Result<Option<MetadataInfo>, String> {
        let url = v2::url(&request.url);
        match v2::fetch(&self.protocol, &url, &request.revision).await {
            Ok(info) => {
                self.counts.v2_answered.fetch_add(1, Ordering::Relaxed);
                tracing::debug!(
                    address = %url.address(),
                    revision = %request.revision,
                    services = info.services.len(),
                    "MetadataInfo answered by MetadataServiceV2"
                );
                Ok(Some(info))
            }
            Err(v2::Failure::Failed(why)) => Err(why),
            Err(v2::Failure::NotServed(why)) => {
                self.counts.v2_fallbacks.fetch_add(1, Ordering::Relaxed);
                if self.counts.warned.swap(true, Ordering::Relaxed) {
                    tracing::debug!(address = %url.address(), %why, "no MetadataServiceV2; asking V1");
                } else {
                    tracing::warn!(
                        address = %url.address(),
                        %why,
                        "the instance says meta-v=2.0.0 but serves no MetadataServiceV2; asking its \
                         MetadataService (V1) instead, here and for any other such instance"
                    );
                }
                Ok(None)
            }
        }
    }
}

/// Whether the instance asked for serves MetadataServiceV2: it says `meta-v=2.0.0` and its
/// MetadataService is on tri:// (V2 is a Triple service; Java exports it over tri only).
#[cfg(feature = "triple")]
fn serves_v2(request: &MetadataRequest) -> bool {
    request.metadata_version.as_deref() == Some(v2::VERSION)
        && request.url.protocol() == crate::protocols::TRI
}

impl MetadataFetcher for MetadataClient {
    fn fetch(&self, request: MetadataRequest) -> MetadataFuture {
        let client = self.clone();
        Box::pin(async move { client.fetch(request).await })
    }
}

#[cfg(all(test, feature = "triple"))]
mod tests;
