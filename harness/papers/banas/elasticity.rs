//! The model problem of section 5.1: 3D linear elastostatics, Young's modulus and Poisson ratio
//! constant per element, on a mesh of prisms; and the CPU reference, Algorithm 2 in f64.

use rayon::prelude::*;

use super::prism::{jacobian_terms, vertex_values, Reference};
use crate::real::unit;

/// A box of prisms: nx x ny x nz cells, each cut into two prisms, every vertex moved by up to
/// 15% of the cell size so that no two elements share a Jacobian and none is affine.
pub struct PrismMesh {
    pub vertices: Vec<[f64; 3]>,
    pub elements: Vec<[u32; 6]>,
    /// (Young's modulus, Poisson ratio) per element.
    pub material: Vec<(f64, f64)>,
}

impl PrismMesh {
    /// The smallest such box with at least `n` prisms, cut to exactly `n`.
    pub fn with_elements(n: usize) -> PrismMesh {
        let n = n.max(1);
        let nz = ((n as f64 / 2.0).cbrt().round() as usize).max(1);
        let nxy = ((n as f64 / (2.0 * nz as f64)).sqrt().ceil() as usize).max(1);
        let (nx, ny) = (nxy, nxy);
        let h = 1.0 / nxy.max(nz) as f64;
        let id = |i: usize, j: usize, k: usize| (k * (ny + 1) + j) * (nx + 1) + i;
        let mut vertices = vec![[0.0; 3]; (nx + 1) * (ny + 1) * (nz + 1)];
        for k in 0..=nz {
            for j in 0..=ny {
                for i in 0..=nx {
                    let v = id(i, j, k);
                    let jiggle = |c: u64| 0.3 * h * (unit(0xBA4A5, 3 * v as u64 + c) - 0.5);
                    vertices[v] = [i as f64 * h + jiggle(0), j as f64 * h + jiggle(1), k as f64 * h + jiggle(2)];
                }
            }
        }
        let mut elements = Vec::with_capacity(n);
        'cells: for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    // Two counter-clockwise triangles per cell, extruded one layer up.
                    for t in [[id(i, j, k), id(i + 1, j, k), id(i, j + 1, k)], [id(i + 1, j + 1, k), id(i, j + 1, k), id(i + 1, j, k)]] {
                        let up = (nx + 1) * (ny + 1);
                        elements.push([t[0], t[1], t[2], t[0] + up, t[1] + up, t[2] + up].map(|v| v as u32));
                        if elements.len() == n {
                            break 'cells;
                        }
                    }
                }
            }
        }
        let material = (0..elements.len()).map(|e| (1.0 + unit(0xE, e as u64), 0.2 + 0.15 * unit(0x4E, e as u64))).collect();
        PrismMesh { vertices, elements, material }
    }

    pub fn len(&self) -> usize {
        self.elements.len()
    }

    pub fn is_empty(&self) -> bool {
        self.elements.is_empty()
    }

    pub fn element_vertices(&self, e: usize) -> [[f64; 3]; 6] {
        self.elements[e].map(|v| self.vertices[v as usize])
    }

    /// Lamé's (lambda, mu) of element e.
    pub fn lame(&self, e: usize) -> (f64, f64) {
        let (young, nu) = self.material[e];
        (young * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)), young / (2.0 * (1.0 + nu)))
    }
}

/// Degrees of freedom of an element: 3 per shape function, dof 3 s + i is component i of
/// shape function s. A^e is stored row-major, (3 N_sh)^2 entries.
pub fn element_dofs(nsh: usize) -> usize {
    3 * nsh
}

/// The paper's flop count for one element: 63 per 3x3 block update per quadrature point, plus
/// 20 per shape function per point for the derivatives in physical coordinates. This gives
/// Table 5's 0.38e6 (p = 2) to 1757.7e6 (p = 7) flops within 2%.
pub fn element_flops(nsh: usize, nq: usize) -> f64 {
    nq as f64 * (63.0 * (nsh * nsh) as f64 + 20.0 * nsh as f64)
}

/// Shape functions of the highest degree (p = 7: 8 x 36).
pub const MAX_NSH: usize = 288;

