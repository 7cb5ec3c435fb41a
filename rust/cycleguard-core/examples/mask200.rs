//! The masking's stages on 200-byte prose with a few numbers (the detector benchmark's
//! result size), each timed alone: `cargo run --release --example mask200`. A guide for
//! work on `mask.rs`; the figures that count are `benchmarks/detector.py`'s.

use std::hint::black_box;
use std::time::Instant;
fn text(seed: u64, size: usize) -> Vec<u8> {
    let mut s = String::new();
    let mut x: u64 = seed;
    let mut words = 0;
    while s.len() < size {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let n = (x >> 33) % 25;
        if n < 2 {
            s.push_str(&format!("{}", (x >> 40) % 100000));
        } else {
            for k in 0..(2 + n % 8) {
                s.push((b'a' + ((x >> (k * 5)) % 26) as u8) as char);
            }
        }
        words += 1;
        s.push(if words % 12 == 0 { '\n' } else { ' ' });
    }
    s.truncate(size);
    s.into_bytes()
}
fn time(name: &str, texts: &[Vec<u8>], f: impl Fn(&[u8]) -> usize) {
    let mut best = u128::MAX;
    for _ in 0..7 {
        let start = Instant::now();
        let mut acc = 0;
        for _ in 0..50 {
            for t in texts {
                acc += f(black_box(t));
            }
        }
        black_box(acc);
        best = best.min(start.elapsed().as_nanos() * 1000 / (50 * texts.len() as u128));
    }
    println!("{name:14} {:6.1} ns", best as f64 / 1000.0);
}
fn main() {
    use _core::mask::*;
    let texts: Vec<Vec<u8>> = (0..1000).map(|i| text(i * 7919 + 1, 200)).collect();
    time("find_digit", &texts, |t| _core::simd::find_digit(t, 0));
    time("mask_tokens", &texts, |t| {
        mask_tokens(t).map_or(0, |v| v.len())
    });
    time("temp_names", &texts, |t| {
        mask_temp_names(t).map_or(0, |v| v.len())
    });
    time("digit pass", &texts, |t| {
        replace_pass(t, 0, _core::simd::find_digit, digit_led, b'#').map_or(0, |v| v.len())
    });
    time("mask_ascii", &texts, |t| {
        mask_ascii(t).map_or(0, |v| v.len())
    });
    let mut out = Vec::new();
    let cell = std::cell::RefCell::new(&mut out);
    time("mask_into", &texts, |t| {
        let mut o = cell.borrow_mut();
        mask_ascii_into(t, &mut o) as usize
    });
    time("xxh3", &texts, |t| xxhash_rust::xxh3::xxh3_64(t) as usize);
}
