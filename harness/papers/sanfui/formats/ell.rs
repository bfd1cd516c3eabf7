//! ELL (section 4.2): column indices and values R x 81, column-major, [(3k + n) R + row], the
//! padding column PAD past a row's entries. Its section of `kernels/sanfui.kern` is `FORMAT 2`.

use fembench_fem::hexmesh::Neighbours;

use super::layout::{BoxDims, Entry, Layout, NodeAt, Nodes, Part, Placed, Put, Span, ELLM_WIDTH, ELL_WIDTH, PAD};

pub struct Ell;

impl Layout for Ell {
    fn name(&self) -> &'static str {
        "ELL"
    }
    fn code(&self) -> usize {
        2
    }
    fn table1_bytes(&self, nodes: [usize; 3]) -> Option<f64> {
        Some(1944.0 * super::layout::sums(nodes).2)
    }
    fn lengths(&self, nb: &Neighbours) -> (usize, usize, usize) {
        (0, ELL_WIDTH * 3 * nb.nodes(), ELL_WIDTH * 3 * nb.nodes())
    }
    fn bytes_per_dof(&self, d: &BoxDims) -> f64 {
        (4.0 + d.s) * (ELLM_WIDTH as f64 * d.d) * d.d * d.n
    }
    fn place(&self, e: &Entry) -> Placed {
        let at = e.k * 3 * e.nodes + e.row;
        Placed { row: None, col: (at, e.col), val: at }
    }
    fn spans(&self, at: &Nodes) -> [Span; 3] {
        let rows = Span { slots: ELL_WIDTH, start: 3 * at.a0, len: 3 * (at.a1 - at.a0), stride: 3 * at.nb.nodes() };
        [Nodes::none(), rows, rows]
    }
    fn check_row(&self, p: &Part, (n, m): (NodeAt, usize), width: u32, put: &mut Put) -> Result<(), String> {
        let row = 3 * n.a + m;
        for s in 0..ELL_WIDTH {
            if s < width as usize {
                put(row, s, p.ci(s, row)? as i64, p.vi(s, row)?)?;
            } else if p.ci(s, row)? != PAD {
                return Err(format!("ELL row {row} slot {s} should be padding, has column {}", p.ci(s, row)?));
            }
        }
        Ok(())
    }
    fn spmv_threads(&self, nb: &Neighbours) -> usize {
        3 * nb.nodes()
    }
}
