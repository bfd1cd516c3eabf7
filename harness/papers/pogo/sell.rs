//! K' as a sliced ELL of node blocks (2x2 in the plane, 3x3 in 3D) (our kernels, beyond the paper): SELL-C-sigma
//! (Kreutzer et al., 2014) with C = 32 nodes a slice (a warp) and, within each window of
//! `sigma` positions of the RCM order, the nodes sorted by their link count, most first, so a
//! slice's nodes have nearly the same count and the slice's width (its largest) pads little.
//! sigma = 1 keeps the RCM order (positions are nodes).
//!
//! Where the order is sorted, U, C', the sources and the receivers lie at the sorted positions
//! on the device ([`SlicedEll::placed`]); a window is a few hundred nodes of a bandwidth-reduced
//! order, so a step's gathers stay as local as before.

use rayon::prelude::*;

use super::system::{Placed, System};
use crate::fem::csr::segments_mut;

/// Nodes per slice of the sliced ELL (a warp).
pub const SLICE: usize = 32;

#[derive(serde::Serialize, serde::Deserialize)]
pub struct SlicedEll {
    /// Slice s (positions 32s..32s+32) has width w_s (its largest link count) and starts at
    /// `slice_ptr[s]`; link k of lane l is entry slice_ptr[s] + 32 k + l, whose column (the
    /// linked node's position) is `col[..]` and whose block is
    /// vals[dim^2 (slice_ptr[s] + 32 k) + 32 m + l] for m = dim a + b, row a and column b of
    /// the block (in 2D: xx, xy, yx, yy). Unused links point at the position itself with zero
    /// blocks.
    pub slice_ptr: Vec<u32>,
    pub col: Vec<u32>,
    pub vals: Vec<f64>,
    /// Links stored without the padding (node blocks of K').
    pub links: usize,
    pub nodes: usize,
    /// Dofs per node (the block's side).
    pub dim: usize,
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
        let (n, d) = (sys.nodes, sys.dim);
        let p = &sys.pattern;
        let links = |i: usize| (p.row_ptr[d * i + 1] - p.row_ptr[d * i]) as usize / d;
        let node_at = SlicedEll::order(sys, sigma);
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
        let mut vals = vec![0.0f64; d * d * total];
        // Slice by slice in parallel: slice s owns its entries and their blocks.
        let entries = || slice_ptr.windows(2).map(|w| (w[1] - w[0]) as usize);
        let col_of = segments_mut(&mut col, entries());
        let vals_of = segments_mut(&mut vals, entries().map(|e| d * d * e));
        col_of.into_par_iter().zip(vals_of).enumerate().for_each(|(s, (col, vals))| {
            let w = col.len() / SLICE;
            for lane in 0..SLICE.min(n - s * SLICE) {
                let q = s * SLICE + lane;
                let i = node_at[q] as usize;
                let rows: [usize; 3] = std::array::from_fn(|a| p.row_ptr[d * i + a.min(d - 1)] as usize);
                for k in 0..w {
                    let e = SLICE * k + lane;
                    if k >= links(i) {
                        col[e] = q as u32;
                        continue;
                    }
                    col[e] = pos[p.col[rows[0] + d * k] as usize / d];
                    for a in 0..d {
                        for b in 0..d {
                            vals[d * d * SLICE * k + SLICE * (d * a + b) + lane] = sys.kp[rows[a] + d * k + b];
                        }
                    }
                }
            }
        });
        let placed = (sigma > 1).then(|| sys.placed((0..d * n).map(|r| (d * pos[r / d] as usize + r % d) as u32).collect(), d * n));
        SlicedEll { slice_ptr, col, vals, links: (0..n).map(links).sum(), nodes: n, dim: d, sigma, node_at, placed }
    }

    /// The node at each position: the dofs' order with, within each window of `sigma`
    /// positions, the nodes sorted by their link count, most first (stable: nodes of one count
    /// keep their order).
    pub fn order(sys: &System, sigma: usize) -> Vec<u32> {
        let (p, d) = (&sys.pattern, sys.dim);
        let links = |i: usize| (p.row_ptr[d * i + 1] - p.row_ptr[d * i]) as usize / d;
        let mut node_at: Vec<u32> = (0..sys.nodes as u32).collect();
        if sigma > 1 {
            node_at.par_chunks_mut(sigma).for_each(|w| w.sort_by_key(|&i| std::cmp::Reverse(links(i as usize))));
        }
        node_at
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
