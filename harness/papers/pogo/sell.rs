//! K' as a sliced ELL of 2x2 node blocks (our kernels, beyond the paper): SELL-C-sigma
//! (Kreutzer et al., 2014) with C = 32 nodes a slice (a warp) and, within each window of
//! `sigma` positions of the RCM order, the nodes sorted by their link count, most first, so a
//! slice's nodes have nearly the same count and the slice's width (its largest) pads little.
//! sigma = 1 keeps the RCM order (positions are nodes).
//!
//! Where the order is sorted, U, C', the sources and the receivers lie at the sorted positions
//! on the device ([`SlicedEll::placed`]); a window is a few hundred nodes of a bandwidth-reduced
//! order, so a step's gathers stay as local as before.

use super::system::{Placed, System};

/// Nodes per slice of the sliced ELL (a warp).
pub const SLICE: usize = 32;

pub struct SlicedEll {
    /// Slice s (positions 32s..32s+32) has width w_s (its largest link count) and starts at
    /// `slice_ptr[s]`; link k of lane l is entry slice_ptr[s] + 32 k + l, whose column (the
    /// linked node's position) is `col[..]` and whose block is
    /// vals[4 (slice_ptr[s] + 32 k) + 32 m + l] for m = xx, xy, yx, yy. Unused links point at
    /// the position itself with zero blocks.
    pub slice_ptr: Vec<u32>,
    pub col: Vec<u32>,
    pub vals: Vec<f64>,
    /// Links stored without the padding (node blocks of K').
    pub links: usize,
    pub nodes: usize,
    /// The window of the sort by link count (1: none).
    pub sigma: usize,
    /// The node at each position.
    pub node_at: Vec<u32>,
    /// The dofs at the sorted positions (None where sigma is 1: the dofs' own order).
    pub placed: Option<Placed>,
}

impl SlicedEll {
    pub fn new(sys: &System, sigma: usize) -> SlicedEll {
        assert!(sigma == 1 || sigma.is_multiple_of(SLICE), "sigma must be 1 or a multiple of {SLICE}");
        let n = sys.nodes;
        let p = &sys.pattern;
        let links = |i: usize| (p.row_ptr[2 * i + 1] - p.row_ptr[2 * i]) as usize / 2;
        let mut node_at: Vec<u32> = (0..n as u32).collect();
        if sigma > 1 {
            // Stable: nodes of one count keep their RCM order.
            node_at.chunks_mut(sigma).for_each(|w| w.sort_by_key(|&i| std::cmp::Reverse(links(i as usize))));
        }
        let mut pos = vec![0u32; n];
        node_at.iter().enumerate().for_each(|(q, &i)| pos[i as usize] = q as u32);
        let slices = n.div_ceil(SLICE);
        let mut slice_ptr = vec![0u32; slices + 1];
        for s in 0..slices {
            let w = node_at[s * SLICE..((s + 1) * SLICE).min(n)].iter().map(|&i| links(i as usize)).max().unwrap_or(0);
            slice_ptr[s + 1] = slice_ptr[s] + (w * SLICE) as u32;
        }
        let total = slice_ptr[slices] as usize;
        let mut col = vec![0u32; total];
        let mut vals = vec![0.0f64; 4 * total];
        for (q, &i) in node_at.iter().enumerate() {
            let i = i as usize;
            let (s, lane) = (q / SLICE, q % SLICE);
            let base = slice_ptr[s] as usize;
            let w = (slice_ptr[s + 1] as usize - base) / SLICE;
            let (r0, r1) = (p.row_ptr[2 * i] as usize, p.row_ptr[2 * i + 1] as usize);
            for k in 0..w {
                let e = base + SLICE * k + lane;
                let v = 4 * (base + SLICE * k) + lane;
                if k < links(i) {
                    let a = r0 + 2 * k;
                    col[e] = pos[p.col[a] as usize / 2];
                    vals[v] = sys.kp[a];
                    vals[v + SLICE] = sys.kp[a + 1];
                    vals[v + 2 * SLICE] = sys.kp[r1 + 2 * k];
                    vals[v + 3 * SLICE] = sys.kp[r1 + 2 * k + 1];
                } else {
                    col[e] = q as u32;
                }
            }
        }
        let placed = (sigma > 1).then(|| sys.placed((0..2 * n).map(|d| 2 * pos[d / 2] + (d % 2) as u32).collect(), 2 * n));
        SlicedEll { slice_ptr, col, vals, links: (0..n).map(links).sum(), nodes: n, sigma, node_at, placed }
    }

    /// The columns as 16-bit offsets from each entry's own position (Pogo's 16-bit link
    /// pointers), where the order's bandwidth allows it.
    pub fn col16(&self) -> Option<Vec<i16>> {
        let mut out = vec![0i16; self.col.len()];
        for s in 0..self.slice_ptr.len() - 1 {
            for e in self.slice_ptr[s] as usize..self.slice_ptr[s + 1] as usize {
                let q = s * SLICE + (e - self.slice_ptr[s] as usize) % SLICE;
                // Lanes past the last position (the last slice's tail) are never read.
                if q < self.nodes {
                    out[e] = i16::try_from(self.col[e] as i64 - q as i64).ok()?;
                }
            }
        }
        Some(out)
    }

    /// Stored links, padding included, over the links (1: no padding).
    pub fn padding(&self) -> f64 {
        self.col.len() as f64 / self.links.max(1) as f64
    }
}
