//! The eight-node trilinear hexahedron of 3D isotropic linear elasticity (Sanfui and Sharma's Eq. 5): shape
//! functions, their reference derivatives at the 2x2x2 Gauss points (the table the kernel reads,
//! "pre-computed" as in Algorithm 1), and the f64 element stiffness the CPU reference uses.
//!
//! Dofs of an element are node-major, 3a + c (c = x, y, z). Local node a sits at
//! (XI[a], ETA[a], ZETA[a]) in [-1, 1]^3, in `BoxMesh`'s order. Block (a, b) of K^e is
//! Σ_q w_q |J_q| (λ g_a g_bᵀ + μ g_b g_aᵀ + μ (g_a·g_b) I), g = ∇N at the point: BᵀDB written out.

/// Reference coordinates of the eight nodes.
pub const XI: [f64; 8] = [-1.0, 1.0, 1.0, -1.0, -1.0, 1.0, 1.0, -1.0];
pub const ETA: [f64; 8] = [-1.0, -1.0, 1.0, 1.0, -1.0, -1.0, 1.0, 1.0];
pub const ZETA: [f64; 8] = [-1.0, -1.0, -1.0, -1.0, 1.0, 1.0, 1.0, 1.0];

/// The 2x2x2 Gauss points (weights 1), in the order the kernel loops over them.
pub fn gauss_points() -> [[f64; 3]; 8] {
    let g = 1.0 / 3f64.sqrt();
    std::array::from_fn(|q| [if q & 1 == 0 { -g } else { g }, if q & 2 == 0 { -g } else { g }, if q & 4 == 0 { -g } else { g }])
}

/// dN_a/dξ_c at point p.
pub fn reference_gradients(p: [f64; 3]) -> [[f64; 3]; 8] {
    std::array::from_fn(|a| {
        let (x, y, z) = (1.0 + XI[a] * p[0], 1.0 + ETA[a] * p[1], 1.0 + ZETA[a] * p[2]);
        [XI[a] * y * z / 8.0, ETA[a] * x * z / 8.0, ZETA[a] * x * y / 8.0]
    })
}

/// The kernel's table: dn[q * 24 + 3 a + c] = dN_a/dξ_c at Gauss point q.
pub fn derivative_table() -> Vec<f64> {
    gauss_points().iter().flat_map(|&p| reference_gradients(p).into_iter().flatten()).collect()
}

/// Lamé's parameters of Young's modulus and Poisson's ratio.
pub fn lame(young: f64, poisson: f64) -> (f64, f64) {
    (young * poisson / ((1.0 + poisson) * (1.0 - 2.0 * poisson)), young / (2.0 * (1.0 + poisson)))
}

/// Physical gradients ∇N_a and |J| at reference point p of an element with nodes `x`.
fn gradients(x: &[[f64; 3]; 8], p: [f64; 3]) -> ([[f64; 3]; 8], f64) {
    let d = reference_gradients(p);
    let mut j = [[0.0; 3]; 3]; // j[r][c] = d x_c / d ξ_r
    for (da, xa) in d.iter().zip(x) {
        for r in 0..3 {
            for c in 0..3 {
                j[r][c] += da[r] * xa[c];
            }
        }
    }
    let cof = |r1: usize, c1: usize, r2: usize, c2: usize| j[r1][c1] * j[r2][c2] - j[r1][c2] * j[r2][c1];
    let det = j[0][0] * cof(1, 1, 2, 2) - j[0][1] * cof(1, 0, 2, 2) + j[0][2] * cof(1, 0, 2, 1);
    // Inverse by the adjugate: inv[c][r] so that g_c = Σ_r inv[c][r] dN/dξ_r.
    let inv = [
        [cof(1, 1, 2, 2) / det, -cof(0, 1, 2, 2) / det, cof(0, 1, 1, 2) / det],
        [-cof(1, 0, 2, 2) / det, cof(0, 0, 2, 2) / det, -cof(0, 0, 1, 2) / det],
        [cof(1, 0, 2, 1) / det, -cof(0, 0, 2, 1) / det, cof(0, 0, 1, 1) / det],
    ];
    let g = std::array::from_fn(|a| std::array::from_fn(|c| (0..3).map(|r| inv[c][r] * d[a][r]).sum()));
    (g, det)
}

