//! ELLM (section 4.3): one first dof per 3x3 block, N x 27 column-major, [k N + a], PAD past a
//! node's blocks; the values [(9k + 3m + n) N + a]. Its section of `kernels/sanfui.kern` is
//! `FORMAT 4`.

use fembench_fem::hexmesh::Neighbours;

use super::layout::{put_block, BoxDims, Entry, Layout, NodeAt, Nodes, Part, Placed, Put, Span, Vendor, ELLM_WIDTH, PAD};

pub struct Ellm;

impl Layout for Ellm {
    fn name(&self) -> &'static str {
        "ELLM"
    }
    fn code(&self) -> usize {
        4
    }
    fn table1_bytes(&self, nodes: [usize; 3]) -> Option<f64> {
        Some(1080.0 * super::layout::sums(nodes).2)
    }
    fn lengths(&self, nb: &Neighbours) -> (usize, usize, usize) {
        (0, ELLM_WIDTH * nb.nodes(), 9 * ELLM_WIDTH * nb.nodes())
    }
    fn bytes_per_dof(&self, d: &BoxDims) -> f64 {
        4.0 * ELLM_WIDTH as f64 * d.n + d.s * d.d * d.d * ELLM_WIDTH as f64 * d.n
    }
    fn place(&self, e: &Entry) -> Placed {
        let (slot, n) = (e.k / 3, e.nodes);
        Placed { row: None, col: (slot * n + e.a, e.col - e.col % 3), val: (9 * slot + 3 * e.m + e.k % 3) * n + e.a }
    }
    fn spans(&self, at: &Nodes) -> [Span; 3] {
        let n = at.nb.nodes();
        [Nodes::none(), at.slotted(ELLM_WIDTH, n), at.slotted(9 * ELLM_WIDTH, n)]
    }
    fn check_row(&self, p: &Part, (n, m): (NodeAt, usize), _width: u32, put: &mut Put) -> Result<(), String> {
        let (a, row) = (n.a, 3 * n.a + m);
        for k in 0..n.nng {
            let v = |i: usize| p.vi(9 * k + 3 * m + i, a);
            put_block(row, k, p.ci(k, a)?, [v(0)?, v(1)?, v(2)?], put)?;
        }
        for k in n.nng..ELLM_WIDTH {
            if p.ci(k, a)? != PAD {
                return Err(format!("ELLM node {a} slot {k} should be padding"));
            }
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
        Vendor::Converted
    }
}
