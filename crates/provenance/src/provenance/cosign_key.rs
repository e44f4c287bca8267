//! cosign's encrypted private key files (`cosign generate-key-pair`): PEM
//! `ENCRYPTED SIGSTORE PRIVATE KEY` (older cosign: `ENCRYPTED COSIGN
//! PRIVATE KEY`) around the JSON of go-securesystemslib's `encrypted`
//! package: a scrypt KDF (`N`, `r`, `p`, base64 salt) deriving a 32-byte
//! key that opens a NaCl secretbox (XSalsa20-Poly1305, base64 24-byte
//! nonce) holding the PKCS#8 DER of the key.

use crate::provenance::ProvenanceErrorKind;
use base64::Engine as _;
use crypto_secretbox::aead::{Aead as _, KeyInit as _};
use zeroize::Zeroizing;

use crate::error::{Error, Result};
use crate::json::{Json, parse_strict};

/// The PEM labels of cosign's key files, newest first.
pub const PEM_LABELS: [&str; 2] = ["ENCRYPTED SIGSTORE PRIVATE KEY", "ENCRYPTED COSIGN PRIVATE KEY"];

/// The most scrypt may cost, as N·r·p (its memory is 128·N·r bytes, its
/// time grows with N·r·p): 2^18 at r = 8, p = 1, which is 256 MiB. cosign
/// writes N = 2^15, r = 8, p = 1 (32 MiB), so every file it makes opens;
/// a hostile file cannot make the tool spend gigabytes and tens of seconds
/// before it can say "wrong password".
const MAX_WORK: u64 = (1 << 18) * 8;
/// The largest scrypt block size (`r`) accepted: cosign writes 8.
const MAX_R: u32 = 8;

fn bad(what: impl Into<String>) -> Error {
    Error::new(ProvenanceErrorKind::PrivateKey(what.into()))
}

fn member<'a>(json: &'a Json, key: &str, what: &str) -> Result<&'a Json> {
    json.get(key).ok_or_else(|| bad(format!("cosign key file: {what} has no member \"{key}\"")))
}

fn string<'a>(json: &'a Json, key: &str, what: &str) -> Result<&'a str> {
    member(json, key, what)?.as_str().ok_or_else(|| bad(format!("cosign key file: {what}.{key} is not a string")))
}

fn uint(json: &Json, key: &str, what: &str) -> Result<u64> {
    member(json, key, what)?.as_u64().ok_or_else(|| bad(format!("cosign key file: {what}.{key} is not an integer")))
}

fn base64(json: &Json, key: &str, what: &str) -> Result<Vec<u8>> {
    base64::engine::general_purpose::STANDARD
        .decode(string(json, key, what)?)
        .map_err(|_| bad(format!("cosign key file: {what}.{key} is not base64")))
}

/// The scrypt parameters of the file, refused past the bounds above.
fn scrypt_params(kdf: &Json) -> Result<scrypt::Params> {
    let name = string(kdf, "name", "kdf")?;
    if name != "scrypt" {
        return Err(bad(format!("cosign key file: key derivation \"{name}\" is not scrypt")));
    }
    let params = member(kdf, "params", "kdf")?;
    let (n, r, p) =
        (uint(params, "N", "kdf.params")?, uint(params, "r", "kdf.params")?, uint(params, "p", "kdf.params")?);
    if !n.is_power_of_two() || n < 2 {
        return Err(bad(format!("cosign key file: scrypt N is {n}, not a power of two")));
    }
    let log_n = u8::try_from(n.trailing_zeros()).unwrap_or(u8::MAX);
    let (r, p) = (u32::try_from(r).unwrap_or(u32::MAX), u32::try_from(p).unwrap_or(u32::MAX));
    if r == 0 || p == 0 || r > MAX_R {
        return Err(bad(format!(
            "cosign key file: scrypt parameters N={n} r={r} p={p} are outside what is accepted (1 ≤ r ≤ {MAX_R}, p ≥ 1)"
        )));
    }
    let work = n.checked_mul(u64::from(r)).and_then(|w| w.checked_mul(u64::from(p)));
    if work.is_none_or(|w| w > MAX_WORK) {
        return Err(bad(format!(
            "cosign key file: scrypt parameters N={n} r={r} p={p} ask for more than this tool spends on a key \
             (N·r·p ≤ 2^21, 256 MiB: N = 2^18 at r = 8, p = 1; cosign writes N = 2^15, r = 8, p = 1): \
             refused before deriving, so a hostile file cannot cost gigabytes of memory and seconds of work"
        )));
    }
    scrypt::Params::new(log_n, r, p, 32).map_err(|e| bad(format!("cosign key file: scrypt parameters: {e}")))
}

