//! The assembled system of the test problem: free degrees of freedom, the CSR pattern, each
//! element's slots in it, the element subroutine, and the CPU reference assembly (Algorithm 1,
//! serial as the paper's baseline, and colored + rayon-parallel).

use rayon::prelude::*;

use super::mesh::{self, LagrangeMesh};
use fembench_fem::csr::{free_dofs, Pattern};
use fembench_fem::lagrange::ReferenceIntegrals;

/// Heat source f of section 6.1.
pub const SOURCE_F: f64 = 0.1;

/// Everything host-side about one (mesh level, order): built once, shared by every case.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Problem {
    pub level: usize,
    pub mesh: LagrangeMesh,
    pub refs: ReferenceIntegrals,
    /// Prescribed value per node (0 where free): F^e -= A^e g folds Dirichlet values in.
    pub g: Vec<f64>,
    /// Free-dof index per node, -1 where prescribed (approach 3 of section 3.3).
    pub dof: Vec<i32>,
    pub n_free: usize,
    pub row_ptr: Vec<u32>,
    pub col: Vec<u32>,
    /// Element-major: `slots[e*en*en + i*en + j]` is the CSR index of A^e(i, j), or -1.
    pub slots: Vec<i32>,
}

impl Problem {
    /// The plate with holes at refinement `level`, order `order`.
    pub fn new(level: usize, order: usize) -> Problem {
        Problem::from_p1(&mesh::plate(level), level, order)
    }

    /// Any P1 mesh with its Dirichlet edges (e.g. imported from Gmsh and refined `level` times).
    pub fn from_p1(p1: &mesh::TriMesh, level: usize, order: usize) -> Problem {
        let mesh = mesh::lagrange(p1, order);
        let refs = ReferenceIntegrals::new(order);
        let g: Vec<f64> = mesh.prescribed.iter().map(|v| v.unwrap_or(0.0)).collect();
        let (dof, n_free) = free_dofs(mesh.prescribed.iter().map(Option::is_some));
        let (en, ne) = (mesh.nodes_per_element, mesh.num_elements());
        // Pattern: every (free row, free column) pair of every element, sorted and unique.
        let element_dofs = |e: usize, out: &mut Vec<i32>| out.extend(mesh.element(e).iter().map(|&v| dof[v as usize]));
        let pattern = Pattern::of_elements(n_free, ne, element_dofs);
        let slots = pattern.slots(ne, en, element_dofs);
        let Pattern { row_ptr, col } = pattern;
        Problem { level, mesh, refs, g, dof, n_free, row_ptr, col, slots }
    }

    pub fn nnz(&self) -> usize {
        self.col.len()
    }
    pub fn en(&self) -> usize {
        self.mesh.nodes_per_element
    }
    pub fn ne(&self) -> usize {
        self.mesh.num_elements()
    }

    /// The element subroutine in f64: A^e (row-major en x en) and F^e with Dirichlet values
    /// folded in. Straight sides: J is constant, A^e = (1/det)((b.b) Sxx - (a.b) Sxy + (a.a) Syy).
    pub fn element(&self, e: usize, a_e: &mut [f64], f_e: &mut [f64]) {
        self.element_with(e, &self.g, a_e, f_e)
    }

    /// The element subroutine with other prescribed values `g` (zeros: plain A^e and f∫φ).
    pub fn element_with(&self, e: usize, g: &[f64], a_e: &mut [f64], f_e: &mut [f64]) {
        // Stack arrays: this runs inside the timed serial baseline (order 6 has 28 nodes).
        let nodes = self.mesh.element(e);
        let (mut xs, mut ys, mut gs) = ([0.0; 28], [0.0; 28], [0.0; 28]);
        for (a, &n) in nodes.iter().enumerate() {
            (xs[a], ys[a], gs[a]) = (self.mesh.x[n as usize], self.mesh.y[n as usize], g[n as usize]);
        }
        self.element_from_nodes(&xs, &ys, &gs, a_e, f_e)
    }

