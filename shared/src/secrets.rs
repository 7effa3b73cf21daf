//! Secrets the service keeps for its users and must send on, so cannot hash (their tokens for the
//! deployment's MCP servers): sealed at rest with the deployment's key, ChaCha20-Poly1305
//! (RFC 8439, RustCrypto's `chacha20poly1305`), so that no such secret is readable in the database
//! or its backups.
//!
//! - **Keys.** `QUICKACT_SECRETS_KEY` is the current key, `<id>:<32 bytes as hex or base64>`: it
//!   seals every new value. `QUICKACT_SECRETS_PREVIOUS_KEYS` (a comma-separated list in the same
//!   form) only open what they sealed, so a key is rotated without losing what it sealed
//!   (docs/mcp-tools.md, "Rotating the key").
//! - **The envelope** ([`SecretKeys::seal`]): `version (1) | id length | key id | nonce (12) |
//!   ciphertext and tag (16)`. The id names the key that opens it, so values sealed with several
//!   keys live side by side while a rotation goes on. The nonce is random: 96 bits are safe for far
//!   more values than one key will ever seal here (billions).
//! - **Bound to its place.** The caller's context (for a token: its user and server) and the
//!   envelope's header are authenticated with the ciphertext as associated data, so a value copied
//!   to another row, or relabelled with another key's id, does not open.
//!
//! Opening never panics: a value that is cut short, altered, bound elsewhere or sealed with a key
//! this process lacks is an [`OpenError`], which names the key id (never a secret) and the cause.

use std::{fmt, sync::Arc};

use base64::{
    Engine, alphabet,
    engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig},
};
use chacha20poly1305::{
    ChaCha20Poly1305, Nonce,
    aead::{Aead, KeyInit, Payload},
};
use rand::RngCore;
use secrecy::zeroize::Zeroizing;

use crate::config::error::ConfigError;

/// The variable of the current key, which seals.
pub const CURRENT_KEY_VAR: &str = "QUICKACT_SECRETS_KEY";
/// The variable of the previous keys, which only open.
pub const PREVIOUS_KEYS_VAR: &str = "QUICKACT_SECRETS_PREVIOUS_KEYS";
/// The envelope's first byte: the layout (and cipher) it was sealed with.
pub const ENVELOPE_VERSION: u8 = 1;
/// A key's length: ChaCha20-Poly1305 takes 256-bit keys.
pub const KEY_BYTES: usize = 32;
/// Longest key id (it is stored in every envelope).
pub const MAX_KEY_ID_CHARS: usize = 32;
const NONCE_BYTES: usize = 12;
const TAG_BYTES: usize = 16;
/// What a refused key variable shows instead of its value.
const HIDDEN: &str = "(hidden)";
/// Base64 keys as `openssl rand -base64 32` writes them, padded or not.
const KEY_BASE64: GeneralPurpose =
    GeneralPurpose::new(&alphabet::STANDARD, GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent));

/// Why a sealed value does not open.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    /// The value is sealed and this process has no key at all.
    #[error("it is encrypted and no key is configured here: set {CURRENT_KEY_VAR} (and {PREVIOUS_KEYS_VAR}) as on the API")]
    NoKey,
    /// The value is cut short, or its header is not one this build wrote.
    #[error("the stored value is malformed (not a sealed value of envelope version {ENVELOPE_VERSION})")]
    Malformed,
    /// Sealed with a key id that is neither the current key nor a previous one.
    #[error("it was encrypted with the key {0:?}, which is neither {CURRENT_KEY_VAR} nor in {PREVIOUS_KEYS_VAR}")]
    UnknownKey(String),
    /// The key of that id does not authenticate it: another key under the same id, an altered
    /// value, or a value that belongs to another row.
    #[error("it does not decrypt with the key {0:?}: that key's bytes are not the ones it was encrypted with, or the stored value was altered or moved from another row")]
    Rejected(String),
}

