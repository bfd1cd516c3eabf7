//! COOM (section 4.3, Algorithm 5): node offsets Phi (N + 1: each node's first block), one first
//! dof per 3x3 block (Gamma), and the values block by block, [9 (base + k) + 3m + n]. Its section
//! of `kernels/sanfui.kern` is `FORMAT 3`.

use fembench_fem::csr::Pattern;
use fembench_fem::hexmesh::Neighbours;

use super::layout::{put_block, BoxDims, Entry, Layout, NodeAt, Nodes, Part, Placed, Put, Span, Vendor};

pub struct Coom;

impl Layout for Coom {
    fn name(&self) -> &'static str {
        "COOM"
    }
    fn code(&self) -> usize {
        3
    }
    fn table1_bytes(&self, nodes: [usize; 3]) -> Option<f64> {
        let (s1, s2, s3) = super::layout::sums(nodes);
        Some(576.0 * s1 - 864.0 * s2 + 1300.0 * s3 - 384.0)
    }
    fn lengths(&self, nb: &Neighbours) -> (usize, usize, usize) {
        (nb.nodes() + 1, nb.blocks(), 9 * nb.blocks())
    }
    fn bytes_per_dof(&self, d: &BoxDims) -> f64 {
        4.0 * (d.n + 1.0 + d.b) + d.s * d.nnz
    }
    fn place(&self, e: &Entry) -> Placed {
        let block = e.base + e.k / 3;
        Placed { row: None, col: (block, e.col - e.col % 3), val: 9 * block + 3 * e.m + e.k % 3 }
    }
    fn encode_row_side(&self, nb: &Neighbours, _pattern: &Pattern) -> Option<Vec<i32>> {
        Some(nb.ptr.clone())
    }
    fn spans(&self, at: &Nodes) -> [Span; 3] {
        let ((b0, b1), n, blocks) = (at.blocks(), at.nb.nodes(), at.nb.blocks());
        [Span::flat(at.a0, at.a1 + 1, n + 1), Span::flat(b0, b1, blocks), Span::flat(9 * b0, 9 * b1, 9 * blocks)]
    }
    fn check_row(&self, p: &Part, (n, m): (NodeAt, usize), _width: u32, put: &mut Put) -> Result<(), String> {
        let (a, base, nng, row) = (n.a, n.base, n.nng, 3 * n.a + m);
        if p.ri(0, a)? as usize != base || p.ri(0, a + 1)? as usize != base + nng {
            return Err(format!("COOM node {a}: blocks {}..{}, expected {base}..{}", p.ri(0, a)?, p.ri(0, a + 1)?, base + nng));
        }
        for k in 0..nng {
            let v = |i: usize| p.vi(0, 9 * (base + k) + 3 * m + i);
            put_block(row, k, p.ci(0, base + k)?, [v(0)?, v(1)?, v(2)?], put)?;
        }
        Ok(())
    }
    fn spmv_threads(&self, nb: &Neighbours) -> usize {
        nb.nodes()
    }
    fn blocks(&self) -> bool {
        true
    }
    fn vendor(&self) -> Vendor {
        Vendor::Bsr
    }
}
