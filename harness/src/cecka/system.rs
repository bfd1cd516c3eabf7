//! The assembled system of the test problem: free degrees of freedom, the CSR pattern, each
//! element's slots in it, the element subroutine, and the CPU reference assembly (Algorithm 1,
//! serial as the paper's baseline, and colored + rayon-parallel).

use rayon::prelude::*;

use super::mesh::{self, LagrangeMesh};
use fembench_fem::lagrange::ReferenceIntegrals;

/// Heat source f of section 6.1.
pub const SOURCE_F: f64 = 0.1;

/// Everything host-side about one (mesh level, order): built once, shared by every case.
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
        let prescribed = mesh.prescribed.clone();
        let g: Vec<f64> = prescribed.iter().map(|v| v.unwrap_or(0.0)).collect();
        let mut dof = vec![-1i32; mesh.num_nodes()];
        let mut n_free = 0usize;
        for (d, p) in dof.iter_mut().zip(&prescribed) {
            if p.is_none() {
                *d = n_free as i32;
                n_free += 1;
            }
        }
        let en = mesh.nodes_per_element;
        let ne = mesh.num_elements();
        // Pattern: every (free row, free column) pair of every element, sorted and unique.
        let mut pairs: Vec<u64> = (0..ne)
            .into_par_iter()
            .flat_map_iter(|e| {
                let nodes = mesh.element(e);
                let dof = &dof;
                nodes.iter().flat_map(move |&a| {
                    nodes.iter().filter_map(move |&b| {
                        let (r, c) = (dof[a as usize], dof[b as usize]);
                        (r >= 0 && c >= 0).then(|| ((r as u64) << 32) | c as u64)
                    })
                })
            })
            .collect();
        pairs.par_sort_unstable();
        pairs.dedup();
        let mut row_ptr = vec![0u32; n_free + 1];
        for &p in &pairs {
            row_ptr[(p >> 32) as usize + 1] += 1;
        }
        for r in 0..n_free {
            row_ptr[r + 1] += row_ptr[r];
        }
        let col: Vec<u32> = pairs.iter().map(|&p| p as u32).collect();
        drop(pairs);
        let slots: Vec<i32> = (0..ne)
            .into_par_iter()
            .flat_map_iter(|e| {
                let nodes = mesh.element(e);
                let (dof, row_ptr, col) = (&dof, &row_ptr, &col);
                nodes.iter().flat_map(move |&a| {
                    nodes.iter().map(move |&b| {
                        let (r, c) = (dof[a as usize], dof[b as usize]);
                        if r < 0 || c < 0 {
                            return -1;
                        }
                        let row = &col[row_ptr[r as usize] as usize..row_ptr[r as usize + 1] as usize];
                        match row.binary_search(&(c as u32)) {
                            Ok(i) => (row_ptr[r as usize] as usize + i) as i32,
                            Err(_) => -1,
                        }
                    })
                })
            })
            .collect();
        debug_assert_eq!(slots.len(), ne * en * en);
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
#[derive(Debug, Clone, PartialEq)]
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
mod tests {
    use super::*;

    #[test]
    fn the_slot_free_path_gives_the_serial_system_and_catches_a_bad_slot() {
        let mut p = Problem::new(1, 2);
        let a = assemble_serial(&p);
        let b = assemble_by_search(&p);
        let (over, _) = check_bounds(&a.vals, &a.rhs, &b, &error_bounds(&p, false), f64::EPSILON / 2.0);
        assert_eq!(over, 0);
        // A wrong slot (as a bug in the pattern code would give) makes the two differ.
        let k = p.slots.iter().position(|&s| s > 0).unwrap();
        p.slots[k] -= 1;
        let bad = assemble_serial(&p);
        let (over, _) = check_bounds(&bad.vals, &bad.rhs, &b, &error_bounds(&p, false), f64::EPSILON / 2.0);
        assert!(over > 0);
    }

    #[test]
    fn in_place_assembly_reuses_the_system_and_zeroes_it() {
        let p = Problem::new(1, 1);
        let mut s = System { vals: vec![9.0; p.nnz()], rhs: vec![9.0; p.n_free] };
        let ptr = s.vals.as_ptr();
        assemble_serial_into(&p, &mut s);
        assert_eq!(s.vals.as_ptr(), ptr, "no new allocation");
        assert_eq!(s, assemble_serial(&p));
        let colors = color_elements(&p.mesh, 0).unwrap();
        let mut t = System { vals: vec![9.0; p.nnz()], rhs: vec![9.0; p.n_free] };
        assemble_parallel_into(&p, &colors, &mut t);
        let (over, _) = check_bounds(&t.vals, &t.rhs, &s, &error_bounds(&p, false), f64::EPSILON / 2.0);
        assert_eq!(over, 0);
    }

