//! Hessian 2.0 serialization, as Dubbo's `hessian-lite` writes and reads it.
//!
//! The wire format beneath rudder's rpc layer (registry → directory → routers → cluster → load balance
//! → rpc): rudder-rpc writes each dubbo:// request and reads each answer with it, rudder-triple puts
//! one stream per argument inside Dubbo's Triple wrapper messages (so application-level discovery
//! reads the MetadataService's answers through them too). It knows nothing of URLs or calls, only
//! values.
//!
//! A Dubbo `dubbo://` request or response body is one Hessian 2.0 *stream*: several values written
//! one after another by one Java `Hessian2Output`, sharing its class definitions, type names and
//! back-reference numbering. [`Hessian2Writer`] and [`Hessian2Reader`] each stand for one such
//! stream; use one per body.
//!
//! # How Hessian values map to Java types
//!
//! | [`Value`](rudder_common::Value) | Hessian wire forms | Java |
//! |---|---|---|
//! | `Null` | `N` | `null` |
//! | `Bool` | `T`, `F` | `boolean` / `Boolean` |
//! | `Int` | `0x80-0xbf`, `0xc0-0xcf`, `0xd0-0xd7`, `I` | `int`; also `byte`, `short` |
//! | `Long` | `0xd8-0xef`, `0xf0-0xff`, `0x38-0x3f`, `0x59`, `L` | `long` |
//! | `Double` | `0x5b-0x5f`, `D` | `double`; also `float` |
//! | `Date` | `0x4a` (millis), `0x4b` (minutes) | `java.util.Date` |
//! | `String` | `0x00-0x1f`, `0x30-0x33`, `S`, chunks `R` | `String`; also `char` |
//! | `Binary` | `0x20-0x2f`, `0x34-0x37`, `B`, chunks `A` | `byte[]` |
//! | `List` | `0x70-0x7f`, `U V W X` | `ArrayList` (untyped); arrays and other collections (typed, e.g. `[java.lang.String`) |
//! | `Map` | `H` (untyped), `M` (typed) | `HashMap` (untyped); other `Map` classes (typed) |
//! | `Object` | class definition `C`, then `0x60-0x6f` or `O` | any serializable class: its non-transient, non-static fields |
//! | `Ref` | `Q` | a second reference to the same list, map or object (here: only cycles) |
//! | `Decimal` | object `java.math.BigDecimal` with its `value` string | `BigDecimal` |
//! | `BigInteger` | object `java.math.BigInteger`: `mag` (`[int`), `signum`, four cached 0s | `BigInteger` |
//! | `Time` | object `com.alibaba.com.caucho.hessian.io.java8.<Type>Handle` (hessian-lite's `writeReplace`) | `LocalDate`, `LocalTime`, `LocalDateTime`, `Instant`, `Duration`, `OffsetDateTime`, `OffsetTime`, `ZonedDateTime`, `Period`, `ZoneOffset` |
//!
//! The last three are read from and written as exactly the objects hessian-lite writes (byte for
//! byte; a malformed one, or a `BigInteger` over 4096 bits, stays an `Object`). `Year`,
//! `YearMonth`, `MonthDay` and `ZoneId` stay `Object`s of their handle classes. Java enums arrive as
//! objects with a single `name` field ([`Value::enum_constant`](rudder_common::Value::enum_constant));
//! exceptions as objects with `detailMessage`, `cause`, `stackTrace`… which
//! [`JavaException::from_value`](rudder_common::value::JavaException::from_value) understands.
//!
//! Strings count their length in UTF-16 units and encode characters outside the Basic Multilingual
//! Plane as two 3-byte surrogates; the codec handles this, so Rust strings go in and come out.
//!
//! # Example: a Dubbo request body
//!
//! ```
//! use rudder_common::Value;
//! use rudder_hessian::{Hessian2Reader, Hessian2Writer};
//!
//! let mut w = Hessian2Writer::new();
//! for header in ["2.0.2", "org.apache.dubbo.demo.DemoService", "0.0.0", "sayHello", "Ljava/lang/String;"] {
//!     w.write_utf(header);
//! }
//! w.write_value(&Value::from("rust"));
//! w.write_attachments([("path", "org.apache.dubbo.demo.DemoService")]);
//! let body = w.into_bytes();
//!
//! let mut r = Hessian2Reader::new(&body);
//! assert_eq!(r.read_string()?, "2.0.2");
//! # for _ in 0..4 { r.read_string()?; }
//! assert_eq!(r.read_value()?, Value::from("rust"));
//! # Ok::<(), rudder_hessian::DecodeError>(())
//! ```
//!
//! # Values and Rust types
//!
//! The value model is codec-independent and lives in [`rudder_common::value`]: [`Value`](rudder_common::Value),
//! serde conversion ([`to_value`](rudder_common::value::to_value), [`from_value`](rudder_common::value::from_value))
//! and [`JavaException`](rudder_common::value::JavaException). This crate only reads and writes it.
//!
//! # Hostile input
//!
//! The reader never allocates more than the remaining input justifies, caps nesting depth and lengths
//! ([`DecodeLimits`]), bounds how far back-references may be expanded, and reports every problem as a
//! [`DecodeError`] with its byte offset.
//!
//! What a stream decodes to is bounded too: every allocation for decoded values (container slots,
//! string and binary bytes, object field vectors, the reader's tables) is charged to a budget of
//! `min(max_decoded_bytes, 32 × input bytes + 8 MiB)` by default, and a stream that would need more
//! fails with [`DecodeError::BudgetExceeded`]. Class names, field names and type names are defined
//! once per stream and shared by every value that uses them, so a long name repeated by reference
//! costs its bytes once.
//!
//! ```
//! use rudder_hessian::{DecodeError, Hessian2Reader};
//! // A class with a 64 KiB name, then 300,000 objects of it: about 650 KB of input.
//! let mut body = b"XI\x00\x04\x93\xe0C".to_vec();
//! body.extend(b"R\x80\x00");
//! body.extend(std::iter::repeat_n(b'x', 32768));
//! body.extend(b"S\x80\x00");
//! body.extend(std::iter::repeat_n(b'x', 32768));
//! body.extend(b"\x91\x05value");
//! for _ in 0..300_000 {
//!     body.extend(b"\x60N");
//! }
//! let e = Hessian2Reader::new(&body).read_value().unwrap_err();
//! assert!(matches!(e, DecodeError::BudgetExceeded { .. }), "{e}");
//! ```

mod error;
mod java_types;
mod reader;
mod tags;
mod text;
mod writer;

pub use error::DecodeError;
pub use reader::{DecodeLimits, Hessian2Reader};
pub use writer::Hessian2Writer;
