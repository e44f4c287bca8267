//! What a signing tool hands back: a bare statement, a DSSE envelope
//! (`payloadType`, base64 `payload`, `signatures`), or a Sigstore bundle
//! holding one (`dsseEnvelope`); and DSSE's pre-authentication encoding,
//! the bytes a signature covers.

use base64::Engine as _;

use crate::error::{Error, Result};
use crate::json::{Json, parse_strict};
use crate::provenance::{MAX_DEPTH, PAYLOAD_TYPE};

/// One signature of an envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    /// The key id the signer gave, if any (informational only).
    pub keyid: String,
    /// The signature bytes.
    pub sig: Vec<u8>,
}

/// A statement as it was handed over.
#[derive(Debug, Clone, PartialEq)]
pub enum Signed {
    /// A statement with no envelope (already parsed): nothing to check a
    /// signature on.
    Bare(Json),
    /// A DSSE envelope (perhaps from inside a Sigstore bundle) whose
    /// payload type is [`PAYLOAD_TYPE`].
    Dsse {
        /// The payload: the statement's bytes, parsed only once its
        /// signature is checked.
        payload: Vec<u8>,
        /// Its signatures.
        signatures: Vec<Signature>,
        /// True when it came out of a Sigstore bundle.
        from_bundle: bool,
    },
}

/// Reads a bare statement, a DSSE envelope or a Sigstore bundle.
pub fn read(bytes: &[u8]) -> Result<Signed> {
    let json = parse_strict(bytes, MAX_DEPTH)?;
    if json.as_object().is_none() {
        return Err(Error::schema("a statement, DSSE envelope or Sigstore bundle is a JSON object"));
    }
    if let Some(env) = json.get("dsseEnvelope") {
        return envelope(env, true);
    }
    if json.get("payloadType").is_some() || json.get("payload").is_some() {
        return envelope(&json, false);
    }
    if json.get("_type").is_some() {
        return Ok(Signed::Bare(json));
    }
    if json.get("messageSignature").is_some() {
        return Err(Error::schema("this Sigstore bundle signs a blob, not a statement (no dsseEnvelope)"));
    }
    Err(Error::schema(
        "neither an in-toto statement (_type), a DSSE envelope (payloadType) nor a Sigstore bundle (dsseEnvelope)",
    ))
}

fn string<'a>(obj: &'a Json, key: &str, what: &str) -> Result<&'a str> {
    obj.get(key).and_then(Json::as_str).ok_or_else(|| Error::schema(format!("{what} has no string member \"{key}\"")))
}

/// Base64 as DSSE writers produce it: standard, or URL-safe, with or
/// without padding.
fn base64_decode(text: &str, what: &str) -> Result<Vec<u8>> {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    for engine in [&STANDARD, &STANDARD_NO_PAD, &URL_SAFE, &URL_SAFE_NO_PAD] {
        if let Ok(b) = engine.decode(text) {
            return Ok(b);
        }
    }
    Err(Error::schema(format!("{what} is not base64")))
}

fn envelope(env: &Json, from_bundle: bool) -> Result<Signed> {
    let what = if from_bundle { "the bundle's dsseEnvelope" } else { "the DSSE envelope" };
    if env.as_object().is_none() {
        return Err(Error::schema(format!("{what} is not an object")));
    }
    let payload_type = string(env, "payloadType", what)?;
    if payload_type != PAYLOAD_TYPE {
        return Err(Error::schema(format!(
            "{what} carries \"{payload_type}\", not an in-toto statement ({PAYLOAD_TYPE})"
        )));
    }
    let payload = base64_decode(string(env, "payload", what)?, "the payload")?;
    let sigs = env
        .get("signatures")
        .and_then(Json::as_array)
        .ok_or_else(|| Error::schema(format!("{what} has no array \"signatures\"")))?;
    let mut signatures = Vec::with_capacity(sigs.len());
    for s in sigs {
        let sig = base64_decode(string(s, "sig", "a signature")?, "a signature")?;
        let keyid = s.get("keyid").and_then(Json::as_str).unwrap_or_default().to_string();
        signatures.push(Signature { keyid, sig });
    }
    Ok(Signed::Dsse { payload, signatures, from_bundle })
}

/// DSSE v1's pre-authentication encoding of a payload: what is signed.
/// `"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`, lengths in ASCII
/// decimal.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = format!("DSSEv1 {} {payload_type} {} ", payload_type.len(), payload.len()).into_bytes();
    out.extend_from_slice(payload);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pae_is_dsse_v1() {
        // The example of the DSSE specification (protocol.md).
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world".to_vec()
        );
    }

    #[test]
    fn reads_the_three_shapes_and_refuses_others() {
        let st = br#"{"_type":"https://in-toto.io/Statement/v1","subject":[]}"#;
        assert_eq!(read(st).unwrap(), Signed::Bare(parse_strict(st, MAX_DEPTH).unwrap()));
        let b64 = base64::engine::general_purpose::STANDARD.encode(st);
        let env = format!(
            r#"{{"payloadType":"{PAYLOAD_TYPE}","payload":"{b64}","signatures":[{{"keyid":"k","sig":"AAEC"}}]}}"#
        );
        let Signed::Dsse { payload, signatures, from_bundle, .. } = read(env.as_bytes()).unwrap() else { panic!() };
        assert_eq!((payload.as_slice(), from_bundle), (&st[..], false));
        assert_eq!(signatures, vec![Signature { keyid: "k".into(), sig: vec![0, 1, 2] }]);
        let bundle = format!(r#"{{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","dsseEnvelope":{env}}}"#);
        assert!(matches!(read(bundle.as_bytes()).unwrap(), Signed::Dsse { from_bundle: true, .. }));
        let other = env.replace(PAYLOAD_TYPE, "text/plain");
        assert!(read(other.as_bytes()).unwrap_err().to_string().contains("not an in-toto statement"));
        assert!(read(b"[]").is_err());
        assert!(read(br#"{"a":1,"a":2}"#).is_err());
        assert!(read(br#"{"messageSignature":{}}"#).unwrap_err().to_string().contains("signs a blob"));
    }
}
