//! The keyless Sigstore method and the certificate method's validity, on a
//! private Sigstore built here: a Fulcio-like CA, a leaf certificate for an
//! email identity with its OIDC issuer, a Rekor-like log key whose signed
//! entry timestamp (inclusion promise) vouches for the signing time, and
//! the trust root naming them (`--trusted-root`). The same code path as
//! Sigstore's public-good instance, whose own trust root ships with the
//! tool; nothing here reaches the network.
use crate::common;

use std::path::{Path, PathBuf};
use std::str::FromStr as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use common::*;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{DerSignature, SigningKey};
use p256::pkcs8::EncodePublicKey as _;
use sha2::{Digest as _, Sha256};
use x509_cert::builder::{Builder as _, CertificateBuilder, Profile};
use x509_cert::der::asn1::{Ia5String, Utf8StringRef};
use x509_cert::der::oid::{AssociatedOid, ObjectIdentifier};
use x509_cert::der::{Encode, Length, Writer};
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::{ExtendedKeyUsage, SubjectAltName};
use x509_cert::ext::{AsExtension, Extension};
use x509_cert::name::Name;
use x509_cert::serial_number::SerialNumber;
use x509_cert::spki::SubjectPublicKeyInfoOwned;
use x509_cert::time::{Time, Validity};

const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
const IDENTITY: &str = "alice@example.com";
const ISSUER: &str = "https://issuer.example.com";

fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// Fulcio's OIDC issuer extension (1.3.6.1.4.1.57264.1.8, a UTF8String).
struct OidcIssuer(&'static str);

impl AssociatedOid for OidcIssuer {
    const OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.4.1.57264.1.8");
}

impl Encode for OidcIssuer {
    fn encoded_len(&self) -> x509_cert::der::Result<Length> {
        Utf8StringRef::new(self.0)?.encoded_len()
    }
    fn encode(&self, w: &mut impl Writer) -> x509_cert::der::Result<()> {
        Utf8StringRef::new(self.0)?.encode(w)
    }
}

impl AsExtension for OidcIssuer {
    fn critical(&self, _: &Name, _: &[Extension]) -> bool {
        false
    }
}

fn at(offset_secs: i64) -> Time {
    let now = SystemTime::now();
    let t = if offset_secs >= 0 {
        now + Duration::from_secs(offset_secs as u64)
    } else {
        now - Duration::from_secs((-offset_secs) as u64)
    };
    // Whole seconds: a certificate's times have no fraction.
    let secs = t.duration_since(UNIX_EPOCH).unwrap().as_secs();
    Time::try_from(UNIX_EPOCH + Duration::from_secs(secs)).unwrap()
}

fn spki(k: &SigningKey) -> SubjectPublicKeyInfoOwned {
    SubjectPublicKeyInfoOwned::from_key(*k.verifying_key()).unwrap()
}

/// A self-signed CA certificate (DER) valid from `from` to `to` seconds from now.
fn ca(key: &SigningKey, name: &str, from: i64, to: i64) -> Vec<u8> {
    let validity = Validity { not_before: at(from), not_after: at(to) };
    let b = CertificateBuilder::new(
        Profile::Root,
        SerialNumber::from(1u32),
        validity,
        Name::from_str(name).unwrap(),
        spki(key),
        key,
    )
    .unwrap();
    b.build::<DerSignature>().unwrap().to_der().unwrap()
}

/// A leaf for `key`, issued by `ca_key` under `ca_name`: code signing,
/// the email identity and (when given) Fulcio's issuer extension.
fn leaf(
    ca_key: &SigningKey,
    ca_name: &str,
    key: &SigningKey,
    from: i64,
    to: i64,
    issuer: Option<&'static str>,
) -> Vec<u8> {
    let validity = Validity { not_before: at(from), not_after: at(to) };
    let profile = Profile::Leaf {
        issuer: Name::from_str(ca_name).unwrap(),
        enable_key_agreement: false,
        enable_key_encipherment: false,
    };
    let mut b = CertificateBuilder::new(
        profile,
        SerialNumber::from(2u32),
        validity,
        Name::from_str("CN=signer").unwrap(),
        spki(key),
        ca_key,
    )
    .unwrap();
    b.add_extension(&SubjectAltName(vec![GeneralName::Rfc822Name(Ia5String::new(IDENTITY).unwrap())])).unwrap();
    let code_signing = ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.3.3");
    b.add_extension(&ExtendedKeyUsage(vec![code_signing])).unwrap();
    if let Some(i) = issuer {
        b.add_extension(&OidcIssuer(i)).unwrap();
    }
    b.build::<DerSignature>().unwrap().to_der().unwrap()
}

fn pem_cert(der: &[u8]) -> String {
    let body: Vec<String> = b64(der).as_bytes().chunks(64).map(|c| String::from_utf8(c.to_vec()).unwrap()).collect();
    format!("-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n", body.join("\n"))
}

fn pae(payload: &[u8]) -> Vec<u8> {
    let mut out = format!("DSSEv1 {} {PAYLOAD_TYPE} {} ", PAYLOAD_TYPE.len(), payload.len()).into_bytes();
    out.extend_from_slice(payload);
    out
}

/// The model (`model/w.bin`) and the statement model_signing would sign.
fn model(d: &Dir) -> String {
    std::fs::create_dir_all(d.path("model")).unwrap();
    let w = vec![3u8; 4096];
    std::fs::write(d.path("model/w.bin"), &w).unwrap();
    let digest: [u8; 32] = Sha256::digest(&w).into();
    let root = hex::encode(Sha256::digest(digest));
    format!(
        r#"{{"_type":"https://in-toto.io/Statement/v1","subject":[{{"name":"model","digest":{{"sha256":"{root}"}}}}],"predicateType":"https://model_signing/signature/v1.0","predicate":{{"serialization":{{"method":"files","hash_type":"sha256","allow_symlinks":false}},"resources":[{{"name":"w.bin","algorithm":"sha256","digest":"{}"}}]}}}}"#,
        hex::encode(digest)
    )
}

/// A private Sigstore: Fulcio's CA and key, Rekor's key.
struct Sigstore {
    fulcio: SigningKey,
    fulcio_cert: Vec<u8>,
    rekor: SigningKey,
}

const FULCIO: &str = "CN=fulcio,O=example";

impl Sigstore {
    fn new() -> Sigstore {
        let fulcio = SigningKey::from_slice(&[11; 32]).unwrap();
        let fulcio_cert = ca(&fulcio, FULCIO, -86_400, 86_400);
        Sigstore { fulcio, fulcio_cert, rekor: SigningKey::from_slice(&[12; 32]).unwrap() }
    }

    fn log_id(&self) -> Vec<u8> {
        Sha256::digest(self.rekor.verifying_key().to_public_key_der().unwrap().as_bytes()).to_vec()
    }

    fn trusted_root(&self) -> String {
        let key_der = self.rekor.verifying_key().to_public_key_der().unwrap();
        serde_json::json!({
            "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
            "tlogs": [{
                "baseUrl": "https://rekor.example.com",
                "hashAlgorithm": "SHA2_256",
                "publicKey": {"rawBytes": b64(key_der.as_bytes()), "keyDetails": "PKIX_ECDSA_P256_SHA_256", "validFor": {"start": "2020-01-01T00:00:00Z"}},
                "logId": {"keyId": b64(&self.log_id())}
            }],
            "certificateAuthorities": [{
                "subject": {"organization": "example", "commonName": "fulcio"},
                "uri": "https://fulcio.example.com",
                "certChain": {"certificates": [{"rawBytes": b64(&self.fulcio_cert)}]},
                "validFor": {"start": "2020-01-01T00:00:00Z"}
            }],
            "ctlogs": [],
            "timestampAuthorities": []
        })
        .to_string()
    }

    /// A bundle of `payload` signed by a fresh key certified by Fulcio
    /// (`issuer` in the certificate), logged with a signed entry timestamp.
    fn bundle(&self, payload: &str, issuer: Option<&'static str>, integrated_offset: i64) -> String {
        let key = SigningKey::from_slice(&[13; 32]).unwrap();
        let cert = leaf(&self.fulcio, FULCIO, &key, -600, 600, issuer);
        let sig: DerSignature = key.sign(&pae(payload.as_bytes()));
        let sig = sig.as_bytes().to_vec();
        let body = serde_json::json!({
            "apiVersion": "0.0.1",
            "kind": "dsse",
            "spec": {
                "envelopeHash": {"algorithm": "sha256", "value": hex::encode([0u8; 32])},
                "payloadHash": {"algorithm": "sha256", "value": hex::encode(Sha256::digest(payload.as_bytes()))},
                "signatures": [{"signature": b64(&sig), "verifier": b64(pem_cert(&cert).as_bytes())}]
            }
        })
        .to_string();
        let integrated = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64 + integrated_offset;
        // The SET: the log's signature of the canonical JSON of the entry.
        let set_payload = format!(
            r#"{{"body":"{}","integratedTime":{integrated},"logID":"{}","logIndex":7}}"#,
            b64(body.as_bytes()),
            hex::encode(self.log_id())
        );
        let set: DerSignature = self.rekor.sign(set_payload.as_bytes());
        serde_json::json!({
            "mediaType": "application/vnd.dev.sigstore.bundle+json;version=0.1",
            "verificationMaterial": {
                "x509CertificateChain": {"certificates": [{"rawBytes": b64(&cert)}]},
                "tlogEntries": [{
                    "logIndex": "7",
                    "logId": {"keyId": b64(&self.log_id())},
                    "kindVersion": {"kind": "dsse", "version": "0.0.1"},
                    "integratedTime": integrated.to_string(),
                    "inclusionPromise": {"signedEntryTimestamp": b64(set.as_bytes())},
                    "canonicalizedBody": b64(body.as_bytes())
                }]
            },
            "dsseEnvelope": {"payload": b64(payload.as_bytes()), "payloadType": PAYLOAD_TYPE, "signatures": [{"sig": b64(&sig)}]}
        })
        .to_string()
    }
}

fn verify(d: &Dir, sig: &Path, extra: &[&str]) -> (Option<i32>, String, String) {
    let mut args = vec!["verify", sig.to_str().unwrap(), "--root", "model"];
    args.extend_from_slice(extra);
    let o = gd_in(d.dir.path(), &args);
    (o.status.code(), text(&o.stdout), text(&o.stderr))
}

fn keyless<'a>(root: &'a Path, identity: &'a str, issuer: &'a str) -> Vec<&'a str> {
    vec!["--identity", identity, "--issuer", issuer, "--trusted-root", root.to_str().unwrap()]
}