/// One key: its id, and the cipher it keys (which wipes the key when dropped).
struct NamedKey {
    id: String,
    cipher: ChaCha20Poly1305,
}

/// The deployment's keys: the current one seals, every one opens what it sealed. Cheap to clone;
/// `Debug` shows the ids only.
#[derive(Clone)]
pub struct SecretKeys {
    /// The current key first, then the previous ones.
    keys: Arc<[NamedKey]>,
}

impl fmt::Debug for SecretKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let previous: Vec<&str> = self.keys[1..].iter().map(|key| key.id.as_str()).collect();
        f.debug_struct("SecretKeys").field("current", &self.current_id()).field("previous", &previous).finish()
    }
}

impl SecretKeys {
    /// Reads `QUICKACT_SECRETS_KEY` and `QUICKACT_SECRETS_PREVIOUS_KEYS` through `get` (unset or
    /// blank: none). A refused value is never echoed.
    pub fn from_lookup(get: &impl Fn(&str) -> Option<String>) -> Result<Option<Self>, ConfigError> {
        let invalid = |name: &'static str, reason: String| ConfigError::Invalid { name, value: HIDDEN.into(), reason };
        let previous = get(PREVIOUS_KEYS_VAR);
        let Some(current) = get(CURRENT_KEY_VAR) else {
            return match previous {
                None => Ok(None),
                Some(_) => Err(invalid(PREVIOUS_KEYS_VAR, format!("previous keys only decrypt: set {CURRENT_KEY_VAR} too, the key new secrets are encrypted with"))),
            };
        };
        let mut entries = vec![parse_entry(&current).map_err(|reason| invalid(CURRENT_KEY_VAR, reason))?];
        for entry in previous.iter().flat_map(|list| list.split(',')).map(str::trim).filter(|entry| !entry.is_empty()) {
            entries.push(parse_entry(entry).map_err(|reason| invalid(PREVIOUS_KEYS_VAR, reason))?);
        }
        Self::build(entries).map(Some).map_err(|reason| invalid(PREVIOUS_KEYS_VAR, reason))
    }

    /// Keys from their ids and bytes (tests, tools): `current` seals, all open.
    pub fn new(current: (&str, [u8; KEY_BYTES]), previous: &[(&str, [u8; KEY_BYTES])]) -> Result<Self, String> {
        let entries = std::iter::once(&current).chain(previous).map(|(id, key)| (id.to_string(), Zeroizing::new(*key))).collect();
        Self::build(entries)
    }

    fn build(entries: Vec<(String, Zeroizing<[u8; KEY_BYTES]>)>) -> Result<Self, String> {
        let mut keys = Vec::with_capacity(entries.len());
        for (id, key) in entries {
            if !valid_key_id(&id) {
                return Err(format!("{id:?} is not a key id (1 to {MAX_KEY_ID_CHARS} of letters, digits, - and _)"));
            }
            if keys.iter().any(|known: &NamedKey| known.id == id) {
                return Err(format!("the key id {id:?} is given twice: each key needs an id of its own"));
            }
            let cipher = ChaCha20Poly1305::new_from_slice(&key[..]).expect("a key of KEY_BYTES bytes");
            keys.push(NamedKey { id, cipher });
        }
        Ok(SecretKeys { keys: keys.into() })
    }

    /// The id of the key that seals.
    pub fn current_id(&self) -> &str {
        &self.keys[0].id
    }

    /// The first bytes of every value the current key seals: what tells, in SQL too, a value
    /// sealed with another key.
    pub fn current_header(&self) -> Vec<u8> {
        header(self.current_id())
    }

    /// `plaintext` sealed with the current key, bound to `context` (e.g. the row it is stored in).
    pub fn seal(&self, plaintext: &[u8], context: &[u8]) -> Vec<u8> {
        let key = &self.keys[0];
        let mut nonce = [0u8; NONCE_BYTES];
        rand::rng().fill_bytes(&mut nonce);
        let mut sealed = header(&key.id);
        let aad = [sealed.as_slice(), context].concat();
        let ciphertext = key
            .cipher
            .encrypt(&Nonce::from(nonce), Payload { msg: plaintext, aad: &aad })
            .expect("ChaCha20-Poly1305 encrypts anything under 256 GiB");
        sealed.extend_from_slice(&nonce);
        sealed.extend_from_slice(&ciphertext);
        sealed
    }