    #[test]
    fn the_dummy_system_differs_from_the_full_one_and_zeros_fail_both() {
        let p = Problem::new(1, 2);
        let full = assemble_serial(&p);
        let dummy = assemble_dummy(&p);
        let u = f32::EPSILON as f64 / 2.0;
        let (over, _) = check_bounds(&dummy.vals, &dummy.rhs, &full, &error_bounds(&p, false), u);
        assert!(over > 0, "the dummy system must not pass as the full one");
        let zeros = (vec![0.0; p.nnz()], vec![0.0; p.n_free]);
        for (reference, dummy) in [(&full, false), (&dummy, true)] {
            let (over, _) = check_bounds(&zeros.0, &zeros.1, reference, &error_bounds(&p, dummy), u);
            assert!(over > p.nnz() / 2, "outputs nobody wrote must fail");
        }
    }

    /// The f32 bound holds for the system assembled with every input and operation rounded to
    /// f32 (as the kernels compute it), and is tight enough that an error of a few bounds in
    /// one entry fails.
    #[test]
    fn f32_assembly_is_within_its_per_entry_bound_and_a_planted_error_is_not() {
        for (level, order) in [(2, 1), (1, 3), (0, 6)] {
            let p = Problem::new(level, order);
            let reference = assemble_serial(&p);
            let en = p.en();
            let r32 = |v: f64| v as f32;
            let mut vals = vec![0.0f32; p.nnz()];
            let mut rhs = vec![0.0f32; p.n_free];
            for e in 0..p.ne() {
                let nodes = p.mesh.element(e);
                let x: Vec<f32> = nodes.iter().map(|&n| r32(p.mesh.x[n as usize])).collect();
                let y: Vec<f32> = nodes.iter().map(|&n| r32(p.mesh.y[n as usize])).collect();
                let (ax, ay, bx, by) = (x[1] - x[0], y[1] - y[0], x[2] - x[0], y[2] - y[0]);
                let det = ax * by - ay * bx;
                let inv = 1.0 / det;
                let (cxx, cxy, cyy) = ((bx * bx + by * by) * inv, -(ax * bx + ay * by) * inv, (ax * ax + ay * ay) * inv);
                for i in 0..en {
                    let mut fi = r32(SOURCE_F) * det * r32(p.refs.m[i]);
                    for j in 0..en {
                        let k = i * en + j;
                        let a = cxx * r32(p.refs.sxx[k]) + cxy * r32(p.refs.sxy[k]) + cyy * r32(p.refs.syy[k]);
                        fi -= a * r32(p.g[nodes[j] as usize]);
                        if p.slots[e * en * en + k] >= 0 {
                            vals[p.slots[e * en * en + k] as usize] += a;
                        }
                    }
                    let d = p.dof[nodes[i] as usize];
                    if d >= 0 {
                        rhs[d as usize] += fi;
                    }
                }
            }
            let mut got: (Vec<f64>, Vec<f64>) = (vals.iter().map(|&v| v as f64).collect(), rhs.iter().map(|&v| v as f64).collect());
            let u = f32::EPSILON as f64 / 2.0;
            let bounds = error_bounds(&p, false);
            let (over, worst) = check_bounds(&got.0, &got.1, &reference, &bounds, u);
            if over > 0 {
                for (name, g, r, b) in [("vals", &got.0, &reference.vals, &bounds.vals), ("rhs", &got.1, &reference.rhs, &bounds.rhs)] {
                    for k in 0..g.len() {
                        if (g[k] - r[k]).abs() > u * b[k] {
                            eprintln!("{name}[{k}]: got {} ref {} bound {}", g[k], r[k], u * b[k]);
                        }
                    }
                }
            }
            assert_eq!(over, 0, "level {level} order {order}: worst error/bound {worst}");
            let k = p.nnz() / 2;
            got.0[k] = reference.vals[k] + 4.0 * u * bounds.vals[k];
            assert!(check_bounds(&got.0, &got.1, &reference, &bounds, u).0 >= 1);
        }
    }

    /// The full (no Dirichlet) stiffness matrix applied to nodal values of u, per node.
    fn apply_full_stiffness(p: &Problem, u: impl Fn(f64, f64) -> f64) -> (Vec<f64>, Vec<f64>) {
        let en = p.en();
        let n = p.mesh.num_nodes();
        let (mut ku, mut load) = (vec![0.0; n], vec![0.0; n]);
        let (mut a_e, mut f_e) = (vec![0.0; en * en], vec![0.0; en]);
        // No Dirichlet folding: element_with(zeros) gives the plain A^e and f∫φ.
        let g0 = vec![0.0; n];
        for e in 0..p.ne() {
            p.element_with(e, &g0, &mut a_e, &mut f_e);
            let nodes = p.mesh.element(e);
            for i in 0..en {
                load[nodes[i] as usize] += f_e[i] / SOURCE_F;
                for j in 0..en {
                    let nj = nodes[j] as usize;
                    ku[nodes[i] as usize] += a_e[i * en + j] * u(p.mesh.x[nj], p.mesh.y[nj]);
                }
            }
        }
        (ku, load)
    }

