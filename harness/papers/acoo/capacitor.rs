//! The paper's model problem: a parallel-plate capacitor in 2D. Two plates 2 in long and 1/64 in
//! thick, 1/32 in apart, the upper at 48 V and the lower at 0 V, inside a box of air whose outer
//! boundary is held at 0 V. The paper does not give the box: ours is 8 in x 6 in (four plate
//! lengths wide), centred on the plates. The plates are conductors, so they are holes in the
//! mesh whose boundaries carry the potentials; Laplace's equation holds in the air (uniform
//! permittivity, which then drops out). Units: inches and volts.
//!
//! P1 triangles by constrained Delaunay refinement (spade), with the plates' sides split into
//! segments of 1/128 in so the mesh is fine near them and grades away; uniform refinement (x4
//! triangles per level) gives the sweep. The CPU reference: the system over the free nodes in
//! CSR (Dirichlet values eliminated into the right-hand side) and conjugate gradients in f64.

use rayon::prelude::*;

use fembench_fem::csr::{free_dofs, Pattern};
use fembench_fem::trimesh::{delaunay, refined, renumbered_rcm, TriMesh};

pub const PLATE_LENGTH: f64 = 2.0;
pub const PLATE_THICKNESS: f64 = 1.0 / 64.0;
pub const GAP: f64 = 1.0 / 32.0;
pub const VOLTAGE: f64 = 48.0;
pub const BOX_WIDTH: f64 = 8.0;
pub const BOX_HEIGHT: f64 = 6.0;
/// Segment length along the plates' sides.
const PLATE_SEGMENT: f64 = 1.0 / 128.0;
/// Largest triangle of the coarse mesh, far from the plates (in^2).
const COARSE_MAX_AREA: f64 = 0.02;

/// Points along a closed rectangle, `h` apart at most, counter-clockwise from (x0, y0).
fn rectangle(x0: f64, y0: f64, x1: f64, y1: f64, h: f64) -> Vec<(f64, f64)> {
    let side = |a: (f64, f64), b: (f64, f64)| {
        let n = (((b.0 - a.0).abs() + (b.1 - a.1).abs()) / h).ceil().max(1.0) as usize;
        (0..n).map(move |i| (a.0 + (b.0 - a.0) * i as f64 / n as f64, a.1 + (b.1 - a.1) * i as f64 / n as f64))
    };
    let c = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)];
    (0..4).flat_map(|i| side(c[i], c[(i + 1) % 4])).collect()
}

/// The coarse mesh (7.6K triangles) with its Dirichlet edges.
pub fn coarse() -> TriMesh {
    let (hl, hg) = (PLATE_LENGTH / 2.0, GAP / 2.0);
    let loops = vec![
        rectangle(-BOX_WIDTH / 2.0, -BOX_HEIGHT / 2.0, BOX_WIDTH / 2.0, BOX_HEIGHT / 2.0, 0.25),
        rectangle(-hl, hg, hl, hg + PLATE_THICKNESS, PLATE_SEGMENT),
        rectangle(-hl, -hg - PLATE_THICKNESS, hl, -hg, PLATE_SEGMENT),
    ];
    let mut m = delaunay(&loops, 28.0, COARSE_MAX_AREA);
    let on_box = |p: [f64; 2]| (p[0].abs() - BOX_WIDTH / 2.0).abs() < 1e-12 || (p[1].abs() - BOX_HEIGHT / 2.0).abs() < 1e-12;
    m.dirichlet = m
        .boundary_edges()
        .into_iter()
        .map(|[a, b]| {
            let (pa, pb) = (m.points[a as usize], m.points[b as usize]);
            let value = if on_box(pa) && on_box(pb) {
                0.0
            } else if pa[1] > 0.0 {
                VOLTAGE
            } else {
                0.0
            };
            ([a, b], value)
        })
        .collect();
    m
}

/// The mesh of refinement level `level` (x4 triangles per level), its nodes in reverse
/// Cuthill-McKee order (and so the free unknowns and the CSR rows): neighbours lie near each
/// other in memory, as a user orders a mesh for a CG.
pub fn mesh(level: usize) -> TriMesh {
    renumbered_rcm(&refined(coarse(), level))
}

