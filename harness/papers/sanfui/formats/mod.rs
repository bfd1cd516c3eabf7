//! The five storage formats of the paper (section 4.2-4.3) as the kernels lay them out, their
//! sizes (ours, counted, against Table 1's formulas), Eq. 6, the pre-processing's neighbour
//! lists, and the check of a device result: every format, read through its own indices as the
//! device wrote them, is turned into CSR order and compared with the f64 reference.

use fembench_fem::csr::Pattern;
use fembench_fem::hexmesh::Neighbours;
use rayon::prelude::*;

use super::spec::Format;

/// The column padding of ELL and ELLM (sorts after every real column, so bisection works).
pub const PAD: i32 = i32::MAX;
/// ELL's row width (3 dofs x 27 neighbours) and ELLM's (27 blocks).
pub const ELL_WIDTH: usize = 81;
pub const ELLM_WIDTH: usize = 27;

/// Eq. 6: the non-zeros of the box's global stiffness matrix (3 dofs per node).
pub fn eq6(nodes: [usize; 3]) -> i64 {
    let [x, y, z] = nodes.map(|v| v as i64);
    108 * (x + y + z) - 162 * (x * y + y * z + z * x) + 243 * x * y * z - 72
}

/// Table 1's storage formula of a format (bytes, 4-byte values and indices as in the paper).
pub fn table1_bytes(format: Format, nodes: [usize; 3]) -> f64 {
    let [x, y, z] = nodes.map(|v| v as f64);
    let (s1, s2, s3) = (x + y + z, x * y + y * z + z * x, x * y * z);
    match format {
        Format::Coo => 1296.0 * s1 - 1944.0 * s2 + 2916.0 * s3 - 864.0,
        Format::Csr => 864.0 * s1 - 1296.0 * s2 + 1956.0 * s3 - 576.0,
        Format::Ell => 1944.0 * s3,
        Format::Coom => 576.0 * s1 - 864.0 * s2 + 1300.0 * s3 - 384.0,
        Format::Ellm => 1080.0 * s3,
    }
}

/// The lengths of a format's two index arrays (row side, column side) and of its values.
pub fn lengths(format: Format, nb: &Neighbours) -> (usize, usize, usize) {
    let (n, nnz) = (nb.nodes(), 9 * nb.blocks());
    match format {
        Format::Coo => (nnz, nnz, nnz),
        Format::Csr => (3 * n + 1, nnz, nnz),
        Format::Ell => (0, ELL_WIDTH * 3 * n, ELL_WIDTH * 3 * n),
        Format::Coom => (n + 1, nb.blocks(), nnz),
        Format::Ellm => (0, ELLM_WIDTH * n, 9 * ELLM_WIDTH * n),
    }
}

/// Bytes the format takes on the device: 4-byte indices, values of `real` bytes.
pub fn storage_bytes(format: Format, nb: &Neighbours, real: usize) -> usize {
    let (r, c, v) = lengths(format, nb);
    4 * (r + c) + real * v
}

/// The same from the box alone: N nodes and prod(3 n_i - 2) blocks (what reports use).
pub fn storage_bytes_of_box(format: Format, nodes: [usize; 3], real: usize) -> f64 {
    storage_bytes_per_dof(format, nodes, real, 3)
}

/// The same for `nd` DOFs per node (Fig. 8): nnz = nd^2 B; ELL keeps 27 nd entries in each of
/// its nd N rows; COOM and ELLM one index per nd x nd block, ELLM 27 blocks per node.
pub fn storage_bytes_per_dof(format: Format, nodes: [usize; 3], real: usize, nd: usize) -> f64 {
    let (n, b) = (nodes.iter().product::<usize>() as f64, nodes.iter().map(|&v| (3 * v - 2) as f64).product::<f64>());
    let (d, s) = (nd as f64, real as f64);
    let nnz = d * d * b;
    match format {
        Format::Coo => 8.0 * nnz + s * nnz,
        Format::Csr => 4.0 * (d * n + 1.0 + nnz) + s * nnz,
        Format::Ell => (4.0 + s) * (ELLM_WIDTH as f64 * d) * d * n,
        Format::Coom => 4.0 * (n + 1.0 + b) + s * nnz,
        Format::Ellm => 4.0 * ELLM_WIDTH as f64 * n + s * d * d * ELLM_WIDTH as f64 * n,
    }
}

