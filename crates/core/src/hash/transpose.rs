//! A tile of a gathered view transposed in memory: runs of a source
//! written as columns of the output, in register blocks and cache lines.
//! Pure: buffers in, buffers out, `None` for a buffer too short (a bug).
//!
//! On x86_64, a block of two- or four-byte elements is 16 bytes of each of
//! `16 / E` runs (`E` bytes an element) in SSE2 registers, transposed by
//! unpack instructions through `safe_arch`'s safe wrappers (SSE2 is part
//! of every x86_64; docs/adr/0053-simd-transpose.md). Elsewhere, and for
//! one- and eight-byte elements, a block is 8 or 16 bytes of each of
//! `8 / E` runs held as one or two `u64` words each and transposed in
//! those registers with shifts and masks (SWAR). Either way a block is
//! written as 8 or 16 bytes of each of its rows. Indices are checked once
//! per block row, outside the inner loop; the inner loop only loads,
//! shuffles and stores (docs/BENCHMARKS.md, "Views, session 13" and
//! "session 14").

/// The most runs transposed at a time: a group is 128 bytes of each row
/// (two cache lines written whole; 20 % less CPU than one for BF16 views
/// of 2048-wide tensors, docs/BENCHMARKS.md), and at least 8 runs.
pub(super) const GROUP: usize = 128;

/// The runs of a group for `elem`-byte elements: 128 bytes' worth, at
/// least 8 (a whole number of blocks for every size with a block kernel).
pub(super) fn group_runs(elem: usize) -> usize {
    GROUP.checked_div(elem).unwrap_or(0).clamp(8, GROUP)
}

/// Writes `src` (runs `q0 ..` of a tile, each `b` elements of `elem`
/// bytes) transposed into `to`, which holds `b` rows of `runs` elements:
/// `to[i][q0 + k] = src[k][i]`. `None` if a buffer is shorter than that
/// (a bug). Elements of 1, 2, 4 and 8 bytes go through register blocks,
/// any other size element by element.
pub(super) fn transpose(src: &[&[u8]], to: &mut [u8], b: usize, runs: usize, q0: usize, elem: usize) -> Option<()> {
    match elem {
        1 => blocks::<8, 8, 8, 8>(src, to, b, runs, q0, 1, |m| block1(m).map(u64::to_le_bytes)),
        #[cfg(target_arch = "x86_64")]
        2 => blocks::<16, 8, 8, 16>(src, to, b, runs, q0, 2, sse2::block2),
        #[cfg(not(target_arch = "x86_64"))]
        2 => blocks::<8, 4, 4, 8>(src, to, b, runs, q0, 2, |m| block2(m).map(u64::to_le_bytes)),
        #[cfg(target_arch = "x86_64")]
        4 => blocks::<16, 4, 4, 16>(src, to, b, runs, q0, 4, sse2::block4),
        #[cfg(not(target_arch = "x86_64"))]
        4 => blocks::<16, 2, 4, 8>(src, to, b, runs, q0, 4, |m| block4(m).map(u64::to_le_bytes)),
        8 => blocks::<16, 1, 2, 8>(src, to, b, runs, q0, 8, |m| block8(m).map(u64::to_le_bytes)),
        _ => by_element(src, to, b, runs, q0, elem, 0, 0),
    }
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    //! 8 × 8 two-byte and 4 × 4 four-byte blocks through SSE2 unpacks
    //! (baseline on x86_64), by `safe_arch`'s safe wrappers: each stage
    //! interleaves pairs of registers by twice the width of the one
    //! before (2, 4, then 8 bytes), three stages for 8 × 8, two for 4 × 4.
    use safe_arch::{
        load_unaligned_m128i as load, m128i, unpack_high_i16_m128i as hi16, unpack_high_i32_m128i as hi32,
        unpack_high_i64_m128i as hi64, unpack_low_i16_m128i as lo16, unpack_low_i32_m128i as lo32,
        unpack_low_i64_m128i as lo64,
    };

    #[inline(always)]
    fn out(v: m128i) -> [u8; 16] {
        v.into()
    }

    /// 16 bytes of 8 runs → 16 bytes of 8 rows (two-byte elements).
    #[inline(always)]
    pub(super) fn block2(m: [[u8; 16]; 8]) -> [[u8; 16]; 8] {
        let [r0, r1, r2, r3, r4, r5, r6, r7] = m.map(|r| load(&r));
        let (t0, t1, t2, t3) = (lo16(r0, r1), hi16(r0, r1), lo16(r2, r3), hi16(r2, r3));
        let (t4, t5, t6, t7) = (lo16(r4, r5), hi16(r4, r5), lo16(r6, r7), hi16(r6, r7));
        let (u0, u1, u2, u3) = (lo32(t0, t2), hi32(t0, t2), lo32(t1, t3), hi32(t1, t3));
        let (u4, u5, u6, u7) = (lo32(t4, t6), hi32(t4, t6), lo32(t5, t7), hi32(t5, t7));
        [
            out(lo64(u0, u4)),
            out(hi64(u0, u4)),
            out(lo64(u1, u5)),
            out(hi64(u1, u5)),
            out(lo64(u2, u6)),
            out(hi64(u2, u6)),
            out(lo64(u3, u7)),
            out(hi64(u3, u7)),
        ]
    }

    /// 16 bytes of 4 runs → 16 bytes of 4 rows (four-byte elements).
    #[inline(always)]
    pub(super) fn block4(m: [[u8; 16]; 4]) -> [[u8; 16]; 4] {
        let [r0, r1, r2, r3] = m.map(|r| load(&r));
        let (t0, t1, t2, t3) = (lo32(r0, r1), hi32(r0, r1), lo32(r2, r3), hi32(r2, r3));
        [out(lo64(t0, t2)), out(hi64(t0, t2)), out(lo64(t1, t3)), out(hi64(t1, t3))]
    }
}
/// The two little-endian words of 16 bytes (the first element of a run
/// in the low bits of the first word, on any host).
#[inline(always)]
fn words(m: &[u8; 16]) -> [u64; 2] {
    let v = u128::from_le_bytes(*m);
    // Truncations on purpose: the low word, then the high one.
    [v as u64, v.wrapping_shr(64) as u64]
}