/// Everything host-side about one mesh: nodes, triangles, the free-node numbering, the CSR
/// pattern over free nodes and each element's slots in it.
pub struct Capacitor {
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    pub tris: Vec<[u32; 3]>,
    /// Prescribed potential per node (0 where free).
    pub g: Vec<f64>,
    /// Free index per node, -1 where prescribed.
    pub dof: Vec<i32>,
    pub n_free: usize,
    pub pattern: Pattern,
    /// `slots[9 e + 3 i + j]`: CSR index of element e's entry (i, j), -1 if prescribed.
    pub slots: Vec<i32>,
}

/// The P1 stiffness matrix of a triangle for -div(grad u): (b_i b_j + c_i c_j) / (4 A).
pub fn element_matrix(x: [f64; 3], y: [f64; 3]) -> [f64; 9] {
    let b = [y[1] - y[2], y[2] - y[0], y[0] - y[1]];
    let c = [x[2] - x[1], x[0] - x[2], x[1] - x[0]];
    let area4 = 2.0 * (b[0] * c[1] - b[1] * c[0]);
    let mut k = [0.0; 9];
    for i in 0..3 {
        for j in 0..3 {
            k[3 * i + j] = (b[i] * b[j] + c[i] * c[j]) / area4;
        }
    }
    k
}

impl Capacitor {
    pub fn new(level: usize) -> Capacitor {
        Capacitor::from_mesh(&mesh(level))
    }

    pub fn from_mesh(m: &TriMesh) -> Capacitor {
        let n = m.points.len();
        let mut prescribed = vec![None; n];
        for &([a, b], v) in &m.dirichlet {
            // A node on the box and a plate cannot happen; a plate value wins over 0 otherwise.
            for p in [a, b] {
                let e: &mut Option<f64> = &mut prescribed[p as usize];
                *e = Some(e.map_or(v, |old: f64| old.max(v)));
            }
        }
        let g: Vec<f64> = prescribed.iter().map(|p| p.unwrap_or(0.0)).collect();
        let (dof, n_free) = free_dofs(prescribed.iter().map(Option::is_some));
        let tris = m.tris.clone();
        let element_dofs = |e: usize, out: &mut Vec<i32>| out.extend(tris[e].iter().map(|&v| dof[v as usize]));
        let pattern = Pattern::of_elements(n_free, tris.len(), element_dofs);
        let slots = pattern.slots(tris.len(), 3, element_dofs);
        Capacitor {
            x: m.points.iter().map(|p| p[0]).collect(),
            y: m.points.iter().map(|p| p[1]).collect(),
            tris,
            g,
            dof,
            n_free,
            pattern,
            slots,
        }
    }

