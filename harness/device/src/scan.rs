//! Host side of the small device primitives that several modules launch: filling a buffer with a
//! 32-bit word (`fb_fill_u32` of cache_flush.kern) and the exclusive prefix sum of scan.kern.

use crate::{Arg, Buffer, Device, DeviceResult, Kernel, Launch};

/// The work-group size scan.kern is written for.
pub const SCAN_BLOCK: usize = 256;

/// Fills `words` 32-bit words of `buf` with `value` (0: zero; all ones: -1 or NaN) with the
/// `fb_fill_u32` kernel, a grid-stride loop of at most 2^20 threads.
pub fn fill_words(dev: &dyn Device, fill: &Kernel, buf: &Buffer, value: u32, words: usize) -> DeviceResult<()> {
    dev.launch(fill, Launch::cover(words.clamp(1, 1 << 20), 256), &[Arg::Buf(buf), Arg::U32(value), Arg::I64(words as i64)])
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
    dev.launch(&k.blocks, cover, &[Arg::Buf(input), Arg::Buf(out), Arg::Buf(sums), Arg::I64(n_in as i64), Arg::I64(n_out as i64)])?;
    dev.launch(&k.sums, Launch { groups: 1, group_size: SCAN_BLOCK }, &[Arg::Buf(sums), Arg::I64(scan_sums_len(n_out) as i64)])?;
    dev.launch(&k.add, cover, &[Arg::Buf(out), Arg::Buf(sums), Arg::I64(n_out as i64)])
}
