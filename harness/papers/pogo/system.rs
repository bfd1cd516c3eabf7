//! Eq. (4)'s operators, built once (section 2.1): lumped mass (element area times density over
//! three), lumped mass-proportional damping, and
//! K' = D^-1 (2M/dt^2 - K), C' = D^-1 (C/2dt - M/dt^2), F' = D^-1 F, with D = M/dt^2 + C/2dt,
//! all diagonal but K'. K' is kept as a dof-level CSR matrix (what cuSPARSE multiplies, and the
//! CPU methods) and as a sliced ELL of 2x2 node blocks in four vectors (our kernels). The oracle
//! steps Eq. (3) element by element instead, without K' ([`Oracle`]).

use rayon::prelude::*;

use super::model::{geometry, stiffness_block, Model};
use crate::fem::csr::Pattern;

/// Nodes per slice of the sliced ELL (a warp).
pub const SLICE: usize = 32;

pub struct System {
    pub nodes: usize,
    /// K' over all 2 N dofs (dof 2i + a is node i's direction a); fixed rows hold zeros.
    pub pattern: Pattern,
    pub kp: Vec<f64>,
    /// C' per dof (zero where fixed).
    pub cp: Vec<f64>,
    /// The source's dofs (ascending, each once) and coefficients: F'_d(t) = coef_d signal(t).
    pub src_dof: Vec<u32>,
    pub src_coef: Vec<f64>,
    pub rec_dof: Vec<u32>,
    /// max over dofs of sum |K'_rs| + |C'_r|: the growth a rounding error can see in one step.
    pub row_bound: f64,
}

/// Lumped mass and damping per node: m_i = sum rho A / 3, c_i = sum d rho A / 3.
pub fn lumped(model: &Model) -> (Vec<f64>, Vec<f64>) {
    let n = model.nodes();
    let (mut m, mut c) = (vec![0.0; n], vec![0.0; n]);
    for (e, t) in model.mesh.tris.iter().enumerate() {
        let (area, _, _) = geometry(&model.mesh, e);
        let me = model.materials[model.material[e] as usize].rho * area / 3.0;
        for &v in t {
            m[v as usize] += me;
            c[v as usize] += model.damping[e] * me;
        }
    }
    (m, c)
}

