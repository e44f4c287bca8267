//! The safetensors dtype table: one row per dtype with its size in bits, the
//! only place that knows them (the format keeps adding types: a new one is
//! a new row). Sizes are those of the reference crate's 0.8 list.

/// One row of the dtype table.
#[derive(Debug, PartialEq, Eq)]
pub struct Dtype {
    /// The name as written in a header, e.g. `BF16`.
    pub name: &'static str,
    /// Bits per element.
    pub bits: u64,
}

const fn row(name: &'static str, bits: u64) -> Dtype {
    Dtype { name, bits }
}

/// Every dtype a header may name.
pub static DTYPES: &[Dtype] = &[
    row("F4", 4),
    row("F6_E2M3", 6),
    row("F6_E3M2", 6),
    row("BOOL", 8),
    row("U8", 8),
    row("I8", 8),
    row("F8_E5M2", 8),
    row("F8_E4M3", 8),
    row("F8_E8M0", 8),
    row("F8_E4M3FNUZ", 8),
    row("F8_E5M2FNUZ", 8),
    row("I16", 16),
    row("U16", 16),
    row("F16", 16),
    row("BF16", 16),
    row("I32", 32),
    row("U32", 32),
    row("F32", 32),
    row("C64", 64),
    row("F64", 64),
    row("I64", 64),
    row("U64", 64),
];

/// Why a shape has no byte size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeError {
    /// A product overflowed u64.
    Overflow,
    /// The element count times the bits is not whole bytes (sub-byte dtypes).
    NotWholeBytes,
}

impl Dtype {
    /// The row for a dtype name, or `None` for a name not in the table.
    pub fn from_name(name: &str) -> Option<&'static Dtype> {
        DTYPES.iter().find(|d| d.name == name)
    }

    /// The bytes of a tensor of this dtype and shape: the product of the
    /// dims (1 for a scalar) times the bits, over 8, every product checked.
    pub fn nbytes(&self, shape: &[u64]) -> Result<u64, SizeError> {
        let elements = shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d)).ok_or(SizeError::Overflow)?;
        let bits = elements.checked_mul(self.bits).ok_or(SizeError::Overflow)?;
        if bits.checked_rem(8) != Some(0) {
            return Err(SizeError::NotWholeBytes);
        }
        Ok(bits.checked_div(8).unwrap_or(0))
    }

    /// Bytes of whole blocks of elements: the unit data is hashed in (a
    /// 4-bit dtype packs two elements a byte, a 6-bit one four in three).
    pub fn block_bytes(&self) -> u64 {
        // The smallest whole number of bytes holding whole elements.
        let mut k = 1u64;
        while k.saturating_mul(self.bits).checked_rem(8) != Some(0) && k < 8 {
            k = k.saturating_add(1);
        }
        k.saturating_mul(self.bits).checked_div(8).unwrap_or(1).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_sizes_whole_or_sub_byte() {
        for (i, d) in DTYPES.iter().enumerate() {
            assert!(DTYPES.iter().skip(i + 1).all(|e| e.name != d.name), "{}", d.name);
            assert!([4, 6, 8, 16, 32, 64].contains(&d.bits), "{}", d.name);
        }
        assert_eq!(DTYPES.len(), 22);
    }

    #[test]
    fn nbytes_checks_every_product() {
        let f32 = Dtype::from_name("F32").unwrap();
        assert_eq!(f32.nbytes(&[]), Ok(4));
        assert_eq!(f32.nbytes(&[2, 3]), Ok(24));
        assert_eq!(f32.nbytes(&[0, 5]), Ok(0));
        assert_eq!(f32.nbytes(&[u64::MAX, 2]), Err(SizeError::Overflow));
        assert_eq!(f32.nbytes(&[1 << 62]), Err(SizeError::Overflow));
        // Partial products, left to right: u64::MAX, then 0; none overflows.
        assert_eq!(f32.nbytes(&[u64::MAX, 0]), Ok(0));
        assert_eq!(f32.nbytes(&[0, u64::MAX]), Ok(0));
        assert_eq!(f32.nbytes(&[u64::MAX, 2, 0]), Err(SizeError::Overflow));
        let f4 = Dtype::from_name("F4").unwrap();
        assert_eq!(f4.nbytes(&[3]), Err(SizeError::NotWholeBytes));
        assert_eq!(f4.nbytes(&[4]), Ok(2));
        let f6 = Dtype::from_name("F6_E2M3").unwrap();
        assert_eq!(f6.nbytes(&[4]), Ok(3));
        assert_eq!(f6.nbytes(&[2]), Err(SizeError::NotWholeBytes));
        assert!(Dtype::from_name("f32").is_none());
        assert!(Dtype::from_name("Q4_0").is_none());
    }

    #[test]
    fn blocks_hold_whole_elements() {
        for d in DTYPES {
            let b = d.block_bytes();
            assert_eq!((b * 8) % d.bits, 0, "{}", d.name);
        }
        assert_eq!(Dtype::from_name("F6_E3M2").unwrap().block_bytes(), 3);
        assert_eq!(Dtype::from_name("F4").unwrap().block_bytes(), 1);
        assert_eq!(Dtype::from_name("F64").unwrap().block_bytes(), 8);
    }
}
