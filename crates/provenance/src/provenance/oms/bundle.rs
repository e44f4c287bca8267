//! A Sigstore bundle (v0.1 to v0.3 JSON) as model_signing writes it, read
//! strictly: one DSSE envelope of an in-toto statement with exactly one
//! signature, and the verification material (a key hint, the signing
//! certificate in `x509CertificateChain` or `certificate`, transparency-log
//! entries and timestamps for the keyless method). Nothing here is trusted:
//! it says what to check.

use base64::Engine as _;

use crate::error::{Error, Result};
use crate::json::{Json, parse_strict};
use crate::provenance::{MAX_DEPTH, PAYLOAD_TYPE};

/// What the bundle offers to check the signature with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Material {
    /// A key known to the verifier, perhaps named by the hex SHA-256 of
    /// its PEM (model_signing's hint).
    PublicKey {
        /// The hint, when given.
        hint: Option<String>,
    },
    /// DER certificates, the signing one first (`x509CertificateChain`, or
    /// the v0.3 `certificate` alone).
    Certificates(Vec<Vec<u8>>),
}

/// A bundle, its envelope decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bundle {
    /// The DSSE payload (the statement's bytes).
    pub payload: Vec<u8>,
    /// The one DSSE signature.
    pub signature: Vec<u8>,
    /// How the signer is known.
    pub material: Material,
    /// True when the bundle carries transparency-log entries or signed
    /// timestamps (what the keyless method needs).
    pub has_log_or_timestamp: bool,
}

fn refuse<T>(why: impl std::fmt::Display) -> Result<T> {
    Err(Error::schema(format!("Sigstore bundle: {why}")))
}

fn base64(text: &str, what: &str) -> Result<Vec<u8>> {
    use base64::engine::general_purpose::{STANDARD, URL_SAFE};
    // Canonical padded base64 only: a signature or certificate written two
    // ways is one too many.
    STANDARD.decode(text).or_else(|_| URL_SAFE.decode(text)).or_else(|_| refuse(format!("{what} is not base64")))
}

fn str_of<'a>(obj: &'a Json, key: &str, what: &str) -> Result<&'a str> {
    match obj.get(key).and_then(Json::as_str) {
        Some(s) => Ok(s),
        None => refuse(format!("{what} has no string \"{key}\"")),
    }
}

/// Whether `bytes` is a bundle whose DSSE payload is a model_signing
/// statement (only the predicate type is looked at: to choose the path).
pub fn is_model_signing(bytes: &[u8]) -> bool {
    let Ok(json) = parse_strict(bytes, MAX_DEPTH) else { return false };
    let Some(payload) = json.get("dsseEnvelope").and_then(|e| e.get("payload")).and_then(Json::as_str) else {
        return false;
    };
    base64(payload, "").is_ok_and(|p| super::manifest::is_model_signing(&p))
}

/// Reads a bundle.
pub fn read(bytes: &[u8]) -> Result<Bundle> {
    let json = parse_strict(bytes, MAX_DEPTH)?;
    if json.as_object().is_none() {
        return refuse("not a JSON object");
    }
    let media = str_of(&json, "mediaType", "the bundle")?;
    if !media.starts_with("application/vnd.dev.sigstore.bundle") {
        return refuse(format!("media type {media:?} is not a Sigstore bundle's"));
    }
    if json.get("messageSignature").is_some() {
        return refuse("it signs a blob (messageSignature), not a statement");
    }
    let Some(env) = json.get("dsseEnvelope") else { return refuse("no dsseEnvelope") };
    let payload_type = str_of(env, "payloadType", "the dsseEnvelope")?;
    if payload_type != PAYLOAD_TYPE {
        return refuse(format!("the envelope carries {payload_type:?}, not an in-toto statement ({PAYLOAD_TYPE})"));
    }
    let payload = base64(str_of(env, "payload", "the dsseEnvelope")?, "the payload")?;
    let sigs = env.get("signatures").and_then(Json::as_array).unwrap_or_default();
    let [sig] = sigs else {
        return refuse(format!("{} signatures in the envelope; exactly one is accepted", sigs.len()));
    };
    let signature = base64(str_of(sig, "sig", "the signature")?, "the signature")?;
    let Some(vm) = json.get("verificationMaterial") else { return refuse("no verificationMaterial") };
    let material = material(vm)?;
    let non_empty = |k: &str| {
        vm.get(k).is_some_and(|v| {
            v.as_array().is_some_and(|a| !a.is_empty()) || v.as_object().is_some_and(|o| !o.is_empty())
        })
    };
    let has_log_or_timestamp = non_empty("tlogEntries") || non_empty("timestampVerificationData");
    Ok(Bundle { payload, signature, material, has_log_or_timestamp })
}