    pub fn num_nodes(&self) -> usize {
        self.x.len()
    }
    /// The connectivity as coloring sees it.
    pub fn elements(&self) -> fembench_fem::elements::Elements<'_> {
        fembench_fem::elements::Elements {
            nodes: bytemuck::cast_slice(&self.tris),
            per_element: 3,
            corners: 3,
            num_nodes: self.num_nodes(),
        }
    }
    pub fn num_elements(&self) -> usize {
        self.tris.len()
    }
    pub fn element(&self, e: usize) -> [f64; 9] {
        let t = self.tris[e];
        element_matrix(t.map(|v| self.x[v as usize]), t.map(|v| self.y[v as usize]))
    }

    /// Element e's contributions: `val(slot, v)` for the matrix over free nodes, `rhs(row, v)`
    /// for the right-hand side -K_fd g of its prescribed columns.
    pub fn contributions(&self, e: usize, mut val: impl FnMut(usize, f64), mut rhs: impl FnMut(usize, f64)) {
        let (t, k) = (self.tris[e], self.element(e));
        for i in 0..3 {
            let r = self.dof[t[i] as usize];
            if r < 0 {
                continue;
            }
            for j in 0..3 {
                match self.slots[9 * e + 3 * i + j] {
                    s if s >= 0 => val(s as usize, k[3 * i + j]),
                    _ => rhs(r as usize, -k[3 * i + j] * self.g[t[j] as usize]),
                }
            }
        }
    }

    /// Serial assembly (the paper's sequential FEM): CSR values over the free nodes and the
    /// right-hand side -K_fd g, into allocated arrays (zeroed here).
    pub fn assemble_into(&self, vals: &mut [f64], rhs: &mut [f64]) {
        vals.fill(0.0);
        rhs.fill(0.0);
        for e in 0..self.num_elements() {
            self.contributions(e, |s, v| vals[s] += v, |r, v| rhs[r] += v);
        }
    }

    /// The reference assembly, independent of the precomputed slots that the methods use:
    /// every free-free entry as a (row, column) triplet, sorted and summed (the pattern is then
    /// checked against the CSR one), the right-hand side from the prescribed columns directly.
    pub fn assemble_by_sorting(&self) -> (Vec<f64>, Vec<f64>) {
        let mut triplets: Vec<(u64, f64)> = Vec::with_capacity(9 * self.num_elements());
        let mut rhs = vec![0.0; self.n_free];
        for (e, t) in self.tris.iter().enumerate() {
            let k = self.element(e);
            for i in 0..3 {
                let r = self.dof[t[i] as usize];
                for j in 0..3 {
                    let c = self.dof[t[j] as usize];
                    match (r >= 0, c >= 0) {
                        (true, true) => triplets.push((((r as u64) << 32) | c as u64, k[3 * i + j])),
                        (true, false) => rhs[r as usize] -= k[3 * i + j] * self.g[t[j] as usize],
                        _ => {}
                    }
                }
            }
        }
        triplets.sort_by_key(|t| t.0);
        let mut vals = Vec::with_capacity(self.pattern.nnz());
        let mut last = u64::MAX;
        for (key, v) in triplets {
            if key == last {
                *vals.last_mut().expect("a previous entry") += v;
            } else {
                let s = vals.len();
                assert!(
                    self.pattern.slot((key >> 32) as usize, (key & 0xffff_ffff) as usize) == Some(s),
                    "entry {s} of the sorted triplets is not the CSR pattern's"
                );
                vals.push(v);
                last = key;
            }
        }
        assert_eq!(vals.len(), self.pattern.nnz(), "the triplets and the CSR pattern differ");
        (vals, rhs)
    }

    /// The potential at every node from the free-node solution.
    pub fn potential(&self, u_free: &[f64]) -> Vec<f64> {
        self.dof.iter().zip(&self.g).map(|(&d, &g)| if d >= 0 { u_free[d as usize] } else { g }).collect()
    }
}

/// The fewest vector entries (or matrix rows) one rayon task takes in the CG's loops: a loop over
/// fewer runs on fewer threads, so that waking every core of a large host costs less than the
/// loop itself (a CG iteration is six such loops).
const PAR_MIN: usize = 8192;

/// y = A x for a CSR matrix, rows in parallel.
pub fn spmv(p: &Pattern, vals: &[f64], x: &[f64], y: &mut [f64]) {
    y.par_iter_mut().enumerate().with_min_len(PAR_MIN / 8).for_each(|(r, yr)| {
        *yr = (p.row_ptr[r] as usize..p.row_ptr[r + 1] as usize).map(|k| vals[k] * x[p.col[k] as usize]).sum();
    });
}

/// What a CG solve gives: the solution, its iterations, and its final relative residual.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Solve {
    pub x: Vec<f64>,
    pub iterations: usize,
    pub relative_residual: f64,
    /// ||r|| / ||b|| after each iteration.
    pub history: Vec<f64>,
    // The solver's work vectors (not kept in the prepared-problem cache).
    #[serde(skip)]
    r: Vec<f64>,
    #[serde(skip)]
    p: Vec<f64>,
    #[serde(skip)]
    q: Vec<f64>,
}

impl Solve {
    /// The iteration at which ||r|| <= tol ||b|| was first reached (CG to a tighter tolerance
    /// passes through every looser one on the way).
    pub fn iterations_to(&self, tol: f64) -> Option<usize> {
        self.history.iter().position(|&h| h <= tol).map(|i| i + 1)
    }
}

/// Conjugate gradients from x = 0 until ||r|| <= tol ||b|| (or `max_iter`), with the matrix
/// given as a product `apply(p, q)`: q = A p. The same recurrences as the device CG.
pub fn cg(b: &[f64], tol: f64, max_iter: usize, apply: impl FnMut(&[f64], &mut [f64])) -> Solve {
    let mut s = Solve::workspace(b.len(), max_iter);
    s.solve(b, tol, max_iter, apply);
    s
}

impl Solve {
    /// Vectors and residual history for systems of `n` unknowns, allocated once, so that a timed
    /// solve allocates nothing.
    pub fn workspace(n: usize, max_iter: usize) -> Solve {
        Solve {
            x: vec![0.0; n],
            iterations: 0,
            relative_residual: f64::NAN,
            history: Vec::with_capacity(max_iter),
            r: vec![0.0; n],
            p: vec![0.0; n],
            q: vec![0.0; n],
        }
    }

