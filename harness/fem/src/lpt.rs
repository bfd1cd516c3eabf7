//! Work lists packed for thread blocks: each list to the lane with the least work so far
//! (largest processing time first), read in lane-strided steps so a block's reads coalesce.

use rayon::prelude::*;

/// Packed lists of every thread block: block b owns `data[ptr[b]..ptr[b+1]]`, read in steps of
/// `lanes` entries (entry of lane l at step r: `ptr[b] + r * lanes + l`), so a block's reads
/// coalesce (the column-major matrices with blockSize rows of Figs. 5, 6 and 9).
#[derive(Debug, Clone, Default)]
pub struct Packed {
    pub lanes: usize,
    pub data: Vec<i32>,
    pub ptr: Vec<u32>,
}

impl Packed {
    pub fn blocks(&self) -> usize {
        self.ptr.len().saturating_sub(1)
    }
    /// Source entries (each one addition in a reduction, one read in a scatter).
    pub fn sources(&self) -> usize {
        self.data.par_iter().filter(|&&v| v > 0).count()
    }
    /// Share of padding entries (the waste LPT leaves).
    pub fn padding(&self) -> f64 {
        let zeros = self.data.par_iter().filter(|&&v| v == 0).count();
        zeros as f64 / self.data.len().max(1) as f64
    }
    /// Blocks' lists concatenated, with 32-bit offsets.
    pub fn from_blocks(lanes: usize, blocks: Vec<Vec<i32>>) -> Result<Packed, String> {
        let total: usize = blocks.iter().map(Vec::len).sum();
        if total > i32::MAX as usize {
            return Err(format!("packed array of {total} entries exceeds 32-bit offsets"));
        }
        let mut ptr = Vec::with_capacity(blocks.len() + 1);
        ptr.push(0u32);
        for b in &blocks {
            ptr.push(ptr.last().copied().unwrap_or(0) + b.len() as u32);
        }
        // Concatenated on every core (a plan can hold a few GB).
        let mut data = vec![0i32; total];
        crate::csr::segments_mut(&mut data, blocks.iter().map(Vec::len))
            .into_par_iter()
            .zip(blocks.par_iter())
            .for_each(|(d, b)| d.copy_from_slice(b));
        Ok(Packed { lanes, data, ptr })
    }
}

/// A plan of the SharedNZ kind (Cecka et al. 4.3, and its hex8 adaptation): node parts, each a
/// thread block that computes the elements adjacent to its nodes (E_k) into shared-memory
/// columns and reduces its rows from there, with its packed scatter and reduction lists.
pub struct SharedPlan {
    pub parts: usize,
    /// |E_k| per block.
    pub block_elements: Vec<u32>,
    /// max |E_k|: the shared memory stride.
    pub stride: usize,
    /// Σ |E_k|: element subroutine calls (elements on part borders are computed more than once).
    pub element_calls: usize,
    /// Σ |N̄_k|: nodal data fetched from global memory.
    pub node_fetches: usize,
    /// Lists `node, shared slots..` (Algorithm 7).
    pub scatter: Packed,
    /// Lists `shared indices.., target` (Algorithm 6 from shared memory).
    pub reduction: Packed,
}

/// An entry's code in packed lists: a source s as s + 1, a target t as -t - 1 (0 is padding).
pub fn source(s: usize) -> i32 {
    (s + 1) as i32
}
pub fn target(t: usize) -> i32 {
    -(t as i32) - 1
}

/// Scatter lists `source, targets..` (Algorithm 7: read once, copy to every target) from
/// (source, target) pairs sorted by source, packed for `lanes` threads; and the number of
/// distinct sources.
pub fn pack_scatter(pairs: &[(u32, u32)], lanes: usize) -> (Vec<i32>, usize) {
    let (mut offsets, mut entries) = (vec![0u32], Vec::with_capacity(pairs.len() * 3 / 2));
    let mut sources = 0;
    for (i, &(v, t)) in pairs.iter().enumerate() {
        if i == 0 || pairs[i - 1].0 != v {
            if i > 0 {
                offsets.push(entries.len() as u32);
            }
            entries.push(source(v as usize));
            sources += 1;
        }
        entries.push(target(t as usize));
    }
    offsets.push(entries.len() as u32);
    (pack_lpt(&Lists { offsets: &offsets, entries: &entries }, lanes), sources)
}

/// Reduction lists `sources.., target` (Algorithm 6: sum the sources, store at the target) from
/// (target, source) pairs sorted by target, packed for `lanes` threads.
pub fn pack_reduction(pairs: &[(u32, u32)], lanes: usize) -> Vec<i32> {
    let (mut offsets, mut entries) = (vec![0u32], Vec::with_capacity(pairs.len() * 3 / 2));
    for (i, &(t, s)) in pairs.iter().enumerate() {
        entries.push(source(s as usize));
        if i + 1 == pairs.len() || pairs[i + 1].0 != t {
            entries.push(target(t as usize));
            offsets.push(entries.len() as u32);
        }
    }
    pack_lpt(&Lists { offsets: &offsets, entries: &entries }, lanes)
}

/// Runs packed reduction lists on the host (Algorithm 6), `src(block, source)` giving each
/// source's value: for tests and as the model the kernels follow.
pub fn run_reduction(packed: &Packed, src: &dyn Fn(usize, usize) -> f64, out: &mut [f64]) {
    for b in 0..packed.blocks() {
        let chunk = &packed.data[packed.ptr[b] as usize..packed.ptr[b + 1] as usize];
        for lane in 0..packed.lanes {
            let mut t = 0.0;
            for &i in chunk.iter().skip(lane).step_by(packed.lanes) {
                if i > 0 {
                    t += src(b, i as usize - 1);
                } else if i < 0 {
                    out[(-i - 1) as usize] = t;
                    t = 0.0;
                }
            }
        }
    }
}

/// Lists in CSR form: list i is `entries[offsets[i]..offsets[i + 1]]`.
pub struct Lists<'a> {
    pub offsets: &'a [u32],
    pub entries: &'a [i32],
}

/// Largest-processing-time packing: lists longest first, each to the lane with the least work
/// so far; a lane runs its lists one after another; shorter lanes end in zeros.
pub fn pack_lpt(lists: &Lists, lanes: usize) -> Vec<i32> {
    let n = lists.offsets.len().saturating_sub(1);
    let len = |i: usize| (lists.offsets[i + 1] - lists.offsets[i]) as usize;
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(len(i)), i));
    let mut heap: std::collections::BinaryHeap<std::cmp::Reverse<(usize, usize)>> =
        (0..lanes).map(|l| std::cmp::Reverse((0usize, l))).collect();
    // Each list's lane and first row: a lane runs its lists in the order it took them, so a
    // list starts at the lane's load when it was taken (no per-lane vectors: plans of 500K
    // blocks pack hundreds of millions of entries).
    let mut placed: Vec<(usize, usize, usize)> = Vec::with_capacity(n);
    for i in order {
        // The least-loaded lane takes the list; its entry sinks in place (one sift, where a pop
        // and a push take two).
        let Some(mut least) = heap.peek_mut() else { break };
        let std::cmp::Reverse((load, lane)) = *least;
        placed.push((i, lane, load));
        *least = std::cmp::Reverse((load + len(i), lane));
    }
    let height = heap.iter().map(|r| r.0 .0).max().unwrap_or(0);
    let mut out = vec![0i32; height * lanes];
    for (i, lane, row) in placed {
        for (r, &v) in lists.entries[lists.offsets[i] as usize..lists.offsets[i + 1] as usize].iter().enumerate() {
            out[(row + r) * lanes + lane] = v;
        }
    }
    out
}
