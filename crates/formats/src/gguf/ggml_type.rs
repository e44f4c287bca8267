//! The ggml tensor type table: one row per type id, the only place that
//! knows block sizes, byte sizes and big-endian conversion rules.
//!
//! ggml keeps adding types; a new one is a new row in [`TABLE`].

use crate::error::Error;
use crate::gguf::cursor::ByteOrder;
use crate::hash::{Conversion, Swap};

/// One row of the ggml type table.
#[derive(Debug, PartialEq, Eq)]
pub struct GgmlType {
    /// The id stored in a tensor info.
    pub id: u32,
    /// ggml's name, e.g. `Q4_K`.
    pub name: &'static str,
    /// Elements per block.
    pub block_size: u64,
    /// Bytes per block.
    pub type_size: u64,
    /// The big-endian conversion rule: how a big-endian file stores the
    /// type's data, relative to little-endian.
    pub swap: Swap,
}

const fn row(id: u32, name: &'static str, block_size: u64, type_size: u64, swap: Swap) -> GgmlType {
    GgmlType { id, name, block_size, type_size, swap }
}

use Swap::{Halves, None as Bytes, Unsupported as No, Words};

/// Every ggml type with a known size (spec §2, conversion rules spec §6).
pub static TABLE: &[GgmlType] = &[
    row(0, "F32", 1, 4, Words(4)),
    row(1, "F16", 1, 2, Words(2)),
    row(2, "Q4_0", 32, 18, Halves(&[0])),
    row(3, "Q4_1", 32, 20, No),
    row(6, "Q5_0", 32, 22, No),
    row(7, "Q5_1", 32, 24, No),
    row(8, "Q8_0", 32, 34, Halves(&[0])),
    row(9, "Q8_1", 32, 36, No),
    row(10, "Q2_K", 256, 84, No),
    row(11, "Q3_K", 256, 110, No),
    row(12, "Q4_K", 256, 144, Halves(&[0, 2])),
    row(13, "Q5_K", 256, 176, No),
    row(14, "Q6_K", 256, 210, Halves(&[208])),
    row(15, "Q8_K", 256, 292, No),
    row(16, "IQ2_XXS", 256, 66, No),
    row(17, "IQ2_XS", 256, 74, No),
    row(18, "IQ3_XXS", 256, 98, No),
    row(19, "IQ1_S", 256, 50, No),
    row(20, "IQ4_NL", 32, 18, No),
    row(21, "IQ3_S", 256, 110, No),
    row(22, "IQ2_S", 256, 82, No),
    row(23, "IQ4_XS", 256, 136, No),
    row(24, "I8", 1, 1, Bytes),
    row(25, "I16", 1, 2, Words(2)),
    row(26, "I32", 1, 4, Words(4)),
    row(27, "I64", 1, 8, Words(8)),
    row(28, "F64", 1, 8, Words(8)),
    row(29, "IQ1_M", 256, 56, No),
    row(30, "BF16", 1, 2, Words(2)),
    row(34, "TQ1_0", 256, 54, No),
    row(35, "TQ2_0", 256, 66, No),
    row(39, "MXFP4", 32, 17, Bytes),
    row(40, "NVFP4", 64, 36, Bytes),
    row(41, "Q1_0", 128, 18, No),
    row(42, "Q2_0", 64, 18, No),
];

impl GgmlType {
    /// The row for a type id, or `None` for an id without a known size.
    pub fn from_id(id: u32) -> Option<&'static GgmlType> {
        TABLE.iter().find(|t| t.id == id)
    }

    /// How data of this type stored in `order` becomes the little-endian
    /// bytes that are hashed, a block at a time.
    pub fn conversion(&self, order: ByteOrder) -> Conversion {
        match order {
            ByteOrder::Little => Conversion::none(self.type_size, self.name),
            ByteOrder::Big => Conversion { swap: self.swap, ..Conversion::none(self.type_size, self.name) },
        }
    }

    /// Converts whole blocks of big-endian data to little-endian in place;
    /// a buffer that is not whole blocks is an error ([`Conversion::apply`]).
    pub fn big_to_little(&self, buf: &mut [u8]) -> Result<(), Error> {
        self.conversion(ByteOrder::Big).apply(buf)
    }
}

#[cfg(test)]
// Tests index the fixed table and their own fixtures, never file bytes.
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_sorted() {
        for w in TABLE.windows(2) {
            assert!(w[0].id < w[1].id, "{} then {}", w[0].name, w[1].name);
        }
    }

    #[test]
    fn unknown_ids() {
        for id in [4, 5, 31, 32, 33, 36, 37, 38, 43, u32::MAX] {
            assert!(GgmlType::from_id(id).is_none(), "{id}");
        }
        assert_eq!(GgmlType::from_id(9).map(|t| t.type_size), Some(36));
    }

    #[test]
    fn swap_offsets_lie_inside_blocks() {
        for t in TABLE {
            if let Swap::Halves(offs) = t.swap {
                for &o in offs {
                    assert!((o as u64) + 2 <= t.type_size, "{}", t.name);
                }
            }
            if let Swap::Words(n) = t.swap {
                assert_eq!(n as u64, t.type_size, "{}", t.name);
            }
        }
    }

    #[test]
    fn q4_k_swaps_both_scales() {
        let t = GgmlType::from_id(12).unwrap();
        let mut block = vec![0u8; 144];
        block[..4].copy_from_slice(&[1, 2, 3, 4]);
        block[4] = 9;
        t.big_to_little(&mut block).unwrap();
        assert_eq!(&block[..5], &[2, 1, 4, 3, 9]);
    }

    #[test]
    fn words_reverse() {
        let mut b = [1, 2, 3, 4, 5, 6, 7, 8];
        GgmlType::from_id(0).unwrap().big_to_little(&mut b).unwrap();
        assert_eq!(b, [4, 3, 2, 1, 8, 7, 6, 5]);
    }

    #[test]
    fn a_partial_block_is_an_error_for_every_type() {
        // Whatever the rule (none, words, halves), a buffer that is not
        // whole blocks is refused and left untouched, never half converted.
        for t in TABLE {
            let size = t.type_size as usize;
            for len in [1, size - 1, size + 1, 2 * size + size / 2] {
                if len % size == 0 {
                    continue;
                }
                let mut buf: Vec<u8> = (0..len).map(|i| i as u8).collect();
                let before = buf.clone();
                let e = t.big_to_little(&mut buf).unwrap_err();
                assert!(
                    matches!(e.kind(), crate::ErrorKind::PartialBlock { len: l, .. } if *l == len as u64),
                    "{}: {e}",
                    t.name
                );
                assert_eq!(buf, before, "{}", t.name);
            }
            let mut whole = vec![0u8; 3 * size];
            t.big_to_little(&mut whole).unwrap();
            t.big_to_little(&mut []).unwrap();
        }
    }
}
