//! Engine IDs: the 64-bit FNV-1a hash of an engine's unique name.

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// The engine ID of the engine called `name`: FNV-1a 64 over the name's UTF-8 bytes.
pub const fn engine_id(name: &str) -> u64 {
    let bytes = name.as_bytes();
    let mut hash = FNV_OFFSET;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(FNV_PRIME);
        i += 1;
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_published_fnv1a_vectors() {
        assert_eq!(engine_id(""), 0xcbf29ce484222325);
        assert_eq!(engine_id("a"), 0xaf63dc4c8601ec8c);
        assert_eq!(engine_id("foobar"), 0x85944171f73967e8);
    }
}
