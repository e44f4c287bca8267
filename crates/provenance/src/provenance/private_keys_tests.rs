//! Every key format `sign` reads, and every refusal.

use crate::provenance::ProvenanceErrorKind;
use pkcs8::der::Encode as _;
use pkcs8::der::asn1::AnyRef;
use pkcs8::pkcs5::pbes2;
use pkcs8::{EncodePrivateKey as _, LineEnding};

use super::*;

fn ed25519() -> SigningKey {
    SigningKey::Ed25519(ed25519_dalek::SigningKey::from_bytes(&[3; 32]))
}
fn p256() -> SigningKey {
    SigningKey::P256(p256::ecdsa::SigningKey::from_bytes(&[4; 32].into()).unwrap())
}
fn p384() -> SigningKey {
    SigningKey::P384(p384::ecdsa::SigningKey::from_bytes(&[5; 48].into()).unwrap())
}

fn pkcs8_der(key: &SigningKey) -> Vec<u8> {
    match key {
        SigningKey::Ed25519(k) => k.to_pkcs8_der().unwrap().as_bytes().to_vec(),
        SigningKey::P256(k) => k.to_pkcs8_der().unwrap().as_bytes().to_vec(),
        SigningKey::P384(k) => k.to_pkcs8_der().unwrap().as_bytes().to_vec(),
    }
}

fn pem(label: &str, der: &[u8]) -> Vec<u8> {
    pkcs8::der::pem::encode_string(label, LineEnding::LF, der).unwrap().into_bytes()
}

fn encrypted(der: &[u8], params: pbes2::Parameters<'_>, password: &str) -> Vec<u8> {
    let info = pkcs8::PrivateKeyInfo::try_from(der).unwrap();
    let doc = info.encrypt_with_params(params, password).unwrap();
    pem("ENCRYPTED PRIVATE KEY", doc.as_bytes())
}

fn never(_: Encrypted) -> Result<Zeroizing<String>> {
    panic!("asked for a password for an unencrypted key")
}

fn read(pem: &[u8], password: &str) -> Result<(SigningKey, Vec<Encrypted>)> {
    let mut asked = Vec::new();
    let key = SigningKey::from_pem(pem, &mut |k| {
        asked.push(k);
        Ok(Zeroizing::new(password.to_string()))
    })?;
    Ok((key, asked))
}

fn same_key(a: &SigningKey, b: &SigningKey) -> bool {
    a.public_key_der().unwrap() == b.public_key_der().unwrap()
}

#[test]
fn plain_pkcs8_of_each_kind_signs_deterministically_and_verifies() {
    for key in [ed25519(), p256(), p384()] {
        let read = SigningKey::from_pem(&pem("PRIVATE KEY", &pkcs8_der(&key)), &mut never).unwrap();
        assert!(same_key(&read, &key), "{}", key.kind());
        let sig = read.sign(b"message");
        assert_eq!(read.sign(b"message"), sig, "{} is deterministic", key.kind());
        assert!(read.public_key().verifies(b"message", &sig), "{}", key.kind());
        assert!(!read.public_key().verifies(b"massage", &sig), "{}", key.kind());
        // The public key's PEM reads back as the key verify takes.
        let public = PublicKey::from_pem(&read.public_key_pem().unwrap()).unwrap();
        assert!(public.verifies(b"message", &sig));
        assert_eq!(public.kind(), key.kind());
    }
}

#[test]
fn sec1_ec_keys_are_read() {
    let SigningKey::P256(k) = p256() else { unreachable!() };
    let der = p256::SecretKey::from(k).to_sec1_der().unwrap();
    let key = SigningKey::from_pem(&pem("EC PRIVATE KEY", &der), &mut never).unwrap();
    assert!(same_key(&key, &p256()));
    let SigningKey::P384(k) = p384() else { unreachable!() };
    let der = p384::SecretKey::from(k).to_sec1_der().unwrap();
    let key = SigningKey::from_pem(&pem("EC PRIVATE KEY", &der), &mut never).unwrap();
    assert!(same_key(&key, &p384()));
    let e = SigningKey::from_pem(&pem("EC PRIVATE KEY", b"\x30\x00"), &mut never).unwrap_err();
    assert!(e.to_string().contains("SEC1"), "{e}");
}

