//! A 3D model beyond the paper (issue: Pogo across GPUs), for the multi-GPU study: a steel
//! block meshed with eight-node hexahedra on a structured box (the element of Sanfui and
//! Sharma, [`crate::fem::hex8`], with row-sum lumped mass), three DOFs a node, no damping, its
//! bottom face (z = 0) held, a Hann-windowed 5 MHz force normal to the top face at its centre,
//! and two receivers: on the top face and on a side face. Eq. (4)'s operators are built node by
//! node in parallel on the box's structure (27 neighbours at most): the same K' that assembling
//! the elements gives (a test checks it), without an element slot map, which at 20M DOFs would
//! take more memory than K' itself.
//!
//! The paper's kernel and its memory arrangement (section 3.2) are written for triangles in a
//! plane with two DOFs a node; the 3D box runs on our sliced-ELL kernels only.

use rayon::prelude::*;

use super::model::{largest_eigenvalue, Material, Signal, WELD_SIGNAL};
use super::system::{Lumped, Stiffness, System};
use crate::fem::csr::{segments_mut, Pattern};
use crate::fem::hex8;
use crate::fem::hexmesh::{pattern_of, BoxMesh, Neighbours};

/// The block: its mesh, material, time step and loads.
pub struct HexBox {
    pub mesh: BoxMesh,
    pub material: Material,
    /// Edge length of every element.
    pub element_size: f64,
    pub dt: f64,
    /// Increments for the P wave to cross the block twice.
    pub increments: usize,
    pub signal: Signal,
    /// The node the force acts on (in -z).
    pub source: u32,
    pub receivers: Vec<u32>,
}

/// The element size of the box (0.1 mm: 12 elements a wavelength of the 5 MHz P wave in steel).
pub const BOX_ELEMENT: f64 = 1e-4;

/// The time step over the CFL limit of the box's elements.
const DT_SAFETY: f64 = 0.8;

impl HexBox {
    /// A cube of `n` nodes a side (3 n^3 DOFs: 190 gives 20.6M).
    pub fn new(n: usize) -> HexBox {
        let n = n.max(3);
        let h = BOX_ELEMENT;
        let side = (n - 1) as f64 * h;
        let mesh = BoxMesh::new([n; 3], [side; 3]);
        let material = Material::from_young(210e9, 0.3, 7850.0);
        let dt = DT_SAFETY * critical_dt(&material, h);
        let increments = (2.0 * side / material.vp() / dt).ceil() as usize;
        let id = |i: usize, j: usize, k: usize| ((k * n + j) * n + i) as u32;
        let (mid, top) = (n / 2, n - 1);
        HexBox {
            mesh,
            material,
            element_size: h,
            dt,
            increments,
            signal: WELD_SIGNAL,
            source: id(mid, mid, top),
            receivers: vec![id(3 * (n - 1) / 4, mid, top), id(top, mid, mid)],
        }
    }

    pub fn nodes(&self) -> usize {
        self.mesh.num_nodes()
    }

    pub fn dofs(&self) -> usize {
        3 * self.nodes()
    }

    /// The element stiffness of every element (they are equal: one cube of side h).
    fn element(&self) -> [f64; 576] {
        let (lambda, mu) = (self.material.lambda, self.material.mu);
        hex8::stiffness(&cube(self.element_size), lambda, mu, false)
    }

    /// Eq. (4)'s operators.
    pub fn system(&self) -> System {
        let [n, _, _] = self.mesh.nodes;
        let pattern = pattern_of(&Neighbours::of_box(&self.mesh));
        let k = self.stiffness(&pattern);
        let cell_mass = self.material.rho * self.element_size.powi(3) / 8.0;
        let m: Vec<f64> = (0..self.nodes()).map(|v| cell_mass * cells_of(n, v).count() as f64).collect();
        let c = vec![0.0; m.len()];
        let fixed: Vec<bool> = (0..self.dofs()).map(|r| r / 3 < n * n).collect();
        let src = vec![(3 * self.source + 2, -1.0)];
        let rec_dof = self.receivers.iter().flat_map(|&v| [3 * v, 3 * v + 1, 3 * v + 2]).collect();
        System::of_stiffness(Stiffness { dim: 3, pattern, k }, &Lumped { m, c, dt: self.dt }, &fixed, src, rec_dof)
    }