impl System {
    pub fn build(model: &Model) -> System {
        let n = model.nodes();
        let dofs = |e: usize, out: &mut Vec<i32>| out.extend(model.mesh.tris[e].iter().flat_map(|&v| [2 * v as i32, 2 * v as i32 + 1]));
        let pattern = Pattern::of_elements(2 * n, model.mesh.tris.len(), dofs);
        // What `step` relies on: node i's rows 2i and 2i+1 hold the same columns, in pairs
        // (2j, 2j + 1) of each neighbour j.
        let paired = (0..n).into_par_iter().all(|i| {
            let (r0, r1, r2) = (pattern.row_ptr[2 * i] as usize, pattern.row_ptr[2 * i + 1] as usize, pattern.row_ptr[2 * i + 2] as usize);
            let (a, b) = (&pattern.col[r0..r1], &pattern.col[r1..r2]);
            a == b && a.len() % 2 == 0 && a.chunks_exact(2).all(|c| c[0] % 2 == 0 && c[1] == c[0] + 1)
        });
        assert!(paired, "K' pattern: a node's two rows must hold the same column pairs");
        let slots = pattern.slots(model.mesh.tris.len(), 6, dofs);
        let mut k = vec![0.0; pattern.nnz()];
        for e in 0..model.mesh.tris.len() {
            let (area, b, c) = geometry(&model.mesh, e);
            let mat = &model.materials[model.material[e] as usize];
            for i in 0..3 {
                for j in 0..3 {
                    let blk = stiffness_block(mat, area, &b, &c, i, j);
                    for (r, row) in blk.iter().enumerate() {
                        for (s, v) in row.iter().enumerate() {
                            k[slots[e * 36 + (2 * i + r) * 6 + 2 * j + s] as usize] += v;
                        }
                    }
                }
            }
        }
        let (m, c) = lumped(model);
        let dt = model.dt;
        let d: Vec<f64> = (0..n).map(|i| m[i] / (dt * dt) + c[i] / (2.0 * dt)).collect();
        let mut kp = k;
        let mut cp = vec![0.0; 2 * n];
        for r in 0..2 * n {
            let i = r / 2;
            let range = pattern.row_ptr[r] as usize..pattern.row_ptr[r + 1] as usize;
            if model.fixed[r] {
                kp[range].fill(0.0);
                continue;
            }
            for q in range {
                let diag = if pattern.col[q] as usize == r { 2.0 * m[i] / (dt * dt) } else { 0.0 };
                kp[q] = (diag - kp[q]) / d[i];
            }
            cp[r] = (c[i] / (2.0 * dt) - m[i] / (dt * dt)) / d[i];
        }
        let mut src_dof = Vec::new();
        let mut src_coef = Vec::new();
        for &v in &model.source.nodes {
            for a in 0..2 {
                let r = 2 * v as usize + a;
                if !model.fixed[r] && model.source.direction[a] != 0.0 {
                    src_dof.push(r as u32);
                    src_coef.push(model.source.direction[a] / d[v as usize]);
                }
            }
        }
        // Sorted by dof, each once: the kernels find a dof's entry by bisection.
        let mut src: Vec<(u32, f64)> = src_dof.into_iter().zip(src_coef).collect();
        src.sort_by_key(|p| p.0);
        assert!(src.windows(2).all(|w| w[0].0 < w[1].0), "a source node is listed twice");
        let (src_dof, src_coef): (Vec<u32>, Vec<f64>) = src.into_iter().unzip();
        let rec_dof = model.receivers.iter().flat_map(|&v| [2 * v, 2 * v + 1]).collect();
        let row_bound = (0..2 * n)
            .into_par_iter()
            .map(|r| kp[pattern.row_ptr[r] as usize..pattern.row_ptr[r + 1] as usize].iter().map(|v| v.abs()).sum::<f64>() + cp[r].abs())
            .reduce(|| 0.0, f64::max);
        System { nodes: n, pattern, kp, cp, src_dof, src_coef, rec_dof, row_bound }
    }

    /// One step of Eq. (4) on the host in f64: next = K' curr + C' prev + F'(amp).
    ///
    /// A node's two rows have the same columns (both dofs of each neighbour, in order), so
    /// they are summed together from the first row's columns: the second row's column indices
    /// are never read (40 bytes a node link instead of 48; the step is memory-bound). Each
    /// row's sum runs over its entries in their stored order, as a row-by-row CSR product does.
    pub fn step(&self, prev: &[f64], curr: &[f64], next: &mut [f64], amp: f64, parallel: bool) {
        let p = &self.pattern;
        let node = |i: usize, out: &mut [f64]| {
            let (r0, r1) = (p.row_ptr[2 * i] as usize, p.row_ptr[2 * i + 1] as usize);
            let (mut s0, mut s1) = (0.0, 0.0);
            for (q, pair) in p.col[r0..r1].chunks_exact(2).enumerate() {
                let j = pair[0] as usize;
                let (x, y) = (curr[j], curr[j + 1]);
                s0 += self.kp[r0 + 2 * q] * x;
                s0 += self.kp[r0 + 2 * q + 1] * y;
                s1 += self.kp[r1 + 2 * q] * x;
                s1 += self.kp[r1 + 2 * q + 1] * y;
            }
            out[0] = s0 + self.cp[2 * i] * prev[2 * i];
            out[1] = s1 + self.cp[2 * i + 1] * prev[2 * i + 1];
        };
        if parallel {
            next.par_chunks_mut(2).enumerate().for_each(|(i, out)| node(i, out));
        } else {
            next.chunks_mut(2).enumerate().for_each(|(i, out)| node(i, out));
        }
        for (&d, &c) in self.src_dof.iter().zip(&self.src_coef) {
            next[d as usize] += c * amp;
        }
    }