    /// The element subroutine on the element's own nodal data (coordinates and prescribed
    /// values in local node order), as the GPU kernels see it.
    pub fn element_from_nodes(&self, x: &[f64], y: &[f64], g: &[f64], a_e: &mut [f64], f_e: &mut [f64]) {
        let en = self.en();
        let (ax, ay) = (x[1] - x[0], y[1] - y[0]);
        let (bx, by) = (x[2] - x[0], y[2] - y[0]);
        let det = ax * by - ay * bx;
        let inv = 1.0 / det;
        let (cxx, cxy, cyy) = ((bx * bx + by * by) * inv, -(ax * bx + ay * by) * inv, (ax * ax + ay * ay) * inv);
        let r = &self.refs;
        for i in 0..en {
            let mut fi = SOURCE_F * det * r.m[i];
            for j in 0..en {
                let k = i * en + j;
                let aij = cxx * r.sxx[k] + cxy * r.sxy[k] + cyy * r.syy[k];
                a_e[k] = aij;
                fi -= aij * g[j];
            }
            f_e[i] = fi;
        }
    }
}

/// An assembled system: CSR values over `Problem::col` and the right-hand side.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct System {
    pub vals: Vec<f64>,
    pub rhs: Vec<f64>,
}

/// Algorithm 1, serial, f64: the paper's CPU baseline.
pub fn assemble_serial(p: &Problem) -> System {
    let mut s = System { vals: vec![0.0; p.nnz()], rhs: vec![0.0; p.n_free] };
    assemble_serial_into(p, &mut s);
    s
}

/// Algorithm 1 into an allocated system: zeroes it (part of the algorithm), then accumulates.
/// The timed CPU baseline calls this, so no repetition allocates.
pub fn assemble_serial_into(p: &Problem, s: &mut System) {
    let en = p.en();
    s.vals.iter_mut().for_each(|v| *v = 0.0);
    s.rhs.iter_mut().for_each(|v| *v = 0.0);
    // Stack arrays: order 6 has 28 nodes.
    let (mut a_store, mut f_store) = ([0.0; 28 * 28], [0.0; 28]);
    let (a_e, f_e) = (&mut a_store[..en * en], &mut f_store[..en]);
    for e in 0..p.ne() {
        p.element(e, a_e, f_e);
        let nodes = p.mesh.element(e);
        let slots = &p.slots[e * en * en..(e + 1) * en * en];
        for i in 0..en {
            let d = p.dof[nodes[i] as usize];
            if d >= 0 {
                s.rhs[d as usize] += f_e[i];
            }
            for j in 0..en {
                let slot = slots[i * en + j];
                if slot >= 0 {
                    s.vals[slot as usize] += a_e[i * en + j];
                }
            }
        }
    }
}

/// The same system by another path, to check the serial baseline against something other than
/// itself: no precomputed slots; each entry's CSR position is found by binary search in its
/// row's columns from the dof numbers of the element's nodes.
pub fn assemble_by_search(p: &Problem) -> System {
    let en = p.en();
    let mut s = System { vals: vec![0.0; p.nnz()], rhs: vec![0.0; p.n_free] };
    let (mut a_e, mut f_e) = (vec![0.0; en * en], vec![0.0; en]);
    for e in 0..p.ne() {
        p.element(e, &mut a_e, &mut f_e);
        let nodes = p.mesh.element(e);
        for i in 0..en {
            let r = p.dof[nodes[i] as usize];
            if r < 0 {
                continue;
            }
            s.rhs[r as usize] += f_e[i];
            let (lo, hi) = (p.row_ptr[r as usize] as usize, p.row_ptr[r as usize + 1] as usize);
            for j in 0..en {
                let c = p.dof[nodes[j] as usize];
                if c < 0 {
                    continue;
                }
                if let Ok(k) = p.col[lo..hi].binary_search(&(c as u32)) {
                    s.vals[lo + k] += a_e[i * en + j];
                }
            }
        }
    }
    s
}

