//! Reading GGUF integers of either byte order from a byte slice, bounds-checked.
//!
//! [`Cursor`] is the only place that indexes into file bytes during parsing.
//! It knows two lengths: the bytes it holds and the length of the whole file.
//! A read past the end of the file is [`ErrorKind::Truncated`]; a read past
//! the bytes held but inside the file is [`Step::NeedMore`], which lets a
//! caller that holds only a prefix of the file (the `--no-mmap` path) read
//! further and try again.

use crate::error::{Error, ErrorKind};
use crate::source::Step;

/// The byte order of a GGUF file's header, KV and tensor-info numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// Little-endian: the usual GGUF.
    Little,
    /// Big-endian: written for s390x and similar hosts.
    Big,
}

impl ByteOrder {
    /// `"little"` or `"big"`, as printed in JSON.
    pub fn name(self) -> &'static str {
        match self {
            ByteOrder::Little => "little",
            ByteOrder::Big => "big",
        }
    }
}

/// A bounds-checked reading position over the bytes of one file.
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    file_len: u64,
    pos: usize,
    order: ByteOrder,
}

impl<'a> Cursor<'a> {
    /// A cursor at position 0. `bytes` is the file or a prefix of it.
    pub(crate) fn new(bytes: &'a [u8], file_len: u64, order: ByteOrder) -> Self {
        Cursor { bytes, file_len, pos: 0, order }
    }

    pub(crate) fn set_order(&mut self, order: ByteOrder) {
        self.order = order;
    }

    pub(crate) fn order(&self) -> ByteOrder {
        self.order
    }

    /// The current file position.
    pub(crate) fn pos(&self) -> u64 {
        self.pos as u64
    }

    /// Bytes left in the file after the current position.
    pub(crate) fn remaining(&self) -> u64 {
        self.file_len.saturating_sub(self.pos())
    }

    /// The bytes of a range already read (for hashing in place).
    pub(crate) fn slice(&self, start: u64, end: u64) -> &'a [u8] {
        let (Ok(s), Ok(e)) = (usize::try_from(start), usize::try_from(end)) else {
            return &[];
        };
        self.bytes.get(s..e).unwrap_or(&[])
    }

    /// Takes the next `n` bytes; `what` names the field for the error.
    pub(crate) fn take(&mut self, n: u64, what: &'static str) -> Result<&'a [u8], Step> {
        let available = self.remaining();
        if n > available {
            return Err(Error::new(ErrorKind::Truncated { what, needed: n, available }).at(self.pos()).into());
        }
        // n <= remaining <= file_len - pos, so pos + n cannot overflow u64.
        let end = self.pos().saturating_add(n);
        let Ok(end_usize) = usize::try_from(end) else {
            return Err(Step::NeedMore(end));
        };
        match self.bytes.get(self.pos..end_usize) {
            Some(s) => {
                self.pos = end_usize;
                Ok(s)
            }
            None => Err(Step::NeedMore(end)),
        }
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], Step> {
        let s = self.take(N as u64, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8, Step> {
        Ok(self.array::<1>(what)?[0])
    }

    pub(crate) fn u16(&mut self, what: &'static str) -> Result<u16, Step> {
        let a = self.array(what)?;
        Ok(match self.order {
            ByteOrder::Little => u16::from_le_bytes(a),
            ByteOrder::Big => u16::from_be_bytes(a),
        })
    }

    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32, Step> {
        let a = self.array(what)?;
        Ok(match self.order {
            ByteOrder::Little => u32::from_le_bytes(a),
            ByteOrder::Big => u32::from_be_bytes(a),
        })
    }

    pub(crate) fn u64(&mut self, what: &'static str) -> Result<u64, Step> {
        let a = self.array(what)?;
        Ok(match self.order {
            ByteOrder::Little => u64::from_le_bytes(a),
            ByteOrder::Big => u64::from_be_bytes(a),
        })
    }

    /// Fails early, before any work, when `count` items of at least
    /// `min_size` bytes each cannot fit in what is left of the file.
    /// `at` is the file position of the count field, for the error.
    pub(crate) fn check_count(&self, count: u64, min_size: u64, what: &'static str, at: u64) -> Result<(), Step> {
        let available = self.remaining();
        match count.checked_mul(min_size) {
            Some(need) if need <= available => Ok(()),
            _ => Err(Error::new(ErrorKind::CountTooLarge { what, count, available }).at(at).into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fail(r: Result<impl std::fmt::Debug, Step>) -> Error {
        match r {
            Err(Step::Fail(e)) => e,
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    #[test]
    fn reads_both_byte_orders() {
        let b = [1, 2, 3, 4, 5, 6, 7, 8];
        let mut le = Cursor::new(&b, 8, ByteOrder::Little);
        assert_eq!(le.u32("x").ok(), Some(0x0403_0201));
        assert_eq!(le.u16("x").ok(), Some(0x0605));
        let mut be = Cursor::new(&b, 8, ByteOrder::Big);
        assert_eq!(be.u64("x").ok(), Some(0x0102_0304_0506_0708));
    }

    #[test]
    fn read_past_file_end_is_truncation() {
        let b = [0u8; 3];
        let mut c = Cursor::new(&b, 3, ByteOrder::Little);
        assert!(matches!(fail(c.u32("version")).kind(), ErrorKind::Truncated { needed: 4, available: 3, .. }));
    }

    #[test]
    fn read_past_prefix_asks_for_more() {
        let b = [0u8; 3];
        let mut c = Cursor::new(&b, 100, ByteOrder::Little);
        assert!(matches!(c.u64("x"), Err(Step::NeedMore(8))));
    }

    #[test]
    fn huge_take_fails_without_overflow() {
        let b = [0u8; 3];
        let mut c = Cursor::new(&b, 3, ByteOrder::Little);
        assert!(matches!(fail(c.take(u64::MAX, "string")).kind(), ErrorKind::Truncated { .. }));
    }

    #[test]
    fn count_check_catches_overflowing_products() {
        let c = Cursor::new(&[], 10, ByteOrder::Little);
        assert!(c.check_count(u64::MAX, 2, "KV count", 0).is_err());
        assert!(c.check_count(5, 2, "KV count", 0).is_ok());
        assert!(c.check_count(6, 2, "KV count", 0).is_err());
    }
}