    /// The plaintext of `sealed`, if one of the keys sealed it for `context`.
    pub fn open(&self, sealed: &[u8], context: &[u8]) -> Result<Zeroizing<Vec<u8>>, OpenError> {
        let parts = Envelope::parse(sealed)?;
        let key = self.keys.iter().find(|key| key.id == parts.key_id).ok_or_else(|| OpenError::UnknownKey(parts.key_id.to_owned()))?;
        let aad = [parts.header, context].concat();
        key.cipher
            .decrypt(&Nonce::from(parts.nonce), Payload { msg: parts.ciphertext, aad: &aad })
            .map(Zeroizing::new)
            .map_err(|_| OpenError::Rejected(parts.key_id.to_owned()))
    }

    /// Whether `sealed` was sealed with the current key (if not, sealing it again is a rotation's
    /// step).
    pub fn is_current(&self, sealed: &[u8]) -> bool {
        key_id(sealed).is_ok_and(|id| id == self.current_id())
    }
}

/// The id of the key that sealed `sealed` (ids are not secret).
pub fn key_id(sealed: &[u8]) -> Result<&str, OpenError> {
    Envelope::parse(sealed).map(|parts| parts.key_id)
}

/// A sealed value's parts.
struct Envelope<'a> {
    /// Version, id length and id: authenticated with the ciphertext.
    header: &'a [u8],
    key_id: &'a str,
    nonce: [u8; NONCE_BYTES],
    /// The ciphertext followed by its tag.
    ciphertext: &'a [u8],
}

impl<'a> Envelope<'a> {
    fn parse(sealed: &'a [u8]) -> Result<Self, OpenError> {
        let [version, id_len, rest @ ..] = sealed else { return Err(OpenError::Malformed) };
        let id_len = usize::from(*id_len);
        if *version != ENVELOPE_VERSION || rest.len() < id_len + NONCE_BYTES + TAG_BYTES {
            return Err(OpenError::Malformed);
        }
        let (id, rest) = rest.split_at(id_len);
        let key_id = std::str::from_utf8(id).ok().filter(|id| valid_key_id(id)).ok_or(OpenError::Malformed)?;
        let (nonce, ciphertext) = rest.split_at(NONCE_BYTES);
        let nonce = nonce.try_into().map_err(|_| OpenError::Malformed)?;
        Ok(Envelope { header: &sealed[..2 + id_len], key_id, nonce, ciphertext })
    }
}

/// The header of a value sealed with the key `id`.
fn header(id: &str) -> Vec<u8> {
    let id_len = u8::try_from(id.len()).expect("key ids are short");
    [&[ENVELOPE_VERSION, id_len][..], id.as_bytes()].concat()
}

