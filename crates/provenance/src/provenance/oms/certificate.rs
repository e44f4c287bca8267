//! The certificate method: the bundle's signing certificate (first of its
//! `x509CertificateChain`, the rest intermediates) must chain to one of the
//! CA certificates the user gives, be usable for signing (key usage
//! digitalSignature, or extended key usage codeSigning, as model_signing
//! asks), and its key must verify the DSSE signature. The bundle carries no
//! timestamp, so the chain is checked at the leaf's notBefore, as
//! model_signing does (docs/adr/0027). webpki checks the chain and
//! x509-cert reads the leaf: no X.509 code of our own.

use crate::provenance::ProvenanceErrorKind;
use rustls_pki_types::{CertificateDer, UnixTime};
use x509_cert::Certificate;
use x509_cert::der::{Decode as _, Encode as _};
use x509_cert::ext::pkix::{ExtendedKeyUsage, KeyUsage};

use crate::error::{Error, Result};
use crate::provenance::oms::ec::{Check, EcKey};

/// extKeyUsage codeSigning, 1.3.6.1.5.5.7.3.3.
const CODE_SIGNING: x509_cert::der::oid::ObjectIdentifier =
    x509_cert::der::oid::ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.3.3");

fn refuse<T>(why: impl std::fmt::Display) -> Result<T> {
    Err(Error::schema(format!("signing certificate: {why}")))
}

/// Reads the CA certificates of a PEM file's text.
pub fn anchors_of(pem: &[u8]) -> Result<Vec<Vec<u8>>> {
    let certs = Certificate::load_pem_chain(pem)
        .map_err(|e| Error::schema(format!("the certificate chain is not PEM certificates: {e}")))?;
    if certs.is_empty() {
        return Err(Error::schema("the certificate chain holds no certificate"));
    }
    certs.iter().map(|c| c.to_der().map_err(|e| Error::schema(format!("a CA certificate: {e}")))).collect()
}

/// Checks `certs` (leaf first, DER) against the CA certificates of `ca_pem`
/// and the signature over `pae`; returns who signed (the leaf's subject).
pub fn verify(certs: &[Vec<u8>], ca_pem: &[u8], pae: &[u8], signature: &[u8]) -> Result<String> {
    let anchors_der = anchors_of(ca_pem)?;
    let Some((leaf_der, rest)) = certs.split_first() else { return refuse("the bundle holds none") };
    let leaf = match Certificate::from_der(leaf_der) {
        Ok(c) => c,
        Err(e) => return refuse(format!("not a DER certificate: {e}")),
    };
    let tbs = &leaf.tbs_certificate;
    let not_before = tbs.validity.not_before.to_unix_duration();
    let mut anchors = Vec::with_capacity(anchors_der.len());
    for der in &anchors_der {
        let cert = CertificateDer::from(der.as_slice());
        match webpki::anchor_from_trusted_cert(&cert) {
            Ok(a) => anchors.push(a.to_owned()),
            Err(e) => return Err(Error::schema(format!("a CA certificate cannot be a trust anchor: {e}"))),
        }
    }
    let intermediates: Vec<CertificateDer<'_>> = rest.iter().map(|d| CertificateDer::from(d.as_slice())).collect();
    let leaf_cert = CertificateDer::from(leaf_der.as_slice());
    let end = match webpki::EndEntityCert::try_from(&leaf_cert) {
        Ok(e) => e,
        Err(e) => return refuse(format!("not a certificate webpki accepts: {e}")),
    };
    let time = UnixTime::since_unix_epoch(not_before);
    let usage = webpki::KeyUsage::required_if_present(&[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x03]);
    let path = end.verify_for_usage(webpki::ALL_VERIFICATION_ALGS, &anchors, &intermediates, time, usage, None, None);
    if let Ok(path) = &path {
        // webpki takes a trust anchor as a name and a key; OpenSSL, which
        // model_signing uses, also holds the root certificate to its dates.
        let anchor_key = path.anchor().subject_public_key_info.as_ref();
        for der in &anchors_der {
            let is_anchor = webpki::anchor_from_trusted_cert(&CertificateDer::from(der.as_slice()))
                .is_ok_and(|a| a.subject_public_key_info.as_ref() == anchor_key);
            let Ok(ca) = Certificate::from_der(der) else { continue };
            let v = &ca.tbs_certificate.validity;
            if is_anchor
                && (not_before < v.not_before.to_unix_duration() || not_before > v.not_after.to_unix_duration())
            {
                return refuse(format!(
                    "a certificate of its chain is outside its validity at the signing time (the leaf's notBefore): the CA certificate {}",
                    ca.tbs_certificate.subject
                ));
            }
        }
    }
    if let Err(e) = path {
        let why = match e {
            webpki::Error::CertExpired { .. } | webpki::Error::CertNotValidYet { .. } => {
                format!(
                    "a certificate of its chain is outside its validity at the signing time (the leaf's notBefore): {e}"
                )
            }
            webpki::Error::UnknownIssuer => "it does not chain to the given CA certificates".to_string(),
            other => format!("its chain does not verify: {other}"),
        };
        return refuse(why);
    }
    if !usable_for_signing(&leaf)? {
        return refuse("it is not for signing (no keyUsage digitalSignature, no extKeyUsage codeSigning)");
    }
    let spki = tbs.subject_public_key_info.to_der().map_err(|e| Error::schema(format!("its key: {e}")))?;
    let key = EcKey::from_spki_der(&spki)?;
    match key.check(pae, signature)? {
        Check::Verified => Ok(format!("certificate {}", tbs.subject)),
        Check::Failed => Err(Error::new(ProvenanceErrorKind::SignatureFailed(
            "the DSSE signature does not verify with the signing certificate's key".to_string(),
        ))),
    }
}

fn usable_for_signing(cert: &Certificate) -> Result<bool> {
    let exts = cert.tbs_certificate.extensions.as_deref().unwrap_or_default();
    for e in exts {
        if e.extn_id == x509_cert::der::oid::db::rfc5280::ID_CE_KEY_USAGE {
            if let Ok(ku) = KeyUsage::from_der(e.extn_value.as_bytes()) {
                if ku.digital_signature() {
                    return Ok(true);
                }
            }
        }
        if e.extn_id == x509_cert::der::oid::db::rfc5280::ID_CE_EXT_KEY_USAGE {
            if let Ok(eku) = ExtendedKeyUsage::from_der(e.extn_value.as_bytes()) {
                if eku.0.contains(&CODE_SIGNING) {
                    return Ok(true);
                }
            }
        }
    }
    Ok(false)
}