/// An element's straight-sided geometry from its three vertices: edge vectors a = x1 - x0 and
/// b = x2 - x0, the determinant, the coefficients of the three-term combination, the third
/// edge's length and the largest coordinate magnitude.
struct Geometry {
    det: f64,
    cxx: f64,
    cxy: f64,
    cyy: f64,
    edges: [f64; 3],
    xmax: f64,
}

fn geometry(p: &Problem, e: usize) -> Geometry {
    let nodes = p.mesh.element(e);
    let pt = |a: usize| (p.mesh.x[nodes[a] as usize], p.mesh.y[nodes[a] as usize]);
    let ((x0, y0), (x1, y1), (x2, y2)) = (pt(0), pt(1), pt(2));
    let (ax, ay, bx, by) = (x1 - x0, y1 - y0, x2 - x0, y2 - y0);
    let det = ax * by - ay * bx;
    let inv = 1.0 / det;
    Geometry {
        det,
        cxx: (bx * bx + by * by) * inv,
        cxy: -(ax * bx + ay * by) * inv,
        cyy: (ax * ax + ay * ay) * inv,
        edges: [(ax * ax + ay * ay).sqrt(), (bx * bx + by * by).sqrt(), ((x2 - x1).powi(2) + (y2 - y1).powi(2)).sqrt()],
        xmax: [x0, y0, x1, y1, x2, y2].iter().fold(0.0f64, |m, v| m.max(v.abs())),
    }
}

/// The system the dummy element subroutine of the kernels assembles (Fig. 13b/14b: every
/// A^e(i, j) = cxx + cxy + cyy, F^e(i) = f det - sum_j A^e(i, j) g_j), so that a dummy kernel's
/// output is checked like any other: a dummy that writes nothing fails.
pub fn assemble_dummy(p: &Problem) -> System {
    let en = p.en();
    let mut s = System { vals: vec![0.0; p.nnz()], rhs: vec![0.0; p.n_free] };
    for e in 0..p.ne() {
        let nodes = p.mesh.element(e);
        let Geometry { det, cxx, cxy, cyy, .. } = geometry(p, e);
        let aij = cxx + cxy + cyy;
        let slots = &p.slots[e * en * en..(e + 1) * en * en];
        for i in 0..en {
            let mut fi = SOURCE_F * det;
            for j in 0..en {
                fi -= aij * p.g[nodes[j] as usize];
                let slot = slots[i * en + j];
                if slot >= 0 {
                    s.vals[slot as usize] += aij;
                }
            }
            let d = p.dof[nodes[i] as usize];
            if d >= 0 {
                s.rhs[d as usize] += fi;
            }
        }
    }
    s
}

/// Per-entry error bounds of a system assembled in floating point of unit roundoff `u`, in units
/// of `u` (multiply by u to use). For entry k with contributions c_e from elements e:
///
///   |computed - exact| <= u * sum_e T_e (C + 16 kappa_e) + u * m_k * sum_e |c_e|
///
/// - T_e: the sum of the magnitudes of the terms that make c_e, each coefficient taken at its
///   largest (|b|^2 |Sxx| + |a||b| |Sxy| + |a|^2 |Syy|, over |det|; and for F^e the source term
///   and each such term times |g_j|), so cancellation is covered, inside the combination and
///   inside a.b, which is near zero for right angles but not its rounding error;
/// - C = 32: the element subroutine's own rounding (about 10 operations to the geometric
///   coefficients, 5 to the combination, with margin);
/// - kappa_e = max |x| / shortest edge of element e: coordinates rounded to the device
///   precision perturb each edge vector by up to 2 u |x| relative to its length, which moves
///   the determinant and each geometric coefficient by up to about 12 u kappa (16 with margin);
/// - m_k: contributions to entry k (summation in any order, atomics included).
///
/// A dummy system uses the dummy subroutine's terms.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Bounds {
    pub vals: Vec<f64>,
    pub rhs: Vec<f64>,
}