#[test]
fn keyless_bundles_verify_against_the_given_trust_root_and_identity() {
    let d = Dir::new();
    let payload = model(&d);
    let s = Sigstore::new();
    let root: PathBuf = d.write("trusted_root.json", s.trusted_root().as_bytes());
    let sig = d.write("model.sig", s.bundle(&payload, Some(ISSUER), -60).as_bytes());
    let (code, out, err) = verify(&d, &sig, &keyless(&root, IDENTITY, ISSUER));
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains(&format!("signature OK (keyless {IDENTITY} ({ISSUER}))")) && out.contains("w.bin: OK"),
        "{out}"
    );
    // The model changed: exit 1.
    std::fs::write(d.path("model/w.bin"), [4u8; 4096]).unwrap();
    let (code, out, _) = verify(&d, &sig, &keyless(&root, IDENTITY, ISSUER));
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("w.bin: FAILED"), "{out}");
}

#[test]
fn keyless_refusals_name_the_file_and_exit_2() {
    let d = Dir::new();
    let payload = model(&d);
    let s = Sigstore::new();
    let root = d.write("trusted_root.json", s.trusted_root().as_bytes());
    let good = d.write("model.sig", s.bundle(&payload, Some(ISSUER), -60).as_bytes());
    for (what, sig, args, why) in [
        ("another identity", &good, keyless(&root, "mallory@example.com", ISSUER), "identity"),
        ("another issuer", &good, keyless(&root, IDENTITY, "https://other.example.com"), "issuer"),
        // Without --trusted-root: the public-good root knows not this log.
        ("the public-good root", &good, vec!["--identity", IDENTITY, "--issuer", ISSUER], "No log key valid"),
    ] {
        let (code, out, err) = verify(&d, sig, &args);
        assert_eq!(code, Some(2), "{what}: {out}{err}");
        assert!(err.contains("model.sig") && err.contains(why), "{what}: {err}");
        assert!(out.is_empty(), "{what}: {out}");
    }
    // Logged before the certificate was valid (it is for now ± 10 minutes):
    // outside its validity at the signing time the log proves.
    let expired = d.write("expired.sig", s.bundle(&payload, Some(ISSUER), -1_200).as_bytes());
    let (code, out, err) = verify(&d, &expired, &keyless(&root, IDENTITY, ISSUER));
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(err.contains("expired.sig") && err.contains("CertNotValidYet"), "{err}");
    // No issuer in the certificate: the issuer cannot match.
    let none = d.write("none.sig", s.bundle(&payload, None, -60).as_bytes());
    let (code, _, err) = verify(&d, &none, &keyless(&root, IDENTITY, ISSUER));
    assert_eq!(code, Some(2), "{err}");
    // A tampered log entry (another integrated time, so the SET fails).
    let text_ = s.bundle(&payload, Some(ISSUER), -60);
    let v: serde_json::Value = serde_json::from_str(&text_).unwrap();
    let t = v["verificationMaterial"]["tlogEntries"][0]["integratedTime"].as_str().unwrap().to_string();
    let moved = (t.parse::<i64>().unwrap() - 1).to_string();
    let tampered = d.write("tampered.sig", text_.replace(&format!("\"{t}\""), &format!("\"{moved}\"")).as_bytes());
    let (code, _, err) = verify(&d, &tampered, &keyless(&root, IDENTITY, ISSUER));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("tampered.sig") && err.contains("SET verification failed"), "{err}");
    // A keyless bundle stripped of its log entry is not keyless.
    let mut v: serde_json::Value = serde_json::from_str(&s.bundle(&payload, Some(ISSUER), -60)).unwrap();
    v["verificationMaterial"]["tlogEntries"] = serde_json::json!([]);
    let bare = d.write("bare.sig", v.to_string().as_bytes());
    let (code, _, err) = verify(&d, &bare, &keyless(&root, IDENTITY, ISSUER));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no transparency-log entry"), "{err}");
}