/// The PKCS#8 DER inside a cosign key file's PEM body (`json`, the bytes
/// between the PEM lines, decoded), opened with `password`. A wrong
/// password and a damaged file look the same to secretbox: both are "wrong
/// password or damaged file".
pub fn decrypt(json: &[u8], password: &[u8]) -> Result<Zeroizing<Vec<u8>>> {
    let data = parse_strict(json, 8).map_err(|e| bad(format!("cosign key file: {e}")))?;
    let kdf = member(&data, "kdf", "the file")?;
    let params = scrypt_params(kdf)?;
    let salt = base64(kdf, "salt", "kdf")?;
    let cipher = member(&data, "cipher", "the file")?;
    let cipher_name = string(cipher, "name", "cipher")?;
    if cipher_name != "nacl/secretbox" {
        return Err(bad(format!("cosign key file: cipher \"{cipher_name}\" is not nacl/secretbox")));
    }
    let nonce = base64(cipher, "nonce", "cipher")?;
    let nonce: [u8; 24] = nonce.try_into().map_err(|_| bad("cosign key file: the secretbox nonce is not 24 bytes"))?;
    let sealed = base64(&data, "ciphertext", "the file")?;
    let mut key = Zeroizing::new([0u8; 32]);
    scrypt::scrypt(password, &salt, &params, key.as_mut_slice())
        .map_err(|e| bad(format!("cosign key file: scrypt: {e}")))?;
    let cipher = crypto_secretbox::XSalsa20Poly1305::new(&(*key).into());
    cipher
        .decrypt(&nonce.into(), sealed.as_slice())
        .map(Zeroizing::new)
        .map_err(|_| bad("cosign key file: wrong password (or a damaged file): the secretbox does not open"))
}

/// Seals `der` as cosign does (for tests: a cosign key file without cosign).
#[cfg(test)]
pub fn encrypt_for_test(der: &[u8], password: &[u8], salt: &[u8; 32], nonce: &[u8; 24], log_n: u8) -> String {
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let params = scrypt::Params::new(log_n, 8, 1, 32).unwrap();
    let mut key = [0u8; 32];
    scrypt::scrypt(password, salt, &params, &mut key).unwrap();
    let sealed = crypto_secretbox::XSalsa20Poly1305::new(&key.into()).encrypt(&(*nonce).into(), der).unwrap();
    let json = format!(
        r#"{{"kdf":{{"name":"scrypt","params":{{"N":{},"r":8,"p":1}},"salt":"{}"}},"cipher":{{"name":"nacl/secretbox","nonce":"{}"}},"ciphertext":"{}"}}"#,
        1u64 << log_n,
        b64(salt),
        b64(nonce),
        b64(&sealed)
    );
    pkcs8::der::pem::encode_string(PEM_LABELS[0], pkcs8::der::pem::LineEnding::LF, json.as_bytes()).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kdf(n: u64, r: u64, p: u64) -> Json {
        let text = format!(r#"{{"name":"scrypt","params":{{"N":{n},"r":{r},"p":{p}}}}}"#);
        parse_strict(text.as_bytes(), 8).unwrap()
    }

    #[test]
    fn scrypt_costs_are_bounded_at_what_cosign_writes_with_room() {
        // cosign's own, and the bound itself.
        assert!(scrypt_params(&kdf(1 << 15, 8, 1)).is_ok());
        assert!(scrypt_params(&kdf(1 << 18, 8, 1)).is_ok());
        // A hostile file: 1 GiB and 16 rounds of it (31 s) before "wrong password".
        let e = scrypt_params(&kdf(1 << 20, 8, 16)).unwrap_err().to_string();
        assert!(e.contains("N=1048576 r=8 p=16") && e.contains("256 MiB") && e.contains("hostile"), "{e}");
        assert!(scrypt_params(&kdf(1 << 19, 8, 1)).is_err());
        assert!(scrypt_params(&kdf(1 << 18, 8, 2)).is_err());
        assert!(scrypt_params(&kdf(1 << 18, 8, u64::MAX)).is_err());
    }

    #[test]
    fn opens_with_the_right_password_only() {
        let pem = encrypt_for_test(b"secret der", b"pw", &[7; 32], &[9; 24], 10);
        let (label, body) = pkcs8::der::pem::decode_vec(pem.as_bytes()).unwrap();
        assert_eq!(label, PEM_LABELS[0]);
        assert_eq!(decrypt(&body, b"pw").unwrap().as_slice(), b"secret der");
        let e = decrypt(&body, b"wrong").unwrap_err().to_string();
        assert!(e.contains("wrong password"), "{e}");
    }

    #[test]
    fn refuses_costs_past_the_bounds_and_other_ciphers() {
        let pem = encrypt_for_test(b"x", b"pw", &[7; 32], &[9; 24], 10);
        let (_, body) = pkcs8::der::pem::decode_vec(pem.as_bytes()).unwrap();
        let text = String::from_utf8(body).unwrap();
        let huge = text.replace(r#""N":1024"#, r#""N":4294967296"#);
        assert!(decrypt(huge.as_bytes(), b"pw").unwrap_err().to_string().contains("more than this tool spends"));
        let odd = text.replace(r#""N":1024"#, r#""N":1000"#);
        assert!(decrypt(odd.as_bytes(), b"pw").unwrap_err().to_string().contains("not a power of two"));
        let other = text.replace("nacl/secretbox", "aes-gcm");
        assert!(decrypt(other.as_bytes(), b"pw").unwrap_err().to_string().contains("not nacl/secretbox"));
        let wide = text.replace(r#""r":8"#, r#""r":9"#);
        assert!(decrypt(wide.as_bytes(), b"pw").unwrap_err().to_string().contains("1 ≤ r ≤ 8"));
        assert!(decrypt(b"{", b"pw").is_err());
        assert!(decrypt(br#"{"kdf":1}"#, b"pw").is_err());
    }
}
