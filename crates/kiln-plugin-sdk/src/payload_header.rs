//! The header every kiln plugin payload starts with (DESIGN.md §4: marker, format major/minor,
//! kind, header size, a digest of the body), written and checked in one place.
//!
//! Layout, 48 bytes, little-endian:
//!
//! | offset | size | field                                              |
//! |--------|------|----------------------------------------------------|
//! | 0      | 4    | marker, chosen by the plugin (e.g. `KCPU`)         |
//! | 4      | 2    | format major                                       |
//! | 6      | 2    | format minor                                       |
//! | 8      | 2    | kind                                               |
//! | 10     | 2    | header size (48)                                   |
//! | 12     | 4    | reserved, 0                                        |
//! | 16     | 32   | SHA-256 of the body (everything after the header)  |
//!
//! A reader accepts its own major and any minor up to its own (a minor only adds optional
//! fields). Damaged bytes are `INVALID_VALUE` ("<owner> payload damaged: ..."); a valid header this
//! reader cannot use (another major, a newer minor, another kind) is `NOT_APPLICABLE`, naming both
//! sides.

use crate::{PluginError, PluginResult};
use sha2::{Digest, Sha256};

/// Size of the header in bytes; the body starts here.
pub const PAYLOAD_HEADER_SIZE: usize = 48;

/// One plugin's payload format: who owns it and the header values it writes and accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PayloadFormat {
    /// Named in messages, e.g. "kiln-cpu".
    pub owner: &'static str,
    pub marker: [u8; 4],
    pub major: u16,
    pub minor: u16,
    pub kind: u16,
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

impl PayloadFormat {
    /// The header for `body` followed by `body`.
    pub fn wrap(&self, body: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(PAYLOAD_HEADER_SIZE + body.len());
        out.extend_from_slice(&self.marker);
        out.extend_from_slice(&self.major.to_le_bytes());
        out.extend_from_slice(&self.minor.to_le_bytes());
        out.extend_from_slice(&self.kind.to_le_bytes());
        out.extend_from_slice(&(PAYLOAD_HEADER_SIZE as u16).to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&Sha256::digest(body));
        out.extend_from_slice(body);
        out
    }

    /// `INVALID_VALUE` "<owner> payload damaged: <what>".
    pub fn damaged(&self, what: impl std::fmt::Display) -> PluginError {
        PluginError::invalid_value(format!("{} payload damaged: {what}", self.owner))
    }

    /// Checks the header of `bytes`, in order: length, marker, format version, kind, header size,
    /// SHA-256 of the body; returns the body (a subslice, no copy).
    pub fn unwrap<'a>(&self, bytes: &'a [u8]) -> PluginResult<&'a [u8]> {
        if bytes.len() < PAYLOAD_HEADER_SIZE {
            return Err(self.damaged(format!(
                "{} bytes, shorter than the {PAYLOAD_HEADER_SIZE}-byte header",
                bytes.len()
            )));
        }
        if bytes[0..4] != self.marker {
            return Err(self.damaged(format!(
                "marker {:02x?} is not {}",
                &bytes[0..4],
                String::from_utf8_lossy(&self.marker)
            )));
        }
        let (major, minor, kind) = (u16_at(bytes, 4), u16_at(bytes, 6), u16_at(bytes, 8));
        if major != self.major || minor > self.minor {
            return Err(PluginError::not_applicable(format!(
                "{} payload format {major}.{minor} cannot be read by this plugin, which reads \
                 {}.0 to {}.{}",
                self.owner, self.major, self.major, self.minor
            )));
        }
        if kind != self.kind {
            return Err(PluginError::not_applicable(format!(
                "{} payload kind {kind} is not the kind this plugin reads (kind {})",
                self.owner, self.kind
            )));
        }
        let header = u16_at(bytes, 10) as usize;
        if header != PAYLOAD_HEADER_SIZE {
            return Err(self.damaged(format!(
                "header size {header}, expected {PAYLOAD_HEADER_SIZE}"
            )));
        }
        let body = &bytes[PAYLOAD_HEADER_SIZE..];
        if Sha256::digest(body).as_slice() != &bytes[16..PAYLOAD_HEADER_SIZE] {
            return Err(self.damaged("the SHA-256 digest of the body does not match"));
        }
        Ok(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_plugin_abi::KilnPluginStatus as S;

    const F: PayloadFormat = PayloadFormat {
        owner: "test",
        marker: *b"KTST",
        major: 2,
        minor: 1,
        kind: 1,
    };

    #[test]
    fn wrap_then_unwrap_gives_the_body_back() {
        let p = F.wrap(b"hello");
        assert_eq!(p.len(), PAYLOAD_HEADER_SIZE + 5);
        assert_eq!(F.unwrap(&p).unwrap(), b"hello");
        // An older minor is read; a newer one is not.
        let older = PayloadFormat { minor: 0, ..F }.wrap(b"x");
        assert!(F.unwrap(&older).is_ok());
        let newer = PayloadFormat { minor: 2, ..F }.wrap(b"x");
        assert_eq!(F.unwrap(&newer).unwrap_err().status, S::NOT_APPLICABLE);
    }

    #[test]
    fn each_check_refuses_with_its_status() {
        let good = F.wrap(b"body bytes");
        let status = |b: &[u8]| F.unwrap(b).unwrap_err();
        assert_eq!(status(&good[..10]).status, S::INVALID_VALUE);
        let mut b = good.clone();
        b[0] = b'X';
        assert!(status(&b).message.contains("marker"));
        let mut b = good.clone();
        b[4] = 3;
        let e = status(&b);
        assert_eq!(e.status, S::NOT_APPLICABLE);
        assert!(
            e.message.contains("3.1") && e.message.contains("2.0 to 2.1"),
            "{}",
            e.message
        );
        let mut b = good.clone();
        b[8] = 9;
        assert!(status(&b).message.contains("kind 9"));
        let mut b = good.clone();
        b[10] = 40;
        assert!(status(&b).message.contains("header size"));
        let mut b = good.clone();
        *b.last_mut().unwrap() ^= 1;
        let e = status(&b);
        assert_eq!(e.status, S::INVALID_VALUE);
        assert!(e.message.contains("test payload damaged") && e.message.contains("digest"));
    }
}