pub fn error_bounds(p: &Problem, dummy: bool) -> Bounds {
    const C: f64 = 32.0;
    let en = p.en();
    let n = p.nnz();
    let (mut tv, mut av, mut mv) = (vec![0.0; n], vec![0.0; n], vec![0u32; n]);
    let (mut tr, mut ar, mut mr) = (vec![0.0; p.n_free], vec![0.0; p.n_free], vec![0u32; p.n_free]);
    let r = &p.refs;
    for e in 0..p.ne() {
        let nodes = p.mesh.element(e);
        let Geometry { det, cxx, cxy, cyy, edges: edge, xmax } = geometry(p, e);
        // The coefficients' magnitudes without cancellation: |b|^2, |a||b|, |a|^2 over |det|.
        let (mxx, mxy, myy) = (edge[1] * edge[1] / det.abs(), edge[0] * edge[1] / det.abs(), edge[0] * edge[0] / det.abs());
        let kappa = xmax / edge.iter().copied().fold(f64::INFINITY, f64::min);
        let w = C + 16.0 * kappa;
        let slots = &p.slots[e * en * en..(e + 1) * en * en];
        for i in 0..en {
            let (mut f_terms, mut f_abs) = if dummy {
                ((SOURCE_F * det).abs(), (SOURCE_F * det).abs())
            } else {
                let v = (SOURCE_F * det * r.m[i]).abs();
                (v, v)
            };
            for j in 0..en {
                let k = i * en + j;
                let (a, terms) = if dummy {
                    (cxx + cxy + cyy, mxx + mxy + myy)
                } else {
                    let a = cxx * r.sxx[k] + cxy * r.sxy[k] + cyy * r.syy[k];
                    (a, mxx * r.sxx[k].abs() + mxy * r.sxy[k].abs() + myy * r.syy[k].abs())
                };
                let g = p.g[nodes[j] as usize].abs();
                f_terms += terms * g;
                f_abs += (a * g).abs();
                let slot = slots[k];
                if slot >= 0 {
                    let s = slot as usize;
                    tv[s] += terms * w;
                    av[s] += a.abs();
                    mv[s] += 1;
                }
            }
            let d = p.dof[nodes[i] as usize];
            if d >= 0 {
                let d = d as usize;
                // F^e(i) adds en + 1 terms inside the element: count them in the sum's length.
                tr[d] += f_terms * w;
                ar[d] += f_abs;
                mr[d] += en as u32 + 1;
            }
        }
    }
    let vals = tv.iter().zip(&av).zip(&mv).map(|((t, a), m)| t + *m as f64 * a).collect();
    let rhs = tr.iter().zip(&ar).zip(&mr).map(|((t, a), m)| t + *m as f64 * a).collect();
    Bounds { vals, rhs }
}

/// [`error_bounds`] widened for a route that integrates by quadrature (a FEM library, Warp):
/// its entry (i, j) of an element is a sum over quadrature points of w |det| grad phi_i . grad phi_j,
/// whose rounding is a few u times the sum of the terms' magnitudes, at most sqrt(A^e(i, i)
/// A^e(j, j)) (Cauchy-Schwarz, the quadrature exact for these degrees), times 64 + 32 en. An entry whose formula
/// cancels exactly (a structural zero of the reference integrals) comes out as that rounding,
/// not 0. The right-hand side takes the same through the prescribed values, and its source term
/// the rounding of the element's load.
pub fn quadrature_bounds(p: &Problem, formula: &Bounds) -> Bounds {
    let (en, r) = (p.en(), &p.refs);
    // The terms' count grows with the order: more quadrature points, longer basis evaluations.
    let c = 64.0 + 32.0 * en as f64;
    let (mut vals, mut rhs) = (formula.vals.clone(), formula.rhs.clone());
    for e in 0..p.ne() {
        let nodes = p.mesh.element(e);
        let Geometry { det, cxx, cxy, cyy, .. } = geometry(p, e);
        let diag: Vec<f64> = (0..en).map(|i| (cxx * r.sxx[i * en + i] + cxy * r.sxy[i * en + i] + cyy * r.syy[i * en + i]).abs()).collect();
        let load = c * (SOURCE_F * det).abs() * r.m.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let slots = &p.slots[e * en * en..(e + 1) * en * en];
        for i in 0..en {
            let d = p.dof[nodes[i] as usize];
            for j in 0..en {
                let q = c * (diag[i] * diag[j]).sqrt();
                if slots[i * en + j] >= 0 {
                    vals[slots[i * en + j] as usize] += q;
                }
                if d >= 0 {
                    rhs[d as usize] += q * p.g[nodes[j] as usize].abs();
                }
            }
            if d >= 0 {
                rhs[d as usize] += load;
            }
        }
    }
    Bounds { vals, rhs }
}