    /// [`cg`] into this workspace.
    pub fn solve(&mut self, b: &[f64], tol: f64, max_iter: usize, mut apply: impl FnMut(&[f64], &mut [f64])) {
        let dot = |a: &[f64], c: &[f64]| a.par_iter().zip(c).with_min_len(PAR_MIN).map(|(u, v)| u * v).sum::<f64>();
        let (x, r, p, q) = (&mut self.x, &mut self.r, &mut self.p, &mut self.q);
        x.fill(0.0);
        r.copy_from_slice(b);
        p.copy_from_slice(b);
        self.history.clear();
        let bb = dot(b, b);
        let mut rr = bb;
        let mut it = 0;
        while it < max_iter && rr > tol * tol * bb {
            apply(p, q);
            let alpha = rr / dot(p, q);
            x.par_iter_mut().zip(&*p).with_min_len(PAR_MIN).for_each(|(x, p)| *x += alpha * p);
            r.par_iter_mut().zip(&*q).with_min_len(PAR_MIN).for_each(|(r, q)| *r -= alpha * q);
            let rr_new = dot(r, r);
            let beta = rr_new / rr;
            p.par_iter_mut().zip(&*r).with_min_len(PAR_MIN).for_each(|(p, r)| *p = r + beta * *p);
            rr = rr_new;
            if self.history.len() < self.history.capacity() {
                self.history.push((rr / bb.max(f64::MIN_POSITIVE)).sqrt());
            }
            it += 1;
        }
        self.iterations = it;
        self.relative_residual = (rr / bb.max(f64::MIN_POSITIVE)).sqrt();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_matrix_of_the_unit_right_triangle() {
        let k = element_matrix([0.0, 1.0, 0.0], [0.0, 0.0, 1.0]);
        let expect = [1.0, -0.5, -0.5, -0.5, 0.5, 0.0, -0.5, 0.0, 0.5];
        assert!(k.iter().zip(expect).all(|(a, b)| (a - b).abs() < 1e-15), "{k:?}");
    }

    #[test]
    fn the_mesh_has_the_plates_as_holes_and_the_papers_smallest_size() {
        let m = coarse();
        assert!((7_000..=14_000).contains(&m.tris.len()), "{} triangles", m.tris.len());
        assert!(m.signed_areas().all(|a| a > 0.0), "clockwise or degenerate triangle");
        let area: f64 = m.signed_areas().sum();
        let expect = BOX_WIDTH * BOX_HEIGHT - 2.0 * PLATE_LENGTH * PLATE_THICKNESS;
        assert!((area - expect).abs() < 1e-9, "area {area} vs {expect}");
    }

    /// Far from the plates' ends, the field in the gap is 48 V over 1/32 in (1536 V/in) and the
    /// potential halfway is 24 V: the uniform field of an ideal capacitor.
    #[test]
    fn the_field_between_the_plates_is_the_ideal_capacitors() {
        let c = Capacitor::new(0);
        let (mut vals, mut rhs) = (vec![0.0; c.pattern.nnz()], vec![0.0; c.n_free]);
        c.assemble_into(&mut vals, &mut rhs);
        let s = cg(&rhs, 1e-10, 10 * c.n_free, |p, q| spmv(&c.pattern, &vals, p, q));
        assert!(s.relative_residual <= 1e-10, "{s:?}");
        let u = c.potential(&s.x);
        // Nodes inside the gap, within the middle half of the plates.
        let mut checked = 0;
        for i in 0..c.num_nodes() {
            let (x, y) = (c.x[i], c.y[i]);
            if x.abs() < 0.5 && y.abs() < GAP / 2.0 - 1e-9 {
                let ideal = VOLTAGE * (0.5 + y / GAP);
                assert!((u[i] - ideal).abs() < 0.01 * VOLTAGE, "node ({x}, {y}): {} V, ideal {ideal} V", u[i]);
                checked += 1;
            }
        }
        assert!(checked >= 100, "only {checked} nodes in the gap");
        // Every potential lies between the plates' (maximum principle).
        assert!(u.iter().all(|&v| (-1e-9..=VOLTAGE + 1e-9).contains(&v)));
    }
}
