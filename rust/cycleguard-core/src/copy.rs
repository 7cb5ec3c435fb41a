//! Appending a short byte run to a buffer in moves of fixed size. The JSON writer and the
//! hashing of arguments without their digits append many runs of a few to a hundred bytes;
//! `extend_from_slice` calls `memcpy` for each, whose dispatch on the size cost more than the
//! copy (and mispredicted with the sizes).

/// `out.extend_from_slice(run)` in moves of fixed size: whole blocks of 16 bytes, then the
/// run's last 16 (or 8, or 4) bytes written over the end of what was written, so that the
/// moves meet; a run of fewer than four bytes byte by byte.
#[inline(always)]
pub fn copy_run(out: &mut Vec<u8>, run: &[u8]) {
    match run.len() {
        16.. => copy_in_moves::<16>(out, run),
        8..=15 => copy_in_moves::<8>(out, run),
        4..=7 => copy_in_moves::<4>(out, run),
        _ => {
            for &b in run {
                out.push(b);
            }
        }
    }
}

/// [`copy_run`] in `W`-byte moves (`run.len() >= W`): blocks from the start, then the last
/// `W` bytes at `base + n - W`, over the part of the last block that reached past them.
#[inline(always)]
fn copy_in_moves<const W: usize>(out: &mut Vec<u8>, run: &[u8]) {
    let (base, n) = (out.len(), run.len());
    let block = |k: usize| -> [u8; W] { run[k..k + W].try_into().expect("W bytes") };
    let mut k = 0;
    while k + W <= n {
        out.extend_from_slice(&block(k));
        k += W;
    }
    if k < n {
        out.truncate(base + n - W);
        out.extend_from_slice(&block(n - W));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_copied_whole_after_what_was_written_for_every_length() {
        let source: Vec<u8> = (0..100u8).map(|b| b.wrapping_mul(37)).collect();
        for written in [0usize, 1, 5, 17] {
            for n in 0..=source.len() {
                let mut out: Vec<u8> = vec![b'"'; written];
                copy_run(&mut out, &source[..n]);
                let mut expected = vec![b'"'; written];
                expected.extend_from_slice(&source[..n]);
                assert_eq!(out, expected, "{written} then {n}");
            }
        }
    }
}