/// Elements grouped so that no two in a group share a node (`fembench_fem::coloring`):
/// `min_colors` forces at least that many colors (Fig. 3 varies it), balanced.
pub fn color_elements(m: &LagrangeMesh, min_colors: usize) -> Result<Vec<Vec<u32>>, String> {
    fembench_fem::coloring::balanced(m.elements(), min_colors)
}

/// A pointer that may be shared across rayon tasks because the coloring guarantees that tasks
/// write disjoint entries.
#[derive(Clone, Copy)]
struct Shared(*mut f64);
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

/// Algorithm 1 in parallel: one color at a time, elements of a color across rayon's threads.
pub fn assemble_parallel(p: &Problem, colors: &[Vec<u32>]) -> System {
    let mut s = System { vals: vec![0.0; p.nnz()], rhs: vec![0.0; p.n_free] };
    assemble_parallel_into(p, colors, &mut s);
    s
}

/// [`assemble_parallel`] into an allocated system, zeroed in parallel first.
pub fn assemble_parallel_into(p: &Problem, colors: &[Vec<u32>], s: &mut System) {
    let en = p.en();
    s.vals.par_iter_mut().for_each(|v| *v = 0.0);
    s.rhs.par_iter_mut().for_each(|v| *v = 0.0);
    let vals = Shared(s.vals.as_mut_ptr());
    let rhs = Shared(s.rhs.as_mut_ptr());
    for group in colors {
        group.par_iter().for_each_init(
            || ([0.0; 28 * 28], [0.0; 28]),
            |(a_store, f_store), &e| {
                let (a_e, f_e) = (&mut a_store[..en * en], &mut f_store[..en]);
                let e = e as usize;
                p.element(e, a_e, f_e);
                let nodes = p.mesh.element(e);
                let slots = &p.slots[e * en * en..(e + 1) * en * en];
                let (vals, rhs) = (vals, rhs);
                for i in 0..en {
                    let d = p.dof[nodes[i] as usize];
                    // SAFETY: elements of one color share no node, hence no row, no slot and
                    // no rhs entry; the buffers outlive the loop.
                    unsafe {
                        if d >= 0 {
                            *rhs.0.add(d as usize) += f_e[i];
                        }
                        for j in 0..en {
                            let slot = slots[i * en + j];
                            if slot >= 0 {
                                *vals.0.add(slot as usize) += a_e[i * en + j];
                            }
                        }
                    }
                }
            },
        );
    }
}

pub use fembench_fem::verify::Comparison;

/// How many entries exceed their per-entry bound (`bounds` in units of `u`), and the largest
/// ratio of error to bound; NaN anywhere counts as exceeding.
pub fn check_bounds(vals: &[f64], rhs: &[f64], reference: &System, bounds: &Bounds, u: f64) -> (usize, f64) {
    fembench_fem::verify::check_bounds(&[(vals, &reference.vals, &bounds.vals), (rhs, &reference.rhs, &bounds.rhs)], u)
}

/// The matrix values and the right-hand side against the reference system.
pub fn compare(vals: &[f64], rhs: &[f64], reference: &System) -> Comparison {
    fembench_fem::verify::compare(&[(vals, &reference.vals), (rhs, &reference.rhs)])
}

#[cfg(test)]
#[path = "system_tests.rs"]
mod tests;
