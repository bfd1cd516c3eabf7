//! Lagrange triangles of order k on the reference triangle (0,0), (1,0), (0,1): equispaced
//! nodes, the basis as monomial coefficients, and the exact reference integrals the element
//! kernels combine (the "algebraically optimised element subroutine" of Cecka et al. 6.2: with
//! straight sides the Jacobian is constant, so A^e is three reference matrices weighted by the
//! element's geometry).

/// Reference node positions in the local order every kernel uses: the three vertices, the
/// k-1 nodes of edge v0->v1, of edge v1->v2, of edge v2->v0 (each from its first vertex), then
/// interior nodes row by row.
pub fn reference_nodes(k: usize) -> Vec<(f64, f64)> {
    let kf = k as f64;
    let mut p = vec![(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)];
    for j in 1..k {
        p.push((j as f64 / kf, 0.0));
    }
    for j in 1..k {
        p.push(((k - j) as f64 / kf, j as f64 / kf));
    }
    for j in 1..k {
        p.push((0.0, (k - j) as f64 / kf));
    }
    for j in 1..k {
        for i in 1..k {
            if i + j < k {
                p.push((i as f64 / kf, j as f64 / kf));
            }
        }
    }
    p
}

/// Nodes per element: (k+1)(k+2)/2.
pub fn nodes_per_element(k: usize) -> usize {
    (k + 1) * (k + 2) / 2
}

/// Monomial exponents x^a y^b with a + b <= k.
fn monomials(k: usize) -> Vec<(usize, usize)> {
    let mut m = Vec::new();
    for d in 0..=k {
        for b in 0..=d {
            m.push((d - b, b));
        }
    }
    m
}

/// The order-k basis: `coef[i][m]` is the coefficient of monomial m in basis function i.
pub struct Basis {
    pub k: usize,
    mono: Vec<(usize, usize)>,
    coef: Vec<Vec<f64>>,
}

fn powi(x: f64, n: usize) -> f64 {
    x.powi(n as i32)
}

impl Basis {
    pub fn new(k: usize) -> Basis {
        assert!(k >= 1);
        let nodes = reference_nodes(k);
        let mono = monomials(k);
        let n = nodes.len();
        // Vandermonde V[i][m] = mono_m(node_i); the basis coefficients are the columns of V^-1.
        let mut v: Vec<Vec<f64>> = nodes.iter().map(|&(x, y)| mono.iter().map(|&(a, b)| powi(x, a) * powi(y, b)).collect()).collect();
        let mut inv: Vec<Vec<f64>> = (0..n).map(|i| (0..n).map(|j| (i == j) as u8 as f64).collect()).collect();
        for col in 0..n {
            let piv = (col..n).max_by(|&a, &b| v[a][col].abs().total_cmp(&v[b][col].abs())).unwrap_or(col);
            v.swap(col, piv);
            inv.swap(col, piv);
            let d = v[col][col];
            for j in 0..n {
                v[col][j] /= d;
                inv[col][j] /= d;
            }
            for r in 0..n {
                if r != col {
                    let f = v[r][col];
                    if f != 0.0 {
                        for j in 0..n {
                            v[r][j] -= f * v[col][j];
                            inv[r][j] -= f * inv[col][j];
                        }
                    }
                }
            }
        }
        // inv = V^-1: row m, column i is the coefficient of monomial m in basis function i.
        let coef = (0..n).map(|i| (0..n).map(|m| inv[m][i]).collect()).collect();
        Basis { k, mono, coef }
    }

    pub fn len(&self) -> usize {
        self.coef.len()
    }

    pub fn is_empty(&self) -> bool {
        self.coef.is_empty()
    }

    pub fn value(&self, i: usize, x: f64, y: f64) -> f64 {
        self.mono.iter().zip(&self.coef[i]).map(|(&(a, b), c)| c * powi(x, a) * powi(y, b)).sum()
    }

    /// (d/dx, d/dy) of basis function i at (x, y).
    pub fn gradient(&self, i: usize, x: f64, y: f64) -> (f64, f64) {
        let eval = |terms: Vec<(f64, usize, usize)>| terms.iter().map(|&(c, a, b)| c * powi(x, a) * powi(y, b)).sum::<f64>();
        (eval(self.derivative(i, 0)), eval(self.derivative(i, 1)))
    }

    /// (d/dx, d/dy) of basis function i as (coefficient, exponents) lists.
    fn derivative(&self, i: usize, dir: usize) -> Vec<(f64, usize, usize)> {
        self.mono
            .iter()
            .zip(&self.coef[i])
            .filter_map(|(&(a, b), &c)| match dir {
                0 if a > 0 => Some((c * a as f64, a - 1, b)),
                1 if b > 0 => Some((c * b as f64, a, b - 1)),
                _ => None,
            })
            .collect()
    }
}

/// Exact integral of x^a y^b over the reference triangle: a! b! / (a+b+2)!.
pub fn monomial_integral(a: usize, b: usize) -> f64 {
    let f = |n: usize| (1..=n).map(|v| v as f64).product::<f64>();
    f(a) * f(b) / f(a + b + 2)
}

fn integrate_product(p: &[(f64, usize, usize)], q: &[(f64, usize, usize)]) -> f64 {
    let mut s = 0.0;
    for &(c1, a1, b1) in p {
        for &(c2, a2, b2) in q {
            s += c1 * c2 * monomial_integral(a1 + a2, b1 + b2);
        }
    }
    s
}