/// K^e, row-major 24 x 24; `abs` sums the absolute values of every term instead (the scale
/// the rounding error bounds of verification are measured against).
pub fn stiffness(x: &[[f64; 3]; 8], lambda: f64, mu: f64, abs: bool) -> [f64; 576] {
    let mut k = [0.0; 576];
    let f = |v: f64| if abs { v.abs() } else { v };
    for p in gauss_points() {
        let (g, det) = gradients(x, p);
        for a in 0..8 {
            for b in 0..8 {
                let dot: f64 = (0..3).map(|c| f(g[a][c] * g[b][c])).sum();
                for r in 0..3 {
                    for c in 0..3 {
                        let diag = if r == c { f(mu * dot) } else { 0.0 };
                        let v = f(lambda * g[a][r] * g[b][c]) + f(mu * g[a][c] * g[b][r]) + diag;
                        k[(3 * a + r) * 24 + 3 * b + c] += f(det) * v;
                    }
                }
            }
        }
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skewed() -> [[f64; 3]; 8] {
        // A general (non-parallelepiped) hexahedron: the unit cube with perturbed corners.
        std::array::from_fn(|a| {
            let s = [0.08, -0.05, 0.11, 0.03, -0.07, 0.06, -0.02, 0.09][a];
            [(XI[a] + 1.0) / 2.0 * 1.3 + s, (ETA[a] + 1.0) / 2.0 + 0.5 * s, (ZETA[a] + 1.0) / 2.0 * 0.8 - s]
        })
    }

    #[test]
    fn element_matrix_is_symmetric_with_the_six_rigid_body_modes_in_its_null_space() {
        let x = skewed();
        let (lambda, mu) = lame(200e9, 0.3);
        let k = stiffness(&x, lambda, mu, false);
        let scale = k.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for i in 0..24 {
            for j in 0..24 {
                assert!((k[i * 24 + j] - k[j * 24 + i]).abs() <= 1e-13 * scale, "K[{i}][{j}]");
            }
        }
        // Three translations and three rotations u = ω × x give no force.
        let modes: Vec<[f64; 24]> = (0..6)
            .map(|m| {
                std::array::from_fn(|d| {
                    let (a, c) = (d / 3, d % 3);
                    if m < 3 {
                        (c == m) as u8 as f64
                    } else {
                        let w = [(m == 3) as u8 as f64, (m == 4) as u8 as f64, (m == 5) as u8 as f64];
                        let p = x[a];
                        [w[1] * p[2] - w[2] * p[1], w[2] * p[0] - w[0] * p[2], w[0] * p[1] - w[1] * p[0]][c]
                    }
                })
            })
            .collect();
        for u in &modes {
            for i in 0..24 {
                let f: f64 = (0..24).map(|j| k[i * 24 + j] * u[j]).sum();
                assert!(f.abs() <= 1e-12 * scale, "mode gives force {f} at dof {i}");
            }
        }
        // And nothing else: a stretch costs energy.
        let stretch: [f64; 24] = std::array::from_fn(|d| if d % 3 == 0 { x[d / 3][0] } else { 0.0 });
        let energy: f64 = (0..24).map(|i| stretch[i] * (0..24).map(|j| k[i * 24 + j] * stretch[j]).sum::<f64>()).sum();
        assert!(energy > 1e-3 * scale);
    }

    #[test]
    fn a_constant_strain_field_gives_the_exact_energy_patch_test() {
        // u = E x with a symmetric constant strain E: the element must reproduce the strain
        // energy V (λ (tr E)^2 + 2 μ E:E) / 2 exactly, on a distorted element too.
        let x = skewed();
        let (lambda, mu) = lame(1.0, 0.25);
        let e = [[1e-3, 2e-4, -3e-4], [2e-4, -5e-4, 1e-4], [-3e-4, 1e-4, 7e-4]];
        let u: [f64; 24] = std::array::from_fn(|d| (0..3).map(|c| e[d % 3][c] * x[d / 3][c]).sum());
        let k = stiffness(&x, lambda, mu, false);
        let energy: f64 = 0.5 * (0..24).map(|i| u[i] * (0..24).map(|j| k[i * 24 + j] * u[j]).sum::<f64>()).sum::<f64>();
        let volume: f64 = gauss_points().iter().map(|&p| gradients(&x, p).1).sum();
        let tr = e[0][0] + e[1][1] + e[2][2];
        let ee: f64 = e.iter().flatten().map(|v| v * v).sum();
        let exact = volume * (lambda * tr * tr + 2.0 * mu * ee) / 2.0;
        assert!((energy - exact).abs() <= 1e-12 * exact, "{energy} vs {exact}");
        // A unit cube's volume and the table's layout.
        assert_eq!(derivative_table().len(), 192);
        let cube: [[f64; 3]; 8] = std::array::from_fn(|a| [(XI[a] + 1.0) / 2.0, (ETA[a] + 1.0) / 2.0, (ZETA[a] + 1.0) / 2.0]);
        let v: f64 = gauss_points().iter().map(|&p| gradients(&cube, p).1).sum();
        assert!((v - 1.0).abs() < 1e-14);
    }
}