#[test]
fn a_certificate_whose_ca_was_not_valid_at_signing_is_refused() {
    // The certificate method checks the chain at the leaf's notBefore, as
    // model_signing does: a CA that expired before it is outside validity.
    let d = Dir::new();
    let payload = model(&d);
    let ca_key = SigningKey::from_slice(&[21; 32]).unwrap();
    let expired_ca = ca(&ca_key, "CN=old", -86_400, -3_600);
    let key = SigningKey::from_slice(&[22; 32]).unwrap();
    let cert = leaf(&ca_key, "CN=old", &key, -600, 600, None);
    let sig: DerSignature = key.sign(&pae(payload.as_bytes()));
    let bundle = serde_json::json!({
        "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
        "verificationMaterial": {"x509CertificateChain": {"certificates": [{"rawBytes": b64(&cert)}]}, "tlogEntries": []},
        "dsseEnvelope": {"payload": b64(payload.as_bytes()), "payloadType": PAYLOAD_TYPE, "signatures": [{"sig": b64(sig.as_bytes())}]}
    });
    let sig_path = d.write("cert.sig", bundle.to_string().as_bytes());
    let ca_path = d.write("ca.pem", pem_cert(&expired_ca).as_bytes());
    let (code, out, err) = verify(&d, &sig_path, &["--certificate-chain", ca_path.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(err.contains("cert.sig") && err.contains("outside its validity"), "{err}");
    // The same leaf under a CA valid then: accepted.
    let good_ca = ca(&ca_key, "CN=old", -86_400, 86_400);
    let ca_path = d.write("ca.pem", pem_cert(&good_ca).as_bytes());
    let (code, out, err) = verify(&d, &sig_path, &["--certificate-chain", ca_path.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}{err}");
}
