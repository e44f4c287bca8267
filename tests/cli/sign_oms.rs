//! `verify` of OpenSSF model signatures built byte by byte here (the real
//! model_signing's are in tests/interop/sign_oms.rs): every refusal of
//! issue #26's "Bad input and safety" is exit 2 with the file named, a
//! signature that does not verify or a model that does not match exit 1.
use crate::common;

use std::path::{Path, PathBuf};

use base64::Engine as _;
use common::*;
use p256::ecdsa::signature::Signer as _;
use p256::pkcs8::{EncodePublicKey as _, LineEnding};
use sha2::{Digest as _, Sha256};

const PREDICATE: &str = "https://model_signing/signature/v1.0";
pub(crate) const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
const FILES: &str = r#"{"method":"files","hash_type":"sha256","allow_symlinks":false,"ignore_paths":["model.sig"]}"#;

pub(crate) fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(b)
}

fn statement(serialization: &str, resources: &[(&str, [u8; 32])]) -> String {
    let mut h = Sha256::new();
    let list: Vec<String> = resources
        .iter()
        .map(|(n, d)| {
            h.update(d);
            format!(r#"{{"name":"{n}","algorithm":"sha256","digest":"{}"}}"#, hex::encode(d))
        })
        .collect();
    format!(
        r#"{{"_type":"https://in-toto.io/Statement/v1","subject":[{{"name":"m","digest":{{"sha256":"{}"}}}}],"predicateType":"{PREDICATE}","predicate":{{"serialization":{serialization},"resources":[{}]}}}}"#,
        hex::encode(h.finalize()),
        list.join(",")
    )
}

pub(crate) fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = format!("DSSEv1 {} {payload_type} {} ", payload_type.len(), payload.len()).into_bytes();
    out.extend_from_slice(payload);
    out
}

pub(crate) fn key() -> p256::ecdsa::SigningKey {
    p256::ecdsa::SigningKey::from_slice(&[26; 32]).unwrap()
}

pub(crate) fn public_pem(k: &p256::ecdsa::SigningKey) -> String {
    k.verifying_key().to_public_key_pem(LineEnding::LF).unwrap()
}

pub(crate) fn sign(k: &p256::ecdsa::SigningKey, payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let s: p256::ecdsa::Signature = k.sign(&pae(payload_type, payload));
    s.to_der().as_bytes().to_vec()
}