    /// K' as a sliced ELL of node blocks: slice s (nodes 32s..32s+32) has width w_s (its
    /// largest link count) and starts at `slice_ptr[s]`; link k of lane l is entry
    /// slice_ptr[s] + 32 k + l, whose column is `col[..]` and whose block is
    /// vals[4 (slice_ptr[s] + 32 k) + 32 m + l] for m = xx, xy, yx, yy. Unused links point at
    /// the node itself with zero blocks.
    pub fn sliced_ell(&self) -> SlicedEll {
        let n = self.nodes;
        let p = &self.pattern;
        let links = |i: usize| (p.row_ptr[2 * i + 1] - p.row_ptr[2 * i]) as usize / 2;
        let slices = n.div_ceil(SLICE);
        let mut slice_ptr = vec![0u32; slices + 1];
        for s in 0..slices {
            let w = (s * SLICE..((s + 1) * SLICE).min(n)).map(links).max().unwrap_or(0);
            slice_ptr[s + 1] = slice_ptr[s] + (w * SLICE) as u32;
        }
        let total = slice_ptr[slices] as usize;
        let mut col = vec![0u32; total];
        let mut vals = vec![0.0f64; 4 * total];
        for i in 0..n {
            let (s, lane) = (i / SLICE, i % SLICE);
            let base = slice_ptr[s] as usize;
            let w = (slice_ptr[s + 1] as usize - base) / SLICE;
            let (r0, r1) = (p.row_ptr[2 * i] as usize, p.row_ptr[2 * i + 1] as usize);
            for k in 0..w {
                let e = base + SLICE * k + lane;
                let v = 4 * (base + SLICE * k) + lane;
                if k < links(i) {
                    let q = r0 + 2 * k;
                    col[e] = p.col[q] / 2;
                    vals[v] = self.kp[q];
                    vals[v + SLICE] = self.kp[q + 1];
                    vals[v + 2 * SLICE] = self.kp[r1 + 2 * k];
                    vals[v + 3 * SLICE] = self.kp[r1 + 2 * k + 1];
                } else {
                    col[e] = i as u32;
                }
            }
        }
        SlicedEll { slice_ptr, col, vals, links: (0..n).map(links).sum(), nodes: n }
    }
}

pub struct SlicedEll {
    pub slice_ptr: Vec<u32>,
    pub col: Vec<u32>,
    pub vals: Vec<f64>,
    /// Links stored without the padding (node blocks of K').
    pub links: usize,
    pub nodes: usize,
}

impl SlicedEll {
    /// The columns as 16-bit offsets from each entry's own node (Pogo's 16-bit link pointers),
    /// where the node order's bandwidth allows it.
    pub fn col16(&self) -> Option<Vec<i16>> {
        let mut out = vec![0i16; self.col.len()];
        for s in 0..self.slice_ptr.len() - 1 {
            for e in self.slice_ptr[s] as usize..self.slice_ptr[s + 1] as usize {
                let node = s * SLICE + (e - self.slice_ptr[s] as usize) % SLICE;
                // Lanes past the last node (the last slice's tail) are never read.
                if node < self.nodes {
                    out[e] = i16::try_from(self.col[e] as i64 - node as i64).ok()?;
                }
            }
        }
        Some(out)
    }
}

/// The oracle: Eq. (3) stepped in f64 element by element, node by node (each node sums
/// K_e u_e over its elements, blocks computed from the geometry every step), without K'.
pub struct Oracle<'a> {
    model: &'a Model,
    m: Vec<f64>,
    c: Vec<f64>,
    /// Node -> elements holding it (CSR) and the node's position in each.
    ptr: Vec<u32>,
    elems: Vec<(u32, u8)>,
    /// The source's nodes, sorted (a tooth face holds dozens: a bisection per node).
    source: Vec<u32>,
}

impl<'a> Oracle<'a> {
    pub fn new(model: &'a Model) -> Self {
        let (m, c) = lumped(model);
        let n = model.nodes();
        let mut count = vec![0u32; n + 1];
        model.mesh.tris.iter().flatten().for_each(|&v| count[v as usize + 1] += 1);
        for i in 0..n {
            count[i + 1] += count[i];
        }
        let mut fill = count.clone();
        let mut elems = vec![(0u32, 0u8); count[n] as usize];
        for (e, t) in model.mesh.tris.iter().enumerate() {
            for (a, &v) in t.iter().enumerate() {
                elems[fill[v as usize] as usize] = (e as u32, a as u8);
                fill[v as usize] += 1;
            }
        }
        let mut source = model.source.nodes.clone();
        source.sort_unstable();
        source.dedup();
        Oracle { model, m, c, ptr: count, elems, source }
    }

