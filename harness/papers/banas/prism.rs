//! The reference prism of Banaś et al.: the triangle (0,0), (1,0), (0,1) times zeta in [0, 1];
//! shape functions of degree p are products of the complete degree-p Lagrange polynomials of the
//! triangle and degree-p Lagrange polynomials in zeta (equispaced nodes), so that
//! N_sh = (p+1)^2 (p+2)/2 = 6, 18, 40, 75, 126, 196, 288 for p = 1..7 (Table 1).
//!
//! Quadrature: the symmetric, positive-weight triangle rule of strength 2p of Witherden and
//! Vincent (through `fenris-quadrature`; 3, 6, 12, 16, 25, 33, 42 points, the counts of the
//! Dunavant rules the paper's N_Q implies) times the (p+1)-point Gauss rule in zeta: exact to
//! degree 2p, N_Q = 6, 18, 48, 80, 150, 231, 336 as in Table 1.

use fembench_fem::lagrange;

/// The highest degree the benchmark runs (the paper's range).
pub const MAX_DEGREE: usize = 7;

pub fn shape_functions(p: usize) -> usize {
    (p + 1) * (p + 1) * (p + 2) / 2
}

/// A quadrature point: reference coordinates (xi1, xi2, zeta) and weight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QPoint {
    pub xi: [f64; 3],
    pub w: f64,
}

/// The prism rule exact for triangle degree 2p times zeta degree 2p + 1.
pub fn quadrature(p: usize) -> Result<Vec<QPoint>, String> {
    let (tw, tp) = fenris_quadrature::polyquad::triangle(2 * p).map_err(|e| format!("no triangle rule of strength {}: {e}", 2 * p))?;
    let (gw, gp) = fenris_quadrature::univariate::gauss(p + 1);
    let mut q = Vec::with_capacity(tw.len() * gw.len());
    // fenris' triangle is (-1,-1), (1,-1), (-1,1) and its segment [-1, 1]: map both to [0, 1].
    for (w1, z) in gw.iter().zip(&gp) {
        for (w2, t) in tw.iter().zip(&tp) {
            q.push(QPoint { xi: [(t[0] + 1.0) / 2.0, (t[1] + 1.0) / 2.0, (z[0] + 1.0) / 2.0], w: w2 / 4.0 * w1 / 2.0 });
        }
    }
    Ok(q)
}

/// Lagrange polynomials of degree p on equispaced nodes of [0, 1].
struct Line {
    nodes: Vec<f64>,
}

impl Line {
    fn new(p: usize) -> Line {
        Line { nodes: (0..=p).map(|i| i as f64 / p as f64).collect() }
    }
    fn value(&self, i: usize, z: f64) -> f64 {
        let xi = self.nodes[i];
        self.nodes.iter().enumerate().filter(|&(j, _)| j != i).map(|(_, &xj)| (z - xj) / (xi - xj)).product()
    }
    fn derivative(&self, i: usize, z: f64) -> f64 {
        let xi = self.nodes[i];
        let others: Vec<f64> = self.nodes.iter().enumerate().filter(|&(j, _)| j != i).map(|(_, &x)| x).collect();
        let mut d = 0.0;
        for skip in 0..others.len() {
            let mut term = 1.0 / (xi - others[skip]);
            for (j, &xj) in others.iter().enumerate() {
                if j != skip {
                    term *= (z - xj) / (xi - xj);
                }
            }
            d += term;
        }
        d
    }
}

/// The degree-p prism basis. Shape function s = z * n_tri + t is triangle node t at height z.
pub struct PrismBasis {
    pub p: usize,
    tri: lagrange::Basis,
    line: Line,
}

impl PrismBasis {
    pub fn new(p: usize) -> PrismBasis {
        assert!((1..=MAX_DEGREE).contains(&p));
        PrismBasis { p, tri: lagrange::Basis::new(p), line: Line::new(p) }
    }

