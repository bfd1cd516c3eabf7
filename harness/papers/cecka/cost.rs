//! The cost model: bytes and flops per case (see the module documentation of `cecka`).

use super::prepared::Prepared;
use super::system::Problem;

/// Bytes and flops of the serial algorithm (ElemColor and the CPU code move the same data):
/// per element its connectivity and element data, nodal coordinates and values, the outputs
/// read and written. Flops: the element subroutine's (see [`element_flops`]).
pub(crate) fn cost(p: &Problem, s: usize, dummy: bool) -> (f64, f64) {
    let (en, ne, n) = (p.en() as f64, p.ne() as f64, p.mesh.num_nodes() as f64);
    let bytes =
        en * ne * 4.0 + en * en * ne * 4.0 + 2.0 * n * s as f64 + n * 4.0 + n * s as f64 + 2.0 * (p.nnz() + p.n_free) as f64 * s as f64;
    (bytes, ne * element_flops(en, dummy))
}

pub(crate) fn sizes(prep: &Prepared) -> [(&'static str, f64); 4] {
    let p = &prep.problem;
    [("elements", p.ne() as f64), ("nodes", p.mesh.num_nodes() as f64), ("nnz", p.nnz() as f64), ("unknowns", p.n_free as f64)]
}

/// Element subroutine flops, as the kernels execute them: 15 for the geometry (edge vectors,
/// determinant, its inverse, three coefficients), then per (i, j) pair 7 (the three-term
/// combination 5, the Dirichlet fold 2), and 2 per row of F^e. The dummy subroutine: 17 for the
/// geometry and its one entry value, 2 per pair (the fold), 2 per row. Accumulation adds are
/// counted by the methods that do them as flops (GlobalNZ's and SharedNZ's reductions);
/// atomic additions (ElemAtomic, SharedAtomic) are memory operations, not counted.
pub(crate) fn element_flops(en: f64, dummy: bool) -> f64 {
    if dummy {
        17.0 + 2.0 * en * en + 2.0 * en
    } else {
        15.0 + 7.0 * en * en + 2.0 * en
    }
}
