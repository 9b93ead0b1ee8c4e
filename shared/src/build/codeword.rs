//! The balanced codeword assigned to one protected copy.
//!
//! seed = HMAC-SHA256(key, "semtrace-codeword-v1\0" ‖ lowercase hex SHA-256 of the document,
//! as ASCII); the 32 seed bytes become a xoshiro256** state ([`super::rng::Xoshiro256`]) which
//! Fisher–Yates-shuffles K/2 zeros followed by K/2 ones. A keyed hash means copies cannot be
//! predicted without the venue's secret, yet the venue can regenerate any copy's code; the
//! shuffle of a fixed multiset makes every codeword exactly balanced.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::rng::Xoshiro256;
use crate::error::{Error, Result};

/// Domain-separation prefix of the HMAC message.
pub const CODEWORD_DOMAIN: &[u8] = b"semtrace-codeword-v1\0";

/// HMAC-SHA256(key, message).
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC accepts keys of any length");
    mac.update(message);
    mac.finalize().into_bytes().into()
}

/// Balanced 0/1 codeword of length `k` (even, ≥ 2) for the document with SHA-256 hex digest
/// `doc_sha256` (64 hex digits, any case) under `key` (non-empty).
pub fn balanced_codeword(k: usize, key: &[u8], doc_sha256: &str) -> Result<Vec<u8>> {
    if k < 2 || k % 2 != 0 {
        return Err(Error::bundle(format!(
            "codeword length must be even and at least 2, got {k}"
        )));
    }
    if key.is_empty() {
        return Err(Error::bundle("codeword key must not be empty"));
    }
    if doc_sha256.len() != 64 || !doc_sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::bundle(
            "document SHA-256 must be 64 hexadecimal digits",
        ));
    }
    let mut message = CODEWORD_DOMAIN.to_vec();
    message.extend_from_slice(doc_sha256.to_ascii_lowercase().as_bytes());
    let mut rng = Xoshiro256::from_seed_bytes(hmac_sha256(key, &message));
    let mut word: Vec<u8> = (0..k).map(|j| u8::from(j >= k / 2)).collect();
    rng.shuffle(&mut word);
    Ok(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

    #[test]
    fn hmac_rfc4231_case_2() {
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(
            hex::encode(mac),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn balanced_and_deterministic() {
        for k in (2..=40).step_by(2) {
            let w = balanced_codeword(k, b"venue-secret", DOC).unwrap();
            assert_eq!(w.len(), k);
            assert_eq!(w.iter().filter(|&&b| b == 1).count(), k / 2);
            assert!(w.iter().all(|&b| b <= 1));
            assert_eq!(w, balanced_codeword(k, b"venue-secret", DOC).unwrap());
        }
        assert_eq!(
            balanced_codeword(12, b"k", DOC).unwrap(),
            balanced_codeword(12, b"k", &DOC.to_uppercase()).unwrap()
        );
    }

    #[test]
    fn depends_on_key_and_document() {
        let base = balanced_codeword(32, b"venue-secret", DOC).unwrap();
        assert_ne!(base, balanced_codeword(32, b"venue-secret2", DOC).unwrap());
        let other = "0".repeat(64);
        assert_ne!(
            base,
            balanced_codeword(32, b"venue-secret", &other).unwrap()
        );
    }

    #[test]
    fn rejects_bad_arguments() {
        assert!(balanced_codeword(0, b"k", DOC).is_err());
        assert!(balanced_codeword(7, b"k", DOC).is_err());
        assert!(balanced_codeword(12, b"", DOC).is_err());
        assert!(balanced_codeword(12, b"k", "abc").is_err());
    }

    #[test]
    fn known_answer_vector() {
        let w = balanced_codeword(12, b"semtrace-test-key", DOC).unwrap();
        let s: String = w.iter().map(|b| char::from(b'0' + b)).collect();
        assert_eq!(s, "101100110100");
    }
}