/// How a device result compares with the reference: the largest |got - ref| / scale over the
/// entries, and the first problem of structure (a wrong index, a missing or extra entry).
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub worst: f64,
    pub structure: Option<String>,
}

impl Check {
    /// The check of two parts together: the worse value (NaN wins), the first problem.
    pub fn and(self, other: Check) -> Check {
        let worst = if self.worst.is_nan() || other.worst.is_nan() { f64::NAN } else { self.worst.max(other.worst) };
        Check { worst, structure: self.structure.or(other.structure) }
    }
}

/// A matrix on `pattern` (values in CSR order) laid out as the kernels lay out a format: the
/// row side, the column side and the values (what the check reads; tests build results with it).
pub fn encode(format: Format, nb: &Neighbours, pattern: &Pattern, values: &[f64]) -> (Vec<i32>, Vec<i32>, Vec<f64>) {
    let n = nb.nodes();
    let (lr, lc, lv) = lengths(format, nb);
    let (mut r, mut c, mut v) = (vec![0i32; lr], vec![PAD; lc], vec![0.0; lv]);
    let rows = 3 * n;
    for row in 0..rows {
        let (a, m) = (row / 3, row % 3);
        let (base, lo) = (nb.ptr[a] as usize, pattern.row_ptr[row] as usize);
        for (k, at) in (lo..pattern.row_ptr[row + 1] as usize).enumerate() {
            let col = pattern.col[at] as i32;
            match format {
                Format::Coo => (r[at], c[at], v[at]) = (row as i32, col, values[at]),
                Format::Csr => (c[at], v[at]) = (col, values[at]),
                Format::Ell => (c[k * rows + row], v[k * rows + row]) = (col, values[at]),
                Format::Coom => {
                    (c[base + k / 3], v[9 * (base + k / 3) + 3 * m + k % 3]) = (col - col % 3, values[at]);
                }
                Format::Ellm => (c[(k / 3) * n + a], v[(9 * (k / 3) + 3 * m + k % 3) * n + a]) = (col - col % 3, values[at]),
            }
        }
    }
    match format {
        Format::Csr => r = pattern.row_ptr.iter().map(|&x| x as i32).collect(),
        Format::Coom => r = nb.ptr.clone(),
        _ => {}
    }
    (r, c, v)
}

/// Where the entries of a range of nodes lie in one of a format's arrays: `slots` runs (one for
/// a flat array; ELL and ELLM keep one run per slot, `stride` entries apart) of `len` entries,
/// each from index `start` of its slot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    pub slots: usize,
    pub start: usize,
    pub len: usize,
    pub stride: usize,
}

impl Span {
    fn flat(start: usize, end: usize, total: usize) -> Span {
        Span { slots: 1, start, len: end - start, stride: total }
    }
    /// The entries it covers.
    pub fn entries(&self) -> usize {
        self.slots * self.len
    }
    /// Each run as (first global index, length).
    pub fn runs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.slots).map(move |s| (s * self.stride + self.start, self.len))
    }
}