#[test]
fn encrypted_pkcs8_with_pbkdf2_and_scrypt_opens_with_its_password_only() {
    let salt = [1u8; 16];
    let iv = [2u8; 16];
    let scrypt = scrypt::Params::new(10, 8, 1, 32).unwrap();
    for key in [ed25519(), p256(), p384()] {
        let der = pkcs8_der(&key);
        for params in [
            pbes2::Parameters::pbkdf2_sha256_aes256cbc(2048, &salt, &iv).unwrap(),
            pbes2::Parameters::scrypt_aes256cbc(scrypt, &salt, &iv).unwrap(),
        ] {
            let file = encrypted(&der, params, "correct horse");
            let (read_key, asked) = read(&file, "correct horse").unwrap();
            assert!(same_key(&read_key, &key));
            assert_eq!(asked, [Encrypted::Pkcs8]);
            let e = read(&file, "wrong").unwrap_err().to_string();
            assert!(e.starts_with("private key: wrong password"), "{e}");
        }
    }
}

#[test]
fn a_password_that_cannot_be_had_is_the_error() {
    let salt = [1u8; 16];
    let file =
        encrypted(&pkcs8_der(&p256()), pbes2::Parameters::pbkdf2_sha256_aes256cbc(2048, &salt, &salt).unwrap(), "pw");
    let e =
        SigningKey::from_pem(&file, &mut |_| Err(Error::new(ProvenanceErrorKind::PrivateKey("no password".into()))))
            .unwrap_err();
    assert_eq!(e.to_string(), "private key: no password");
}

#[test]
fn encrypted_pkcs8_past_the_cost_bounds_is_refused_before_deriving() {
    let salt = [1u8; 16];
    let huge = scrypt::Params::new(22, 8, 1, 32).unwrap();
    let file = encrypted(
        &pkcs8_der(&p256()),
        pbes2::Parameters::scrypt_aes256cbc(scrypt::Params::new(10, 8, 1, 32).unwrap(), &salt, &salt).unwrap(),
        "pw",
    );
    // The same file with N raised: the DER is rewritten by hand.
    let (_, der) = pkcs8::der::pem::decode_vec(&file).unwrap();
    let mut info = pkcs8::EncryptedPrivateKeyInfo::try_from(der.as_slice()).unwrap();
    let pkcs8::pkcs5::EncryptionScheme::Pbes2(mut p) = info.encryption_algorithm else { unreachable!() };
    p.kdf = pbes2::ScryptParams::from_params_and_salt(huge, &salt).unwrap().into();
    info.encryption_algorithm = p.into();
    let costly = pem("ENCRYPTED PRIVATE KEY", &info.to_der().unwrap());
    let e = SigningKey::from_pem(&costly, &mut never).unwrap_err().to_string();
    assert!(e.contains("more than 1 GiB"), "{e}");
}

#[test]
fn cosign_key_files_open_with_either_variable() {
    for key in [p256(), ed25519(), p384()] {
        let file = cosign_key::encrypt_for_test(&pkcs8_der(&key), b"pw", &[1; 32], &[2; 24], 10);
        let (read_key, asked) = read(file.as_bytes(), "pw").unwrap();
        assert!(same_key(&read_key, &key));
        assert_eq!(asked, [Encrypted::Cosign]);
        let e = read(file.as_bytes(), "wrong").unwrap_err().to_string();
        assert!(e.contains("wrong password"), "{e}");
        // Older cosign's label.
        let older = file.replace("SIGSTORE", "COSIGN");
        assert!(same_key(&read(older.as_bytes(), "pw").unwrap().0, &key));
    }
}

fn pkcs8_of(alg: ObjectIdentifier, curve: Option<&ObjectIdentifier>) -> Vec<u8> {
    let algorithm = pkcs8::AlgorithmIdentifierRef { oid: alg, parameters: curve.map(AnyRef::from) };
    let secret = [0x30, 0x03, 0x02, 0x01, 0x01];
    let info = pkcs8::PrivateKeyInfo { algorithm, private_key: &secret, public_key: None };
    pem("PRIVATE KEY", &info.to_der().unwrap())
}