/// Swaps the `s`-bit fields of `a` selected by `m` shifted up with the
/// fields of `b` selected by `m`: one step of a transpose of fields.
#[inline(always)]
fn swap(a: u64, b: u64, s: u32, m: u64) -> (u64, u64) {
    let t = (a.wrapping_shr(s) ^ b) & m;
    (a ^ t.wrapping_shl(s), b ^ t)
}

/// The low halves of `a` and `b` as one word, and their high halves.
#[inline(always)]
fn join(a: u64, b: u64) -> (u64, u64) {
    const LOW: u64 = 0x0000_0000_FFFF_FFFF;
    ((a & LOW) | b.wrapping_shl(32), a.wrapping_shr(32) | (b & !LOW))
}

const BYTES: u64 = 0x00FF_00FF_00FF_00FF;
const PAIRS: u64 = 0x0000_FFFF_0000_FFFF;

/// 8 × 8 bytes transposed: `x[k]` is 8 bytes of run `k`; the result's
/// word `j` is byte `j` of each run.
#[inline(always)]
fn bytes8(x: [u64; 8]) -> [u64; 8] {
    let [x0, x1, x2, x3, x4, x5, x6, x7] = x;
    let (x0, x1) = swap(x0, x1, 8, BYTES);
    let (x2, x3) = swap(x2, x3, 8, BYTES);
    let (x4, x5) = swap(x4, x5, 8, BYTES);
    let (x6, x7) = swap(x6, x7, 8, BYTES);
    let (x0, x2) = swap(x0, x2, 16, PAIRS);
    let (x1, x3) = swap(x1, x3, 16, PAIRS);
    let (x4, x6) = swap(x4, x6, 16, PAIRS);
    let (x5, x7) = swap(x5, x7, 16, PAIRS);
    let (r0, r4) = join(x0, x4);
    let (r1, r5) = join(x1, x5);
    let (r2, r6) = join(x2, x6);
    let (r3, r7) = join(x3, x7);
    [r0, r1, r2, r3, r4, r5, r6, r7]
}

/// 4 × 4 two-byte elements transposed: `a` to `d` are 4 elements of runs 0 to 3;
/// the result's word `j` is element `j` of each run.
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn pairs4(a: u64, b: u64, c: u64, d: u64) -> [u64; 4] {
    let (a, b) = swap(a, b, 16, PAIRS);
    let (c, d) = swap(c, d, 16, PAIRS);
    let (r0, r2) = join(a, c);
    let (r1, r3) = join(b, d);
    [r0, r1, r2, r3]
}

/// A block of 1-byte elements: 8 bytes of 8 runs → 8 bytes of 8 rows.
#[inline(always)]
fn block1(m: [[u8; 8]; 8]) -> [u64; 8] {
    bytes8(m.map(u64::from_le_bytes))
}

