//! `harness precompile`: compiles the kernels a stored run compiled (its `kernels.json`) into the
//! disk kernel cache, all at once on every core, before a new run loads them one case at a time.
//!
//! The compilers (NVRTC, the OpenCL driver) are single-threaded and a full reproduction asks them
//! for a few hundred programs, so on a fresh machine most of that time can run in parallel ahead
//! of the cases. Nothing is measured here; a stale list (kernel files or definitions changed
//! since) only compiles programs that the run then does not use, and the run compiles what it
//! misses itself, as without a list.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use fembench_device::kernel_cache::Request;
use fembench_device::kernels::{Defines, KernelSource};
use fembench_device::{self as device, Backend};

use crate::registry::Registry;
use crate::results::read_kernels;

/// What one backend did.
#[derive(Debug, Clone, Default)]
pub struct Precompiled {
    pub backend: Option<Backend>,
    pub device: String,
    /// Programs listed for this device.
    pub jobs: usize,
    /// Compiled now, and already in the cache.
    pub compiled: usize,
    pub cached: usize,
    /// Failures (file, error), and listed files this build does not have.
    pub failed: Vec<(String, String)>,
    pub unknown_files: Vec<String>,
    /// Listed programs whose selected kernel (`FB_ONLY_<name>`) is no longer in its file
    /// (moved or renamed since the run): skipped, as "file: kernel". Such a program would have
    /// no kernel, and NVIDIA's OpenCL compiler crashes on one (H200, driver 580).
    pub stale: Vec<String>,
    /// Why nothing ran (the backend could not be opened).
    pub unavailable: Option<String>,
    pub seconds: f64,
}

/// The `kernels.json` of a run folder, or the file itself.
fn manifest(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("kernels.json")
    } else {
        path.to_path_buf()
    }
}

/// The one kernel a program was compiled for (`FB_SELECT` with `FB_ONLY_<name>`), if any.
pub fn selected_kernel(defines: &[(String, String)]) -> Option<&str> {
    if !defines.iter().any(|(k, v)| k == "FB_SELECT" && v != "0") {
        return None;
    }
    defines.iter().find_map(|(k, _)| k.strip_prefix("FB_ONLY_"))
}

/// The kernel a program selects when its file no longer defines it (a stale list entry).
fn stale_kernel<'a>(source: &KernelSource, defines: &'a [(String, String)]) -> Option<&'a str> {
    selected_kernel(defines).filter(|k| !source.text.contains(&format!("void {k}(")))
}

/// Compiles the programs listed in `paths` (run folders or `kernels.json` files) for device
/// `index` of each backend listed there (or only `backends`). With `any_device`, programs
/// compiled for another device of the same backend are compiled for this one too.
pub fn precompile(
    registry: &Registry,
    paths: &[PathBuf],
    backends: &[Backend],
    index: usize,
    any_device: bool,
) -> Result<Vec<Precompiled>, String> {
    let mut requests: BTreeSet<Request> = BTreeSet::new();
    for p in paths {
        let file = manifest(p);
        requests.extend(read_kernels(&file).map_err(|e| format!("{}: {e}", file.display()))?);
    }
    let sources = registry.kernels();
    let wanted: BTreeSet<Backend> = requests.iter().map(|r| r.backend).filter(|b| backends.is_empty() || backends.contains(b)).collect();
    let mut out = Vec::new();
    for backend in wanted {
        let mut done = Precompiled { backend: Some(backend), ..Default::default() };
        let dev = match device::open(backend, index) {
            Ok(d) => d,
            Err(e) => {
                done.unavailable = Some(e.to_string());
                out.push(done);
                continue;
            }
        };
        done.device = dev.info().name.clone();
        let mut jobs: Vec<(KernelSource, Defines)> = Vec::new();
        let mut seen = BTreeSet::new();
        for r in requests.iter().filter(|r| r.backend == backend && (any_device || r.device == done.device)) {
            match sources.iter().find(|s| s.file == r.file) {
                Some(s) if stale_kernel(s, &r.defines).is_some() => {
                    let what = format!("{}: {}", r.file, stale_kernel(s, &r.defines).unwrap_or_default());
                    if !done.stale.contains(&what) {
                        done.stale.push(what);
                    }
                }
                Some(s) if seen.insert((r.file.clone(), r.defines.clone())) => jobs.push((*s, Defines(r.defines.clone()))),
                Some(_) => {}
                None => {
                    if !done.unknown_files.contains(&r.file) {
                        done.unknown_files.push(r.file.clone());
                    }
                }
            }
        }
        done.jobs = jobs.len();
        let start = Instant::now();
        for (result, (source, _)) in dev.precompile(&jobs).into_iter().zip(&jobs) {
            match result {
                Ok(true) => done.compiled += 1,
                Ok(false) => done.cached += 1,
                Err(e) => done.failed.push((source.file.to_string(), e.to_string())),
            }
        }
        done.seconds = start.elapsed().as_secs_f64();
        out.push(done);
    }
    Ok(out)
}
