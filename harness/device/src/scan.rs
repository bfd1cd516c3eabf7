//! Host side of the small device primitives that several modules launch: filling a buffer with a
//! 32-bit word (`fb_fill_u32` of cache_flush.kern) and the exclusive prefix sum of scan.kern.

use crate::kernels::{CACHE_FLUSH, SCAN};
use crate::{Buffer, Device, DeviceExt, DeviceResult, Kernel, Launch};

crate::kernel_args! {
    /// The argument structs of scan.kern.
    pub const SCAN_ARGS in SCAN;
    /// Scans each block of `input` into `out`, each block's total into `sums`.
    pub struct ScanBlocks<'a> = "scan_blocks" { input: &'a Buffer, out: &'a Buffer, sums: &'a Buffer, n_in: i64, n_out: i64 }
    /// Scans the block totals in one work-group.
    pub struct ScanSums<'a> = "scan_sums" { sums: &'a Buffer, m: i64 }
    /// Adds each block's offset.
    pub struct ScanAdd<'a> = "scan_add" { out: &'a Buffer, sums: &'a Buffer, n: i64 }
}

crate::kernel_args! {
    /// The argument structs of cache_flush.kern.
    pub const CACHE_FLUSH_ARGS in CACHE_FLUSH;
    /// Reads and writes every word of a buffer larger than the caches.
    pub struct FlushCache<'a> = "fb_flush_cache" { buf: &'a Buffer, value: u32, n: i64 }
    /// Fills `n` words with `value`.
    pub struct FillU32<'a> = "fb_fill_u32" { buf: &'a Buffer, value: u32, n: i64 }
}

/// The work-group size scan.kern is written for.
pub const SCAN_BLOCK: usize = 256;

/// Fills `words` 32-bit words of `buf` with `value` (0: zero; all ones: -1 or NaN) with the
/// `fb_fill_u32` kernel, a grid-stride loop of at most 2^20 threads.
pub fn fill_words(dev: &dyn Device, fill: &Kernel, buf: &Buffer, value: u32, words: usize) -> DeviceResult<()> {
    dev.launch_with(fill, Launch::cover(words.clamp(1, 1 << 20), 256), &FillU32 { buf, value, n: words as i64 })
}

/// The three kernels of scan.kern: `scan_blocks`, `scan_sums`, `scan_add`.
pub struct ScanKernels {
    pub blocks: Kernel,
    pub sums: Kernel,
    pub add: Kernel,
}

/// The ints of the block totals a scan of `n_out` entries needs.
pub fn scan_sums_len(n_out: usize) -> usize {
    n_out.div_ceil(SCAN_BLOCK).max(1)
}

/// out[i] = in[0] + ... + in[i - 1] for i < n_out, in[i] read as 0 past n_in (with n_out =
/// n_in + 1, out[n_in] is the total); `sums` holds [`scan_sums_len`]`(n_out)` ints. Three
/// launches, no synchronisation: it may run inside a timed region.
pub fn exclusive_scan(
    dev: &dyn Device,
    k: &ScanKernels,
    input: &Buffer,
    out: &Buffer,
    sums: &Buffer,
    n_in: usize,
    n_out: usize,
) -> DeviceResult<()> {
    let cover = Launch::cover(n_out.max(1), SCAN_BLOCK);
    dev.launch_with(&k.blocks, cover, &ScanBlocks { input, out, sums, n_in: n_in as i64, n_out: n_out as i64 })?;
    dev.launch_with(&k.sums, Launch { groups: 1, group_size: SCAN_BLOCK }, &ScanSums { sums, m: scan_sums_len(n_out) as i64 })?;
    dev.launch_with(&k.add, cover, &ScanAdd { out, sums, n: n_out as i64 })
}