/// A block of 2-byte elements: 8 bytes of 4 runs → 8 bytes of 4 rows
/// (fewer rows live than with 16 bytes a run: no spills, measured faster).
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn block2(m: [[u8; 8]; 4]) -> [u64; 4] {
    let [a, b, c, d] = m.map(u64::from_le_bytes);
    pairs4(a, b, c, d)
}

/// A block of 4-byte elements: 16 bytes of 2 runs → 8 bytes of 4 rows.
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn block4(m: [[u8; 16]; 2]) -> [u64; 4] {
    let [a, b] = m.map(|r| words(&r));
    let (r0, r1) = join(a[0], b[0]);
    let (r2, r3) = join(a[1], b[1]);
    [r0, r1, r2, r3]
}

/// A block of 8-byte elements: 16 bytes of 1 run → 8 bytes of 2 rows.
#[inline(always)]
fn block8(m: [[u8; 16]; 1]) -> [u64; 2] {
    let [a] = m;
    words(&a)
}

/// The transpose in blocks of `R` runs by `W` rows (`R × elem` = 8 bytes
/// of a row, `W × elem` = `N` bytes of a run) through `kernel`, then
/// element by element the runs after the last whole block (every row) and
/// every run of the rows after the last whole block.
#[inline(always)]
fn blocks<const N: usize, const R: usize, const W: usize, const M: usize>(
    src: &[&[u8]],
    to: &mut [u8],
    b: usize,
    runs: usize,
    q0: usize,
    elem: usize,
    kernel: impl Fn([[u8; N]; R]) -> [[u8; M]; W],
) -> Option<()> {
    let pitch = runs.checked_mul(elem)?;
    let whole_rows = b.checked_div(W)?.checked_mul(W)?;
    let whole_runs = src.len().checked_div(R)?.checked_mul(R)?;
    let width = whole_runs.checked_mul(elem)?;
    let col = q0.checked_mul(elem)?;
    if width > 0 {
        for i0 in (0..whole_rows).step_by(W) {
            // The block row's W output rows (their `width` bytes from
            // column q0) and where its elements start in each run:
            // checked here, once; the loop below only moves bytes.
            let from = i0.checked_mul(elem)?;
            let start = i0.checked_mul(pitch)?.checked_add(col)?;
            let mut lines = to.get_mut(start..)?.chunks_mut(pitch.max(1));
            let mut rows: [&mut [u8]; W] = core::array::from_fn(|_| <&mut [u8]>::default());
            for r in &mut rows {
                *r = lines.next()?.get_mut(..width)?;
            }
            let mut outs = rows.map(|r| r.chunks_exact_mut(M));
            for group in src.chunks_exact(R) {
                let mut m = [[0u8; N]; R];
                for (x, s) in m.iter_mut().zip(group) {
                    *x = *s.get(from..)?.first_chunk()?;
                }
                for (o, v) in outs.iter_mut().zip(kernel(m)) {
                    o.next()?.copy_from_slice(&v);
                }
            }
        }
    }
    by_element(src, to, b, runs, q0, elem, whole_rows, whole_runs)
}

/// Element by element: every run from `whole_runs` on in the first
/// `whole_rows` rows (the blocks wrote the rest of them), and every run
/// of the rows after them.
#[allow(clippy::too_many_arguments)]
fn by_element(
    src: &[&[u8]],
    to: &mut [u8],
    b: usize,
    runs: usize,
    q0: usize,
    elem: usize,
    whole_rows: usize,
    whole_runs: usize,
) -> Option<()> {
    let pitch = runs.checked_mul(elem)?;
    let rest = src.get(whole_runs..)?;
    for i in 0..b {
        let (runs_from, part) = if i < whole_rows { (whole_runs, rest) } else { (0, src) };
        let at = i.checked_mul(pitch)?.checked_add(q0.checked_add(runs_from)?.checked_mul(elem)?)?;
        let out = to.get_mut(at..at.checked_add(part.len().checked_mul(elem)?)?)?;
        let from = i.checked_mul(elem)?;
        let end = from.checked_add(elem)?;
        for (s, o) in part.iter().zip(out.chunks_exact_mut(elem.max(1))) {
            o.copy_from_slice(s.get(from..end)?);
        }
    }
    Some(())
}

#[cfg(test)]
// Tests index their own fixtures, never file bytes.
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
mod tests {
    use super::*;