/// The spans of nodes `nodes` in a format's row-side, column-side and value arrays (the row side
/// of ELL and ELLM is empty). CSR's column and value spans are the reference pattern's rows: a
/// device row pointer that disagrees points outside them and fails the check.
pub fn spans(format: Format, nb: &Neighbours, pattern: &Pattern, nodes: std::ops::Range<usize>) -> [Span; 3] {
    let n = nb.nodes();
    let (a0, a1) = (nodes.start, nodes.end);
    let (b0, b1, blocks) = (nb.ptr[a0] as usize, nb.ptr[a1] as usize, nb.blocks());
    let nnz = 9 * blocks;
    let none = Span { slots: 0, start: 0, len: 0, stride: 0 };
    let slotted = |slots: usize, stride: usize| Span { slots, start: a0, len: a1 - a0, stride };
    match format {
        Format::Coo => [Span::flat(9 * b0, 9 * b1, nnz); 3],
        Format::Csr => {
            let (v0, v1) = (pattern.row_ptr[3 * a0] as usize, pattern.row_ptr[3 * a1] as usize);
            [Span::flat(3 * a0, 3 * a1 + 1, 3 * n + 1), Span::flat(v0, v1, nnz), Span::flat(v0, v1, nnz)]
        }
        Format::Ell => {
            let rows = Span { slots: ELL_WIDTH, start: 3 * a0, len: 3 * (a1 - a0), stride: 3 * n };
            [none, rows, rows]
        }
        Format::Coom => [Span::flat(a0, a1 + 1, n + 1), Span::flat(b0, b1, blocks), Span::flat(9 * b0, 9 * b1, nnz)],
        Format::Ellm => [none, slotted(ELLM_WIDTH, n), slotted(9 * ELLM_WIDTH, n)],
    }
}

/// A part of an array as [`spans`] lays it out: run after run, `len` entries each. Entry `j` of
/// slot `s` (global index `s * stride + j`) is `data[s * len + j - start]`.
#[derive(Debug, Clone, Copy)]
pub struct Window<'a, T> {
    pub data: &'a [T],
    pub start: usize,
    pub len: usize,
}

impl<'a, T: Copy> Window<'a, T> {
    pub fn new(data: &'a [T], span: Span) -> Self {
        Window { data, start: span.start, len: span.len }
    }
    /// Entry `j` of slot `s`; None outside the part.
    #[inline]
    fn at(&self, s: usize, j: usize) -> Option<T> {
        let j = j.checked_sub(self.start).filter(|&j| j < self.len)?;
        self.data.get(s * self.len + j).copied()
    }
}

/// What a format's values are compared with: the reference `values` on `pattern`, each
/// difference divided by its entry's `scale`.
#[derive(Clone, Copy)]
pub struct Expected<'a> {
    pub pattern: &'a Pattern,
    pub values: &'a [f64],
    pub scale: &'a [f64],
}

/// Reads a format through its indices (`r`: the row side, `c`: the column side, as the
/// symbolic kernel wrote them) into CSR order, and compares every value with `expected`.
pub fn check<V: Copy + Into<f64> + Send + Sync>(
    format: Format,
    nb: &Neighbours,
    (r, c): (&[i32], &[i32]),
    vals: &[V],
    expected: Expected,
) -> Check {
    let n = nb.nodes();
    let [sr, sc, sv] = spans(format, nb, expected.pattern, 0..n);
    let part = (Window::new(r, sr), Window::new(c, sc), Window::new(vals, sv));
    check_part(format, nb, 0..n, part, expected)
}

/// [`check`] for the nodes `nodes` only, on the parts of the arrays that [`spans`] gives them.
pub fn check_part<V: Copy + Into<f64> + Send + Sync>(
    format: Format,
    nb: &Neighbours,
    nodes: std::ops::Range<usize>,
    (r, c, vals): (Window<i32>, Window<i32>, Window<V>),
    expected: Expected,
) -> Check {
    let part = Part { r, c, vals };
    nodes
        .into_par_iter()
        .map(|a| {
            let (worst, structure) = check_node(format, nb, &part, a, expected);
            Check { worst, structure }
        })
        .reduce(|| Check { worst: 0.0, structure: None }, Check::and)
}

/// A part of a format's arrays on the host: the row side, the column side and the values.
struct Part<'a, V> {
    r: Window<'a, i32>,
    c: Window<'a, i32>,
    vals: Window<'a, V>,
}

fn outside(what: &str, s: usize, j: usize) -> String {
    format!("{what} entry {j} of slot {s} lies outside the nodes' part of the array")
}

