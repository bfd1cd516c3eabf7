//! What the paper's variants and the cuBLAS peer share: a degree's mesh and reference data,
//! the host input arrays of a launch, the check of a pass's output, and the case's extra columns.

use std::sync::{Arc, OnceLock};

use rayon::prelude::*;

use super::elasticity::{element_matrices, PrismMesh};
use super::prism::{jacobian_terms, Reference};
use crate::benchmark::{CaseError, Measured};
use crate::cache::ProblemCache;
use crate::context::RunContext;
use crate::device::HostBuffer;
use crate::real::Real;

/// A mesh, its reference data and the f64 matrices of the elements checked, shared by the
/// cases of one (degree, elements).
pub(crate) struct Prepared {
    /// What the checked matrices are made from, as the prepared-problem cache names them.
    params: String,
    pub(crate) re: Reference,
    pub(crate) mesh: PrismMesh,
    pub(crate) checked: Vec<usize>,
    expected: OnceLock<Vec<f64>>,
}

impl Prepared {
    fn expected(&self) -> &[f64] {
        self.expected.get_or_init(|| {
            let recipe = crate::prep_cache::Recipe { kind: "banas-expected", code: crate::prep_code::BANAS, params: &self.params };
            crate::prep_cache::cached(recipe, || element_matrices(&self.re, &self.mesh, &self.checked))
        })
    }
}

/// The run's problems of a sweep (small beside the device arrays).
fn problems(run: &RunContext) -> Arc<ProblemCache<(u32, usize), Prepared>> {
    run.state("banas problems", || ProblemCache::new(16))
}

pub(crate) fn prepared(run: &RunContext, degree: u32, elements: usize, verify_fraction: f64) -> Result<Arc<Prepared>, CaseError> {
    let cache = problems(run);
    // Meshes of another degree are not needed again: sweeps run degree by degree.
    cache.retain(|k| k.0 == degree);
    cache.get_or_build((degree, elements), || {
        let re = Reference::new(degree as usize).map_err(CaseError::Failed)?;
        let mesh = PrismMesh::with_elements(elements);
        let m = ((verify_fraction * elements as f64).ceil() as usize).clamp(1, elements);
        let mut checked: Vec<usize> = (0..m).map(|i| if m == 1 { 0 } else { i * (elements - 1) / (m - 1) }).collect();
        checked.dedup();
        let params = format!("degree={degree} elements={elements} checked={m}");
        Ok(Prepared { params, re, mesh, checked, expected: OnceLock::new() })
    })
}

/// Lengths (in reals) of the four input arrays of a launch: derivatives, quadrature, the
/// per-element geometry (six vertices for JAC, Jacobian terms of every point for NOJAC), Lamé.
pub(crate) fn input_lengths(prep: &Prepared, jac: bool) -> [usize; 4] {
    let (nq, ne) = (prep.re.nq(), prep.mesh.len());
    [prep.re.dphi.len(), 4 * nq, if jac { 18 * ne } else { 10 * nq * ne }, 2 * ne]
}

/// The "input data preparation" stage: the host arrays of one launch, written into the
/// (pinned) host buffers the upload reads from.
pub(crate) fn prepare_inputs<T: Real>(prep: &Prepared, jac: bool, host: &mut [HostBuffer]) {
    let re = &prep.re;
    let mesh = &prep.mesh;
    let [dphi, quad, per_element, lame] = host else { unreachable!("four input buffers") };
    for (d, &v) in dphi.typed_mut::<T>().iter_mut().zip(&re.dphi) {
        *d = T::from_f64(v);
    }
    for (d, v) in quad.typed_mut::<T>().iter_mut().zip(re.quad.iter().flat_map(|q| [q.xi[0], q.xi[1], q.xi[2], q.w])) {
        *d = T::from_f64(v);
    }
    let per = per_element.typed_mut::<T>();
    if jac {
        per.par_chunks_mut(18).enumerate().for_each(|(e, out)| {
            for (d, v) in out.iter_mut().zip(mesh.element_vertices(e).into_iter().flatten()) {
                *d = T::from_f64(v);
            }
        });
    } else {
        let chunk = 10 * re.nq();
        per.par_chunks_mut(chunk).enumerate().for_each(|(e, out)| {
            let x = mesh.element_vertices(e);
            for (d, v) in out.iter_mut().zip(re.quad.iter().flat_map(|pt| jacobian_terms(&x, pt))) {
                *d = T::from_f64(v);
            }
        });
    }
    for (e, pair) in lame.typed_mut::<T>().chunks_mut(2).enumerate() {
        let (l, m) = mesh.lame(e);
        pair[0] = T::from_f64(l);
        pair[1] = T::from_f64(m);
    }
}

/// One pass's check: the checked elements against the f64 reference (largest relative Frobenius
/// error), and NaN anywhere in the whole output (left of the poison: an element not written).
pub(crate) fn check_pass<T: Real>(out: &[T], prep: &Prepared, size: usize) -> f64 {
    if out.par_iter().any(|v| v.to_f64().is_nan()) {
        return f64::NAN;
    }
    checked_error(prep, size, |_, e| &out[e * size..(e + 1) * size])
}

/// The largest relative Frobenius error of the checked elements, element k of `prep.checked`
/// (element e of the mesh) read by `got(k, e)`.
pub(crate) fn checked_error<'a, T: Real>(prep: &Prepared, size: usize, got: impl Fn(usize, usize) -> &'a [T]) -> f64 {
    let expected = prep.expected();
    let mut error: f64 = 0.0;
    for (k, &e) in prep.checked.iter().enumerate() {
        let want = &expected[k * size..(k + 1) * size];
        let (mut diff, mut norm) = (0.0, 0.0);
        for (g, w) in got(k, e).iter().zip(want) {
            diff += (g.to_f64() - w).powi(2);
            norm += w * w;
        }
        let rel = (diff / norm).sqrt();
        error = if rel.is_nan() { f64::NAN } else { error.max(rel) };
    }
    error
}

/// Every row of a case with the case's extra columns.
pub(crate) fn with_extras(rows: Vec<Measured>, extras: &[(&'static str, f64)]) -> Vec<Measured> {
    rows.into_iter()
        .map(|mut m| {
            for &(k, v) in extras {
                m = m.extra(k, v);
            }
            m
        })
        .collect()
}