    /// K on `pattern` ([`pattern_of`] the box's neighbour lists), node by node in parallel: each node's rows sum the
    /// blocks of the (up to 8) elements around it.
    fn stiffness(&self, pattern: &Pattern) -> Vec<f64> {
        let [n, _, _] = self.mesh.nodes;
        let ke = self.element();
        let mut k = vec![0.0; pattern.nnz()];
        let per_node = (0..self.nodes()).map(|v| (pattern.row_ptr[3 * v + 3] - pattern.row_ptr[3 * v]) as usize);
        segments_mut(&mut k, per_node).into_par_iter().enumerate().for_each(|(v, vals)| {
            let links = vals.len() / 9;
            let at = grid(n, v);
            let first = neighbour_box(n, at);
            for cell in cells_of(n, v) {
                let a = corner_of(cell, at);
                for b in 0..8 {
                    let w = corner_at(cell, b);
                    let q = link_index(first, w);
                    for r in 0..3 {
                        for c in 0..3 {
                            vals[r * 3 * links + 3 * q + c] += ke[(3 * a + r) * 24 + 3 * b + c];
                        }
                    }
                }
            }
        });
        k
    }
}

/// The cube [0, h]^3 in the box's corner order.
fn cube(h: f64) -> [[f64; 3]; 8] {
    std::array::from_fn(|a| [(hex8::XI[a] + 1.0) / 2.0 * h, (hex8::ETA[a] + 1.0) / 2.0 * h, (hex8::ZETA[a] + 1.0) / 2.0 * h])
}

/// The largest stable time step of a cube of side h with row-sum lumped mass:
/// 2 / sqrt(lambda_max(M_e^-1 K_e)), which bounds the assembled system's largest eigenvalue.
pub fn critical_dt(material: &Material, h: f64) -> f64 {
    let k = hex8::stiffness(&cube(h), material.lambda, material.mu, false);
    let k: [[f64; 24]; 24] = std::array::from_fn(|r| std::array::from_fn(|c| k[r * 24 + c]));
    let start: [f64; 24] = std::array::from_fn(|i| 1.0 + 0.37 * ((i * 7) % 11) as f64 - 0.13 * (i % 3) as f64);
    let m = material.rho * h.powi(3) / 8.0;
    2.0 / (largest_eigenvalue(&k, start) / m).sqrt()
}

/// Node v's grid position (i, j, k) in a cube of n nodes a side.
fn grid(n: usize, v: usize) -> [usize; 3] {
    [v % n, (v / n) % n, v / (n * n)]
}

/// The first and last grid position of node `at`'s neighbours (itself included), per direction.
fn neighbour_box(n: usize, at: [usize; 3]) -> [[usize; 2]; 3] {
    at.map(|x| [x.saturating_sub(1), (x + 1).min(n - 1)])
}

/// The position of grid node `w` among the neighbours of `at` (ascending node number: z, then
/// y, then x).
fn link_index(first: [[usize; 2]; 3], w: [usize; 3]) -> usize {
    let width = first.map(|[lo, hi]| hi - lo + 1);
    ((w[2] - first[2][0]) * width[1] + (w[1] - first[1][0])) * width[0] + (w[0] - first[0][0])
}

/// The cells (their lowest corner) around node v.
fn cells_of(n: usize, v: usize) -> impl Iterator<Item = [usize; 3]> {
    let at = grid(n, v);
    let range = move |x: usize| x.saturating_sub(1)..x.min(n - 2) + 1;
    range(at[2]).flat_map(move |k| range(at[1]).flat_map(move |j| range(at[0]).map(move |i| [i, j, k])))
}

/// Corner a's offset in a cell, in the box's element order (bottom face counter-clockwise,
/// then the top face).
const CORNER: [[usize; 3]; 8] = [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]];

fn corner_at(cell: [usize; 3], a: usize) -> [usize; 3] {
    std::array::from_fn(|d| cell[d] + CORNER[a][d])
}

