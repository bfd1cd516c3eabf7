//! Writing host memory back from the CPU's caches before a timed upload.
//!
//! An upload is the GPU reading host memory. When the host has just written that memory, its
//! lines are dirty in the CPU's last-level cache, and the DMA reads are served from the caches
//! of whichever cores wrote them. On the GPU machine of the NVIDIA H100 80GB HBM3 (a 16-core
//! Xeon VM with 300 MiB of L3), 51 MB written by 8 or 16 threads uploaded at 38-48 GB/s, a
//! different figure in each process, where the same memory written back first (clflush)
//! uploaded at 50-54 GB/s in every process (scratch program, 3 processes x 3 buffers x 15
//! copies). A timed upload therefore
//! starts from memory written back: the figure is the link's, not the cache state's.

use rayon::prelude::*;

/// Bytes of one cache line, the unit of the write-back instructions.
const LINE: usize = 64;

/// Set to 1 to upload straight from the caches as before (an A/B switch to show the effect;
/// rows record `host_written_back`).
pub const UPLOAD_FROM_CACHE_ENV: &str = "FEMBENCH_UPLOAD_FROM_CACHE";

/// Whether timed uploads should skip the write-back (`UPLOAD_FROM_CACHE_ENV` is 1).
pub fn upload_from_cache() -> bool {
    std::env::var(UPLOAD_FROM_CACHE_ENV).is_ok_and(|v| v == "1")
}

/// Writes `bytes` back from every CPU cache to memory and evicts them, in parallel, and waits
/// until that is done. Returns whether the platform could do it (x86-64 and AArch64 can).
pub fn write_back(bytes: &[u8]) -> bool {
    if !SUPPORTED {
        return false;
    }
    let opt = clflushopt();
    bytes.par_chunks(1 << 20).for_each(|chunk| {
        // One instruction per line of the chunk; a line that straddles two chunks is flushed
        // by both, which is harmless.
        let start = chunk.as_ptr() as usize & !(LINE - 1);
        let end = chunk.as_ptr() as usize + chunk.len();
        let mut p = start;
        while p < end {
            // SAFETY: p lies in a line that holds part of `chunk`, memory we may read; these
            // instructions change no memory contents.
            unsafe { flush_line(p as *const u8, opt) };
            p += LINE;
        }
        // Each thread waits for its own lines; the parallel loop returns after every thread.
        fence();
    });
    true
}

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const SUPPORTED: bool = true;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const SUPPORTED: bool = false;

/// Whether the CPU has CLFLUSHOPT (CPUID leaf 7, EBX bit 23), which flushes lines without
/// serialising on each other; CLFLUSH is the fallback.
#[cfg(target_arch = "x86_64")]
fn clflushopt() -> bool {
    // SAFETY: CPUID is available on every x86-64 CPU; leaf 7 exists where leaf 0 says so.
    // (Newer toolchains declare __cpuid safe; older ones need the block.)
    #[allow(unused_unsafe)]
    unsafe {
        let max = std::arch::x86_64::__cpuid(0).eax;
        max >= 7 && std::arch::x86_64::__cpuid_count(7, 0).ebx & (1 << 23) != 0
    }
}
#[cfg(not(target_arch = "x86_64"))]
fn clflushopt() -> bool {
    false
}

#[cfg(target_arch = "x86_64")]
unsafe fn flush_line(p: *const u8, opt: bool) {
    if opt {
        std::arch::asm!("clflushopt [{0}]", in(reg) p, options(nostack, preserves_flags));
    } else {
        std::arch::x86_64::_mm_clflush(p);
    }
}
#[cfg(target_arch = "aarch64")]
unsafe fn flush_line(p: *const u8, _opt: bool) {
    // Clean and invalidate by virtual address to the point of coherency.
    std::arch::asm!("dc civac, {0}", in(reg) p, options(nostack, preserves_flags));
}
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
unsafe fn flush_line(_p: *const u8, _opt: bool) {}

fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a full memory fence orders the flushes before what follows.
    unsafe {
        std::arch::x86_64::_mm_mfence()
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: a full-system data barrier waits for the cache maintenance to complete.
    unsafe {
        std::arch::asm!("dsb sy", options(nostack, preserves_flags))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_back_keeps_the_contents_of_unaligned_ranges() {
        let data: Vec<u8> = (0..3 * (1 << 20) + 77).map(|i| (i * 31 % 251) as u8).collect();
        let before = data.clone();
        for (a, b) in [(0, data.len()), (3, 130), (1 << 20, 2 * (1 << 20) + 5), (data.len() - 1, data.len())] {
            assert_eq!(write_back(&data[a..b]), SUPPORTED);
        }
        assert!(write_back(&[]) == SUPPORTED);
        assert_eq!(data, before);
    }
}
