//! The protobuf records ONNX models are written with in tests, byte by
//! byte (no protobuf library: the tests state every byte SPEC Part VI reads).

/// `v` as a protobuf varint.
pub fn varint(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return out;
        }
        out.push(b | 0x80);
    }
}

/// One record: field `num`, wire type `wt`, its value's bytes.
pub fn rec(num: u64, wt: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = varint(num << 3 | wt);
    if wt == 2 {
        out.extend(varint(payload.len() as u64));
    }
    out.extend_from_slice(payload);
    out
}

/// A varint field.
pub fn int(num: u64, v: u64) -> Vec<u8> {
    rec(num, 0, &varint(v))
}

/// A length-delimited field (bytes, a string or a message).
pub fn s(num: u64, v: &[u8]) -> Vec<u8> {
    rec(num, 2, v)
}

/// A float tensor `[1]` value info named `name`.
pub fn value_info(name: &str) -> Vec<u8> {
    let shape = s(2, &s(1, &int(1, 1)));
    [s(1, name.as_bytes()), s(2, &s(1, &[int(1, 1), shape].concat()))].concat()
}
