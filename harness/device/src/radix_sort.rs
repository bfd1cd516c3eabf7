//! Host side of `kernels/radix_sort.kern`: COO pairs sorted by (row, column) on the device with a
//! least-significant-digit radix sort (CUB's algorithm, on both GPU APIs), giving what a vendor
//! library's COO sort gives (the sorted pairs, the permutation and the row offsets) with no host
//! wait, so that it may sit inside a gated timed region. Shared by every paper module whose peer
//! takes the COO route.

use crate::kernels::RADIX_SORT;
use crate::scan::{exclusive_scan, scan_sums_len, ScanKernels};
pub use crate::vendor::CooArrays;
use crate::vendor::VendorOp;
use crate::{Buffer, Device, DeviceExt, DeviceResult, Kernel, Launch};

crate::kernel_args! {
    /// The argument structs of radix_sort.kern.
    pub const RADIX_SORT_ARGS in RADIX_SORT;
    /// perm[i] = i.
    pub struct RadixIota<'a> = "radix_iota" { perm: &'a Buffer, n: i64 }
    /// Each tile's count of each digit of the key at `shift`.
    pub struct RadixCount<'a> = "radix_count" { key: &'a Buffer, counts: &'a Buffer, shift: i32, n: i64, tiles: i32 }
    /// The key and what travels with it to their places by the digit's scanned offsets.
    pub struct RadixScatter<'a> = "radix_scatter" {
        key_in: &'a Buffer, a_in: &'a Buffer, b_in: &'a Buffer, key_out: &'a Buffer, a_out: &'a Buffer, b_out: &'a Buffer,
        offsets: &'a Buffer, shift: i32, n: i64, tiles: i32
    }
    /// The row offsets of the sorted rows.
    pub struct RadixRowPtr<'a> = "radix_row_ptr" { row: &'a Buffer, row_ptr: &'a Buffer, n: i64, rows: i32 }
    /// Three arrays copied back after an odd number of passes.
    pub struct RadixCopy3<'a> = "radix_copy3" {
        a: &'a Buffer, b: &'a Buffer, c: &'a Buffer, a_out: &'a Buffer, b_out: &'a Buffer, c_out: &'a Buffer, n: i64
    }
}

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
        dev.launch_with(&self.k.iota, Launch::cover(self.pairs.max(1), 256), &RadixIota { perm: self.perm, n })?;
        let mut here = [self.row, self.col, self.perm];
        let mut there = [&self.alt[0], &self.alt[1], &self.alt[2]];
        let group = Launch { groups: tiles, group_size: 256 };
        let tiles = tiles as i32;
        for &(by_col, shift) in &self.passes {
            // The key is the column or the row; the other and the permutation travel with it.
            let (key, other) = if by_col { (1, 0) } else { (0, 1) };
            let shift = shift as i32;
            dev.launch_with(&self.k.count, group, &RadixCount { key: here[key], counts: &self.counts, shift, n, tiles })?;
            let digits = DIGITS * tiles as usize;
            exclusive_scan(dev, self.scan, &self.counts, &self.offsets, &self.sums, digits, digits)?;
            let scatter = RadixScatter {
                key_in: here[key],
                a_in: here[other],
                b_in: here[2],
                key_out: there[key],
                a_out: there[other],
                b_out: there[2],
                offsets: &self.offsets,
                shift,
                n,
                tiles,
            };
            dev.launch_with(&self.k.scatter, group, &scatter)?;
            std::mem::swap(&mut here, &mut there);
        }
        if self.passes.len() % 2 == 1 {
            let back = RadixCopy3 { a: here[0], b: here[1], c: here[2], a_out: self.row, b_out: self.col, c_out: self.perm, n };
            dev.launch_with(&self.k.copy3, Launch::cover(self.pairs.max(1), 256), &back)?;
        }
        let row_ptr = RadixRowPtr { row: self.row, row_ptr: self.row_ptr, n, rows: self.rows as i32 };
        dev.launch_with(&self.k.row_ptr, Launch::cover(self.pairs + 1, 256), &row_ptr)
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