#[test]
fn unsupported_kinds_and_curves_are_named() {
    for (curve, name) in [("1.3.132.0.35", "P-521"), ("1.3.132.0.10", "secp256k1")] {
        let oid = ObjectIdentifier::new_unwrap(curve);
        let e = SigningKey::from_pem(&pkcs8_of(EC_PUBLIC_KEY, Some(&oid)), &mut never).unwrap_err().to_string();
        assert_eq!(e, format!("private key: an ECDSA key over {name}: not a curve this tool signs with ({KINDS})"));
    }
    let e = SigningKey::from_pem(&pkcs8_of(RSA, None), &mut never).unwrap_err().to_string();
    assert!(e.contains("an RSA key: not a kind"), "{e}");
    let e = SigningKey::from_pem(&pkcs8_of(EC_PUBLIC_KEY, None), &mut never).unwrap_err().to_string();
    assert!(e.contains("names no curve"), "{e}");
}

#[test]
fn malformed_pem_and_other_pem_are_refused() {
    for (text, what) in [
        (&b"not a key"[..], "not a PEM private key"),
        (b"-----BEGIN PRIVATE KEY-----\n!!!!\n-----END PRIVATE KEY-----\n", "not a PEM private key"),
        (b"-----BEGIN PRIVATE KEY-----\nMAA=\n-----END PRIVATE KEY-----\n", "not a PKCS#8 private key"),
        (b"-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n", "\"CERTIFICATE\" is not a private key"),
        (b"-----BEGIN PUBLIC KEY-----\nMAA=\n-----END PUBLIC KEY-----\n", "this is a public key"),
        (
            b"-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\nMAA=\n-----END EC PRIVATE KEY-----\n",
            "openssl pkcs8 -topk8",
        ),
        (b"-----BEGIN ENCRYPTED PRIVATE KEY-----\nMAA=\n-----END ENCRYPTED PRIVATE KEY-----\n", "not an encrypted PKCS#8"),
    ] {
        let e = SigningKey::from_pem(text, &mut never).unwrap_err().to_string();
        assert!(e.contains(what), "{e} lacks {what}");
    }
}

#[test]
fn an_unencrypted_key_others_can_read_gets_a_warning() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("k.pem");
    std::fs::write(&plain, pem("PRIVATE KEY", &pkcs8_der(&p256()))).unwrap();
    let salt = [1u8; 16];
    let locked = dir.path().join("e.pem");
    let params = pbes2::Parameters::pbkdf2_sha256_aes256cbc(2048, &salt, &salt).unwrap();
    std::fs::write(&locked, encrypted(&pkcs8_der(&p256()), params, "pw")).unwrap();
    let mut pw = |_: Encrypted| Ok(Zeroizing::new("pw".to_string()));
    for (path, mode, warned) in [(&plain, 0o644, true), (&plain, 0o600, false), (&locked, 0o644, false)] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        let file = read_key_file(path, &mut pw).unwrap();
        assert_eq!(file.warning.is_some(), warned, "{path:?} {mode:o}");
        if let Some(w) = file.warning {
            assert!(w.contains("Permissions 0644") && w.contains("k.pem"), "{w}");
        }
    }
    let e = read_key_file(&dir.path().join("none.pem"), &mut pw).unwrap_err();
    assert_eq!(e.path(), Some(dir.path().join("none.pem").as_path()));
}

#[test]
fn the_hints_are_the_digests_of_the_public_key() {
    let key = p256();
    let pem_text = key.public_key_pem().unwrap();
    assert!(pem_text.starts_with("-----BEGIN PUBLIC KEY-----\n") && pem_text.ends_with("-----END PUBLIC KEY-----\n"));
    assert_eq!(key.model_signing_hint().unwrap(), hex::encode(sha2::Sha256::digest(pem_text.as_bytes())));
    use base64::Engine as _;
    let der = key.public_key_der().unwrap();
    assert_eq!(key.cosign_hint().unwrap(), base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(der)));
}
