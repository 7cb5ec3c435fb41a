//! What the tests of several modules share (compiled for tests only).

/// The next number of a xorshift sequence (the seeded random texts of the property tests).
pub fn xorshift(y: &mut u64) -> u64 {
    *y ^= *y << 13;
    *y ^= *y >> 7;
    *y ^= *y << 17;
    *y
}
