//! What a storage format is, [`Layout`], and the pieces its type works with: where its entries
//! lie ([`Entry`], [`Placed`], [`Span`]), a part of its arrays as the check reads it ([`Part`]),
//! and a box's sizes ([`BoxDims`]). A leaf: each format's file and the shared code in `mod.rs`
//! build on it.

use fembench_fem::csr::Pattern;
use fembench_fem::hexmesh::Neighbours;

/// The column padding of ELL and ELLM (sorts after every real column, so bisection works).
pub const PAD: i32 = i32::MAX;
/// ELL's row width (3 dofs x 27 neighbours) and ELLM's (27 blocks).
pub const ELL_WIDTH: usize = 81;
pub const ELLM_WIDTH: usize = 27;

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
    /// One run of a flat array of `total` entries, `start .. end`.
    pub fn flat(start: usize, end: usize, total: usize) -> Span {
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

/// A range of nodes `a0 .. a1` of a box's neighbour lists and pattern: what a format's spans
/// are read from.
pub struct Nodes<'a> {
    pub nb: &'a Neighbours,
    pub pattern: &'a Pattern,
    pub a0: usize,
    pub a1: usize,
}

impl Nodes<'_> {
    /// The range's first block and the block after its last.
    pub fn blocks(&self) -> (usize, usize) {
        (self.nb.ptr[self.a0] as usize, self.nb.ptr[self.a1] as usize)
    }
    /// The empty span (an array the format does not have).
    pub fn none() -> Span {
        Span { slots: 0, start: 0, len: 0, stride: 0 }
    }
    /// The nodes' entries in each of `slots` runs, one entry a node, `stride` apart.
    pub fn slotted(&self, slots: usize, stride: usize) -> Span {
        Span { slots, start: self.a0, len: self.a1 - self.a0, stride }
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

/// A window of values of any precision, read as f64.
pub trait Values: Sync {
    fn value(&self, s: usize, j: usize) -> Option<f64>;
}

impl<V: Copy + Into<f64> + Sync> Values for Window<'_, V> {
    fn value(&self, s: usize, j: usize) -> Option<f64> {
        self.at(s, j).map(Into::into)
    }
}

/// A part of a format's arrays on the host: the row side, the column side and the values.
pub struct Part<'a> {
    pub(super) r: Window<'a, i32>,
    pub(super) c: Window<'a, i32>,
    pub(super) vals: &'a dyn Values,
}

fn outside(what: &str, s: usize, j: usize) -> String {
    format!("{what} entry {j} of slot {s} lies outside the nodes' part of the array")
}

impl Part<'_> {
    /// Entry `j` of slot `s` of the row side (flat arrays: slot 0).
    pub fn ri(&self, s: usize, j: usize) -> Result<i32, String> {
        self.r.at(s, j).ok_or_else(|| outside("row-side", s, j))
    }
    /// The same of the column side.
    pub fn ci(&self, s: usize, j: usize) -> Result<i32, String> {
        self.c.at(s, j).ok_or_else(|| outside("column-side", s, j))
    }
    /// The same of the values.
    pub fn vi(&self, s: usize, j: usize) -> Result<f64, String> {
        self.vals.value(s, j).ok_or_else(|| outside("value", s, j))
    }
}

/// Where a node's rows lie: the node, its first neighbour block and its neighbour count.
#[derive(Clone, Copy)]
pub struct NodeAt {
    pub a: usize,
    pub base: usize,
    pub nng: usize,
}

/// Entry `k` of reference row `row` (CSR order) is column `col` with value `v`: an error if the
/// column differs, else the worst scaled difference so far takes it.
pub type Put<'p> = dyn FnMut(usize, usize, i64, f64) -> Result<(), String> + 'p;

/// What a format stores where a box's row `3 a + m` (`row` of `rows_of(nodes)`) holds its `k`-th
/// entry: global CSR index `at`, column `col`; node `a`'s neighbour blocks start at `base`.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub row: usize,
    /// N, the box's nodes (3 N rows).
    pub nodes: usize,
    pub a: usize,
    pub m: usize,
    pub k: usize,
    pub at: usize,
    pub base: usize,
    pub col: i32,
}

/// Where a format puts an [`Entry`]: a row-side index and what it holds (a format whose row side
/// is one entry a value, COO), the column-side index and what it holds, and the value's index.
#[derive(Debug, Clone, Copy)]
pub struct Placed {
    pub row: Option<(usize, i32)>,
    pub col: (usize, i32),
    pub val: usize,
}

