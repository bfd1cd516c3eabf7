//! Each device method's matrix-vector product on its own (the `spmv` row, not part of the
//! method's total): the CG's product (on its own input and output buffers) once per sample, timed by device events under the case's
//! policy, on a fixed probe vector, then once more on a poisoned output and checked against the
//! f64 reference matrix. Its bytes are the compulsory traffic by our count (see [`csr_bytes`] and
//! [`ebe_bytes`]), so the report can give the product's GB/s and its share of the run's copy
//! bandwidth.

use super::capacitor::Capacitor;
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::{Buffer, Device, DeviceExt, DeviceResult};
use crate::measure::{time_device, Timing};
use crate::real::Real;

/// What the product measured: its time per product, its scaled error, its compulsory bytes.
#[derive(Debug, Clone)]
pub(crate) struct ProductRun {
    pub(crate) timing: Timing,
    pub(crate) error: f64,
    pub(crate) bytes: f64,
}

/// The probe on the free unknowns; on every node (EbE: zero on the prescribed nodes) when
/// `on_nodes`.
fn probe(c: &Capacitor, on_nodes: bool) -> Vec<f64> {
    let x = fembench_fem::verify::probe_vector(c.n_free);
    if !on_nodes {
        return x;
    }
    (0..c.num_nodes()).map(|v| if c.dof[v] >= 0 { x[c.dof[v] as usize] } else { 0.0 }).collect()
}

/// The product's own input (the probe) and output, outside the method's buffers and memory
/// count: the CG's vectors stay as the solve left them.
pub(crate) fn buffers<T: Real>(dev: &dyn Device, c: &Capacitor, on_nodes: bool) -> DeviceResult<(Buffer, Buffer)> {
    let x: Vec<T> = probe(c, on_nodes).into_iter().map(T::from_f64).collect();
    let p = dev.upload_slice(&x)?;
    let q = dev.alloc(std::mem::size_of_val(&x[..]).max(4))?;
    Ok((p, q))
}

/// The reference product on the free unknowns, and each row's bound: the largest entry times
/// the sum of |x_j| over the row's columns (the assembled values are checked to a bound scaled
/// by the largest entry, and the product's own rounding is within the same scale).
fn reference(c: &Capacitor, vals: &[f64], x: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let p = &c.pattern;
    let top = vals.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    (0..p.rows())
        .map(|r| {
            (p.row_ptr[r] as usize..p.row_ptr[r + 1] as usize).fold((0.0, 0.0), |(y, s), k| {
                let xj = x[p.col[k] as usize];
                (y + vals[k] * xj, s + top * xj.abs())
            })
        })
        .unzip()
}

/// Where a product writes q = A p: one entry per node (EbE), or one per free unknown.
#[derive(Clone, Copy)]
pub(crate) struct Output<'a> {
    pub(crate) q: &'a Buffer,
    pub(crate) on_nodes: bool,
}

/// Times `product` (q = A p, p holding the probe) under the case's policy, then checks one more
/// product, its output `q` poisoned first: the free rows against the f64 reference matrix
/// `vals` (on `c.pattern`).
pub(crate) fn measure<T: Real>(
    ctx: &mut CaseCtx,
    dev: &dyn Device,
    (c, vals): (&Capacitor, &[f64]),
    Output { q, on_nodes }: Output,
    bytes: f64,
    product: &mut dyn FnMut() -> DeviceResult<()>,
) -> Result<ProductRun, CaseError> {
    let timing = time_device(ctx.policy, dev, "spmv", product)?;
    ctx.modules.poison(dev, q)?;
    product()?;
    dev.synchronize()?;
    let n = if on_nodes { c.num_nodes() } else { c.n_free };
    let got: Vec<f64> = dev.download_vec::<T>(q, n)?.into_iter().map(|v| v.to_f64()).collect();
    let got: Vec<f64> = if on_nodes { (0..n).filter(|&v| c.dof[v] >= 0).map(|v| got[v]).collect() } else { got };
    let (want, scale) = reference(c, vals, &probe(c, false));
    Ok(ProductRun { timing, error: fembench_fem::verify::max_scaled_error(&got, &want, &scale), bytes })
}

/// Compulsory bytes of a CSR product on the free unknowns: row offsets, columns and values once,
/// p read once, q written once (`s`: bytes of a real).
pub(crate) fn csr_bytes(c: &Capacitor, s: usize) -> f64 {
    let (nf, nnz) = (c.n_free, c.pattern.nnz());
    (4 * (nf + 1) + (4 + s) * nnz + 2 * s * nf) as f64
}

/// Compulsory bytes of the element-by-element product over all nodes: the color-ordered element
/// list and the triangles once, the element matrices (v1) or the coordinates (v2) once, p read
/// once, q written once, and the mask's pass over the nodes' dof numbers.
pub(crate) fn ebe_bytes(c: &Capacitor, s: usize, recompute: bool) -> f64 {
    let (n, ne) = (c.num_nodes(), c.num_elements());
    let matrices = if recompute { 2 * s * n } else { 9 * s * ne };
    (16 * ne + matrices + 2 * s * n + 4 * n) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_product_bounds_itself_and_sees_a_wrong_row() {
        let c = Capacitor::new(0);
        let (mut vals, mut rhs) = (vec![0.0; c.pattern.nnz()], vec![0.0; c.n_free]);
        c.assemble_into(&mut vals, &mut rhs);
        let x = probe(&c, false);
        let (want, scale) = reference(&c, &vals, &x);
        let mut y = vec![0.0; c.n_free];
        crate::acoo::capacitor::spmv(&c.pattern, &vals, &x, &mut y);
        assert!(want.iter().zip(&y).all(|(a, b)| (a - b).abs() <= 1e-14 * a.abs().max(1.0)));
        assert!(want.iter().zip(&scale).all(|(w, s)| w.abs() <= *s && *s > 0.0));
        assert_eq!(fembench_fem::verify::max_scaled_error(&y, &want, &scale), 0.0);
        let mut bad = want.clone();
        bad[3] += 1e-9 * scale[3];
        assert!(fembench_fem::verify::max_scaled_error(&bad, &want, &scale) > 0.9e-9);
        // On nodes: the probe at each free node's unknown, zero on the prescribed nodes.
        let nodes = probe(&c, true);
        assert_eq!(nodes.len(), c.num_nodes());
        assert!((0..c.num_nodes()).all(|v| if c.dof[v] < 0 { nodes[v] == 0.0 } else { nodes[v] == x[c.dof[v] as usize] }));
    }
}
