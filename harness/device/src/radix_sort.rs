//! Host side of `kernels/radix_sort.kern`: COO pairs sorted by (row, column) on the device with a
//! least-significant-digit radix sort (CUB's algorithm, on both GPU APIs), giving what a vendor
//! library's COO sort gives (the sorted pairs, the permutation and the row offsets) with no host
//! wait, so that it may sit inside a gated timed region. Shared by every paper module whose peer
//! takes the COO route.

use crate::scan::{exclusive_scan, scan_sums_len, ScanKernels};
pub use crate::vendor::CooArrays;
use crate::vendor::VendorOp;
use crate::{Arg, Buffer, Device, DeviceResult, Kernel, Launch};

/// A planned COO sort of either kind: this module's radix sort, or a vendor library's
/// ([`crate::vendor::VendorSparse::coo_sort_to_csr`]).
pub trait SortOp {
    fn enqueue(&self) -> DeviceResult<()>;
    /// Device bytes the sort holds beside the caller's arrays.
    fn workspace_bytes(&self) -> usize;
}

impl SortOp for Box<dyn VendorOp + '_> {
    fn enqueue(&self) -> DeviceResult<()> {
        VendorOp::enqueue(self.as_ref())
    }
    fn workspace_bytes(&self) -> usize {
        VendorOp::workspace_bytes(self.as_ref())
    }
}

impl SortOp for CooRadixSort<'_> {
    fn enqueue(&self) -> DeviceResult<()> {
        CooRadixSort::enqueue(self)
    }
    fn workspace_bytes(&self) -> usize {
        CooRadixSort::workspace_bytes(self)
    }
}

/// The bits one pass sorts by, and the keys a work-group ranks (radix_sort.kern's RADIX_BITS and
/// RADIX_TILE).
pub const RADIX_BITS: u32 = 4;
pub const RADIX_TILE: usize = 256 * 8;
const DIGITS: usize = 1 << RADIX_BITS;

/// The kernels of radix_sort.kern.
pub struct RadixKernels {
    pub iota: Kernel,
    pub count: Kernel,
    pub scatter: Kernel,
    pub row_ptr: Kernel,
    pub copy3: Kernel,
}

/// The bits that hold every value below `n` (at least one).
pub fn key_bits(n: usize) -> u32 {
    (usize::BITS - n.saturating_sub(1).leading_zeros()).max(1)
}

/// A planned sort of `pairs` (row, col) pairs, rows below `rows` and columns below `cols`, in
/// place in the caller's `row` and `col`, with `perm` (sorted pair k is input pair perm[k]) and
/// `row_ptr` (rows + 1 offsets of the sorted pairs, duplicates counted). It owns the second set
/// of arrays the passes alternate with and the digit counts.
pub struct CooRadixSort<'a> {
    dev: &'a dyn Device,
    k: &'a RadixKernels,
    scan: &'a ScanKernels,
    rows: usize,
    pairs: usize,
    row: &'a Buffer,
    col: &'a Buffer,
    perm: &'a Buffer,
    row_ptr: &'a Buffer,
    alt: [Buffer; 3],
    counts: Buffer,
    offsets: Buffer,
    sums: Buffer,
    /// (sort by the column, shift) for each pass, column digits first.
    passes: Vec<(bool, u32)>,
}

impl<'a> CooRadixSort<'a> {
    pub fn new(dev: &'a dyn Device, k: &'a RadixKernels, scan: &'a ScanKernels, coo: CooArrays<'a>) -> DeviceResult<Self> {
        let (n, tiles) = (coo.pairs, Self::tiles(coo.pairs));
        let digits = |bits: u32| (0..bits.div_ceil(RADIX_BITS)).map(|d| d * RADIX_BITS);
        let passes = digits(key_bits(coo.cols)).map(|s| (true, s)).chain(digits(key_bits(coo.rows)).map(|s| (false, s))).collect();
        Ok(Self {
            dev,
            k,
            scan,
            rows: coo.rows,
            pairs: n,
            row: coo.row,
            col: coo.col,
            perm: coo.perm,
            row_ptr: coo.row_ptr,
            alt: [dev.alloc(4 * n.max(1))?, dev.alloc(4 * n.max(1))?, dev.alloc(4 * n.max(1))?],
            counts: dev.alloc(4 * DIGITS * tiles)?,
            offsets: dev.alloc(4 * DIGITS * tiles)?,
            sums: dev.alloc(4 * scan_sums_len(DIGITS * tiles))?,
            passes,
        })
    }

