//! Host side of `kernels/coo_sum.kern`: sorted COO pairs to CSR with their duplicates summed, the
//! second half of the COO route a user of a vendor library takes (the library sorts, these
//! kernels sum). Shared by every paper module whose peer takes that route.

use crate::scan::{exclusive_scan, scan_sums_len, ScanKernels};
use crate::{Arg, Buffer, Device, DeviceResult, Kernel, Launch};

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
    dev.launch(&k.heads, cover, &[Arg::Buf(coo.row), Arg::Buf(coo.col), Arg::Buf(&scratch.head), Arg::I64(n)])?;
    exclusive_scan(dev, scan, &scratch.head, &scratch.slot, &scratch.sums, coo.pairs, coo.pairs + 1)?;
    let args = [
        Arg::Buf(coo.col),
        Arg::Buf(coo.perm),
        Arg::Buf(coo.vals),
        Arg::Buf(&scratch.head),
        Arg::Buf(&scratch.slot),
        Arg::Buf(out.col),
        Arg::Buf(out.val),
        Arg::I64(n),
    ];
    dev.launch(&k.segsum, cover, &args)?;
    let rows = Launch::cover(coo.rows + 1, 256);
    dev.launch(&k.compact, rows, &[Arg::Buf(coo.row_ptr), Arg::Buf(&scratch.slot), Arg::Buf(out.row_ptr), Arg::I64(coo.rows as i64)])
}