    pub fn len(&self) -> usize {
        self.tri.len() * (self.p + 1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn split(&self, s: usize) -> (usize, usize) {
        (s % self.tri.len(), s / self.tri.len())
    }

    /// Reference coordinates of the node of shape function s.
    pub fn node(&self, s: usize) -> [f64; 3] {
        let (t, z) = self.split(s);
        let (x, y) = lagrange::reference_nodes(self.p)[t];
        [x, y, self.line.nodes[z]]
    }

    pub fn value(&self, s: usize, xi: [f64; 3]) -> f64 {
        let (t, z) = self.split(s);
        self.tri.value(t, xi[0], xi[1]) * self.line.value(z, xi[2])
    }

    /// Gradient with respect to (xi1, xi2, zeta).
    pub fn gradient(&self, s: usize, xi: [f64; 3]) -> [f64; 3] {
        let (t, z) = self.split(s);
        let (gx, gy) = self.tri.gradient(t, xi[0], xi[1]);
        let (v, l, dl) = (self.tri.value(t, xi[0], xi[1]), self.line.value(z, xi[2]), self.line.derivative(z, xi[2]));
        [gx * l, gy * l, v * dl]
    }
}

/// What every element of degree p shares: quadrature and reference derivatives at its points.
pub struct Reference {
    pub p: usize,
    pub nsh: usize,
    pub quad: Vec<QPoint>,
    /// dphi[(q * 3 + k) * nsh + s]: d(phi_s)/d(xi_k) at quadrature point q (the paper's phi^Q
    /// without the values, which the elasticity operator does not use).
    pub dphi: Vec<f64>,
}

impl Reference {
    pub fn new(p: usize) -> Result<Reference, String> {
        let basis = PrismBasis::new(p);
        let quad = quadrature(p)?;
        let nsh = basis.len();
        let mut dphi = vec![0.0; quad.len() * 3 * nsh];
        for (q, pt) in quad.iter().enumerate() {
            for s in 0..nsh {
                let g = basis.gradient(s, pt.xi);
                for k in 0..3 {
                    dphi[(q * 3 + k) * nsh + s] = g[k];
                }
            }
        }
        Ok(Reference { p, nsh, quad, dphi })
    }
    pub fn nq(&self) -> usize {
        self.quad.len()
    }
}

/// Gradients of the six geometric (vertex) shape functions of the prism at xi: the bilinear map
/// of a prism with straight edges; vertices 0-2 at zeta = 0, 3-5 above them at zeta = 1.
pub fn vertex_gradients(xi: [f64; 3]) -> [[f64; 3]; 6] {
    let (a, b, z) = (xi[0], xi[1], xi[2]);
    let l = [1.0 - a - b, a, b];
    let dl = [[-1.0, -1.0], [1.0, 0.0], [0.0, 1.0]];
    let mut g = [[0.0; 3]; 6];
    for v in 0..3 {
        g[v] = [dl[v][0] * (1.0 - z), dl[v][1] * (1.0 - z), -l[v]];
        g[v + 3] = [dl[v][0] * z, dl[v][1] * z, l[v]];
    }
    g
}

pub fn vertex_values(xi: [f64; 3]) -> [f64; 6] {
    let (a, b, z) = (xi[0], xi[1], xi[2]);
    let l = [1.0 - a - b, a, b];
    [l[0] * (1.0 - z), l[1] * (1.0 - z), l[2] * (1.0 - z), l[0] * z, l[1] * z, l[2] * z]
}

/// The Jacobian terms the NOJAC kernels read: |det J| * w and the inverse Jacobian
/// d(xi_k)/d(x_d) stored row-major (k, d). `x` holds the six vertices.
pub fn jacobian_terms(x: &[[f64; 3]; 6], pt: &QPoint) -> [f64; 10] {
    let g = vertex_gradients(pt.xi);
    // j[a][b] = d x_a / d xi_b
    let mut j = [[0.0; 3]; 3];
    for v in 0..6 {
        for a in 0..3 {
            for b in 0..3 {
                j[a][b] += x[v][a] * g[v][b];
            }
        }
    }
    let det = j[0][0] * (j[1][1] * j[2][2] - j[1][2] * j[2][1]) - j[0][1] * (j[1][0] * j[2][2] - j[1][2] * j[2][0])
        + j[0][2] * (j[1][0] * j[2][1] - j[1][1] * j[2][0]);
    let inv_det = 1.0 / det;
    // inverse (xi_k, x_d): adjugate / det
    let inv = [
        [
            (j[1][1] * j[2][2] - j[1][2] * j[2][1]) * inv_det,
            (j[0][2] * j[2][1] - j[0][1] * j[2][2]) * inv_det,
            (j[0][1] * j[1][2] - j[0][2] * j[1][1]) * inv_det,
        ],
        [
            (j[1][2] * j[2][0] - j[1][0] * j[2][2]) * inv_det,
            (j[0][0] * j[2][2] - j[0][2] * j[2][0]) * inv_det,
            (j[0][2] * j[1][0] - j[0][0] * j[1][2]) * inv_det,
        ],
        [
            (j[1][0] * j[2][1] - j[1][1] * j[2][0]) * inv_det,
            (j[0][1] * j[2][0] - j[0][0] * j[2][1]) * inv_det,
            (j[0][0] * j[1][1] - j[0][1] * j[1][0]) * inv_det,
        ],
    ];
    let mut t = [0.0; 10];
    t[0] = det.abs() * pt.w;
    for k in 0..3 {
        for d in 0..3 {
            t[1 + 3 * k + d] = inv[k][d];
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::real::unit;

    /// Table 1 of the paper.
    const TABLE1: [(usize, usize); 7] = [(6, 6), (18, 18), (40, 48), (75, 80), (126, 150), (196, 231), (288, 336)];

    fn random_point(seed: u64) -> [f64; 3] {
        let (mut a, mut b) = (unit(seed, 0), unit(seed, 1));
        if a + b > 1.0 {
            (a, b) = (1.0 - a, 1.0 - b);
        }
        [a, b, unit(seed, 2)]
    }

    #[test]
    fn sizes_match_table_1() {
        for (p, &(nsh, nq)) in (1..=7).zip(&TABLE1) {
            assert_eq!(shape_functions(p), nsh);
            assert_eq!(PrismBasis::new(p).len(), nsh);
            assert_eq!(quadrature(p).unwrap().len(), nq, "N_Q at p = {p}");
        }
    }

    #[test]
    fn partition_of_unity_and_nodal_property() {
        for p in 1..=7 {
            let b = PrismBasis::new(p);
            for seed in 0..5 {
                let x = random_point(seed + 100 * p as u64);
                let sum: f64 = (0..b.len()).map(|s| b.value(s, x)).sum();
                assert!((sum - 1.0).abs() < 1e-10, "p = {p}: sum {sum}");
                for k in 0..3 {
                    let g: f64 = (0..b.len()).map(|s| b.gradient(s, x)[k]).sum();
                    assert!(g.abs() < 1e-8, "p = {p}: gradient sum {g}");
                }
            }
            for s in [0, b.len() / 2, b.len() - 1] {
                for r in 0..b.len() {
                    let v = b.value(r, b.node(s));
                    assert!((v - (r == s) as u8 as f64).abs() < 1e-9, "p = {p}: phi_{r}(node {s}) = {v}");
                }
            }
        }
    }

    #[test]
    fn reproduces_polynomials_of_degree_p() {
        for p in 1..=5 {
            let b = PrismBasis::new(p);
            // x^a y^c (a + c <= p) times z^e (e <= p): the whole space.
            for (a, c, e) in [(p, 0, p), (0, p, 0), (p / 2, p - p / 2, 1), (1, 0, p)] {
                let f = |x: [f64; 3]| x[0].powi(a as i32) * x[1].powi(c as i32) * x[2].powi(e as i32);
                let df = |x: [f64; 3]| {
                    let d = |n: usize, v: f64| if n == 0 { 0.0 } else { n as f64 * v.powi(n as i32 - 1) };
                    [
                        d(a, x[0]) * x[1].powi(c as i32) * x[2].powi(e as i32),
                        x[0].powi(a as i32) * d(c, x[1]) * x[2].powi(e as i32),
                        x[0].powi(a as i32) * x[1].powi(c as i32) * d(e, x[2]),
                    ]
                };
                for seed in 0..4 {
                    let x = random_point(seed + 7);
                    let v: f64 = (0..b.len()).map(|s| f(b.node(s)) * b.value(s, x)).sum();
                    assert!((v - f(x)).abs() < 1e-9, "p = {p}, monomial ({a},{c},{e})");
                    for k in 0..3 {
                        let g: f64 = (0..b.len()).map(|s| f(b.node(s)) * b.gradient(s, x)[k]).sum();
                        assert!((g - df(x)[k]).abs() < 1e-7, "p = {p}, d/dxi{k} of ({a},{c},{e}): {g} vs {}", df(x)[k]);
                    }
                }
            }
        }
    }

    #[test]
    fn quadrature_is_exact_to_degree_2p() {
        for p in 1..=7 {
            let q = quadrature(p).unwrap();
            for a in 0..=2 * p {
                for c in 0..=2 * p - a {
                    for e in [0, 1, 2 * p] {
                        let got: f64 =
                            q.iter().map(|pt| pt.w * pt.xi[0].powi(a as i32) * pt.xi[1].powi(c as i32) * pt.xi[2].powi(e as i32)).sum();
                        let exact = lagrange::monomial_integral(a, c) / (e + 1) as f64;
                        assert!((got - exact).abs() <= 1e-13 * exact.max(1e-3), "p = {p}, x^{a} y^{c} z^{e}: {got} vs {exact}");
                    }
                }
            }
        }
    }

    #[test]
    fn jacobian_terms_of_a_scaled_prism() {
        // x = 2 xi1, y = 3 xi2, z = 4 zeta: det 24, inverse diag(1/2, 1/3, 1/4).
        let x = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 4.0], [2.0, 0.0, 4.0], [0.0, 3.0, 4.0]];
        let t = jacobian_terms(&x, &QPoint { xi: [0.2, 0.3, 0.7], w: 0.5 });
        let want = [12.0, 0.5, 0.0, 0.0, 0.0, 1.0 / 3.0, 0.0, 0.0, 0.0, 0.25];
        for (g, w) in t.iter().zip(want) {
            assert!((g - w).abs() < 1e-14, "{t:?}");
        }
    }
}