/// Algorithm 2 for one element, f64: the loop over quadrature points outermost, derivatives in
/// physical coordinates at each point, then every 3x3 block (r, s) updated with
/// K_ik = lambda a_i b_k + mu a_k b_i + mu (a . b) delta_ik, a = grad phi_r, b = grad phi_s.
pub fn element_matrix(re: &Reference, x: &[[f64; 3]; 6], lame: (f64, f64), out: &mut [f64]) {
    let nsh = re.nsh;
    let n = 3 * nsh;
    debug_assert_eq!(out.len(), n * n);
    out.iter_mut().for_each(|v| *v = 0.0);
    let (lam, mu) = lame;
    // A stack array: this runs inside the timed CPU reference, which must not allocate.
    let mut psi_store = [[0.0f64; 3]; MAX_NSH];
    let psi = &mut psi_store[..nsh];
    for (q, pt) in re.quad.iter().enumerate() {
        let t = jacobian_terms(x, pt);
        for (s, p) in psi.iter_mut().enumerate() {
            let g = [re.dphi[q * 3 * nsh + s], re.dphi[(q * 3 + 1) * nsh + s], re.dphi[(q * 3 + 2) * nsh + s]];
            for d in 0..3 {
                p[d] = g[0] * t[1 + d] + g[1] * t[4 + d] + g[2] * t[7 + d];
            }
        }
        let dw = t[0];
        for r in 0..nsh {
            let a = psi[r].map(|v| v * dw);
            let la = a.map(|v| v * lam);
            let ma = a.map(|v| v * mu);
            for (s, b) in psi.iter().enumerate() {
                let dot = ma[0] * b[0] + ma[1] * b[1] + ma[2] * b[2];
                for i in 0..3 {
                    let row = &mut out[(3 * r + i) * n + 3 * s..(3 * r + i) * n + 3 * s + 3];
                    for k in 0..3 {
                        row[k] += la[i] * b[k] + ma[k] * b[i];
                    }
                    row[i] += dot;
                }
            }
        }
    }
}

/// Element matrices of `elements`, in parallel over elements (the paper's OpenMP baseline).
pub fn element_matrices(re: &Reference, mesh: &PrismMesh, elements: &[usize]) -> Vec<f64> {
    let size = element_dofs(re.nsh).pow(2);
    let mut out = vec![0.0; size * elements.len()];
    element_matrices_into(re, mesh, elements, &mut out);
    out
}

/// [`element_matrices`] into an existing array (the timed CPU reference allocates nothing).
pub fn element_matrices_into(re: &Reference, mesh: &PrismMesh, elements: &[usize], out: &mut [f64]) {
    let size = element_dofs(re.nsh).pow(2);
    out.par_chunks_mut(size).zip(elements).for_each(|(a, &e)| element_matrix(re, &mesh.element_vertices(e), mesh.lame(e), a));
}

/// Physical position of a reference point of element e (the prism map).
pub fn physical_point(x: &[[f64; 3]; 6], xi: [f64; 3]) -> [f64; 3] {
    let n = vertex_values(xi);
    let mut p = [0.0; 3];
    for v in 0..6 {
        for a in 0..3 {
            p[a] += n[v] * x[v][a];
        }
    }
    p
}

