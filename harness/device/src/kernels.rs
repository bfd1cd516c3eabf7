//! Kernel sources, embedded in the binary, and the one place where a kernel file is turned into a
//! compilable translation unit for CUDA (NVRTC) or OpenCL.
//!
//! Specialisation is libCEED-style: one source, `-D` defines chosen by the host code.

use crate::Backend;
use crate::Precision;

/// One kernel file of `kernels/`, embedded at build time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelSource {
    /// File name in `kernels/`, used in compile logs and `#line` directives.
    pub file: &'static str,
    pub text: &'static str,
}

/// The portability header every kernel file is compiled behind.
pub const PORTABILITY_HEADER: &str = include_str!("../../../kernels/fembench.h");

/// The kernels the harness itself launches: cache flush and NaN poisoning. Each benchmark
/// declares its own kernel files (`Benchmark::KERNELS`).
pub const CACHE_FLUSH: KernelSource = KernelSource { file: "cache_flush.kern", text: include_str!("../../../kernels/cache_flush.kern") };

/// The exclusive prefix sum shared by the modules that need one (host side: [`crate::scan`]).
pub const SCAN: KernelSource = KernelSource { file: "scan.kern", text: include_str!("../../../kernels/scan.kern") };

/// Sorted COO pairs to CSR with duplicates summed (host side: [`crate::coo_sum`]).
pub const COO_SUM: KernelSource = KernelSource { file: "coo_sum.kern", text: include_str!("../../../kernels/coo_sum.kern") };

/// `-D` defines for one compilation, kept in order so compile errors can show them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Defines(pub Vec<(String, String)>);

impl Defines {
    pub fn new() -> Self {
        Self::default()
    }

    /// The precision define every kernel file understands.
    pub fn for_precision(precision: Precision) -> Self {
        Self::new().with("FB_REAL_IS_DOUBLE", (precision == Precision::F64) as u8)
    }

    pub fn with(mut self, name: &str, value: impl ToString) -> Self {
        self.0.push((name.to_string(), value.to_string()));
        self
    }

    /// As compiler options (`-DNAME=VALUE`), the same for NVRTC and OpenCL.
    pub fn options(&self) -> Vec<String> {
        self.0.iter().map(|(k, v)| format!("-D{k}={v}")).collect()
    }
}

/// The translation unit handed to the compiler: backend selector, header, then the kernel file.
/// `#line` keeps compiler messages pointing at the kernel file's own lines.
pub fn translation_unit(backend: Backend, source: &KernelSource) -> String {
    let selector = match backend {
        Backend::Cuda => "#define FB_CUDA 1",
        Backend::OpenCl => "#define FB_OPENCL 1",
        Backend::Cpu => "",
    };
    format!("{selector}\n#line 1 \"fembench.h\"\n{PORTABILITY_HEADER}\n#line 1 \"{}\"\n{}\n", source.file, source.text)
}