    fn tiles(pairs: usize) -> usize {
        pairs.div_ceil(RADIX_TILE).max(1)
    }

    /// Device bytes this sort holds beside the caller's arrays.
    pub fn workspace_bytes(&self) -> usize {
        Self::bytes_for(self.pairs)
    }

    /// Device bytes a sort of `pairs` pairs holds beside the caller's arrays.
    pub fn bytes_for(pairs: usize) -> usize {
        let counts = DIGITS * Self::tiles(pairs);
        12 * pairs.max(1) + 8 * counts + 4 * scan_sums_len(counts)
    }

    /// The passes the sort makes (column digits, then row digits).
    pub fn passes(&self) -> usize {
        self.passes.len()
    }

    /// Enqueues the whole sort: no host wait, so it may sit inside a timed region.
    pub fn enqueue(&self) -> DeviceResult<()> {
        let (dev, n) = (self.dev, self.pairs as i64);
        let tiles = Self::tiles(self.pairs);
        dev.launch(&self.k.iota, Launch::cover(self.pairs.max(1), 256), &[Arg::Buf(self.perm), Arg::I64(n)])?;
        let mut here = [self.row, self.col, self.perm];
        let mut there = [&self.alt[0], &self.alt[1], &self.alt[2]];
        let group = Launch { groups: tiles, group_size: 256 };
        for &(by_col, shift) in &self.passes {
            // The key is the column or the row; the other and the permutation travel with it.
            let (key, other) = if by_col { (1, 0) } else { (0, 1) };
            let count = [Arg::Buf(here[key]), Arg::Buf(&self.counts), Arg::I32(shift as i32), Arg::I64(n), Arg::I32(tiles as i32)];
            dev.launch(&self.k.count, group, &count)?;
            exclusive_scan(dev, self.scan, &self.counts, &self.offsets, &self.sums, DIGITS * tiles, DIGITS * tiles)?;
            let scatter = [
                Arg::Buf(here[key]),
                Arg::Buf(here[other]),
                Arg::Buf(here[2]),
                Arg::Buf(there[key]),
                Arg::Buf(there[other]),
                Arg::Buf(there[2]),
                Arg::Buf(&self.offsets),
                Arg::I32(shift as i32),
                Arg::I64(n),
                Arg::I32(tiles as i32),
            ];
            dev.launch(&self.k.scatter, group, &scatter)?;
            std::mem::swap(&mut here, &mut there);
        }
        if self.passes.len() % 2 == 1 {
            let args = [
                Arg::Buf(here[0]),
                Arg::Buf(here[1]),
                Arg::Buf(here[2]),
                Arg::Buf(self.row),
                Arg::Buf(self.col),
                Arg::Buf(self.perm),
                Arg::I64(n),
            ];
            dev.launch(&self.k.copy3, Launch::cover(self.pairs.max(1), 256), &args)?;
        }
        let args = [Arg::Buf(self.row), Arg::Buf(self.row_ptr), Arg::I64(n), Arg::I32(self.rows as i32)];
        dev.launch(&self.k.row_ptr, Launch::cover(self.pairs + 1, 256), &args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_bits_hold_every_value_below_n() {
        assert_eq!(key_bits(1), 1);
        assert_eq!(key_bits(2), 1);
        assert_eq!(key_bits(3), 2);
        assert_eq!(key_bits(16), 4);
        assert_eq!(key_bits(17), 5);
        assert_eq!(key_bits(2_400_001), 22);
    }
}