    fn on_boundary(p: &Problem, i: usize) -> bool {
        // Nodes on the outer rectangle or on a hole polygon: test rows away from all of them.
        let (x, y) = (p.mesh.x[i], p.mesh.y[i]);
        let near_hole = [(1.0, 1.0, 0.35), (2.2, 0.7, 0.3), (3.1, 1.3, 0.4)]
            .iter()
            .any(|&(cx, cy, r): &(f64, f64, f64)| ((x - cx).powi(2) + (y - cy).powi(2)).sqrt() < r + 1e-9);
        x < 1e-9 || y < 1e-9 || (x - mesh::WIDTH).abs() < 1e-9 || (y - mesh::HEIGHT).abs() < 1e-9 || near_hole
    }

    #[test]
    fn patch_test_linear_fields_give_zero_interior_residual() {
        for k in 1..=4 {
            let p = Problem::new(1, k);
            let (ku, _) = apply_full_stiffness(&p, |x, y| 3.0 + 2.0 * x - 5.0 * y);
            let worst = (0..p.mesh.num_nodes()).filter(|&i| !on_boundary(&p, i)).map(|i| ku[i].abs()).fold(0.0, f64::max);
            assert!(worst < 1e-9, "k={k}: interior residual {worst}");
        }
    }

    #[test]
    fn polynomial_exactness_of_the_order_k_space() {
        // u = x^2 + y^2 lies in the space for k >= 2 and -Δu = -4, so a(u, φi) = -4 ∫ φi at
        // interior nodes, exactly (the reference integrals are exact).
        for k in 2..=5 {
            let p = Problem::new(1, k);
            let (ku, load) = apply_full_stiffness(&p, |x, y| x * x + y * y);
            let scale = load.iter().fold(0.0f64, |m, v| m.max(4.0 * v.abs()));
            let worst = (0..p.mesh.num_nodes()).filter(|&i| !on_boundary(&p, i)).map(|i| (ku[i] + 4.0 * load[i]).abs()).fold(0.0, f64::max);
            // Round-off of the monomial basis grows with k; a wrong space misses by O(1).
            assert!(worst < 1e-6 * scale, "k={k}: {worst} against {scale}");
        }
    }

    #[test]
    fn parallel_colored_assembly_equals_serial() {
        for k in [1, 3] {
            let p = Problem::new(2, k);
            let serial = assemble_serial(&p);
            let colors = color_elements(&p.mesh, 0).unwrap();
            let parallel = assemble_parallel(&p, &colors);
            let c = compare(&parallel.vals, &parallel.rhs, &serial);
            assert!(c.max_scaled < 1e-13, "k={k}: {c:?}");
        }
    }

    #[test]
    fn coloring_is_proper_balanced_and_honours_min_colors() {
        let p = Problem::new(2, 1);
        for min in [0, 16] {
            let colors = color_elements(&p.mesh, min).unwrap();
            assert!(colors.len() >= min.max(1));
            let mut seen = vec![false; p.ne()];
            for g in &colors {
                let mut owner = std::collections::HashMap::new();
                for &e in g {
                    assert!(!seen[e as usize]);
                    seen[e as usize] = true;
                    for &v in p.mesh.element(e as usize) {
                        assert!(owner.insert(v, e).is_none(), "two elements of one color share node {v}");
                    }
                }
            }
            assert!(seen.iter().all(|&s| s));
            let (lo, hi) = (colors.iter().map(Vec::len).min().unwrap(), colors.iter().map(Vec::len).max().unwrap());
            assert!(hi <= 2 * lo + 8, "unbalanced colors: {lo}..{hi}");
        }
    }

    #[test]
    fn system_is_symmetric_and_dirichlet_values_drive_the_rhs() {
        let p = Problem::new(1, 2);
        let s = assemble_serial(&p);
        for r in 0..p.n_free {
            for idx in p.row_ptr[r]..p.row_ptr[r + 1] {
                let c = p.col[idx as usize] as usize;
                let row = &p.col[p.row_ptr[c] as usize..p.row_ptr[c + 1] as usize];
                let t = p.row_ptr[c] as usize + row.binary_search(&(r as u32)).unwrap();
                assert!((s.vals[idx as usize] - s.vals[t]).abs() < 1e-12);
            }
        }
        // Hot side at 200, cold at 10: the rhs is dominated by the boundary terms.
        assert!(s.rhs.iter().any(|&v| v > 10.0));
    }
}
