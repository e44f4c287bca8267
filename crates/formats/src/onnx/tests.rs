//! The reader's refusals on models built here record by record (SPEC Part
//! VI, X2 to X5), each error's message, field path and offset; and the
//! readings that must not change the label.

use super::model_bytes::*;
use super::read::parse;
use super::skeleton::Writer;

fn label(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    let p = parse(bytes).unwrap_or_else(|e| panic!("{e}"));
    let mut h = sha2::Sha256::new();
    let elements = |i: usize| -> [u8; 32] {
        match &p.tensors[i].data {
            super::tensor::Data::Typed(d) => *d,
            super::tensor::Data::Raw { start, len } => {
                sha2::Sha256::digest(&bytes[*start as usize..(*start + *len) as usize]).into()
            }
            _ => sha2::Sha256::digest(b"").into(),
        }
    };
    let mut sink = |b: &[u8]| h.update(b);
    Writer { tensors: &p.tensors, elements: &elements, sink: &mut sink }.model(&p.model);
    hex::encode(h.finalize())
}

/// The error text and offset of refusing `bytes`.
fn refused(bytes: &[u8]) -> (String, Option<u64>) {
    let e = parse(bytes).err().unwrap_or_else(|| panic!("accepted"));
    (e.kind().to_string(), e.offset())
}

const WORKED_W: &str = "e8dd38d6e7341d5c5f8e40b8d849c33e069a6e43f35e32da354b94ca2cbcbb4e";

#[test]
fn encodings_of_one_model_have_one_label() {
    let raw = model(&tensor(&[2], 1, &s(9, &W)));
    assert_eq!(label(&raw), WORKED_W);
    // Packed, unpacked and mixed float_data; over-long varints; fields in another order.
    let packed = s(4, &W);
    let unpacked = [rec(4, 5, &W[..4]), rec(4, 5, &W[4..])].concat();
    let mixed = [rec(4, 5, &W[..4]), s(4, &W[4..])].concat();
    for data in [packed, unpacked, mixed] {
        assert_eq!(label(&model(&tensor(&[2], 1, &data))), WORKED_W);
    }
    let wide = [vec![0x08, 0x82, 0x80, 0x00], vec![0x10, 0x81, 0x00], s(8, b"w"), s(9, &W)].concat();
    assert_eq!(label(&model(&wide)), WORKED_W);
    let reordered = [s(9, &W), s(8, b"w"), int(2, 1), int(1, 2)].concat();
    assert_eq!(label(&model(&reordered)), WORKED_W);
}

#[test]
fn the_wire_refusals_name_the_field_and_offset() {
    let base = model(&tensor(&[2], 1, &s(9, &W)));
    let n = base.len() as u64;
    let cases: Vec<(Vec<u8>, &str, Option<u64>)> = vec![
        ([base.clone(), int(9, 1)].concat(), "ModelProto: field number 9 is not in ModelProto", Some(n)),
        ([base.clone(), vec![0x00, 0x00]].concat(), "ModelProto: field number 0", Some(n)),
        ([base.clone(), vec![0x4b]].concat(), "ModelProto: wire type 3 (field 9)", Some(n)),
        ([base.clone(), vec![0x0f]].concat(), "ModelProto: wire type 7 (field 1)", Some(n)),
        ([base.clone(), int(2, 1)].concat(), "producer_name: wire type 0, the field's type takes 2", Some(n)),
        ([base.clone(), int(1, 8)].concat(), "ir_version: a non-repeated field written in two records", Some(n)),
        ([base.clone(), int(5, 1 << 40)].concat(), "", None),
        (
            [base.clone(), vec![0x22, 0x05, b'a']].concat(),
            "ModelProto: a length-delimited value of 5 bytes, 1 left",
            Some(n),
        ),
        ([base.clone(), vec![0x28]].concat(), "a varint runs past the end of its message", None),
        (
            [base.clone(), vec![0x28, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]].concat(),
            "a varint does not fit 64 bits",
            None,
        ),
    ];
    for (bytes, want, at) in cases {
        if want.is_empty() {
            assert!(parse(&bytes).is_ok(), "an int64 model_version is a full 64 bits");
            continue;
        }
        let (got, off) = refused(&bytes);
        assert!(got.contains(want), "want {want}, got {got}");
        if at.is_some() {
            assert_eq!(off, at, "{got}");
        }
    }
    // An int32 outside its range, an enum value the schema lacks.
    let (got, off) = refused(&model(&tensor(&[2], 1, &[s(9, &W), int(14, 2)].concat())));
    assert!(got.contains("graph.initializer[0]: 2 is not a value of the field's enum"), "{got}");
    assert!(off.is_some());
    let (got, _) = refused(&model(&[int(1, 2), int(2, u64::MAX - 5), s(8, b"w")].concat()));
    assert!(got.contains("-6 does not fit int32") || got.contains("data_type -6"), "{got}");
    let (got, _) = refused(&model(&[int(1, 2), int(2, 1 << 40), s(8, b"w")].concat()));
    assert!(got.contains("does not fit int32"), "{got}");
}