/// A box's sizes for [`Layout::bytes_per_dof`]: N nodes, B node blocks (prod(3 n_i - 2)), `d`
/// DOFs a node, `s` bytes a value, nnz = d^2 B.
pub struct BoxDims {
    pub n: f64,
    pub b: f64,
    pub d: f64,
    pub s: f64,
    pub nnz: f64,
}

impl BoxDims {
    pub(super) fn new(nodes: [usize; 3], real: usize, nd: usize) -> BoxDims {
        let (n, b) = (nodes.iter().product::<usize>() as f64, nodes.iter().map(|&v| (3 * v - 2) as f64).product::<f64>());
        let d = nd as f64;
        BoxDims { n, b, d, s: real as f64, nnz: d * d * b }
    }
}

/// What cuSPARSE multiplies for a format's SpMV row: its own CSR arrays, its blocks as BSR, the
/// CSR its blocks were converted to, or nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vendor {
    None,
    Csr,
    Bsr,
    Converted,
}

/// Table 1's sums of a box's node counts: x + y + z, xy + yz + zx, xyz.
pub fn sums(nodes: [usize; 3]) -> (f64, f64, f64) {
    let [x, y, z] = nodes.map(|v| v as f64);
    (x + y + z, x * y + y * z + z * x, x * y * z)
}

/// A row's offsets `start .. end` against the reference's `width` entries.
pub fn check_span(row: usize, (start, end): (usize, usize), width: u32) -> Result<(), String> {
    if end < start || (end - start) as u32 != width {
        return Err(format!("row {row} spans {start}..{end}, the reference has {width} entries"));
    }
    Ok(())
}

/// A storage format: its arrays' sizes, where it puts each entry, how its arrays are checked, and
/// its section of `kernels/sanfui.kern` (`code`, the `FORMAT` that selects it: the section's
/// `fmt_symbolic`, `fmt_block` and `fmt_spmv`). The three index arrays are the row side, the
/// column side (as the symbolic kernel writes them) and the values (the numeric kernel's).
pub trait Layout: Sync {
    /// Its name in tables and figures.
    fn name(&self) -> &'static str;
    /// The `FORMAT` of its section in `kernels/sanfui.kern`.
    fn code(&self) -> usize;
    /// Table 1's formula, for the paper's formats (bytes, 4-byte values and indices).
    fn table1_bytes(&self, _nodes: [usize; 3]) -> Option<f64> {
        None
    }
    /// The lengths of its row side, column side and values for a box's neighbour lists.
    fn lengths(&self, nb: &Neighbours) -> (usize, usize, usize);
    /// Its bytes for a box of `d` DOFs a node (Fig. 8); at d = 3, `4 (r + c) + s v` of [`Self::lengths`].
    fn bytes_per_dof(&self, d: &BoxDims) -> f64;
    /// Where it stores an entry.
    fn place(&self, e: &Entry) -> Placed;
    /// Its row side where it is not one entry a value (CSR's row offsets, COOM's node offsets).
    fn encode_row_side(&self, _nb: &Neighbours, _pattern: &Pattern) -> Option<Vec<i32>> {
        None
    }
    /// Where the nodes' entries lie in its three arrays (the check downloads a part at a time).
    fn spans(&self, at: &Nodes) -> [Span; 3];
    /// Row `3 n.a + m` read through its indices: each entry handed to `put` in CSR order, an
    /// error for an index that is not where it should be (a wrong row offset, padding).
    fn check_row(&self, p: &Part, at: (NodeAt, usize), width: u32, put: &mut Put) -> Result<(), String>;
    /// The threads its `fmt_spmv` is launched with.
    fn spmv_threads(&self, nb: &Neighbours) -> usize;
    /// Its `fmt_spmv` adds into y (COO's atomics): y is zeroed before each product.
    fn spmv_adds(&self) -> bool {
        false
    }
    /// Its numeric kernel reads the node offsets as its row side (COO, whose rows have none).
    fn numeric_reads_node_offsets(&self) -> bool {
        false
    }
    /// It stores 3x3 blocks (its section defines `FMT_BLOCKS 1`): the paper's methods convert it
    /// to CSR on the device after assembly.
    fn blocks(&self) -> bool {
        false
    }
    /// What cuSPARSE multiplies beside its own SpMV.
    fn vendor(&self) -> Vendor {
        Vendor::None
    }
}

/// The nine values of a 3x3 block row: one block (`first`, a first dof), three values from `v`.
pub fn put_block(row: usize, k: usize, first: i32, v: [f64; 3], put: &mut Put) -> Result<(), String> {
    if first % 3 != 0 {
        return Err(format!("row {row} block {k}: column {first} is not a first dof"));
    }
    (0..3).try_for_each(|nn| put(row, 3 * k + nn, first as i64 + nn as i64, v[nn]))
}
