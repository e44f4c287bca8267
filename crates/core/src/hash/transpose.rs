//! A tile of a gathered view transposed in memory: runs of a source
//! written as columns of the output, in register blocks and cache lines.
//! Pure: buffers in, buffers out, `None` for a buffer too short (a bug).

/// Elements per side of a block transposed in registers.
const BLOCK: usize = 8;

/// The most runs transposed at a time: a group is 64 bytes of each row
/// (one cache line written whole), and at least a block.
pub(super) const GROUP: usize = 64;

/// The runs of a group for `elem`-byte elements: 64 bytes' worth, at least
/// [`BLOCK`].
pub(super) fn group_runs(elem: usize) -> usize {
    GROUP.checked_div(elem).unwrap_or(0).clamp(BLOCK, GROUP)
}

/// An element of 1, 2, 4 or 8 bytes as an integer, so that a block is
/// transposed in registers. Read and written in one byte order, so the
/// bytes are moved unchanged on any host.
pub(super) trait Lane: Copy + Default {
    /// Bytes per element.
    const E: usize;
    /// The element at the start of `b` (which holds at least `E` bytes).
    fn load(b: &[u8]) -> Option<Self>;
    /// Writes the element into `b` (exactly `E` bytes).
    fn store(self, b: &mut [u8]) -> Option<()>;
}

macro_rules! lane {
    ($($t:ty),*) => {$(
        impl Lane for $t {
            const E: usize = size_of::<$t>();
            fn load(b: &[u8]) -> Option<Self> {
                Some(<$t>::from_le_bytes(*b.first_chunk()?))
            }
            fn store(self, b: &mut [u8]) -> Option<()> {
                b.first_chunk_mut::<{ size_of::<$t>() }>()?.copy_from_slice(&self.to_le_bytes());
                Some(())
            }
        }
    )*};
}
lane!(u8, u16, u32, u64);

/// Writes `src` (runs `q0 ..` of a tile, each `b` elements of `T`)
/// transposed into `to`, which holds `b` rows of `runs` elements:
/// `to[i][q0 + k] = src[k][i]`. `None` if a buffer is shorter than that (a
/// bug). Blocks of [`BLOCK`] × [`BLOCK`] elements go through registers;
/// a group of 64 bytes of runs fills whole cache lines of each row.
pub(super) fn transpose<T: Lane>(src: &[&[u8]], to: &mut [u8], b: usize, runs: usize, q0: usize) -> Option<()> {
    let pitch = runs.checked_mul(T::E)?;
    let seg = BLOCK.checked_mul(T::E)?;
    let whole_rows = b.checked_div(BLOCK)?.checked_mul(BLOCK)?;
    let whole_runs = src.len().checked_div(BLOCK)?.checked_mul(BLOCK)?;
    for i0 in (0..whole_rows).step_by(BLOCK) {
        let from = i0.checked_mul(T::E)?;
        for (k0, block) in src.chunks_exact(BLOCK).enumerate() {
            let mut m = [[T::default(); BLOCK]; BLOCK];
            for (k, s) in block.iter().enumerate() {
                let s = s.get(from..from.checked_add(seg)?)?;
                for (row, e) in m.iter_mut().zip(s.chunks_exact(T::E)) {
                    *row.get_mut(k)? = T::load(e)?;
                }
            }
            let col = k0.checked_mul(BLOCK)?.checked_add(q0)?.checked_mul(T::E)?;
            for (j, row) in m.iter().enumerate() {
                let at = i0.checked_add(j)?.checked_mul(pitch)?.checked_add(col)?;
                let out = to.get_mut(at..at.checked_add(seg)?)?;
                for (v, o) in row.iter().zip(out.chunks_exact_mut(T::E)) {
                    v.store(o)?;
                }
            }
        }
    }
    // The rest, an element at a time: the runs after the last whole block
    // (every row), and every run of the rows after the last whole block.
    let rest = src.get(whole_runs..)?;
    for i in 0..b {
        let (runs_from, part) = if i < whole_rows { (whole_runs, rest) } else { (0, src) };
        let at = i.checked_mul(pitch)?.checked_add(q0.checked_add(runs_from)?.checked_mul(T::E)?)?;
        let out = to.get_mut(at..at.checked_add(part.len().checked_mul(T::E)?)?)?;
        let from = i.checked_mul(T::E)?;
        for (s, o) in part.iter().zip(out.chunks_exact_mut(T::E)) {
            T::load(s.get(from..)?)?.store(o)?;
        }
    }
    Some(())
}

/// [`transpose`] for an element size without its own copy.
pub(super) fn transpose_any(src: &[&[u8]], to: &mut [u8], b: usize, runs: usize, q0: usize, elem: usize) -> Option<()> {
    let pitch = runs.checked_mul(elem)?;
    let col = q0.checked_mul(elem)?;
    let width = src.len().checked_mul(elem)?;
    for i in 0..b {
        let at = i.checked_mul(pitch)?.checked_add(col)?;
        let out = to.get_mut(at..at.checked_add(width)?)?;
        let from = i.checked_mul(elem)?;
        for (s, o) in src.iter().zip(out.chunks_exact_mut(elem)) {
            o.copy_from_slice(s.get(from..from.checked_add(elem)?)?);
        }
    }
    Some(())
}

#[cfg(test)]
// Tests index their own fixtures, never file bytes.
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
mod tests {
    use super::*;

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
                        let done = match elem {
                            1 => transpose::<u8>(&src, &mut got, b, runs, q0),
                            2 => transpose::<u16>(&src, &mut got, b, runs, q0),
                            4 => transpose::<u32>(&src, &mut got, b, runs, q0),
                            8 => transpose::<u64>(&src, &mut got, b, runs, q0),
                            _ => transpose_any(&src, &mut got, b, runs, q0, elem),
                        };
                        assert_eq!(done, Some(()), "elem {elem} b {b} runs {runs} q0 {q0}");
                    }
                    assert_eq!(got, want, "elem {elem} b {b} runs {runs}");
                    // A buffer too short is refused, never indexed past.
                    if elem <= 8 {
                        let src: Vec<&[u8]> = all.iter().take(group_runs(elem)).map(Vec::as_slice).collect();
                        let mut short = vec![0u8; want.len() - 1];
                        let r = match elem {
                            1 => transpose::<u8>(&src, &mut short, b, runs, 0),
                            2 => transpose::<u16>(&src, &mut short, b, runs, 0),
                            4 => transpose::<u32>(&src, &mut short, b, runs, 0),
                            _ => transpose::<u64>(&src, &mut short, b, runs, 0),
                        };
                        // Only the last row reaches the missing byte, and only
                        // when this group is the last one.
                        if runs <= group_runs(elem) {
                            assert_eq!(r, None, "elem {elem} b {b} runs {runs}");
                        }
                    }
                }
            }
        }
    }
}
