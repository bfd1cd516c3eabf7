//! Eq. (4)'s operators, built once (section 2.1): lumped mass (element area times density over
//! three), lumped mass-proportional damping, and
//! K' = D^-1 (2M/dt^2 - K), C' = D^-1 (C/2dt - M/dt^2), F' = D^-1 F, with D = M/dt^2 + C/2dt,
//! all diagonal but K'. K' is kept as a dof-level CSR matrix (what cuSPARSE multiplies, and the
//! CPU methods); its sliced ELL is in [`super::sell`]. The oracle
//! steps Eq. (3) element by element instead, without K' ([`Oracle`]).

use rayon::prelude::*;

use super::model::{geometry, stiffness_block, Model};
use crate::fem::csr::{segments_mut, Pattern};

/// A stiffness matrix K on a dof-level pattern whose node rows are grouped (see
/// [`System::pattern`]).
pub struct Stiffness {
    pub dim: usize,
    pub pattern: Pattern,
    pub k: Vec<f64>,
}

/// Lumped mass and mass-proportional damping per node, and the time step.
pub struct Lumped {
    pub m: Vec<f64>,
    pub c: Vec<f64>,
    pub dt: f64,
}

#[derive(serde::Serialize, serde::Deserialize)]
pub struct System {
    pub nodes: usize,
    /// Dofs per node: 2 (Pogo's plane-strain models), 3 (the 3D box of [`super::hexbox`]).
    pub dim: usize,
    /// K' over all dim N dofs (dof dim i + a is node i's direction a); fixed rows hold zeros.
    /// A node's dim rows hold the same columns, in groups (dim j, .., dim j + dim - 1) of each
    /// neighbour j ([`System::step`] relies on it).
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
        let mut src = Vec::new();
        for &v in &model.source.nodes {
            for a in 0..2 {
                if model.source.direction[a] != 0.0 {
                    src.push((2 * v + a as u32, model.source.direction[a]));
                }
            }
        }
        let rec_dof = model.receivers.iter().flat_map(|&v| [2 * v, 2 * v + 1]).collect();
        let stiffness = Stiffness { dim: 2, pattern, k };
        System::of_stiffness(stiffness, &Lumped { m, c, dt: model.dt }, &model.fixed, src, rec_dof)
    }

    /// Eq. (4)'s operators of K (`stiffness`), the lumped mass and damping per node, the fixed
    /// dofs (their rows zero), the source's dofs with their force (F_d = force signal(t); a
    /// fixed dof's dropped) and the receivers' dofs. The rows are worked on in parallel.
    pub fn of_stiffness(stiffness: Stiffness, lumped: &Lumped, fixed: &[bool], src: Vec<(u32, f64)>, rec_dof: Vec<u32>) -> System {
        let Stiffness { dim, pattern, k } = stiffness;
        let Lumped { m, c, dt } = lumped;
        let dt = *dt;
        let n = m.len();
        assert!(grouped(&pattern, dim, n), "K' pattern: a node's rows must hold the same column groups");
        let d: Vec<f64> = (0..n).map(|i| m[i] / (dt * dt) + c[i] / (2.0 * dt)).collect();
        let mut kp = k;
        let mut cp = vec![0.0; dim * n];
        segments_mut(&mut kp, pattern.row_ptr.windows(2).map(|w| (w[1] - w[0]) as usize))
            .into_par_iter()
            .zip(cp.par_iter_mut())
            .enumerate()
            .for_each(|(r, (row, cp))| {
                let i = r / dim;
                if fixed[r] {
                    row.fill(0.0);
                    return;
                }
                let cols = &pattern.col[pattern.row_ptr[r] as usize..pattern.row_ptr[r + 1] as usize];
                for (v, &col) in row.iter_mut().zip(cols) {
                    let diag = if col as usize == r { 2.0 * m[i] / (dt * dt) } else { 0.0 };
                    *v = (diag - *v) / d[i];
                }
                *cp = (c[i] / (2.0 * dt) - m[i] / (dt * dt)) / d[i];
            });
        let mut src: Vec<(u32, f64)> =
            src.into_iter().filter(|&(r, _)| !fixed[r as usize]).map(|(r, f)| (r, f / d[r as usize / dim])).collect();
        // Sorted by dof, each once: the kernels find a dof's entry by bisection.
        src.sort_by_key(|p| p.0);
        assert!(src.windows(2).all(|w| w[0].0 < w[1].0), "a source node is listed twice");
        let (src_dof, src_coef): (Vec<u32>, Vec<f64>) = src.into_iter().unzip();
        let row_bound = (0..dim * n)
            .into_par_iter()
            .map(|r| kp[pattern.row_ptr[r] as usize..pattern.row_ptr[r + 1] as usize].iter().map(|v| v.abs()).sum::<f64>() + cp[r].abs())
            .reduce(|| 0.0, f64::max);
        System { nodes: n, dim, pattern, kp, cp, src_dof, src_coef, rec_dof, row_bound }
    }

    /// Dofs: dim per node.
    pub fn dofs(&self) -> usize {
        self.dim * self.nodes
    }

    /// One step of Eq. (4) on the host in f64: next = K' curr + C' prev + F'(amp).
    ///
    /// A node's dim rows have the same columns (every dof of each neighbour, in order), so
    /// they are summed together from the first row's columns: the other rows' column indices
    /// are never read (in 2D, 40 bytes a node link instead of 48; the step is memory-bound).
    /// Each row's sum runs over its entries in their stored order, as a row-by-row CSR product
    /// does.
    pub fn step(&self, prev: &[f64], curr: &[f64], next: &mut [f64], amp: f64, parallel: bool) {
        match self.dim {
            2 => self.products::<2>(prev, curr, next, parallel),
            3 => self.products::<3>(prev, curr, next, parallel),
            d => panic!("Eq. (4) on the host: {d} dofs a node (2 or 3)"),
        }
        for (&d, &c) in self.src_dof.iter().zip(&self.src_coef) {
            next[d as usize] += c * amp;
        }
    }

    /// [`System::step`]'s K' curr + C' prev, with the dofs a node (`D`) known when compiled:
    /// the timed CPU methods run it, so its loops unroll as a hand-written 2D step's do.
    fn products<const D: usize>(&self, prev: &[f64], curr: &[f64], next: &mut [f64], parallel: bool) {
        let p = &self.pattern;
        let node = |i: usize, out: &mut [f64]| {
            let rows: [usize; D] = std::array::from_fn(|a| p.row_ptr[D * i + a] as usize);
            let mut s = [0.0f64; D];
            for (q, group) in p.col[rows[0]..p.row_ptr[D * i + 1] as usize].chunks_exact(D).enumerate() {
                let u: [f64; D] = std::array::from_fn(|b| curr[group[0] as usize + b]);
                for a in 0..D {
                    for (b, ub) in u.iter().enumerate() {
                        s[a] += self.kp[rows[a] + D * q + b] * ub;
                    }
                }
            }
            for a in 0..D {
                out[a] = s[a] + self.cp[D * i + a] * prev[D * i + a];
            }
        };
        if parallel {
            next.par_chunks_mut(D).enumerate().for_each(|(i, out)| node(i, out));
        } else {
            next.chunks_mut(D).enumerate().for_each(|(i, out)| node(i, out));
        }
    }

    /// `steps` host steps (f64, every core) from U_prev = U_curr = `start`, the force's amplitude
    /// at step k being `amp(k)`: U after them, and the receivers' values before each step
    /// (a value per receiver dof, step-major), as the device kernels record them.
    pub fn run_from(&self, start: Vec<f64>, steps: usize, amp: impl Fn(usize) -> f64) -> (Vec<f64>, Vec<f64>) {
        let (mut prev, mut curr, mut next) = (start.clone(), start, vec![0.0; self.dofs()]);
        let mut trace = Vec::with_capacity(steps * self.rec_dof.len());
        for k in 0..steps {
            trace.extend(self.rec_dof.iter().map(|&d| curr[d as usize]));
            self.step(&prev, &curr, &mut next, amp(k), true);
            std::mem::swap(&mut prev, &mut curr);
            std::mem::swap(&mut curr, &mut next);
        }
        (curr, trace)
    }

    /// C', the sources and the receivers at the positions `at` (dof d at `at[d]` of `len`).
    pub fn placed(&self, at: Vec<u32>, len: usize) -> Placed {
        let mut cp = vec![0.0f64; len];
        at.iter().zip(&self.cp).for_each(|(&q, &c)| cp[q as usize] = c);
        let mut src: Vec<(u32, f64)> = self.src_dof.iter().map(|&d| at[d as usize]).zip(self.src_coef.iter().copied()).collect();
        src.sort_by_key(|s| s.0);
        let (src_dof, src_coef) = src.into_iter().unzip();
        let rec_dof = self.rec_dof.iter().map(|&d| at[d as usize]).collect();
        Placed { len, at, cp, src_dof, src_coef, rec_dof }
    }
}

