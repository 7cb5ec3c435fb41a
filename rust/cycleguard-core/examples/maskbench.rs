use std::time::Instant;
fn main() {
    let mut s = String::new();
    let mut x: u64 = 12345;
    while s.len() < 8000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let n = (x >> 33) % 10;
        if n == 0 {
            s.push_str(&format!("{} ", (x >> 40) % 100000));
        } else {
            for k in 0..(2 + n % 7) {
                s.push((b'a' + ((x >> (k * 5)) % 26) as u8) as char);
            }
            s.push(' ');
        }
    }
    let t = s.as_bytes();
    let start = Instant::now();
    let mut acc = 0usize;
    for _ in 0..2000 {
        acc += _core::mask::mask_ascii(t).map_or(0, |v| v.len());
    }
    println!(
        "{} ns per 8000-byte mask ({acc})",
        start.elapsed().as_nanos() / 2000
    );
    parts(t);
}
#[allow(dead_code)]
fn parts(t: &[u8]) {
    use _core::mask::*;
    let start = Instant::now();
    for _ in 0..2000 {
        std::hint::black_box(replace_pass(t, 0, find_letter_lead, letter_led, 0x80));
    }
    println!("letter pass {} ns", start.elapsed().as_nanos() / 2000);
    let start = Instant::now();
    for _ in 0..2000 {
        std::hint::black_box(replace_pass(t, 0, _core::simd::find_digit, digit_led, b'#'));
    }
    println!("digit pass {} ns", start.elapsed().as_nanos() / 2000);
}
