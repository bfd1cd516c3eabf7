//! CSR (section 4.2): row offsets (3N + 1), then COO's column array and value order. Its section
//! of `kernels/sanfui.kern` is `FORMAT 1`.

use fembench_fem::csr::Pattern;
use fembench_fem::hexmesh::Neighbours;

use super::layout::{BoxDims, Entry, Layout, NodeAt, Nodes, Part, Placed, Put, Span, Vendor};

pub struct Csr;

impl Layout for Csr {
    fn name(&self) -> &'static str {
        "CSR"
    }
    fn code(&self) -> usize {
        1
    }
    fn table1_bytes(&self, nodes: [usize; 3]) -> Option<f64> {
        let (s1, s2, s3) = super::layout::sums(nodes);
        Some(864.0 * s1 - 1296.0 * s2 + 1956.0 * s3 - 576.0)
    }
    fn lengths(&self, nb: &Neighbours) -> (usize, usize, usize) {
        let nnz = 9 * nb.blocks();
        (3 * nb.nodes() + 1, nnz, nnz)
    }
    fn bytes_per_dof(&self, d: &BoxDims) -> f64 {
        4.0 * (d.d * d.n + 1.0 + d.nnz) + d.s * d.nnz
    }
    fn place(&self, e: &Entry) -> Placed {
        Placed { row: None, col: (e.at, e.col), val: e.at }
    }
    fn encode_row_side(&self, _nb: &Neighbours, pattern: &Pattern) -> Option<Vec<i32>> {
        Some(pattern.row_ptr.iter().map(|&x| x as i32).collect())
    }
    fn spans(&self, at: &Nodes) -> [Span; 3] {
        let (n, nnz) = (at.nb.nodes(), 9 * at.nb.blocks());
        let (v0, v1) = (at.pattern.row_ptr[3 * at.a0] as usize, at.pattern.row_ptr[3 * at.a1] as usize);
        [Span::flat(3 * at.a0, 3 * at.a1 + 1, 3 * n + 1), Span::flat(v0, v1, nnz), Span::flat(v0, v1, nnz)]
    }
    fn check_row(&self, p: &Part, (n, m): (NodeAt, usize), width: u32, put: &mut Put) -> Result<(), String> {
        let row = 3 * n.a + m;
        let (start, end) = (p.ri(0, row)? as usize, p.ri(0, row + 1)? as usize);
        super::layout::check_span(row, (start, end), width)?;
        for (k, at) in (start..end).enumerate() {
            put(row, k, p.ci(0, at)? as i64, p.vi(0, at)?)?;
        }
        Ok(())
    }
    fn spmv_threads(&self, nb: &Neighbours) -> usize {
        3 * nb.nodes()
    }
    fn vendor(&self) -> Vendor {
        Vendor::Csr
    }
}