pub(crate) fn bundle(payload_type: &str, payload: &[u8], sigs: &[Vec<u8>], hint: &str) -> String {
    let sigs: Vec<String> = sigs.iter().map(|s| format!(r#"{{"sig":"{}"}}"#, b64(s))).collect();
    format!(
        r#"{{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{{"publicKey":{{"hint":"{hint}"}},"tlogEntries":[]}},"dsseEnvelope":{{"payload":"{}","payloadType":"{payload_type}","signatures":[{}]}}}}"#,
        b64(payload),
        sigs.join(",")
    )
}

/// A model directory (`model/`: `a.bin`, `sub/b.txt`), the key's PEM
/// beside it, and the digests of the two files.
fn fixture() -> (Dir, PathBuf, Vec<(&'static str, [u8; 32])>) {
    let d = Dir::new();
    std::fs::create_dir_all(d.path("model/sub")).unwrap();
    let a = vec![7u8; 5000];
    std::fs::write(d.path("model/a.bin"), &a).unwrap();
    std::fs::write(d.path("model/sub/b.txt"), b"b\n").unwrap();
    let public = d.write("key.pub", public_pem(&key()).as_bytes());
    let digests = vec![("a.bin", Sha256::digest(&a).into()), ("sub/b.txt", Sha256::digest(b"b\n").into())];
    (d, public, digests)
}

pub(crate) fn hint() -> String {
    hex::encode(Sha256::digest(public_pem(&key()).as_bytes()))
}

/// Writes a bundle of `payload` signed by the key, as model_signing writes one.
fn signed(d: &Dir, name: &str, payload: &str) -> PathBuf {
    let sig = sign(&key(), PAYLOAD_TYPE, payload.as_bytes());
    d.write(name, bundle(PAYLOAD_TYPE, payload.as_bytes(), &[sig], &hint()).as_bytes())
}

fn verify(d: &Dir, sig: &Path, extra: &[&str]) -> (Option<i32>, String, String) {
    let mut args = vec!["verify", sig.to_str().unwrap(), "--root", "model"];
    args.extend_from_slice(extra);
    let o = gd_in(d.dir.path(), &args);
    (o.status.code(), text(&o.stdout), text(&o.stderr))
}

#[test]
fn a_key_signed_model_verifies_file_by_file() {
    let (d, public, digests) = fixture();
    let sig = signed(&d, "m.sig", &statement(FILES, &digests));
    let (code, out, err) = verify(&d, &sig, &["--key", public.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(out, format!("{}: signature OK (key ECDSA P-256)\na.bin: OK\nsub/b.txt: OK\n", sig.display()));
    // --quiet: the OK lines go, the signature's stays.
    let (code, out, _) = verify(&d, &sig, &["--key", public.to_str().unwrap(), "--quiet"]);
    assert_eq!((code, out.lines().count()), (Some(0), 1));
    // A changed byte: exit 1, the file named.
    std::fs::write(d.path("model/sub/b.txt"), b"c\n").unwrap();
    let (code, out, err) = verify(&d, &sig, &["--key", public.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains("sub/b.txt: FAILED\n") && out.contains("a.bin: OK"), "{out}");
}

#[test]
fn signatures_that_do_not_hold_fail_before_any_file_is_read() {
    let (d, public, digests) = fixture();
    let st = statement(FILES, &digests);
    let pk = ["--key", public.to_str().unwrap()];
    // Another key's signature, a hint naming another key: exit 1.
    let other = p256::ecdsa::SigningKey::from_slice(&[9; 32]).unwrap();
    let sig = d.write(
        "other.sig",
        bundle(PAYLOAD_TYPE, st.as_bytes(), &[sign(&other, PAYLOAD_TYPE, st.as_bytes())], &hint()).as_bytes(),
    );
    let (code, out, err) = verify(&d, &sig, &pk);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(err.contains("other.sig") && err.contains("signature: FAILED"), "{err}");
    assert!(out.is_empty(), "{out}");
    let wrong_hint = d.write(
        "hint.sig",
        bundle(PAYLOAD_TYPE, st.as_bytes(), &[sign(&key(), PAYLOAD_TYPE, st.as_bytes())], &"ab".repeat(32)).as_bytes(),
    );
    let (code, _, err) = verify(&d, &wrong_hint, &pk);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("hint names another public key"), "{err}");
    // No method at all: refused.
    let good = signed(&d, "good.sig", &st);
    let (code, _, err) = verify(&d, &good, &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("give --key PUBKEY, --certificate-chain"), "{err}");
    let (code, _, err) = verify(&d, &good, &["--no-signature"]);
    assert_eq!(code, Some(2), "{err}");
}

#[test]
fn every_refusal_names_the_file_and_exits_2() {
    let (d, public, digests) = fixture();
    let pk = ["--key", public.to_str().unwrap()];
    let st = statement(FILES, &digests);
    let good_sig = sign(&key(), PAYLOAD_TYPE, st.as_bytes());
    let p384 = p384::ecdsa::SigningKey::from_slice(&[5; 48]).unwrap();
    let sig384: p384::ecdsa::Signature = p384.sign(&pae(PAYLOAD_TYPE, st.as_bytes()));
    let dup_key = st.replacen(r#""_type""#, r#""_type":"x","_type""#, 1);
    let twice = statement(FILES, &[digests[0], digests[0]]);
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "several signatures",
            bundle(PAYLOAD_TYPE, st.as_bytes(), &[good_sig.clone(), good_sig.clone()], &hint()),
            "2 signatures",
        ),
        (
            "another payload type",
            bundle("text/plain", st.as_bytes(), &[sign(&key(), "text/plain", st.as_bytes())], &hint()),
            "not an in-toto statement",
        ),
        (
            "duplicate keys in the statement",
            bundle(PAYLOAD_TYPE, dup_key.as_bytes(), &[sign(&key(), PAYLOAD_TYPE, dup_key.as_bytes())], &hint()),
            "_type",
        ),
        (
            "duplicate keys in the bundle",
            bundle(PAYLOAD_TYPE, st.as_bytes(), std::slice::from_ref(&good_sig), &hint()).replacen(
                "\"mediaType\"",
                "\"mediaType\":\"x\",\"mediaType\"",
                1,
            ),
            "mediaType",
        ),
        (
            "a resource listed twice",
            bundle(PAYLOAD_TYPE, twice.as_bytes(), &[sign(&key(), PAYLOAD_TYPE, twice.as_bytes())], &hint()),
            "listed twice",
        ),
        (
            "a key of another curve",
            bundle(PAYLOAD_TYPE, st.as_bytes(), &[sig384.to_der().as_bytes().to_vec()], &hint()),
            "a key of another curve",
        ),
        (
            "a malformed signature",
            bundle(PAYLOAD_TYPE, st.as_bytes(), &[vec![0x30, 0x03, 0x02, 0x01]], &hint()),
            "not a DER-encoded",
        ),
    ];
    for (what, text_, why) in cases {
        let sig = d.write("bad.sig", text_.as_bytes());
        let (code, out, err) = verify(&d, &sig, &pk);
        assert_eq!(code, Some(2), "{what}: {out}{err}");
        assert!(err.contains("bad.sig") && err.contains(why), "{what}: {err}");
        assert!(!out.contains("OK"), "{what}: {out}");
    }
}

#[test]
fn names_that_leave_the_model_are_refused_before_anything_is_opened() {
    let (d, public, digests) = fixture();
    let pk = ["--key", public.to_str().unwrap()];
    d.write("outside", b"secret");
    std::os::unix::fs::symlink(d.path(""), d.path("model/up")).unwrap();
    for (name, why) in [
        ("/etc/passwd", "an absolute path"),
        ("../outside", "it holds '..'"),
        ("up/outside", "leads outside the root through a symbolic link"),
    ] {
        let mut rs = digests.clone();
        rs.push((name, Sha256::digest(b"secret").into()));
        let sig = signed(&d, "escape.sig", &statement(FILES, &rs));
        let (code, out, err) = verify(&d, &sig, &pk);
        assert_eq!(code, Some(2), "{name}: {out}{err}");
        assert!(err.contains("escape.sig") && err.contains(why), "{name}: {err}");
        assert!(out.is_empty(), "{name}: {out}");
    }
    // A link in the model, signed without allow_symlinks: refused too.
    let sig = signed(&d, "plain.sig", &statement(FILES, &digests));
    let (code, _, err) = verify(&d, &sig, &pk);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("is a symbolic link"), "{err}");
}

#[test]
fn a_statement_that_is_not_a_model_signature_keeps_its_own_path() {
    // The flags of the model-signature methods on another statement: refused.
    let (d, public, _) = fixture();
    let st = r#"{"_type":"https://in-toto.io/Statement/v1","subject":[],"predicateType":"https://gguf-digest.dev/label/v1","predicate":{}}"#;
    let sig = signed(&d, "other.sig", st);
    let (code, _, err) = verify(&d, &sig, &["--certificate-chain", public.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("are for OpenSSF model signatures"), "{err}");
}

#[test]
fn a_link_to_the_signature_elsewhere_in_the_model_is_a_file_like_any_other() {
    // Issue #31 item 4: only the signature's own path is left out, never a
    // file that is the same inode under another name.
    let (d, public, digests) = fixture();
    let sig = signed(&d, "m.sig", &statement(FILES, &digests));
    std::fs::hard_link(&sig, d.path("model/chat_template.jinja")).unwrap();
    let (code, out, err) = verify(&d, &sig, &["--key", public.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains("chat_template.jinja: FAILED (unexpected"), "{out}");
    std::fs::remove_file(d.path("model/chat_template.jinja")).unwrap();
    // Inside the model, unlisted: its own path is left out, a hard link to it is not.
    let serialization = FILES.replace(r#"["model.sig"]"#, "[]");
    let inside = signed(&d, "model/s.sig", &statement(&serialization, &digests));
    let (code, out, err) = verify(&d, &inside, &["--key", public.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}{err}");
    std::fs::hard_link(&inside, d.path("model/sub/x.txt")).unwrap();
    let (code, out, err) = verify(&d, &inside, &["--key", public.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains("sub/x.txt: FAILED (unexpected"), "{out}");
    assert!(!out.lines().any(|l| l.starts_with("s.sig")), "{out}");
}

#[test]
fn ignore_paths_outside_the_model_ignore_nothing_and_are_named() {
    // Issue #31 item 5: model_signing drops an ignore path that is not
    // below the model; normalised into it, "/evil.py" would hide evil.py.
    let (d, public, digests) = fixture();
    for bad in ["/evil.py", "../model/evil.py", "sub/../evil.py"] {
        let serialization = FILES.replace(r#"["model.sig"]"#, &format!("[\"{bad}\"]"));
        let sig = signed(&d, "m.sig", &statement(&serialization, &digests));
        let (code, out, err) = verify(&d, &sig, &["--key", public.to_str().unwrap()]);
        assert_eq!(code, Some(0), "{bad}: {out}{err}");
        assert!(err.contains(&format!("ignore path {bad} is not below the model directory")), "{err}");
        std::fs::write(d.path("model/evil.py"), b"import os\n").unwrap();
        let (code, out, err) = verify(&d, &sig, &["--key", public.to_str().unwrap()]);
        assert_eq!(code, Some(1), "{bad}: {out}{err}");
        assert!(out.contains("evil.py: FAILED (unexpected"), "{bad}: {out}");
        std::fs::remove_file(d.path("model/evil.py")).unwrap();
    }
    // Below the model, it ignores what it names.
    let serialization = FILES.replace(r#"["model.sig"]"#, r#"["./evil.py"]"#);
    let sig = signed(&d, "m.sig", &statement(&serialization, &digests));
    std::fs::write(d.path("model/evil.py"), b"import os\n").unwrap();
    let (code, out, err) = verify(&d, &sig, &["--key", public.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(!err.contains("ignore path"), "{err}");
}

#[test]
fn a_signature_of_a_hugging_face_snapshot_verifies_as_it_was_signed() {
    // Issue #31 item 9: `sign --format oms` of a snapshot (links into the
    // repository's blobs/, and with Xet on into the cache's shared store)
    // and `verify` of it walk the snapshot alike.
    use p256::pkcs8::EncodePrivateKey as _;
    let (d, public, _) = fixture();
    let private = d.write("p.key", key().to_pkcs8_pem(LineEnding::LF).unwrap().as_bytes());
    for xet in [false, true] {
        let files: tree::Files = vec![
            ("config.json".into(), b"{\"a\": 1}\n".to_vec()),
            ("m.gguf".into(), rich_model(&[0]).build()),
            ("sub/notes.txt".into(), b"notes\n".to_vec()),
        ];
        let snap = tree::snapshot(&d.path(&format!("hub-{xet}")), "n", &files, xet);
        let sig = format!("snap-{xet}.sig");
        let o = gd_in(
            d.dir.path(),
            &["sign", "--format", "oms", "--key", private.to_str().unwrap(), "--out", &sig, snap.to_str().unwrap()],
        );
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let verify = || {
            let o = gd_in(
                d.dir.path(),
                &["verify", &sig, "--root", snap.to_str().unwrap(), "--key", public.to_str().unwrap()],
            );
            (o.status.code(), text(&o.stdout), text(&o.stderr))
        };
        let (code, out, err) = verify();
        assert_eq!(code, Some(0), "xet {xet}: {out}{err}");
        assert!(out.contains("m.gguf: OK") && out.contains("sub/notes.txt: OK"), "{out}");
        // A blob changed under the snapshot: that file fails, by its name in it.
        std::fs::write(tree::blob_of(&snap, "sub/notes.txt"), b"other\n").unwrap();
        let (code, out, err) = verify();
        assert_eq!(code, Some(1), "xet {xet}: {out}{err}");
        assert!(out.contains("sub/notes.txt: FAILED"), "{out}");
    }
}