fn material(vm: &Json) -> Result<Material> {
    let kinds = ["publicKey", "x509CertificateChain", "certificate"];
    let given: Vec<&str> = kinds.into_iter().filter(|k| vm.get(k).is_some()).collect();
    match given.as_slice() {
        ["publicKey"] => {
            let hint = vm.get("publicKey").and_then(|k| k.get("hint")).and_then(Json::as_str);
            Ok(Material::PublicKey { hint: hint.filter(|h| !h.is_empty()).map(str::to_string) })
        }
        ["x509CertificateChain"] => {
            let certs = vm.get("x509CertificateChain").and_then(|c| c.get("certificates")).and_then(Json::as_array);
            let certs = certs.unwrap_or_default();
            if certs.is_empty() {
                return refuse("x509CertificateChain holds no certificate");
            }
            let der = certs.iter().map(|c| base64(str_of(c, "rawBytes", "a certificate")?, "a certificate"));
            Ok(Material::Certificates(der.collect::<Result<_>>()?))
        }
        ["certificate"] => {
            let c = vm.get("certificate").unwrap_or(&Json::Null);
            Ok(Material::Certificates(vec![base64(str_of(c, "rawBytes", "the certificate")?, "the certificate")?]))
        }
        [] => refuse("the verification material names no key and no certificate"),
        several => refuse(format!("the verification material holds {}: one is accepted", several.join(" and "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(sigs: &str, vm: &str) -> String {
        format!(
            r#"{{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{vm},"dsseEnvelope":{{"payload":"e30=","payloadType":"{PAYLOAD_TYPE}","signatures":[{sigs}]}}}}"#
        )
    }

    #[test]
    fn reads_the_key_and_certificate_shapes() {
        let b =
            read(bundle(r#"{"sig":"AAEC"}"#, r#"{"publicKey":{"hint":"ab"},"tlogEntries":[]}"#).as_bytes()).unwrap();
        assert_eq!((b.payload.as_slice(), b.signature.as_slice()), (&b"{}"[..], &[0u8, 1, 2][..]));
        assert_eq!(b.material, Material::PublicKey { hint: Some("ab".into()) });
        assert!(!b.has_log_or_timestamp);
        let chain = r#"{"x509CertificateChain":{"certificates":[{"rawBytes":"AQ=="},{"rawBytes":"Ag=="}]}}"#;
        let b = read(bundle(r#"{"sig":"AAEC"}"#, chain).as_bytes()).unwrap();
        assert_eq!(b.material, Material::Certificates(vec![vec![1], vec![2]]));
        let one = r#"{"certificate":{"rawBytes":"AQ=="},"tlogEntries":[{"logIndex":"1"}]}"#;
        let b = read(bundle(r#"{"sig":"AAEC"}"#, one).as_bytes()).unwrap();
        assert!(b.has_log_or_timestamp);
    }

    #[test]
    fn refuses_several_signatures_other_payloads_and_malformed_encodings() {
        let key = r#"{"publicKey":{"hint":""}}"#;
        let e = |s: String| read(s.as_bytes()).unwrap_err().to_string();
        assert!(e(bundle(r#"{"sig":"AAEC"},{"sig":"AAEC"}"#, key)).contains("2 signatures"));
        assert!(e(bundle("", key)).contains("0 signatures"));
        assert!(e(bundle(r#"{"sig":"A!!"}"#, key)).contains("not base64"));
        assert!(e(bundle(r#"{"sig":"AAEC"}"#, key).replace(PAYLOAD_TYPE, "text/plain")).contains("not an in-toto"));
        assert!(e(bundle(r#"{"sig":"AAEC"}"#, r#"{}"#)).contains("no key"));
        let both = r#"{"publicKey":{},"certificate":{"rawBytes":"AQ=="}}"#;
        assert!(e(bundle(r#"{"sig":"AAEC"}"#, both)).contains("one is accepted"));
        let dup = bundle(r#"{"sig":"AAEC","sig":"AAEC"}"#, key);
        assert!(read(dup.as_bytes()).is_err());
        assert!(
            e(bundle(r#"{"sig":"AAEC"}"#, key).replace("bundle.v0.3", "x").replace("sigstore", "x"))
                .contains("media type")
        );
    }
}