impl<V: Copy + Into<f64>> Part<'_, V> {
    fn ri(&self, s: usize, j: usize) -> Result<i32, String> {
        self.r.at(s, j).ok_or_else(|| outside("row-side", s, j))
    }
    fn ci(&self, s: usize, j: usize) -> Result<i32, String> {
        self.c.at(s, j).ok_or_else(|| outside("column-side", s, j))
    }
    fn vi(&self, s: usize, j: usize) -> Result<f64, String> {
        self.vals.at(s, j).map(Into::into).ok_or_else(|| outside("value", s, j))
    }
}

/// Where a node's rows lie: the node, its first neighbour block and its neighbour count.
#[derive(Clone, Copy)]
struct NodeAt {
    a: usize,
    base: usize,
    nng: usize,
}

/// Entry `k` of reference row `row` (CSR order) is column `col` with value `v`: an error if the
/// column differs, else the worst scaled difference so far takes it.
type Put<'p> = dyn FnMut(usize, usize, i64, f64) -> Result<(), String> + 'p;

/// Node `a`'s three rows against the reference: (worst scaled difference, first structure
/// problem); each node's rows are independent.
fn check_node<V: Copy + Into<f64>>(format: Format, nb: &Neighbours, part: &Part<V>, a: usize, expected: Expected) -> (f64, Option<String>) {
    let Expected { pattern, values: reference, scale } = expected;
    let mut worst: f64 = 0.0;
    let mut put = |row: usize, k: usize, col: i64, v: f64| -> Result<(), String> {
        let at = pattern.row_ptr[row] as usize + k;
        if at >= pattern.row_ptr[row + 1] as usize || pattern.col[at] as i64 != col {
            return Err(format!("row {row}: entry {k} has column {col}, the reference has {:?}", pattern.col.get(at)));
        }
        let d = (v - reference[at]).abs() / scale[at].max(f64::MIN_POSITIVE);
        worst = if d.is_nan() || worst.is_nan() { f64::NAN } else { worst.max(d) };
        Ok(())
    };
    let node = NodeAt { a, base: nb.ptr[a] as usize, nng: (nb.ptr[a + 1] - nb.ptr[a]) as usize };
    let run = (0..3).try_for_each(|m| {
        let row = 3 * a + m;
        let width = pattern.row_ptr[row + 1] - pattern.row_ptr[row];
        match format {
            Format::Coo | Format::Csr => check_row(format, part, (node, m), width, &mut put),
            Format::Ell => check_ell_row(part, row, width, &mut put),
            Format::Coom | Format::Ellm => check_block_row(format, part, (node, m), &mut put),
        }
    });
    (worst, run.err())
}

/// A COO or CSR row: its span (COO: from the node's blocks; CSR: the row offsets), each entry's
/// row (COO), column and value.
fn check_row<V: Copy + Into<f64>>(format: Format, p: &Part<V>, (n, m): (NodeAt, usize), width: u32, put: &mut Put) -> Result<(), String> {
    let row = 3 * n.a + m;
    let (start, end) = match format {
        Format::Coo => (9 * n.base + 3 * n.nng * m, 9 * n.base + 3 * n.nng * (m + 1)),
        _ => (p.ri(0, row)? as usize, p.ri(0, row + 1)? as usize),
    };
    if end < start || (end - start) as u32 != width {
        return Err(format!("row {row} spans {start}..{end}, the reference has {width} entries"));
    }
    for (k, at) in (start..end).enumerate() {
        if format == Format::Coo && p.ri(0, at)? as usize != row {
            return Err(format!("COO entry {at} has row {}, not {row}", p.ri(0, at)?));
        }
        put(row, k, p.ci(0, at)? as i64, p.vi(0, at)?)?;
    }
    Ok(())
}

/// An ELL row: its entries in its first `width` slots, padding after.
fn check_ell_row<V: Copy + Into<f64>>(p: &Part<V>, row: usize, width: u32, put: &mut Put) -> Result<(), String> {
    for s in 0..ELL_WIDTH {
        if s < width as usize {
            put(row, s, p.ci(s, row)? as i64, p.vi(s, row)?)?;
        } else if p.ci(s, row)? != PAD {
            return Err(format!("ELL row {row} slot {s} should be padding, has column {}", p.ci(s, row)?));
        }
    }
    Ok(())
}