fn corner_of(cell: [usize; 3], at: [usize; 3]) -> usize {
    let off: [usize; 3] = std::array::from_fn(|d| at[d] - cell[d]);
    CORNER.iter().position(|&c| c == off).expect("a node of the cell")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// K assembled element by element on the generic pattern of the elements' couplings.
    fn assembled(b: &HexBox) -> (Pattern, Vec<f64>) {
        let e = b.mesh.elements();
        let dofs = |el: usize, out: &mut Vec<i32>| {
            out.extend(e.element(el).iter().flat_map(|&v| [3 * v as i32, 3 * v as i32 + 1, 3 * v as i32 + 2]))
        };
        let pattern = Pattern::of_elements(b.dofs(), e.len(), dofs);
        let slots = pattern.slots(e.len(), 24, dofs);
        let ke = b.element();
        let mut k = vec![0.0; pattern.nnz()];
        for el in 0..e.len() {
            for (t, &v) in ke.iter().enumerate() {
                k[slots[el * 576 + t] as usize] += v;
            }
        }
        (pattern, k)
    }

    #[test]
    fn the_node_by_node_stiffness_equals_the_element_assembly() {
        let b = HexBox::new(5);
        let (pattern, k) = assembled(&b);
        assert_eq!(pattern_of(&Neighbours::of_box(&b.mesh)), pattern);
        let ours = b.stiffness(&pattern);
        let scale = k.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (q, (a, e)) in ours.iter().zip(&k).enumerate() {
            assert!((a - e).abs() <= 1e-14 * scale, "entry {q}: {a} against {e}");
        }
    }

    #[test]
    fn a_rigid_translation_costs_no_force_and_the_mass_is_the_blocks() {
        let b = HexBox::new(6);
        let pattern = pattern_of(&Neighbours::of_box(&b.mesh));
        let k = b.stiffness(&pattern);
        let scale = k.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for c in 0..3 {
            for r in 0..b.dofs() {
                let f: f64 = (pattern.row_ptr[r]..pattern.row_ptr[r + 1])
                    .filter(|&q| pattern.col[q as usize] as usize % 3 == c)
                    .map(|q| k[q as usize])
                    .sum();
                assert!(f.abs() <= 1e-12 * scale, "row {r}, translation {c}: {f}");
            }
        }
        let sys = b.system();
        assert_eq!((sys.dim, sys.nodes), (3, 216));
        // Undamped, so C' = -1 on every free dof; the bottom face's rows are zero.
        assert!(sys.cp[3 * 36..].iter().all(|&c| (c + 1.0).abs() < 1e-15));
        assert!(sys.cp[..3 * 36].iter().all(|&c| c == 0.0));
    }

    #[test]
    fn the_time_step_is_below_the_cfl_limit_and_the_undamped_box_keeps_its_energy() {
        let b = HexBox::new(7);
        let crit = critical_dt(&b.material, b.element_size);
        assert!(b.dt < crit && b.dt > 0.5 * crit);
        // A 1D estimate: h / vp bounds the limit from above for a cube.
        assert!(crit < b.element_size / b.material.vp() * 1.01, "{crit}");
        let sys = b.system();
        let m: Vec<f64> = (0..b.nodes()).map(|v| b.material.rho * b.element_size.powi(3) / 8.0 * cells_of(7, v).count() as f64).collect();
        let start = super::super::multigpu::gpu::start_state(sys.dofs());
        let mut u = [start.clone(), start, vec![0.0; sys.dofs()]];
        // Free dofs only carry the state; the held ones stay zero.
        for r in 0..3 * 49 {
            u[0][r] = 0.0;
            u[1][r] = 0.0;
        }
        let energy = |u: &[Vec<f64>; 3]| super::super::system::energy(&sys, &m, b.dt, &u[0], &u[1]);
        let mut first = f64::NAN;
        for s in 0..400 {
            let [prev, curr, next] = &mut u;
            sys.step(prev, curr, next, 0.0, false);
            u.rotate_left(1);
            let e = energy(&u);
            if s == 0 {
                first = e;
            }
            assert!((e - first).abs() <= 1e-9 * first, "step {s}: {e} against {first}");
        }
        assert!(first > 0.0);
    }
}
