//! ONNX models written record by record, for the tests.
#![allow(clippy::arithmetic_side_effects)]

/// 1.0 and 2.0 as F32.
pub const W: [u8; 8] = [0, 0, 0x80, 0x3f, 0, 0, 0, 0x40];

/// A varint.
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

/// A record of field `num`, wire type `wt`.
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

/// A length-delimited field.
pub fn s(num: u64, v: &[u8]) -> Vec<u8> {
    rec(num, 2, v)
}

/// A tensor `w` of `dims` and `data_type` `dt`, with `data`'s records.
pub fn tensor(dims: &[u64], dt: u64, data: &[u8]) -> Vec<u8> {
    let mut t: Vec<u8> = dims.iter().flat_map(|&d| int(1, d)).collect();
    t.extend(int(2, dt));
    t.extend(s(8, b"w"));
    t.extend_from_slice(data);
    t
}

/// SPEC X10's model with `tensor` as its initializer (its records as given).
pub fn model(tensor: &[u8]) -> Vec<u8> {
    let vi = |n: &[u8]| [s(1, n), s(2, &s(1, &[int(1, 1), s(2, &s(1, &int(1, 1)))].concat()))].concat();
    let node = [s(1, b"x"), s(2, b"y"), s(4, b"Identity")].concat();
    let graph = [s(1, &node), s(2, b"g"), s(5, tensor), s(11, &vi(b"x")), s(12, &vi(b"y"))].concat();
    [int(1, 8), s(7, &graph), s(8, &[s(1, b""), int(2, 13)].concat())].concat()
}
