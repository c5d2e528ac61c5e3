//! [`Arguments`]: the arguments of a serde-typed call, a tuple of `Serialize` values.

use rudder_common::value::{to_value, SerdeError};
use rudder_common::Value;
use serde::Serialize;

/// The arguments of [`Reference::call`](crate::Reference::call) and of a
/// [`MethodCall`](crate::MethodCall): `()` or a tuple of up to 12 values serde can serialize, in the
/// order of the Java method's parameters (a single argument is a one-element tuple, `(&user,)`), or a
/// `Vec<Value>` built by hand, taken as it is.
///
/// ```
/// use rudder::{Arguments, Value};
/// let values = (&"rust", 42i32).into_values()?;
/// assert_eq!(values, vec![Value::from("rust"), Value::Int(42)]);
/// # Ok::<(), rudder::value::SerdeError>(())
/// ```
pub trait Arguments {
    /// Converts every argument to a value, in order.
    ///
    /// # Errors
    /// When serde cannot represent one of them.
    fn into_values(self) -> Result<Vec<Value>, SerdeError>;
}

impl Arguments for () {
    fn into_values(self) -> Result<Vec<Value>, SerdeError> {
        Ok(Vec::new())
    }
}

/// Values built by hand (the dynamic calls of a CLI or a gateway), moved as they are.
impl Arguments for Vec<Value> {
    fn into_values(self) -> Result<Vec<Value>, SerdeError> {
        Ok(self)
    }
}

/// `Arguments` for the tuple of the given type parameters (each with its tuple index).
macro_rules! tuple_arguments {
    ($($name:ident $index:tt),+) => {
        impl<$($name: Serialize),+> Arguments for ($($name,)+) {
            fn into_values(self) -> Result<Vec<Value>, SerdeError> {
                Ok(vec![$(to_value(&self.$index)?),+])
            }
        }
    };
}

tuple_arguments!(A 0);
tuple_arguments!(A 0, B 1);
tuple_arguments!(A 0, B 1, C 2);
tuple_arguments!(A 0, B 1, C 2, D 3);
tuple_arguments!(A 0, B 1, C 2, D 3, E 4);
tuple_arguments!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_arguments!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_arguments!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
tuple_arguments!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
tuple_arguments!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
tuple_arguments!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
tuple_arguments!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tuple_keeps_its_order_and_length() {
        let values = (
            1i32, "two", 3i64, true, 5u8, 6i16, 7.0f64, 'c', 9i32, 10i32, 11i32, 12i32,
        )
            .into_values()
            .unwrap();
        assert_eq!(values.len(), 12);
        assert_eq!(values[0], Value::Int(1));
        assert_eq!(values[1], Value::from("two"));
        assert_eq!(values[11], Value::Int(12));
        assert!(().into_values().unwrap().is_empty());
        let by_hand = vec![Value::Long(1), Value::Null];
        assert_eq!(by_hand.clone().into_values().unwrap(), by_hand);
    }
}
