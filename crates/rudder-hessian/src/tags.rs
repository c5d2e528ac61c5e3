//! Hessian 2.0 tag bytes and the ranges of the compact forms, named as in the grammar.

pub(crate) const NULL: u8 = b'N';
pub(crate) const TRUE: u8 = b'T';
pub(crate) const FALSE: u8 = b'F';

/// `0x80..=0xbf`: int -16..=47 in one byte, value `tag - 0x90`.
pub(crate) const INT_ZERO: u8 = 0x90;
/// `0xc0..=0xcf`: int -2048..=2047 in two bytes.
pub(crate) const INT_BYTE_ZERO: u8 = 0xc8;
/// `0xd0..=0xd7`: int -262144..=262143 in three bytes.
pub(crate) const INT_SHORT_ZERO: u8 = 0xd4;
pub(crate) const INT: u8 = b'I';

/// `0xd8..=0xef`: long -8..=15 in one byte.
pub(crate) const LONG_ZERO: u8 = 0xe0;
/// `0xf0..=0xff`: long -2048..=2047 in two bytes.
pub(crate) const LONG_BYTE_ZERO: u8 = 0xf8;
/// `0x38..=0x3f`: long -262144..=262143 in three bytes.
pub(crate) const LONG_SHORT_ZERO: u8 = 0x3c;
/// A long that fits an int, in five bytes.
pub(crate) const LONG_INT: u8 = 0x59;
pub(crate) const LONG: u8 = b'L';

pub(crate) const DOUBLE_ZERO: u8 = 0x5b;
pub(crate) const DOUBLE_ONE: u8 = 0x5c;
pub(crate) const DOUBLE_BYTE: u8 = 0x5d;
pub(crate) const DOUBLE_SHORT: u8 = 0x5e;
/// A double that is a whole number of thousandths, as an int of "mills".
pub(crate) const DOUBLE_MILL: u8 = 0x5f;
pub(crate) const DOUBLE: u8 = b'D';

pub(crate) const DATE_MILLIS: u8 = 0x4a;
pub(crate) const DATE_MINUTES: u8 = 0x4b;

/// `0x00..=0x1f`: string of 0..=31 UTF-16 units.
pub(crate) const STRING_DIRECT_MAX: usize = 0x1f;
/// `0x30..=0x33`: string of up to 1023 units, length in two bytes.
pub(crate) const STRING_SHORT: u8 = 0x30;
pub(crate) const STRING_SHORT_MAX: usize = 0x3ff;
pub(crate) const STRING_FINAL: u8 = b'S';
pub(crate) const STRING_CHUNK: u8 = b'R';
/// Java cuts strings into chunks of this many UTF-16 units.
pub(crate) const STRING_CHUNK_UNITS: usize = 0x8000;

/// `0x20..=0x2f`: binary of 0..=15 bytes.
pub(crate) const BINARY_DIRECT: u8 = 0x20;
pub(crate) const BINARY_DIRECT_MAX: usize = 0x0f;
/// `0x34..=0x37`: binary of up to 1023 bytes.
pub(crate) const BINARY_SHORT: u8 = 0x34;
pub(crate) const BINARY_SHORT_MAX: usize = 0x3ff;
pub(crate) const BINARY_FINAL: u8 = b'B';
pub(crate) const BINARY_CHUNK: u8 = b'A';
/// Java's chunk size depends on its output buffer; this writer uses a fixed one.
pub(crate) const BINARY_CHUNK_BYTES: usize = 0x8000;

pub(crate) const LIST_VARIABLE_TYPED: u8 = b'U';
pub(crate) const LIST_FIXED_TYPED: u8 = b'V';
pub(crate) const LIST_VARIABLE_UNTYPED: u8 = b'W';
pub(crate) const LIST_FIXED_UNTYPED: u8 = b'X';
/// `0x70..=0x77`: typed list of 0..=7 items.
pub(crate) const LIST_DIRECT_TYPED: u8 = 0x70;
/// `0x78..=0x7f`: untyped list of 0..=7 items.
pub(crate) const LIST_DIRECT_UNTYPED: u8 = 0x78;
pub(crate) const LIST_DIRECT_MAX: usize = 7;

pub(crate) const MAP_UNTYPED: u8 = b'H';
pub(crate) const MAP_TYPED: u8 = b'M';
pub(crate) const END: u8 = b'Z';

pub(crate) const CLASS_DEF: u8 = b'C';
pub(crate) const OBJECT: u8 = b'O';
/// `0x60..=0x6f`: object of class definition 0..=15.
pub(crate) const OBJECT_DIRECT: u8 = 0x60;
pub(crate) const OBJECT_DIRECT_MAX: usize = 0x0f;
pub(crate) const REF: u8 = b'Q';
