//! The README's and the guide's code blocks, compiled as doctests.
//!
//! `README.md` and `docs/*.md` show the API at work; a page whose example no longer compiles teaches
//! the wrong thing, and nothing else would notice. Each page is included here as the doc comment of an
//! item that exists only under `cfg(doctest)`, so `cargo test -p rudder --doc` compiles (and, unless a
//! block says `no_run`, runs) every Rust block in it, while `cargo doc` never sees these items. Blocks
//! that are not Rust are marked ```` ```text ````, ```` ```sh ````, ```` ```toml ```` or ```` ```yaml ````.
//! A new page under `docs/` gets a line here.

/// `README.md`: the front door's library example.
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;

/// `docs/README.md`: the guide's index.
#[doc = include_str!("../../../docs/README.md")]
struct GuideIndexDoctests;

/// `docs/library.md`: `Consumer`, `Reference`, the tower service, errors and Java values.
#[doc = include_str!("../../../docs/library.md")]
struct LibraryDoctests;

/// `docs/cli.md`: the command line.
#[doc = include_str!("../../../docs/cli.md")]
struct CliDoctests;

/// `docs/discovery.md`: interface- and application-level discovery, migration.
#[doc = include_str!("../../../docs/discovery.md")]
struct DiscoveryDoctests;

/// `docs/governance.md`: configurators and routers.
#[doc = include_str!("../../../docs/governance.md")]
struct GovernanceDoctests;

/// `docs/balancing.md`: strategies, outlier ejection, cluster modes.
#[doc = include_str!("../../../docs/balancing.md")]
struct BalancingDoctests;

/// `docs/multi-registry.md`: several registries per reference.
#[doc = include_str!("../../../docs/multi-registry.md")]
struct MultiRegistryDoctests;

/// `docs/triple.md`: tri:// and gRPC.
#[doc = include_str!("../../../docs/triple.md")]
struct TripleDoctests;

/// `docs/tls.md`: TLS and mutual TLS to providers.
#[doc = include_str!("../../../docs/tls.md")]
struct TlsDoctests;

/// `docs/observability.md`: spans and metrics.
#[doc = include_str!("../../../docs/observability.md")]
struct ObservabilityDoctests;

/// `docs/url-parameters.md`: parameter ranges.
#[doc = include_str!("../../../docs/url-parameters.md")]
struct UrlParametersDoctests;

/// `docs/differences.md`: differences from Dubbo.
#[doc = include_str!("../../../docs/differences.md")]
struct DifferencesDoctests;

/// `docs/performance.md`: figures and their commands.
#[doc = include_str!("../../../docs/performance.md")]
struct PerformanceDoctests;

/// `docs/public-api.md`: the public items per crate.
#[doc = include_str!("../../../docs/public-api.md")]
struct PublicApiDoctests;

/// `CONTRIBUTING.md`: layout and tests.
#[doc = include_str!("../../../CONTRIBUTING.md")]
struct ContributingDoctests;