    /// `to[i][q0 + k] = src[k][i]`, one element at a time: the reference.
    fn naive(src: &[&[u8]], to: &mut [u8], b: usize, runs: usize, q0: usize, elem: usize) {
        for (k, s) in src.iter().enumerate() {
            for i in 0..b {
                let d = (i * runs + q0 + k) * elem;
                to[d..d + elem].copy_from_slice(&s[i * elem..(i + 1) * elem]);
            }
        }
    }

    /// Bytes that differ from element to element and byte to byte.
    fn noise(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    #[test]
    fn tiles_are_transposed_group_by_group_as_element_by_element() {
        // Every element size, tiles of rows not a multiple of the block,
        // groups of fewer runs than a group or a block, at every column.
        for elem in [1usize, 2, 3, 4, 8, 16] {
            for b in [1usize, 2, 7, 8, 9, 16, 17, 33] {
                for runs in [1usize, 3, 8, 13, 24, 70, 130] {
                    // The tile's runs: run q is b elements, element i of it
                    // bytes (q, i, byte) encoded so that each is distinct.
                    let run = |q: usize| -> Vec<u8> {
                        (0..b * elem).map(|x| (q * 131 + (x / elem) * 7 + (x % elem) * 29) as u8).collect()
                    };
                    let all: Vec<Vec<u8>> = (0..runs).map(run).collect();
                    let mut want = vec![0u8; b * runs * elem];
                    for (q, r) in all.iter().enumerate() {
                        for i in 0..b {
                            let d = (i * runs + q) * elem;
                            want[d..d + elem].copy_from_slice(&r[i * elem..(i + 1) * elem]);
                        }
                    }
                    let mut got = vec![0xAAu8; want.len()];
                    let g = group_runs(elem);
                    for q0 in (0..runs).step_by(g) {
                        let src: Vec<&[u8]> = all[q0..runs.min(q0 + g)].iter().map(Vec::as_slice).collect();
                        let done = transpose(&src, &mut got, b, runs, q0, elem);
                        assert_eq!(done, Some(()), "elem {elem} b {b} runs {runs} q0 {q0}");
                    }
                    assert_eq!(got, want, "elem {elem} b {b} runs {runs}");
                    // A buffer too short is refused, never indexed past.
                    let src: Vec<&[u8]> = all.iter().take(g).map(Vec::as_slice).collect();
                    let mut short = vec![0u8; want.len() - 1];
                    // Only the last row reaches the missing byte, and only
                    // when this group is the last one.
                    if runs <= g {
                        assert_eq!(
                            transpose(&src, &mut short, b, runs, 0, elem),
                            None,
                            "elem {elem} b {b} runs {runs}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn blocks_match_an_element_by_element_transpose_at_every_shape_and_offset() {
        // Every element size with and without a block kernel; shapes 1 × 1,
        // 1 × n, n × 1, around each block's sides (the rows and runs left
        // after the last whole block, none left, fewer than one block) and
        // large; runs at unaligned addresses of one buffer; the group at
        // column 0, inside, and at the last columns of wider rows. Bytes
        // outside the group's columns stay as they were.
        let pool = noise(1 << 20, 34);
        let mut case = 0u64;
        for elem in [1usize, 2, 3, 4, 5, 8, 16] {
            for b in [1usize, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100, 257] {
                for n in [1usize, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64] {
                    for (extra_before, extra_after) in [(0usize, 0usize), (3, 0), (0, 5), (7, 2)] {
                        case += 1;
                        let runs = extra_before + n + extra_after;
                        let q0 = extra_before;
                        let run_len = b * elem;
                        // Run k starts at an odd offset that moves from case
                        // to case (alignment), with bytes after it (a run is
                        // read only for its b elements).
                        let start = |k: usize| (case as usize * 7 + k * (run_len + 3) + 1) % (pool.len() / 2);
                        let src: Vec<&[u8]> = (0..n).map(|k| &pool[start(k)..start(k) + run_len + 5]).collect();
                        let fill = vec![(case as u8) ^ 0x5A; b * runs * elem];
                        let mut want = fill.clone();
                        naive(&src, &mut want, b, runs, q0, elem);
                        let mut got = fill.clone();
                        let what = format!("elem {elem} b {b} n {n} runs {runs} q0 {q0}");
                        assert_eq!(transpose(&src, &mut got, b, runs, q0, elem), Some(()), "{what}");
                        assert_eq!(got, want, "{what}");
                    }
                }
            }
        }
    }

    #[test]
    fn each_block_kernel_is_a_transpose_of_its_bytes() {
        // Run k's 8 or 16 bytes in, row j's 8 or 16 bytes out: element j of
        // each run in run order (the SWAR kernels' words little-endian on
        // any host).
        fn check<const N: usize, const R: usize, const W: usize, const M: usize>(
            elem: usize,
            kernel: impl Fn([[u8; N]; R]) -> [[u8; M]; W],
        ) {
            for seed in 0..64 {
                let bytes = noise(N * R, seed);
                let m: [[u8; N]; R] = core::array::from_fn(|k| bytes[N * k..N * (k + 1)].try_into().unwrap());
                let got = kernel(m);
                for (j, w) in got.iter().enumerate() {
                    let want: Vec<u8> = (0..R).flat_map(|k| m[k][j * elem..(j + 1) * elem].to_vec()).collect();
                    assert_eq!(w.to_vec(), want, "elem {elem} row {j}");
                }
            }
        }
        check::<8, 8, 8, 8>(1, |m| block1(m).map(u64::to_le_bytes));
        check::<8, 4, 4, 8>(2, |m| block2(m).map(u64::to_le_bytes));
        check::<16, 2, 4, 8>(4, |m| block4(m).map(u64::to_le_bytes));
        check::<16, 1, 2, 8>(8, |m| block8(m).map(u64::to_le_bytes));
        #[cfg(target_arch = "x86_64")]
        {
            check::<16, 8, 8, 16>(2, sse2::block2);
            check::<16, 4, 4, 16>(4, sse2::block4);
        }
    }

    #[test]
    fn a_run_or_a_row_too_short_is_refused() {
        // Each buffer one byte short, at the block path and the element
        // path: None, never a panic.
        for elem in [1usize, 2, 4, 8, 3] {
            for (b, n) in [(16usize, 8usize), (17, 9), (3, 2)] {
                let runs: Vec<Vec<u8>> = (0..n).map(|k| noise(b * elem, k as u64)).collect();
                let mut to = vec![0u8; b * n * elem];
                for short in 0..n {
                    let src: Vec<&[u8]> = runs
                        .iter()
                        .enumerate()
                        .map(|(k, r)| if k == short { &r[..r.len() - 1] } else { &r[..] })
                        .collect();
                    assert_eq!(transpose(&src, &mut to, b, n, 0, elem), None, "elem {elem} b {b} n {n} run {short}");
                }
                let src: Vec<&[u8]> = runs.iter().map(Vec::as_slice).collect();
                assert_eq!(transpose(&src, &mut to, b, n, 1, elem), None, "elem {elem} b {b} n {n} at q0 1");
            }
        }
    }

    /// The kernel against SHA-256 over the same bytes, as the views of
    /// bench/pt_make.py meet it (a 2048 × 2048 BF16 and F32 transposed
    /// view: runs of a tile of 4 MiB, 4 KiB apart). `cargo test --release
    /// -p gguf-digest-core --lib transpose::tests::kernel_speed --
    /// --ignored --nocapture`.
    #[test]
    #[ignore = "a measurement: run with --release"]
    fn kernel_speed() {
        use sha2::Digest as _;
        for (elem, rows) in [(2usize, 2048usize), (4, 2048), (1, 2048), (8, 1024)] {
            let cols = 2048usize;
            let pitch = rows * elem;
            let b = (4 << 20) / (cols * elem);
            let source = noise(pitch * cols, 1);
            let mut to = vec![0u8; b * cols * elem];
            let g = group_runs(elem);
            let mut best = (f64::MAX, f64::MAX);
            for _ in 0..15 {
                let t = std::time::Instant::now();
                for q0 in (0..cols).step_by(g) {
                    let src: Vec<&[u8]> =
                        (q0..cols.min(q0 + g)).map(|q| &source[q * pitch..q * pitch + b * elem]).collect();
                    transpose(&src, &mut to, b, cols, q0, elem).unwrap();
                }
                let kernel = t.elapsed().as_secs_f64();
                let t = std::time::Instant::now();
                std::hint::black_box(sha2::Sha256::digest(&to));
                best = (best.0.min(kernel), best.1.min(t.elapsed().as_secs_f64()));
            }
            let n = to.len() as f64;
            println!(
                "elem {elem}: transpose {:.3} ns/byte, SHA-256 {:.3} ns/byte, transpose / SHA-256 {:.2}",
                best.0 * 1e9 / n,
                best.1 * 1e9 / n,
                best.0 / best.1
            );
        }
    }
}