/// The reference integrals an element kernel needs, exact (no quadrature), row-major n x n:
/// `sxx[i][j] = ∫ dφi/dx dφj/dx`, `sxy = ∫ dφi/dx dφj/dy + dφi/dy dφj/dx`, `syy`, and `m[i] = ∫ φi`.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ReferenceIntegrals {
    pub n: usize,
    pub sxx: Vec<f64>,
    pub sxy: Vec<f64>,
    pub syy: Vec<f64>,
    pub m: Vec<f64>,
}

impl ReferenceIntegrals {
    pub fn new(k: usize) -> Self {
        let basis = Basis::new(k);
        let n = basis.len();
        let dx: Vec<_> = (0..n).map(|i| basis.derivative(i, 0)).collect();
        let dy: Vec<_> = (0..n).map(|i| basis.derivative(i, 1)).collect();
        let mut r = ReferenceIntegrals { n, sxx: vec![0.0; n * n], sxy: vec![0.0; n * n], syy: vec![0.0; n * n], m: vec![0.0; n] };
        for i in 0..n {
            // The upper triangle, mirrored: the matrices are symmetric bit for bit, so that a
            // method that uses A^e(i, j) for A^e(j, i) computes the same numbers as one that
            // does not (integrate_product(a, b) and (b, a) round differently).
            for j in i..n {
                let (xx, yy) = (integrate_product(&dx[i], &dx[j]), integrate_product(&dy[i], &dy[j]));
                let xy = integrate_product(&dx[i], &dy[j]) + integrate_product(&dy[i], &dx[j]);
                for (a, b) in [(i, j), (j, i)] {
                    r.sxx[a * n + b] = xx;
                    r.syy[a * n + b] = yy;
                    r.sxy[a * n + b] = xy;
                }
            }
            r.m[i] = basis.mono.iter().zip(&basis.coef[i]).map(|(&(a, b), c)| c * monomial_integral(a, b)).sum();
        }
        r
    }

    /// As one table for the device: sxx, sxy, syy (n*n each), then m (n).
    pub fn packed(&self) -> Vec<f64> {
        [&self.sxx[..], &self.sxy[..], &self.syy[..], &self.m[..]].concat()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basis_is_nodal_and_a_partition_of_unity() {
        for k in 1..=6 {
            let b = Basis::new(k);
            let nodes = reference_nodes(k);
            assert_eq!(nodes.len(), nodes_per_element(k));
            for (i, &(x, y)) in nodes.iter().enumerate() {
                for j in 0..b.len() {
                    let expect = (i == j) as u8 as f64;
                    assert!((b.value(j, x, y) - expect).abs() < 1e-9, "k={k} phi_{j}(node {i})");
                }
            }
            for &(x, y) in &[(0.1, 0.2), (0.33, 0.33), (0.7, 0.05)] {
                let s: f64 = (0..b.len()).map(|i| b.value(i, x, y)).sum();
                assert!((s - 1.0).abs() < 1e-10, "k={k}: sum {s}");
            }
        }
    }

    #[test]
    fn basis_reproduces_polynomials_of_its_degree() {
        for k in 1..=6 {
            let b = Basis::new(k);
            let nodes = reference_nodes(k);
            // p(x, y) = (1 + 2x - y)^k has full degree k.
            let p = |x: f64, y: f64| (1.0 + 2.0 * x - y).powi(k as i32);
            for &(x, y) in &[(0.1, 0.2), (0.25, 0.6), (0.8, 0.1)] {
                let interp: f64 = nodes.iter().enumerate().map(|(i, &(nx, ny))| p(nx, ny) * b.value(i, x, y)).sum();
                assert!((interp - p(x, y)).abs() < 1e-8 * p(x, y).abs().max(1.0), "k={k}");
            }
        }
    }

    #[test]
    fn reference_integrals_have_the_known_p1_values() {
        let r = ReferenceIntegrals::new(1);
        // φ0 = 1-x-y, φ1 = x, φ2 = y on a triangle of area 1/2.
        assert_eq!(r.m.iter().map(|v| (v * 6.0).round()).collect::<Vec<_>>(), vec![1.0, 1.0, 1.0]);
        let sxx: Vec<f64> = r.sxx.iter().map(|v| v * 2.0).collect();
        assert_eq!(sxx, vec![1.0, -1.0, 0.0, -1.0, 1.0, 0.0, 0.0, 0.0, 0.0]);
        assert!(monomial_integral(0, 0) == 0.5 && (monomial_integral(1, 1) - 1.0 / 24.0).abs() < 1e-15);
    }

    #[test]
    fn stiffness_rows_sum_to_zero() {
        // Constants are in the space and have zero gradient.
        for k in 1..=6 {
            let r = ReferenceIntegrals::new(k);
            for i in 0..r.n {
                for s in [&r.sxx, &r.sxy, &r.syy] {
                    let row: f64 = (0..r.n).map(|j| s[i * r.n + j]).sum();
                    let scale = s.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                    assert!(row.abs() < 1e-9 * scale.max(1.0) * (k * k) as f64, "k={k} row {i}: {row}");
                }
            }
        }
    }
}
