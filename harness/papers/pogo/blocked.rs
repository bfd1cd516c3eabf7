//! The paper's kernel's data (section 2.3, Table A.5) for one arrangement: K' as four vectors of
//! L x 512 x n_blocks terms, the link pointers, C' and the sources and receivers, all at the
//! arranged positions; and the kernel's step on the host ([`BlockData::step_host`]), which loads
//! through the table exactly as the kernel does, so a link the loads do not serve shows.
//!
//! A dof's arranged index is `a n_slots + global(slot)` for direction a: U, C' and U_next are
//! two planes of the block-major global layout ([`Arrangement::global`]).

use rayon::prelude::*;

use super::arrange::{load_base, Arrangement, BLOCK, LOAD_SIZES, NONE, SHARED, UNUSED, WIDTH};
use super::system::{Placed, System};

#[derive(Clone)]
pub struct BlockData {
    pub arr: Arrangement,
    /// Slots over all blocks (blocks x 512): one plane's length.
    pub slots: usize,
    /// K' at `(4 l + m) slots + g` for link l and block entry m (xx, xy, yx, yy), g the global
    /// position; zeros where unused.
    pub kvals: Vec<f64>,
    /// Link pointers two to a 32-bit word: link l of global position g at
    /// `2 ((l / 2) slots + g) + l % 2` (the word's low half holds the even link).
    pub lptr: Vec<u16>,
    /// The dofs at the arranged positions (dof 2i + a at `a slots + global[i]`), with C', the
    /// sources and the receivers there.
    pub placed: Placed,
    /// Each node's global position.
    pub global: Vec<u32>,
    /// Node links stored (the node itself included), and the most any warp of 32 slots
    /// needs, summed over the warps (Appendix A's L_av times the warps).
    pub used_links: usize,
    pub warp_links: usize,
    /// Link pointers the kernel reads: all L of every slot (Table A.5 counts 12 a node).
    pub pointer_reads: usize,
}

/// Where link l of global position g lies in [`BlockData::lptr`].
pub fn pointer(l: usize, g: usize, slots: usize) -> usize {
    2 * ((l / 2) * slots + g) + l % 2
}

impl BlockData {
    pub fn new(sys: &System, arr: Arrangement) -> BlockData {
        let slots = arr.blocks * BLOCK;
        let l = arr.links;
        let p = &sys.pattern;
        let global: Vec<u32> = arr.slot.iter().map(|&s| arr.global(s as usize) as u32).collect();
        let mut kvals = vec![0.0f64; 4 * l * slots];
        let mut lptr = vec![NONE; 2 * l.div_ceil(2) * slots];
        let mut used_links = 0;
        for i in 0..sys.nodes {
            let (s, g) = (arr.slot[i] as usize, global[i] as usize);
            let (r0, r1, r2) = (p.row_ptr[2 * i] as usize, p.row_ptr[2 * i + 1] as usize, p.row_ptr[2 * i + 2] as usize);
            // A node without rows (a part's halo: loaded by its neighbours, never stepped)
            // keeps no link pointer, so no thread steps it.
            if r0 == r1 {
                continue;
            }
            for k in 0..l {
                let ptr = arr.link_ptr[s * l + k];
                if ptr == NONE {
                    break;
                }
                used_links += 1;
                let j = arr.link_node[s * l + k];
                // Columns keep the model's order, which a part's numbering need not sort.
                let q = r0 + p.col[r0..r1].iter().position(|&c| c == 2 * j).expect("a link is in K's pattern");
                let q1 = r1 + (q - r0);
                debug_assert!(p.col[q1] == 2 * j && q1 < r2);
                lptr[pointer(k, g, slots)] = ptr;
                for (m, v) in [sys.kp[q], sys.kp[q + 1], sys.kp[q1], sys.kp[q1 + 1]].into_iter().enumerate() {
                    kvals[(4 * k + m) * slots + g] = v;
                }
            }
        }
        let at = global.iter().flat_map(|&g| [g, (slots + g as usize) as u32]).collect();
        let placed = sys.placed(at, 2 * slots);
        // Appendix A's L_av: per warp (32 slots of one row of a block) the most links a slot uses.
        let warp_links = (0..slots / WIDTH)
            .into_par_iter()
            .map(|w| (0..WIDTH).map(|c| (0..l).take_while(|&k| arr.link_ptr[(w * WIDTH + c) * l + k] != NONE).count()).max().unwrap_or(0))
            .sum();
        let pointer_reads = 2 * l.div_ceil(2) * slots;
        BlockData { arr, slots, kvals, lptr, placed, global, used_links, warp_links, pointer_reads }
    }

    /// A vector in arranged order (two planes) back in dof order.
    pub fn to_dofs(&self, u: &[f64]) -> Vec<f64> {
        self.placed.to_dofs(u)
    }

    /// A vector in dof order at the arranged positions (empty slots zero).
    pub fn from_dofs(&self, u: &[f64]) -> Vec<f64> {
        self.placed.from_dofs(u)
    }

    /// One step of the kernel on the host, in arranged order: each block fills its 800 shared
    /// slots from its own rows and through its table, then each node sums its links through
    /// its link pointers. Empty slots of `next` are left alone.
    pub fn step_host(&self, prev: &[f64], curr: &[f64], next: &mut [f64], amp: f64) {
        let (arr, slots, l) = (&self.arr, self.slots, self.arr.links);
        let row = arr.blocks * WIDTH;
        for b in 0..arr.blocks {
            let mut sh = vec![[f64::NAN; 2]; SHARED];
            for (p, v) in sh.iter_mut().enumerate().take(BLOCK) {
                let g = (p / WIDTH) * row + b * WIDTH + p % WIDTH;
                *v = [curr[g], curr[slots + g]];
            }
            for (q, &e) in arr.table[b * 20..b * 20 + 20].iter().enumerate() {
                if e == UNUSED {
                    continue;
                }
                let (ob, r, sec) = ((e >> 8) as usize, ((e >> 4) & 15) as usize, (e & 15) as usize);
                for o in 0..LOAD_SIZES[q] {
                    let g = r * row + ob * WIDTH + sec * 8 + o;
                    sh[load_base(q) + o] = [curr[g], curr[slots + g]];
                }
            }
            for p in 0..BLOCK {
                let g = (p / WIDTH) * row + b * WIDTH + p % WIDTH;
                if self.lptr[pointer(0, g, slots)] == NONE {
                    continue;
                }
                let (mut sx, mut sy) = (0.0, 0.0);
                for k in 0..l {
                    let ptr = self.lptr[pointer(k, g, slots)];
                    if ptr == NONE {
                        break;
                    }
                    let [ux, uy] = sh[ptr as usize];
                    let kv = |m: usize| self.kvals[(4 * k + m) * slots + g];
                    sx += kv(0) * ux + kv(1) * uy;
                    sy += kv(2) * ux + kv(3) * uy;
                }
                let cp = &self.placed.cp;
                next[g] = sx + cp[g] * prev[g];
                next[slots + g] = sy + cp[slots + g] * prev[slots + g];
            }
        }
        for (&d, &c) in self.placed.src_dof.iter().zip(&self.placed.src_coef) {
            next[d as usize] += c * amp;
        }
    }
}
