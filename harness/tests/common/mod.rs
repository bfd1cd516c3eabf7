//! Shared test helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use fembench::device::{self, Backend, Device};

/// The shipped experiments; FEMBENCH_EXPERIMENTS overrides it where a carried test binary runs
/// away from its source tree.
pub fn experiments_dir() -> PathBuf {
    match std::env::var_os("FEMBENCH_EXPERIMENTS") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../experiments"),
    }
}

/// PoCL crashes when several threads build programs in separate contexts at once (the harness
/// itself drives devices from one thread), so OpenCL tests in one binary take turns.
pub static OPENCL: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub fn opencl_turn() -> std::sync::MutexGuard<'static, ()> {
    OPENCL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The OpenCL device tests run on (PoCL in CI). Absent is a failure where
/// FEMBENCH_REQUIRE_OPENCL=1 (CI sets it), else the test says so and passes.
pub fn opencl_device() -> Option<Box<dyn Device>> {
    match device::open(Backend::OpenCl, 0) {
        Ok(d) => Some(d),
        Err(e) => {
            if std::env::var("FEMBENCH_REQUIRE_OPENCL").as_deref() == Ok("1") {
                panic!("FEMBENCH_REQUIRE_OPENCL=1 but OpenCL is unavailable: {e}");
            }
            eprintln!("skipping: no OpenCL device ({e})");
            None
        }
    }
}

/// Whether NVRTC is loadable; absent is a failure where FEMBENCH_REQUIRE_NVRTC=1.
pub fn nvrtc_available() -> bool {
    if device::cuda::nvrtc_present() {
        return true;
    }
    if std::env::var("FEMBENCH_REQUIRE_NVRTC").as_deref() == Ok("1") {
        panic!("FEMBENCH_REQUIRE_NVRTC=1 but libnvrtc could not be loaded (LD_LIBRARY_PATH?)");
    }
    eprintln!("skipping: NVRTC not found");
    false
}