/// max |A u| / (|A| |u|) over the six rigid-body modes u (three translations, three rotations)
/// interpolated at the nodes of element `x`: zero to round-off for a correct A^e.
pub fn rigid_body_residual(re: &Reference, x: &[[f64; 3]; 6], a: &[f64]) -> f64 {
    let n = element_dofs(re.nsh);
    let basis = super::prism::PrismBasis::new(re.p);
    let nodes: Vec<[f64; 3]> = (0..re.nsh).map(|s| physical_point(x, basis.node(s))).collect();
    let norm = a.iter().map(|v| v * v).sum::<f64>().sqrt();
    let mut worst: f64 = 0.0;
    for mode in 0..6 {
        let u: Vec<f64> = (0..n)
            .map(|dof| {
                let (y, i) = (nodes[dof / 3], dof % 3);
                match mode {
                    0..=2 => (i == mode) as u8 as f64,
                    3 => [0.0, -y[2], y[1]][i],
                    4 => [y[2], 0.0, -y[0]][i],
                    _ => [-y[1], y[0], 0.0][i],
                }
            })
            .collect();
        let unorm = u.iter().map(|v| v * v).sum::<f64>().sqrt();
        for i in 0..n {
            let au: f64 = (0..n).map(|j| a[i * n + j] * u[j]).sum();
            worst = worst.max(au.abs() / (norm * unorm));
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::super::prism::PrismBasis;
    use super::*;

    #[test]
    fn flop_count_matches_table_5() {
        // Table 5, flops per element (x 1e6), p = 2..7.
        let paper = [0.38, 4.89, 28.49, 150.45, 560.03, 1757.75];
        for (p, want) in (2..=7).zip(paper) {
            let re = Reference::new(p).unwrap();
            let got = element_flops(re.nsh, re.nq()) / 1e6;
            assert!((got / want - 1.0).abs() < 0.02, "p = {p}: {got} vs {want}");
        }
    }

    #[test]
    fn mesh_has_the_asked_size_and_positive_jacobians() {
        for n in [1, 7, 100, 1000] {
            let m = PrismMesh::with_elements(n);
            assert_eq!(m.len(), n);
            let re = Reference::new(2).unwrap();
            for e in 0..n {
                for pt in &re.quad {
                    let t = jacobian_terms(&m.element_vertices(e), pt);
                    assert!(t[0] > 0.0);
                }
            }
        }
    }

    /// Symmetric, and A^e u = 0 for the six rigid-body modes interpolated at the nodes.
    #[test]
    fn element_matrices_are_symmetric_and_annihilate_rigid_body_modes() {
        let mesh = PrismMesh::with_elements(6);
        for p in 1..=5 {
            let re = Reference::new(p).unwrap();
            let n = 3 * re.nsh;
            for e in [0, 5] {
                let x = mesh.element_vertices(e);
                let mut a = vec![0.0; n * n];
                element_matrix(&re, &x, mesh.lame(e), &mut a);
                let norm = a.iter().map(|v| v * v).sum::<f64>().sqrt();
                for i in 0..n {
                    for j in 0..i {
                        assert!((a[i * n + j] - a[j * n + i]).abs() <= 1e-13 * norm, "p = {p}: not symmetric at ({i}, {j})");
                    }
                }
                let worst = rigid_body_residual(&re, &x, &a);
                assert!(worst <= 1e-11, "p = {p}: |A u| / (|A| |u|) = {worst:e} for a rigid-body mode");
            }
        }
    }

    /// Patch test on one element: for a linear displacement u = G x the element's strain energy
    /// u^T A u equals the exact energy of the constant strain times the element volume.
    #[test]
    fn element_energy_of_a_linear_field_is_exact() {
        let mesh = PrismMesh::with_elements(3);
        let g = [[0.3, -0.2, 0.5], [0.1, 0.4, -0.3], [0.2, 0.0, -0.6]];
        for p in 1..=3 {
            let re = Reference::new(p).unwrap();
            let basis = PrismBasis::new(p);
            let n = 3 * re.nsh;
            let e = 2;
            let x = mesh.element_vertices(e);
            let (lam, mu) = mesh.lame(e);
            let mut a = vec![0.0; n * n];
            element_matrix(&re, &x, (lam, mu), &mut a);
            let u: Vec<f64> = (0..n)
                .map(|dof| {
                    let y = physical_point(&x, basis.node(dof / 3));
                    let i = dof % 3;
                    g[i][0] * y[0] + g[i][1] * y[1] + g[i][2] * y[2]
                })
                .collect();
            let energy: f64 = (0..n).map(|i| u[i] * (0..n).map(|j| a[i * n + j] * u[j]).sum::<f64>()).sum();
            let volume: f64 = re.quad.iter().map(|pt| jacobian_terms(&x, pt)[0]).sum();
            let eps = |i: usize, j: usize| 0.5 * (g[i][j] + g[j][i]);
            let tr = eps(0, 0) + eps(1, 1) + eps(2, 2);
            let mut ee = 0.0;
            for i in 0..3 {
                for j in 0..3 {
                    ee += eps(i, j) * eps(i, j);
                }
            }
            let exact = (lam * tr * tr + 2.0 * mu * ee) * volume;
            assert!((energy - exact).abs() <= 1e-12 * exact.abs(), "p = {p}: {energy} vs {exact}");
        }
    }
}
