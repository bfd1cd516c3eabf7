//! On-disk cache of compiled kernels: PTX from NVRTC and OpenCL program binaries.
//!
//! A full `make reproduce` compiles about 90 s of kernels (NVRTC and the OpenCL driver), and a
//! user's second run should not pay that again. An entry is keyed by a SHA-256 of everything that decides the compiled
//! code: the backend, the whole translation unit (header and kernel file), the `-D` options, the
//! target (CUDA arch, or OpenCL platform and device) and the compiler and driver versions. A
//! changed kernel file or driver therefore misses; nothing is ever invalidated by hand.
//!
//! Location: `$FEMBENCH_KERNEL_CACHE`, else `$XDG_CACHE_HOME/fembench/kernels`, else
//! `~/.cache/fembench/kernels`. `FEMBENCH_KERNEL_CACHE=off` turns it off. Writes are atomic
//! (temporary file, then rename), so two processes can share the folder; a cache that cannot be
//! written only costs the compilation again.
//!
//! Each device notes the compilations asked of it ([`crate::Device::compiled`]); the runner keeps
//! them in the run folder (`kernels.json`), and `harness precompile` compiles a stored run's list
//! ahead of a new run, in parallel, into this cache (a fresh machine's `make reproduce` then pays
//! the compilers on all cores at once instead of one case at a time).

use std::path::PathBuf;

use fembench_core::Backend;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// One compilation: backend, device (by name), kernel file and `-D` definitions.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Request {
    pub backend: Backend,
    pub device: String,
    pub file: String,
    pub defines: Vec<(String, String)>,
}

/// fembench's folder under the user's cache directory (`$XDG_CACHE_HOME/fembench`, else
/// `~/.cache/fembench`), or None where no home is known. The kernel cache and the
/// prepared-problem cache live in it.
pub fn fembench_cache_home() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|c| c.join("fembench"))
}

/// The cache folder, or None when turned off or no home is known.
pub fn dir() -> Option<PathBuf> {
    match std::env::var_os("FEMBENCH_KERNEL_CACHE") {
        Some(v) if v == "off" || v.is_empty() => None,
        Some(v) => Some(PathBuf::from(v)),
        None => fembench_cache_home().map(|c| c.join("kernels")),
    }
}

/// The key of one compilation: each part is length-prefixed, so parts cannot run into each other.
pub fn key(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    format!("{:x}", h.finalize())
}

fn path(key: &str, ext: &str) -> Option<PathBuf> {
    dir().map(|d| d.join(format!("{key}.{ext}")))
}

/// A cached entry; None (a miss) when absent, empty or unreadable.
pub fn load(key: &str, ext: &str) -> Option<Vec<u8>> {
    std::fs::read(path(key, ext)?).ok().filter(|b| !b.is_empty())
}

/// Stores an entry; failures are ignored (the cache is an optimisation only).
pub fn store(key: &str, ext: &str, bytes: &[u8]) {
    let Some(dir) = dir() else { return };
    let Some(target) = path(key, ext) else { return };
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let tmp = dir.join(format!(".{key}.{ext}.{}", std::process::id()));
    if std::fs::write(&tmp, bytes).is_ok() && std::fs::rename(&tmp, &target).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_separate_parts_and_change_with_any_part() {
        assert_ne!(key(&[b"ab", b"c"]), key(&[b"a", b"bc"]));
        assert_ne!(key(&[b"src", b"-DEN=3"]), key(&[b"src", b"-DEN=6"]));
        assert_eq!(key(&[b"src", b"-DEN=3"]), key(&[b"src", b"-DEN=3"]));
    }
}