#[test]
fn versions_graph_and_depth() {
    let m = model(&tensor(&[2], 1, &s(9, &W)));
    let (got, _) = refused(&m[2..]);
    assert!(got.contains("ModelProto.ir_version: absent: only IR versions 3 to 13 are read"), "{got}");
    let mut ir14 = m.clone();
    ir14[1] = 14;
    assert!(refused(&ir14).0.contains("ir_version: 14"));
    let (got, _) = refused(&[int(1, 8)].concat());
    assert!(got.contains("ModelProto: no graph"), "{got}");
    // Sequence types nested: the ModelProto is level 1, graph 2, value_info
    // 3, its type 4, and each sequence two more (Sequence, then TypeProto).
    let nested = |levels: usize, tensor_type: bool| {
        let mut t = if tensor_type { s(1, &int(1, 1)) } else { Vec::new() };
        for _ in 0..levels {
            t = s(4, &s(1, &t));
        }
        let vi = [s(1, b"v"), s(2, &t)].concat();
        [int(1, 8), s(7, &s(13, &vi))].concat()
    };
    // The innermost TypeProto at level 4 + 2k: k = 48 puts it at 100, and
    // its tensor_type at 101.
    let ok = parse(&nested(48, false));
    assert!(ok.is_ok(), "level 100 is accepted: {:?}", ok.err().map(|e| e.to_string()));
    let (got, _) = refused(&nested(48, true));
    assert!(got.contains("a message nested more than 100 deep"), "{got}");
}

#[test]
fn the_tensor_refusals() {
    let t = |dims: &[u64], dt: u64, data: &[u8]| refused(&model(&tensor(dims, dt, data))).0;
    let cases: Vec<(String, &str)> = vec![
        (t(&[2], 1, &[s(9, &W), s(4, b"")].concat()), "raw_data beside float_data"),
        (t(&[2], 1, &[s(9, &W), int(14, 1)].concat()), "data_location EXTERNAL without external_data"),
        (
            t(&[2], 1, &[s(9, &W), s(13, &[s(1, b"location"), s(2, b"w.bin")].concat())].concat()),
            "external_data written while data_location is not EXTERNAL",
        ),
        (t(&[2], 1, &s(5, &[1, 2])), "int32_data written for a F32 tensor (it takes float_data)"),
        (t(&[2], 1, &s(9, &W[..4])), "raw_data holds 4 bytes, 2 elements of F32 take 8"),
        (t(&[2], 1, b""), "2 elements and no data"),
        (t(&[2], 0, &s(9, &W)), "data_type 0 is not in the table"),
        (t(&[2], 27, &s(9, &W)), "data_type 27 is not in the table"),
        (t(&[2], 8, &s(9, &W)), "a STRING tensor in raw_data"),
        (t(&[3], 3, &s(5, &[0x01, 0x80, 0x01, 0x02])), "int32_data[1] = 128 is outside -128 … 127"),
        (t(&[2], 9, &s(9, &[0, 2])), "BOOL element 1 is 2"),
        (t(&[2], 9, &s(5, &[1, 2])), "int32_data[1] = 2 is outside 0 … 1"),
        (t(&[3], 22, &s(9, &[0x21, 0x13])), "bits after the last packed element are not 0"),
        (t(&[3], 1, &s(4, &W)), "float_data holds 2 values, F32 with 3 elements takes 3"),
        (t(&[2], 14, &s(4, &W)), "float_data holds 2 values, C64 with 2 elements takes 4"),
        (t(&[1 << 61], 1, b""), "the byte count is above 2^63 - 1"),
        (t(&[1 << 62, 4], 1, b""), "the element count is above 2^63 - 1"),
        (t(&[2], 1, &[s(9, &W), s(3, &int(1, 0))].concat()), "a segment: v1 labels whole tensors only"),
        (
            t(&[2], 1, &[s(9, &W), s(16, &s(1, b"k")), s(16, &s(1, b"k"))].concat()),
            "two metadata_props with the key 'k'",
        ),
    ];
    for (got, want) in cases {
        assert!(got.contains(want), "want {want}, got {got}");
    }
    // A negative dim, as a ten-byte varint.
    let neg = [vec![0x08], vec![0xff; 9], vec![0x01], int(2, 1), s(8, b"w")].concat();
    assert!(refused(&model(&neg)).0.contains("a negative dim -1"));
    // n = 0 and no data: empty elements.
    assert!(parse(&model(&tensor(&[0, 3], 1, b""))).is_ok());
    // U4 with its padding bits 0, from raw_data and from int32_data alike.
    let a = label(&model(&tensor(&[3], 21, &s(9, &[0x21, 0x03]))));
    let b = label(&model(&tensor(&[3], 21, &s(5, &[0x21, 0x03]))));
    assert_eq!(a, b);
}