    pub fn step(&self, prev: &[f64], curr: &[f64], next: &mut [f64], t: f64) {
        let model = self.model;
        let dt = model.dt;
        let amp = model.source.signal.at(t);
        next.par_chunks_mut(2).enumerate().for_each(|(i, out)| {
            let mut ku = [0.0; 2];
            for &(e, a) in &self.elems[self.ptr[i] as usize..self.ptr[i + 1] as usize] {
                let (area, b, c) = geometry(&model.mesh, e as usize);
                let mat = &model.materials[model.material[e as usize] as usize];
                for (j, &v) in model.mesh.tris[e as usize].iter().enumerate() {
                    let blk = stiffness_block(mat, area, &b, &c, a as usize, j);
                    let (ux, uy) = (curr[2 * v as usize], curr[2 * v as usize + 1]);
                    ku[0] += blk[0][0] * ux + blk[0][1] * uy;
                    ku[1] += blk[1][0] * ux + blk[1][1] * uy;
                }
            }
            let (m, c) = (self.m[i], self.c[i]);
            let d = m / (dt * dt) + c / (2.0 * dt);
            let src = self.source.binary_search(&(i as u32)).is_ok();
            for a in 0..2 {
                let r = 2 * i + a;
                if model.fixed[r] {
                    out[a] = 0.0;
                    continue;
                }
                let f = if src { model.source.direction[a] * amp } else { 0.0 };
                out[a] = (f + (c / (2.0 * dt) - m / (dt * dt)) * prev[r] + 2.0 * m / (dt * dt) * curr[r] - ku[a]) / d;
            }
        });
    }

    /// U after `steps` steps from rest at increment `check_start`, and the receivers' traces
    /// U_0..U_steps (x, y per receiver, step-major).
    pub fn run(&self, steps: usize) -> (Vec<f64>, Vec<f64>) {
        let n = 2 * self.model.nodes();
        let (mut prev, mut curr, mut next) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        let rec = |u: &[f64], out: &mut Vec<f64>| {
            self.model.receivers.iter().for_each(|&v| out.extend([u[2 * v as usize], u[2 * v as usize + 1]]))
        };
        let mut trace = Vec::with_capacity((steps + 1) * 2 * self.model.receivers.len());
        rec(&curr, &mut trace);
        for s in 0..steps {
            self.step(&prev, &curr, &mut next, (self.model.check_start + s) as f64 * self.model.dt);
            std::mem::swap(&mut prev, &mut curr);
            std::mem::swap(&mut curr, &mut next);
            rec(&curr, &mut trace);
        }
        (curr, trace)
    }
}

/// The discrete energy that central differences conserve exactly for an undamped, unforced
/// system: 1/2 v^T M v + 1/2 u_next^T K u_curr, v = (u_next - u_curr) / dt, with K recovered
/// from K' (K = 2M/dt^2 - D K', D = M/dt^2 without damping).
pub fn energy(sys: &System, m: &[f64], dt: f64, curr: &[f64], next: &[f64]) -> f64 {
    energy_of_rows(sys, m, dt, curr, next, |_| true)
}

/// [`energy`]'s terms of the dofs `keep` keeps only (`sys` undamped, so that K is recovered).
pub fn energy_of_rows(sys: &System, m: &[f64], dt: f64, curr: &[f64], next: &[f64], keep: impl Fn(usize) -> bool) -> f64 {
    let p = &sys.pattern;
    let mut e = 0.0;
    for r in (0..2 * sys.nodes).filter(|&r| keep(r)) {
        let mi = m[r / 2];
        let v = (next[r] - curr[r]) / dt;
        e += 0.5 * mi * v * v;
        let mut ku = 0.0;
        for q in p.row_ptr[r] as usize..p.row_ptr[r + 1] as usize {
            let c = p.col[q] as usize;
            let k = if c == r { 2.0 * mi / (dt * dt) } else { 0.0 } - mi / (dt * dt) * sys.kp[q];
            ku += k * curr[c];
        }
        e += 0.5 * next[r] * ku;
    }
    e
}
