//! The dynamic value model: what a Dubbo call carries, independent of the codec that carries it.
//!
//! Every wire format rudder speaks (dubbo:// with Hessian 2.0 today, Triple next) reads into and
//! writes from the same [`Value`], so the layers above the codec (the [`Invocation`](crate::invocation::Invocation),
//! generic calls, the CLI's JSON, a business exception's [`JavaException`]) never depend on a codec.
//!
//! - [`Value`]: one Java value as a peer sees it (Java widths, class names, field order);
//! - [`to_value`] / [`from_value`]: serde types to and from values (the mapping table is on [`to_value`]);
//! - [`JavaException`]: a `Throwable` read out of a value (class, message, cause chain);
//! - the Java value types users pass every day, exact and typed: [`BigDecimal`], [`BigInteger`],
//!   [`Date`], and the `java.time` types ([`LocalDate`], [`LocalDateTime`], [`Instant`],
//!   [`Duration`], [`ZonedDateTime`]...), each with serde support (ISO-8601 or digit strings in
//!   other formats) for struct fields; Java enums are Rust enums with
//!   `#[serde(rename = "com.example.Color")]`.
//!
//! ```
//! use rudder_common::value::{from_value, to_value, Value};
//!
//! let v = to_value(&vec![1i32, 2])?;
//! assert_eq!(from_value::<Vec<i32>>(v)?, vec![1, 2]);
//! assert_eq!(Value::from("hi").as_str(), Some("hi"));
//! # Ok::<(), rudder_common::value::SerdeError>(())
//! ```

mod convert;
mod decimal;
mod deserialize;
mod exception;
mod model;
mod parse_error;
mod time;
mod typed_serde;

pub use convert::{from_value, to_java_object, to_object_value, to_value, JavaClass, SerdeError};
pub use decimal::{BigDecimal, BigInteger};
pub use exception::JavaException;
pub use model::Value;
pub use parse_error::ParseError;
pub use time::{
    Date, Duration, Instant, JavaTime, LocalDate, LocalDateTime, LocalTime, OffsetDateTime,
    OffsetTime, Period, ZoneOffset, ZonedDateTime,
};