/// Row m of a node in COOM or ELLM: the node's blocks (COOM: at its offsets), each block's
/// first column a first dof and its three values of the row; ELLM's padding after.
fn check_block_row<V: Copy + Into<f64>>(format: Format, p: &Part<V>, (n, m): (NodeAt, usize), put: &mut Put) -> Result<(), String> {
    let (a, base, nng, row) = (n.a, n.base, n.nng, 3 * n.a + m);
    let coom = format == Format::Coom;
    if coom && (p.ri(0, a)? as usize != base || p.ri(0, a + 1)? as usize != base + nng) {
        return Err(format!("COOM node {a}: blocks {}..{}, expected {base}..{}", p.ri(0, a)?, p.ri(0, a + 1)?, base + nng));
    }
    for k in 0..nng {
        let first = if coom { p.ci(0, base + k)? } else { p.ci(k, a)? };
        if first % 3 != 0 {
            return Err(format!("node {a} block {k}: column {first} is not a first dof"));
        }
        for nn in 0..3 {
            let v = if coom { p.vi(0, 9 * (base + k) + 3 * m + nn)? } else { p.vi(9 * k + 3 * m + nn, a)? };
            put(row, 3 * k + nn, first as i64 + nn as i64, v)?;
        }
    }
    if !coom {
        for k in nng..ELLM_WIDTH {
            if p.ci(k, a)? != PAD {
                return Err(format!("ELLM node {a} slot {k} should be padding"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fembench_fem::hexmesh::BoxMesh;

    #[test]
    fn eq6_counts_the_boxes_non_zeros_and_table1_matches_our_counts_where_it_should() {
        for nodes in [[2, 2, 2], [3, 2, 2], [5, 4, 3], [7, 3, 6]] {
            let m = BoxMesh::new(nodes, [1.0; 3]);
            let nb = Neighbours::of_box(&m);
            let p = Pattern::of_elements(3 * m.num_nodes(), m.num_elements(), |e, out| {
                out.extend(m.element(e).iter().flat_map(|&v| (0..3).map(move |c| (3 * v + c) as i32)))
            });
            assert_eq!(p.nnz() as i64, eq6(nodes), "{nodes:?}");
            assert_eq!(9 * nb.blocks(), p.nnz());
            // Each node's list is sorted and holds itself.
            for v in 0..nb.nodes() {
                let s = &nb.list[nb.ptr[v] as usize..nb.ptr[v + 1] as usize];
                assert!(s.windows(2).all(|w| w[0] < w[1]) && s.contains(&(v as i32)));
            }
            // Table 1 (4-byte values): COO, ELL and ELLM are our counts exactly; CSR is ours
            // less the last of the 3N + 1 offsets; COOM is 16/3 nnz + 4 N bytes, one column
            // index per three values, where ours keeps one per 3x3 block (Algorithm 5).
            let (nn, nnz) = (m.num_nodes() as f64, p.nnz() as f64);
            assert_eq!(storage_bytes(Format::Coo, &nb, 4) as f64, table1_bytes(Format::Coo, nodes));
            assert_eq!(storage_bytes(Format::Ell, &nb, 4) as f64, table1_bytes(Format::Ell, nodes));
            assert_eq!(storage_bytes(Format::Ellm, &nb, 4) as f64, table1_bytes(Format::Ellm, nodes));
            assert_eq!(storage_bytes(Format::Csr, &nb, 4) as f64, table1_bytes(Format::Csr, nodes) + 4.0);
            assert!((table1_bytes(Format::Coom, nodes) - (16.0 / 3.0 * nnz + 4.0 * nn)).abs() < 1e-6);
            let coom_ours = 4.0 * (nn + 1.0) + 4.0 * nb.blocks() as f64 + 4.0 * nnz;
            assert_eq!(storage_bytes(Format::Coom, &nb, 4) as f64, coom_ours);
            for f in Format::ALL {
                assert_eq!(storage_bytes(f, &nb, 8) as f64, storage_bytes_of_box(f, nodes, 8), "{f:?}");
            }
        }
    }

    /// With one DOF a node every format's count is the scalar one (nnz = B; COOM is CSR, ELLM is
    /// ELL), and with three it is the bytes the device allocates for the box.
    #[test]
    fn storage_per_dof_reduces_to_the_scalar_counts() {
        let n = [7usize, 5, 4];
        let (nn, b) = (140.0, (19 * 13 * 10) as f64);
        assert_eq!(storage_bytes_per_dof(Format::Coo, n, 4, 1), 12.0 * b);
        assert_eq!(storage_bytes_per_dof(Format::Csr, n, 4, 1), 4.0 * (nn + 1.0 + b) + 4.0 * b);
        assert_eq!(storage_bytes_per_dof(Format::Coom, n, 4, 1), storage_bytes_per_dof(Format::Csr, n, 4, 1));
        assert_eq!(storage_bytes_per_dof(Format::Ell, n, 4, 1), storage_bytes_per_dof(Format::Ellm, n, 4, 1));
        // At 3 DOFs, the bytes the device allocates (from the box's neighbour lists).
        let nb = Neighbours::of_box(&BoxMesh::new(n, [1.0; 3]));
        for f in Format::ALL {
            assert_eq!(storage_bytes_per_dof(f, n, 8, 3), storage_bytes(f, &nb, 8) as f64, "{f:?}");
            assert!(storage_bytes_per_dof(f, n, 8, 4) > storage_bytes_per_dof(f, n, 8, 3));
        }
    }

    /// A box's neighbour lists and pattern, reference values 1, 2, 3, .. and unit scales.
    fn numbered(nodes: [usize; 3]) -> (Neighbours, Pattern, Vec<f64>, Vec<f64>) {
        let nb = Neighbours::of_box(&BoxMesh::new(nodes, [1.0; 3]));
        let p = fembench_fem::hexmesh::pattern_of(&nb);
        let reference: Vec<f64> = (0..p.nnz()).map(|i| 1.0 + i as f64).collect();
        let scale = vec![1.0; p.nnz()];
        (nb, p, reference, scale)
    }

    #[test]
    fn a_wrong_value_or_index_fails_the_check() {
        let (nb, p, reference, scale) = numbered([4, 3, 3]);
        let (r, c): (Vec<i32>, Vec<i32>) = (p.row_ptr.iter().map(|&v| v as i32).collect(), p.col.iter().map(|&v| v as i32).collect());
        let ok = check(Format::Csr, &nb, (&r, &c), &reference, Expected { pattern: &p, values: &reference, scale: &scale });
        assert_eq!(ok, Check { worst: 0.0, structure: None });
        let mut vals = reference.clone();
        vals[17] += 0.5;
        assert_eq!(check(Format::Csr, &nb, (&r, &c), &vals, Expected { pattern: &p, values: &reference, scale: &scale }).worst, 0.5);
        vals[17] = f64::NAN;
        assert!(check(Format::Csr, &nb, (&r, &c), &vals, Expected { pattern: &p, values: &reference, scale: &scale }).worst.is_nan());
        let mut c2 = c.clone();
        c2.swap(3, 4);
        assert!(check(Format::Csr, &nb, (&r, &c2), &reference, Expected { pattern: &p, values: &reference, scale: &scale })
            .structure
            .is_some());
        // ELLM with a padding slot that is not padding.
        let n = nb.nodes();
        let mut g = vec![PAD; ELLM_WIDTH * n];
        let mut v = vec![0.0; 9 * ELLM_WIDTH * n];
        for a in 0..n {
            let (base, nng) = (nb.ptr[a] as usize, (nb.ptr[a + 1] - nb.ptr[a]) as usize);
            for k in 0..nng {
                g[k * n + a] = 3 * nb.list[base + k];
                for mm in 0..3 {
                    for nn in 0..3 {
                        v[(9 * k + 3 * mm + nn) * n + a] = reference[p.row_ptr[3 * a + mm] as usize + 3 * k + nn];
                    }
                }
            }
        }
        assert_eq!(
            check(Format::Ellm, &nb, (&[], &g), &v, Expected { pattern: &p, values: &reference, scale: &scale }),
            Check { worst: 0.0, structure: None }
        );
        // `encode` lays ELLM out the same way.
        assert_eq!(encode(Format::Ellm, &nb, &p, &reference), (Vec::new(), g.clone(), v.clone()));
        g[(ELLM_WIDTH - 1) * n] = 0;
        assert!(check(Format::Ellm, &nb, (&[], &g), &v, Expected { pattern: &p, values: &reference, scale: &scale }).structure.is_some());
    }

    /// The check read part by part (the device check downloads a part of the nodes at a time)
    /// gives what the whole check gives, for every format, and still finds a wrong value or
    /// index in the last part.
    #[test]
    fn the_check_part_by_part_equals_the_whole_check_and_still_fails() {
        let (nb, p, reference, scale) = numbered([5, 4, 3]);
        let n = nb.nodes();
        let by_parts = |f: Format, (r, c, v): &(Vec<i32>, Vec<i32>, Vec<f64>), step: usize| {
            (0..n).step_by(step).fold(Check { worst: 0.0, structure: None }, |acc, a0| {
                let nodes = a0..(a0 + step).min(n);
                let sp = spans(f, &nb, &p, nodes.clone());
                let cut = |data: &[i32], s: Span| s.runs().flat_map(|(i, len)| data[i..i + len].to_vec()).collect::<Vec<i32>>();
                let (pr, pc) = (cut(r, sp[0]), cut(c, sp[1]));
                let pv: Vec<f64> = sp[2].runs().flat_map(|(i, len)| v[i..i + len].to_vec()).collect();
                let part = (Window::new(&pr, sp[0]), Window::new(&pc, sp[1]), Window::new(&pv, sp[2]));
                acc.and(check_part(f, &nb, nodes, part, Expected { pattern: &p, values: &reference, scale: &scale }))
            })
        };
        for f in Format::ALL {
            let mut enc = encode(f, &nb, &p, &reference);
            let whole = check(f, &nb, (&enc.0, &enc.1), &enc.2, Expected { pattern: &p, values: &reference, scale: &scale });
            assert_eq!(whole, Check { worst: 0.0, structure: None }, "{f:?}");
            for step in [1, 7, n] {
                assert_eq!(by_parts(f, &enc, step), whole, "{f:?} in parts of {step} nodes");
            }
            // A wrong value of the last node's last row.
            let at = p.row_ptr[3 * n] as usize - 1;
            let good = encode(f, &nb, &p, &reference);
            let mut off = reference.clone();
            off[at] += 0.25;
            enc.2 = encode(f, &nb, &p, &off).2;
            assert_eq!(by_parts(f, &enc, 7).worst, 0.25, "{f:?}");
            assert_eq!(
                check(f, &nb, (&enc.0, &enc.1), &enc.2, Expected { pattern: &p, values: &reference, scale: &scale }).worst,
                0.25,
                "{f:?}"
            );
            // A wrong column index of the last node.
            let mut bad = good.clone();
            // (the last entry; ELL and ELLM: slot 0 of the last row or node)
            let last = match f {
                Format::Ell => 3 * n - 1,
                Format::Ellm => n - 1,
                _ => bad.1.len() - 1,
            };
            bad.1[last] -= 3;
            assert!(by_parts(f, &bad, 7).structure.is_some(), "{f:?}");
            // A row pointer that points outside its rows (CSR, COOM).
            if matches!(f, Format::Csr | Format::Coom) {
                let mut bad = good.clone();
                let k = bad.0.len() - 2;
                bad.0[k] += 1;
                assert!(by_parts(f, &bad, 7).structure.is_some(), "{f:?}");
            }
        }
    }
}