#[test]
fn sorted_lists_refuse_duplicates_and_sparse_names() {
    let w = tensor(&[2], 1, &s(9, &W));
    let g = |extra: &[u8]| [int(1, 8), s(7, &[s(5, &w), extra.to_vec()].concat())].concat();
    // The error names the duplicate's own message: the graph's records
    // start at byte 4, the first initializer's message at 6, the second's
    // two bytes after the first ends (not 6, where the list starts).
    let (got, at) = refused(&g(&s(5, &w)));
    assert!(got.contains("graph.initializer: two entries with the key 'w'"), "{got}");
    assert_eq!(at, Some(6 + w.len() as u64 + 2));
    // Three of one name, another between: the second 'w' in the file.
    let v = [int(1, 2), int(2, 1), s(8, b"v"), s(9, &W)].concat();
    let (_, at) = refused(&g(&[s(5, &v), s(5, &w), s(5, &w)].concat()));
    assert_eq!(at, Some(6 + w.len() as u64 + 2 + v.len() as u64 + 2));
    let m = g(b"");
    let meta = s(14, &s(1, b"a"));
    let (got, at) = refused(&[m.clone(), meta.clone(), meta.clone()].concat());
    assert!(got.contains("metadata_props: two entries with the key 'a'"), "{got}");
    // The second entry's message: after the model, the first entry, the second's tag and length.
    assert_eq!(at, Some((m.len() + meta.len() + 2) as u64));
    let idx = [int(1, 1), int(2, 7), s(8, b"i"), s(9, &[1, 0, 0, 0, 0, 0, 0, 0])].concat();
    let sparse = [s(1, &w), s(2, &idx), int(3, 8)].concat();
    let (got, _) = refused(&g(&s(15, &sparse)));
    assert!(got.contains("a sparse initializer named as a dense one ('w')"), "{got}");
    let (got, _) = refused(&g(&s(15, &[s(1, &w)].concat())));
    assert!(got.contains("a sparse tensor without values or indices"), "{got}");
    // A oneof with both members, a message in two records.
    let dim = [int(1, 3), s(2, b"N")].concat();
    let vi = [s(1, b"v"), s(2, &s(1, &s(2, &s(1, &dim))))].concat();
    let (got, _) = refused(&g(&s(13, &vi)));
    assert!(got.contains("two members of oneof value written (dim_value, dim_param)"), "{got}");
    let (got, _) = refused(&[int(1, 8), s(7, &s(2, b"g")), s(7, &s(2, b"h"))].concat());
    assert!(got.contains("graph: a non-repeated field written in two records"), "{got}");
}
