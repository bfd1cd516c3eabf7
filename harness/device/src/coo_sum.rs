//! Host side of `kernels/coo_sum.kern`: sorted COO pairs to CSR with their duplicates summed, the
//! second half of the COO route a user of a vendor library takes (the library sorts, these
//! kernels sum). Shared by every paper module whose peer takes that route.

use crate::kernels::COO_SUM;
use crate::scan::{exclusive_scan, scan_sums_len, ScanKernels};
use crate::{Buffer, Device, DeviceExt, DeviceResult, Kernel, Launch};

crate::kernel_args! {
    /// The argument structs of coo_sum.kern.
    pub const COO_SUM_ARGS in COO_SUM;
    /// Flags each sorted pair that starts a run of equal pairs.
    pub struct CooHeads<'a> = "coo_heads" { row: &'a Buffer, col: &'a Buffer, head: &'a Buffer, n: i64 }
    /// Sums each run into its slot.
    pub struct CooSegsum<'a> = "coo_segsum" {
        col: &'a Buffer, perm: &'a Buffer, vals: &'a Buffer, head: &'a Buffer, slot: &'a Buffer, out_col: &'a Buffer, out: &'a Buffer, n: i64
    }
    /// Row offsets of the summed pairs.
    pub struct CooCompactRows<'a> = "coo_compact_rows" { row_ptr: &'a Buffer, slot: &'a Buffer, out_ptr: &'a Buffer, rows: i64 }
    /// Adds each element entry atomically into its CSR slot (PyTorch's `index_add_` route).
    pub struct SlotScatter<'a> = "slot_scatter" { ke: &'a Buffer, slots: &'a Buffer, vals: &'a Buffer, n: i64 }
}

/// The three kernels of coo_sum.kern, compiled for one precision.
pub struct CooSumKernels {
    pub heads: Kernel,
    pub segsum: Kernel,
    pub compact: Kernel,
}

/// Scratch for summing `pairs` sorted pairs: head flags, run numbers and the scan's block totals.
pub struct CooSumScratch {
    pub head: Buffer,
    pub slot: Buffer,
    pub sums: Buffer,
    pairs: usize,
}

impl CooSumScratch {
    pub fn new(dev: &dyn Device, pairs: usize) -> DeviceResult<Self> {
        Ok(Self {
            head: dev.alloc(4 * pairs.max(1))?,
            slot: dev.alloc(4 * (pairs + 1))?,
            sums: dev.alloc(4 * scan_sums_len(pairs + 1))?,
            pairs,
        })
    }

    /// The device bytes [`CooSumScratch::new`] allocates for `pairs` pairs.
    pub fn bytes(pairs: usize) -> usize {
        4 * pairs.max(1) + 4 * (pairs + 1) + 4 * scan_sums_len(pairs + 1)
    }
}

/// `pairs` (row, col) pairs sorted by row, then column, over `rows` rows: `row_ptr` (rows + 1)
/// holds the sorted pairs' row offsets, duplicates counted; sorted pair k carries `vals[perm[k]]`.
pub struct SortedCoo<'a> {
    pub rows: usize,
    pub pairs: usize,
    pub row: &'a Buffer,
    pub col: &'a Buffer,
    pub perm: &'a Buffer,
    pub row_ptr: &'a Buffer,
    pub vals: &'a Buffer,
}

/// The CSR the sum writes: `row_ptr` (rows + 1), and one column and value per distinct pair.
pub struct CsrOut<'a> {
    pub row_ptr: &'a Buffer,
    pub col: &'a Buffer,
    pub val: &'a Buffer,
}

/// Sums the runs of equal pairs of `coo` into `out`: four launches and the shared scan, no
/// synchronisation, so it may sit inside a timed region.
pub fn sum_duplicates(
    dev: &dyn Device,
    k: &CooSumKernels,
    scan: &ScanKernels,
    scratch: &CooSumScratch,
    coo: &SortedCoo,
    out: &CsrOut,
) -> DeviceResult<()> {
    assert!(coo.pairs <= scratch.pairs, "scratch for {} pairs, {} to sum", scratch.pairs, coo.pairs);
    let (n, cover) = (coo.pairs as i64, Launch::cover(coo.pairs.max(1), 256));
    dev.launch_with(&k.heads, cover, &CooHeads { row: coo.row, col: coo.col, head: &scratch.head, n })?;
    exclusive_scan(dev, scan, &scratch.head, &scratch.slot, &scratch.sums, coo.pairs, coo.pairs + 1)?;
    let (head, slot) = (&scratch.head, &scratch.slot);
    dev.launch_with(
        &k.segsum,
        cover,
        &CooSegsum { col: coo.col, perm: coo.perm, vals: coo.vals, head, slot, out_col: out.col, out: out.val, n },
    )?;
    let rows = Launch::cover(coo.rows + 1, 256);
    dev.launch_with(&k.compact, rows, &CooCompactRows { row_ptr: coo.row_ptr, slot, out_ptr: out.row_ptr, rows: coo.rows as i64 })
}
