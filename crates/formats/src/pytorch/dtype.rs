//! The dtype table (docs/SPEC.md P6): storage classes, `torch` dtype names,
//! the dtype text the label writes (safetensors' names where one exists),
//! and element sizes.

/// One dtype of the table.
#[derive(Debug, PartialEq, Eq)]
pub struct Dtype {
    /// The name the label writes: `F32`.
    pub name: &'static str,
    /// The `torch` attribute naming it: `float32`.
    pub torch: &'static str,
    /// Its legacy storage class, `FloatStorage`, where it has one.
    pub storage: Option<&'static str>,
    /// Bytes per element.
    pub size: u64,
    /// Bytes reversed per word when the archive is big-endian (a complex
    /// element's two halves are reversed each).
    pub word: u64,
}

const fn d(name: &'static str, torch: &'static str, storage: Option<&'static str>, size: u64, word: u64) -> Dtype {
    Dtype { name, torch, storage, size, word }
}

/// Every dtype the contract accepts.
pub static DTYPES: [Dtype; 20] = [
    d("F64", "float64", Some("DoubleStorage"), 8, 8),
    d("F32", "float32", Some("FloatStorage"), 4, 4),
    d("F16", "float16", Some("HalfStorage"), 2, 2),
    d("BF16", "bfloat16", Some("BFloat16Storage"), 2, 2),
    d("I64", "int64", Some("LongStorage"), 8, 8),
    d("I32", "int32", Some("IntStorage"), 4, 4),
    d("I16", "int16", Some("ShortStorage"), 2, 2),
    d("I8", "int8", Some("CharStorage"), 1, 1),
    d("U8", "uint8", Some("ByteStorage"), 1, 1),
    d("BOOL", "bool", Some("BoolStorage"), 1, 1),
    d("C64", "complex64", Some("ComplexFloatStorage"), 8, 4),
    d("C128", "complex128", Some("ComplexDoubleStorage"), 16, 8),
    d("F8_E4M3", "float8_e4m3fn", None, 1, 1),
    d("F8_E5M2", "float8_e5m2", None, 1, 1),
    d("F8_E4M3FNUZ", "float8_e4m3fnuz", None, 1, 1),
    d("F8_E5M2FNUZ", "float8_e5m2fnuz", None, 1, 1),
    d("F8_E8M0", "float8_e8m0fnu", None, 1, 1),
    d("U16", "uint16", None, 2, 2),
    d("U32", "uint32", None, 4, 4),
    d("U64", "uint64", None, 8, 8),
];

/// The dtype whose `torch` attribute is `name` (canonical names only).
pub fn by_torch_name(name: &[u8]) -> Option<&'static Dtype> {
    DTYPES.iter().find(|d| d.torch.as_bytes() == name)
}

/// The dtype of the storage class `name`.
pub fn by_storage(name: &[u8]) -> Option<&'static Dtype> {
    DTYPES.iter().find(|d| d.storage.is_some_and(|s| s.as_bytes() == name))
}

impl Dtype {
    /// Whether elements are checked to be 0 or 1.
    pub fn is_bool(&self) -> bool {
        self.name == "BOOL"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_sizes_hold_words() {
        for (i, a) in DTYPES.iter().enumerate() {
            assert_eq!(a.size % a.word, 0, "{}", a.name);
            for b in DTYPES.iter().skip(i + 1) {
                assert!(a.name != b.name && a.torch != b.torch, "{}", a.name);
            }
        }
        assert_eq!(by_storage(b"FloatStorage").map(|d| d.name), Some("F32"));
        assert_eq!(by_torch_name(b"float").map(|d| d.name), None);
        assert_eq!(by_torch_name(b"float8_e8m0fnu").map(|d| d.name), Some("F8_E8M0"));
    }
}
