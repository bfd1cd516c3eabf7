//! COO (section 4.2): a row index, a column index and a value per entry; row 3a + m of node a at
//! 9 base + 3 nng m, its columns 3 nbr[k] + n. Its section of `kernels/sanfui.kern` is `FORMAT 0`.

use fembench_fem::hexmesh::Neighbours;

use super::layout::{BoxDims, Entry, Layout, NodeAt, Nodes, Part, Placed, Put, Span};

pub struct Coo;

impl Layout for Coo {
    fn name(&self) -> &'static str {
        "COO"
    }
    fn code(&self) -> usize {
        0
    }
    fn table1_bytes(&self, nodes: [usize; 3]) -> Option<f64> {
        let (s1, s2, s3) = super::layout::sums(nodes);
        Some(1296.0 * s1 - 1944.0 * s2 + 2916.0 * s3 - 864.0)
    }
    fn lengths(&self, nb: &Neighbours) -> (usize, usize, usize) {
        let nnz = 9 * nb.blocks();
        (nnz, nnz, nnz)
    }
    fn bytes_per_dof(&self, d: &BoxDims) -> f64 {
        8.0 * d.nnz + d.s * d.nnz
    }
    fn place(&self, e: &Entry) -> Placed {
        Placed { row: Some((e.at, e.row as i32)), col: (e.at, e.col), val: e.at }
    }
    fn spans(&self, at: &Nodes) -> [Span; 3] {
        let (b0, b1) = at.blocks();
        [Span::flat(9 * b0, 9 * b1, 9 * at.nb.blocks()); 3]
    }
    fn check_row(&self, p: &Part, (n, m): (NodeAt, usize), width: u32, put: &mut Put) -> Result<(), String> {
        let row = 3 * n.a + m;
        let (start, end) = (9 * n.base + 3 * n.nng * m, 9 * n.base + 3 * n.nng * (m + 1));
        super::layout::check_span(row, (start, end), width)?;
        for (k, at) in (start..end).enumerate() {
            if p.ri(0, at)? as usize != row {
                return Err(format!("COO entry {at} has row {}, not {row}", p.ri(0, at)?));
            }
            put(row, k, p.ci(0, at)? as i64, p.vi(0, at)?)?;
        }
        Ok(())
    }
    fn spmv_threads(&self, nb: &Neighbours) -> usize {
        9 * nb.blocks()
    }
    fn spmv_adds(&self) -> bool {
        true
    }
    fn numeric_reads_node_offsets(&self) -> bool {
        true
    }
}
