//! Bytes and flops per stage and format (the rows' `bytes` and `flops`; GB/s and GFLOP/s are
//! these over the stage's median time). s = bytes of a real, N nodes, E elements, B node-to-node
//! blocks (nnz = 9 B), 4-byte indices.
//!
//! - **elements** (Algorithm 1): reads the connectivity (32 E) and coordinates (3 s N, once each
//!   in the ideal), writes K^e (576 s E). Executed flops: [`ELEMENT_FLOPS`] per element.
//! - **symbolic** (Algorithms 3, 5): reads the neighbour lists (4 (N + 1) + 4 B), writes the
//!   format's index arrays (4 x their lengths). No flops.
//! - **numeric** (Algorithm 4): the compulsory traffic: reads K^e (576 s E), the connectivity
//!   (32 E) and the index arrays the kernel searches once each (COO: the node offsets and C;
//!   CSR: row offsets and C; ELL: C; COOM: Phi and Gamma; ELLM: Gamma), writes every value once
//!   (s x the value array, ELL's and ELLM's padding included). The zeroing of the values (part of
//!   Algorithm 2's initialisation, inside the stage) and the bisections' repeated reads are not
//!   compulsory and not counted. Flops: the 576 additions per element.
//! - **convert** (COOM and ELLM to CSR, beyond the paper): reads the node offsets, the block
//!   indices and the values, writes CSR (4 (3N + 1) + (4 + s) nnz).
//! - **ellm-gather** (beyond the paper): symbolic adds the plan kernel, which reads Gamma
//!   (4 x 27 N), each node's elements (32 N) and the connectivity (32 E), and writes the plan
//!   (8 x 27 N); numeric reads K^e (576 s E), each node's elements and the plan once each, and
//!   writes every ELLM value once (no zeroing pass: it writes the padding's zeros too).
//! - **elem-atomic** numeric: K^e, the slots (4 x 576 E) and the CSR values (s nnz).
//! - **coo-cusparse** (the cuSPARSE peer, P = 576 E pairs): triplets writes the pairs' rows and
//!   columns (8 P, reading the connectivity, 32 E); sort reads and writes them and writes the
//!   permutation and the row offsets (8 P + 12 P + 4 (3N + 1)), the least any sort moves;
//!   sum: the head flags (reads 8 P, writes 4 P), the scan (reads and writes 4 P each), the
//!   segmented sum (reads the flags, columns, permutation and slots, 16 P, and K^e through the
//!   permutation, s P) and the CSR it writes ((4 + s) nnz + 4 (3N + 1)).
//! - **spmv** rows: the stored matrix once, x and y once each; 2 nnz flops.
//! - CPU rows carry no bytes or flops (Algorithm 2 computes K^e inside its loop).

use super::formats::lengths;
use super::formats::Format;
use super::reference::Prepared;
use super::spec::Method;
use fembench_fem::hexmesh::Neighbours;

/// Flops of `sanfui_elements` per element as written: for each of the 8 row nodes and 8 Gauss
/// points, the Jacobian (144), its cofactors, determinant and inverse (42), the row node's
/// gradient (18), and per column node its gradient, dot product and nine entries (80 x 8).
/// The Jacobian is recomputed per row node (to keep registers in bounds): 8x its minimal work.
pub const ELEMENT_FLOPS: f64 = 64.0 * (144.0 + 42.0 + 18.0 + 8.0 * 80.0);

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    pub bytes: f64,
    pub flops: f64,
}

/// The index bytes the numeric kernel of a format reads (each array once).
fn searched_index_bytes(format: Format, nb: &Neighbours) -> f64 {
    let (r, c, _) = lengths(format, nb);
    let r = if format.0.numeric_reads_node_offsets() { nb.nodes() + 1 } else { r };
    4.0 * (r + c) as f64
}

/// Each timed stage's cost, by name.
pub fn stages(prep: &Prepared, method: Method, s: usize) -> Vec<(&'static str, Cost)> {
    if method.on_cpu() {
        return Vec::new();
    }
    let nb = &prep.nb;
    let (e, n, s) = (prep.mesh.num_elements() as f64, nb.nodes() as f64, s as f64);
    let elements = Cost { bytes: 32.0 * e + 3.0 * s * n + 576.0 * s * e, flops: e * ELEMENT_FLOPS };
    let ke = 576.0 * s * e + 32.0 * e;
    if method == Method::ELEM_ATOMIC {
        let nnz = 9.0 * nb.blocks() as f64;
        return vec![("elements", elements), ("numeric", Cost { bytes: 576.0 * s * e + 4.0 * 576.0 * e + s * nnz, flops: 576.0 * e })];
    }
    if method.coo_route() {
        let (p, nnz) = (576.0 * e, 9.0 * nb.blocks() as f64);
        let rows = 4.0 * (3.0 * n + 1.0);
        return vec![
            ("elements", elements),
            ("triplets", Cost { bytes: 32.0 * e + 8.0 * p, flops: 0.0 }),
            ("sort", Cost { bytes: 20.0 * p + rows, flops: 0.0 }),
            ("sum", Cost { bytes: (12.0 + 8.0 + 16.0 + s) * p + (4.0 + s) * nnz + rows, flops: p }),
        ];
    }
    let format = method.format();
    let (r, c, v) = lengths(format, nb);
    if method == Method::ELLM_GATHER {
        let symbolic = 4.0 * (n + 1.0 + nb.blocks() as f64) + 4.0 * c as f64;
        let plan = 4.0 * c as f64 + 32.0 * n + 32.0 * e + 8.0 * c as f64;
        return vec![
            ("elements", elements),
            ("symbolic", Cost { bytes: symbolic + plan, flops: 0.0 }),
            ("numeric", Cost { bytes: 576.0 * s * e + 32.0 * n + 8.0 * c as f64 + s * v as f64, flops: 576.0 * e }),
        ];
    }
    let mut out = vec![
        ("elements", elements),
        ("symbolic", Cost { bytes: 4.0 * (n + 1.0 + nb.blocks() as f64) + 4.0 * (r + c) as f64, flops: 0.0 }),
        ("numeric", Cost { bytes: ke + searched_index_bytes(format, nb) + s * v as f64, flops: 576.0 * e }),
    ];
    if super::gpu::converts(method) {
        // Reads the node offsets, the block indices and the values; writes a CSR matrix.
        let nnz = 9.0 * nb.blocks() as f64;
        let csr = 4.0 * (3.0 * n + 1.0) + (4.0 + s) * nnz;
        out.push(("convert", Cost { bytes: 4.0 * (n + 1.0) + 4.0 * c as f64 + s * v as f64 + csr, flops: 0.0 }));
    }
    out
}