fn valid_key_id(id: &str) -> bool {
    (1..=MAX_KEY_ID_CHARS).contains(&id.len()) && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// `<id>:<key>`, the key as 64 hex digits or as base64 (`openssl rand -hex 32`, `-base64 32`).
fn parse_entry(entry: &str) -> Result<(String, Zeroizing<[u8; KEY_BYTES]>), String> {
    let Some((id, key)) = entry.trim().split_once(':') else {
        return Err("expected <id>:<key>, e.g. k1:$(openssl rand -hex 32)".into());
    };
    let key = decode_key(key.trim()).ok_or_else(|| format!("the key of {:?} is not {KEY_BYTES} bytes as hex (64 digits) or base64", id.trim()))?;
    Ok((id.trim().to_owned(), key))
}

fn decode_key(text: &str) -> Option<Zeroizing<[u8; KEY_BYTES]>> {
    let mut key = Zeroizing::new([0u8; KEY_BYTES]);
    if text.len() == 2 * KEY_BYTES && text.bytes().all(|b| b.is_ascii_hexdigit()) {
        let digit = |b: u8| (b as char).to_digit(16).expect("a hex digit") as u8;
        for (byte, pair) in key.iter_mut().zip(text.as_bytes().chunks(2)) {
            *byte = (digit(pair[0]) << 4) | digit(pair[1]);
        }
        return Some(key);
    }
    let bytes = Zeroizing::new(KEY_BASE64.decode(text).ok()?);
    (bytes.len() == KEY_BYTES).then(|| {
        key.copy_from_slice(&bytes);
        key
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY_1: [u8; KEY_BYTES] = [1; KEY_BYTES];
    const KEY_2: [u8; KEY_BYTES] = [2; KEY_BYTES];
    const TOKEN: &[u8] = b"Bearer alice-very-secret-token";

    fn keys(current: (&str, [u8; KEY_BYTES]), previous: &[(&str, [u8; KEY_BYTES])]) -> SecretKeys {
        SecretKeys::new(current, previous).unwrap()
    }

    fn contains(haystack: &[u8], needle: &[u8]) -> bool {
        haystack.windows(needle.len()).any(|window| window == needle)
    }

    #[test]
    fn a_sealed_value_opens_to_its_plaintext_and_shows_none_of_it() {
        let keys = keys(("k1", KEY_1), &[]);
        let sealed = keys.seal(TOKEN, b"row 1");
        assert_eq!(&keys.open(&sealed, b"row 1").unwrap()[..], TOKEN);
        assert!(!contains(&sealed, TOKEN) && !contains(&sealed, b"secret"), "{sealed:?}");
        assert_eq!(key_id(&sealed), Ok("k1"));
        assert!(sealed.starts_with(&keys.current_header()) && keys.is_current(&sealed));
        // A fresh nonce each time: the same token never seals to the same bytes.
        assert_ne!(keys.seal(TOKEN, b"row 1"), sealed);
        assert_eq!(sealed.len(), 2 + 2 + NONCE_BYTES + TOKEN.len() + TAG_BYTES);
    }

    #[test]
    fn a_value_sealed_with_a_key_not_configured_names_that_key() {
        let sealed = keys(("old", KEY_1), &[]).seal(TOKEN, b"row");
        assert_eq!(keys(("new", KEY_2), &[]).open(&sealed, b"row").unwrap_err(), OpenError::UnknownKey("old".into()));
    }

    #[test]
    fn another_key_under_the_same_id_is_rejected() {
        let sealed = keys(("k1", KEY_1), &[]).seal(TOKEN, b"row");
        let err = keys(("k1", KEY_2), &[]).open(&sealed, b"row").unwrap_err();
        assert_eq!(err, OpenError::Rejected("k1".into()));
        assert!(err.to_string().contains("does not decrypt with the key \"k1\""), "{err}");
    }

    #[test]
    fn a_value_bound_to_another_context_does_not_open() {
        let keys = keys(("k1", KEY_1), &[]);
        let sealed = keys.seal(TOKEN, b"alice/rooms");
        assert_eq!(keys.open(&sealed, b"bob/rooms").unwrap_err(), OpenError::Rejected("k1".into()));
        assert_eq!(keys.open(&sealed, b"").unwrap_err(), OpenError::Rejected("k1".into()));
    }

    #[test]
    fn every_altered_or_shortened_value_is_an_error_not_a_panic() {
        let keys = keys(("k1", KEY_1), &[("k2", KEY_2)]);
        let sealed = keys.seal(TOKEN, b"row");
        for at in 0..sealed.len() {
            for flip in [0x01, 0x80] {
                let mut altered = sealed.clone();
                altered[at] ^= flip;
                assert!(keys.open(&altered, b"row").is_err(), "byte {at} ^ {flip:#x} went unnoticed");
            }
        }
        for len in 0..sealed.len() {
            assert!(keys.open(&sealed[..len], b"row").is_err(), "cut to {len} bytes");
        }
        let mut longer = sealed.clone();
        longer.push(0);
        assert!(keys.open(&longer, b"row").is_err());
        // Relabelled with the other key's id (same length): refused, as the header is authenticated.
        let mut relabelled = sealed.clone();
        relabelled[3] = b'2';
        assert_eq!(keys.open(&relabelled, b"row").unwrap_err(), OpenError::Rejected("k2".into()));
        assert_eq!(keys.open(&[], b"row").unwrap_err(), OpenError::Malformed);
        assert_eq!(keys.open(&[9, 2, b'k', b'1'], b"row").unwrap_err(), OpenError::Malformed);
    }

    #[test]
    fn a_rotation_opens_old_values_with_the_previous_key_and_seals_with_the_new() {
        let before = keys(("k1", KEY_1), &[]);
        let sealed = before.seal(TOKEN, b"row");
        let after = keys(("k2", KEY_2), &[("k1", KEY_1)]);
        assert!(!after.is_current(&sealed));
        let plaintext = after.open(&sealed, b"row").unwrap();
        let resealed = after.seal(&plaintext, b"row");
        assert!(after.is_current(&resealed) && key_id(&resealed) == Ok("k2"));
        // Once every value is sealed again, the old key can go.
        let finally = keys(("k2", KEY_2), &[]);
        assert_eq!(&finally.open(&resealed, b"row").unwrap()[..], TOKEN);
        assert_eq!(finally.open(&sealed, b"row").unwrap_err(), OpenError::UnknownKey("k1".into()));
    }

    fn from(vars: &[(&str, &str)]) -> Result<Option<SecretKeys>, ConfigError> {
        SecretKeys::from_lookup(&|name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string()))
    }

    #[test]
    fn keys_are_read_as_hex_or_base64_with_ids() {
        assert!(from(&[]).unwrap().is_none());
        let hex = "0101010101010101010101010101010101010101010101010101010101010101";
        let base64 = KEY_BASE64.encode(KEY_2);
        let current = format!("k2:{base64}");
        let previous = format!("k1:{hex}, k0:{}", base64.trim_end_matches('='));
        let keys = from(&[(CURRENT_KEY_VAR, current.as_str()), (PREVIOUS_KEYS_VAR, previous.as_str())]).unwrap().unwrap();
        assert_eq!(format!("{keys:?}"), r#"SecretKeys { current: "k2", previous: ["k1", "k0"] }"#);
        let sealed = SecretKeys::new(("k1", KEY_1), &[]).unwrap().seal(TOKEN, b"row");
        assert_eq!(&keys.open(&sealed, b"row").unwrap()[..], TOKEN, "the hex key is KEY_1");
        assert_eq!(&keys.open(&SecretKeys::new(("k2", KEY_2), &[]).unwrap().seal(TOKEN, b""), b"").unwrap()[..], TOKEN);
    }

    #[test]
    fn bad_keys_are_refused_without_echoing_them() {
        let hex = "ab".repeat(KEY_BYTES);
        for (vars, says) in [
            (vec![(CURRENT_KEY_VAR, hex.clone())], "expected <id>:<key>"),
            (vec![(CURRENT_KEY_VAR, format!("k1:{}", &hex[2..]))], "not 32 bytes"),
            (vec![(CURRENT_KEY_VAR, format!("k 1:{hex}"))], "not a key id"),
            (vec![(CURRENT_KEY_VAR, format!("k1:{hex}")), (PREVIOUS_KEYS_VAR, format!("k1:{hex}"))], "given twice"),
            (vec![(PREVIOUS_KEYS_VAR, format!("k1:{hex}"))], "set QUICKACT_SECRETS_KEY too"),
        ] {
            let vars: Vec<(&str, &str)> = vars.iter().map(|(n, v)| (*n, v.as_str())).collect();
            let err = from(&vars).unwrap_err().to_string();
            assert!(err.contains(says) && !err.contains(&hex[4..]), "{says}: {err}");
        }
    }
}