/// The dofs in a method's own order on the device: dof d at `at[d]` of `len` positions (others
/// unused), with C' there, the sources (ascending positions, each once: the kernels bisect) and
/// the receivers (in the model's order).
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub struct Placed {
    pub len: usize,
    pub at: Vec<u32>,
    pub cp: Vec<f64>,
    pub src_dof: Vec<u32>,
    pub src_coef: Vec<f64>,
    pub rec_dof: Vec<u32>,
}

impl Placed {
    /// A vector in placed order back in dof order.
    pub fn to_dofs(&self, u: &[f64]) -> Vec<f64> {
        self.at.iter().map(|&q| u[q as usize]).collect()
    }
    /// A vector in dof order at the placed positions (unused ones zero).
    pub fn from_dofs(&self, u: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.len];
        self.at.iter().zip(u).for_each(|(&q, &v)| out[q as usize] = v);
        out
    }
}

/// Whether node i's `dim` rows of `pattern` (nodes 0..n) hold the same columns, in groups of
/// the `dim` dofs of each neighbour, as [`System::step`] and the sliced ELL read them.
pub fn grouped(pattern: &Pattern, dim: usize, n: usize) -> bool {
    (0..n).into_par_iter().all(|i| {
        let row = |a: usize| &pattern.col[pattern.row_ptr[dim * i + a] as usize..pattern.row_ptr[dim * i + a + 1] as usize];
        let first = row(0);
        (1..dim).all(|a| row(a) == first)
            && first.len().is_multiple_of(dim)
            && first.chunks_exact(dim).all(|c| c[0] as usize % dim == 0 && c.iter().enumerate().all(|(b, &v)| v == c[0] + b as u32))
    })
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
    for r in (0..sys.dofs()).filter(|&r| keep(r)) {
        let mi = m[r / sys.dim];
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
