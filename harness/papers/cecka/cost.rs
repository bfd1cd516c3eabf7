//! The cost model: bytes and flops per case (see the module documentation of `cecka`).

use super::problem::prepared::Prepared;
use super::problem::system::Problem;

/// Bytes and flops of the serial algorithm (ElemColor and the CPU code move the same data):
/// per element its connectivity and element data, nodal coordinates and values, the outputs
/// read and written. Flops: the element subroutine's (see [`element_flops`]).
pub(crate) fn cost(p: &Problem, s: usize, dummy: bool) -> (f64, f64) {
    let (en, ne, n) = (p.en() as f64, p.ne() as f64, p.mesh.num_nodes() as f64);
    let bytes =
        en * ne * 4.0 + en * en * ne * 4.0 + 2.0 * n * s as f64 + n * 4.0 + n * s as f64 + 2.0 * (p.nnz() + p.n_free) as f64 * s as f64;
    (bytes, ne * element_flops(en, dummy))
}

/// Minimum traffic of the COO route (coo-radix, coo-cusparse and the Python COO routes):
/// connectivity, dofs and nodal data in; A^e and its pairs out; the sort reads and writes the
/// pairs and the permutation once (a lower bound for any sort; a radix sort makes one such pass
/// per digit); the sum reads pairs, flags, run numbers and the gathered values and writes the CSR.
pub(crate) fn coo_route_bytes(p: &Problem, s: usize) -> f64 {
    let (en, ne, nnz, rows) = (p.en(), p.ne(), p.nnz(), p.n_free + 1);
    let pairs = en * en * ne;
    (en * ne * (8 + 3 * s) + pairs * (s + 8) + pairs * 24 + pairs * (16 + s) + nnz * (4 + s) + rows * 8 + 2 * p.n_free * s) as f64
}

/// Compulsory traffic of the slot-map route (slot-scatter, torch-index-add): connectivity, dofs
/// and nodal data in, A^e written once, then A^e and the map read once and every CSR value read
/// and written once; the right-hand side zeroed and added once.
pub(crate) fn slot_route_bytes(p: &Problem, s: usize) -> f64 {
    let (en, ne, nnz) = (p.en(), p.ne(), p.nnz());
    let entries = en * en * ne;
    (en * ne * (8 + 3 * s) + entries * s + entries * (4 + s) + 2 * nnz * s + 2 * p.n_free * s) as f64
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
