//! Every variant of the decoder's error, printed the ways users print errors (a walk over
//! `source()`, anyhow's `{:#}` and `{:?}`), says its message once: it is a leaf, with no cause.

use std::error::Error;

use rudder_hessian::DecodeError;

#[test]
fn each_decode_error_says_its_message_once() {
    let errors = [
        DecodeError::UnexpectedEnd {
            offset: 3,
            context: "a string",
        },
        DecodeError::UnknownTag {
            tag: 0xff,
            offset: 4,
        },
        DecodeError::UnexpectedTag {
            tag: 0x4e,
            offset: 5,
            expected: "an int",
        },
        DecodeError::LengthOverLimit {
            what: "list",
            len: 1 << 40,
            limit: 1 << 20,
            offset: 6,
        },
        DecodeError::BadRef {
            index: 9,
            count: 2,
            offset: 7,
        },
        DecodeError::BadClassRef {
            index: 9,
            count: 2,
            offset: 8,
        },
        DecodeError::BadTypeRef {
            index: 9,
            count: 2,
            offset: 9,
        },
        DecodeError::InvalidClassDef {
            offset: 10,
            reason: "no field count",
        },
        DecodeError::InvalidString {
            byte: 0xc0,
            offset: 11,
        },
        DecodeError::TooDeep {
            limit: 128,
            offset: 12,
        },
        DecodeError::RefExpansionOverLimit {
            limit: 1 << 20,
            offset: 13,
        },
        DecodeError::BudgetExceeded {
            used: 1 << 30,
            limit: 1 << 26,
            offset: 14,
        },
    ];
    for error in errors {
        assert!(error.source().is_none(), "{error}");
        let message = error.to_string();
        let offset = format!("byte {}", error.offset());
        rudder_test_support::assert_each_once(error, &[&message, &offset]);
    }
}
