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

/// The device radix sort of COO pairs (host side: [`crate::radix_sort`]).
pub const RADIX_SORT: KernelSource = KernelSource { file: "radix_sort.kern", text: include_str!("../../../kernels/radix_sort.kern") };

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

    /// The precision of `real` under these defines (the header's `FB_REAL_IS_DOUBLE`, f32 unless 1).
    pub fn real(&self) -> Precision {
        match self.0.iter().rev().find(|(k, _)| k == "FB_REAL_IS_DOUBLE") {
            Some((_, v)) if v == "1" => Precision::F64,
            _ => Precision::F32,
        }
    }

    /// As compiler options (`-DNAME=VALUE`), the same for NVRTC and OpenCL.
    pub fn options(&self) -> Vec<String> {
        self.0.iter().map(|(k, v)| format!("-D{k}={v}")).collect()
    }
}

/// The environment variable naming a folder whose kernel files replace the embedded ones (a
/// kernel developer's loop: edit, run, no rebuild). A run made with it says so in `meta.json`.
pub const KERNEL_DIR_ENV: &str = "FEMBENCH_KERNEL_DIR";

/// The folder of [`KERNEL_DIR_ENV`], if set.
pub fn kernel_dir() -> Option<std::path::PathBuf> {
    std::env::var_os(KERNEL_DIR_ENV).filter(|d| !d.is_empty()).map(Into::into)
}

/// The translation unit handed to the compiler: backend selector, header, then the kernel file.
/// `#line` keeps compiler messages pointing at the kernel file's own lines. With
/// [`KERNEL_DIR_ENV`] set, the header and the file are read from that folder; one that cannot be
/// read becomes an `#error` naming it, so the compile fails and says why.
pub fn translation_unit(backend: Backend, source: &KernelSource) -> String {
    translation_unit_from(backend, source, kernel_dir().as_deref())
}

/// [`translation_unit`] with the kernel folder given (`None`: the embedded files).
pub fn translation_unit_from(backend: Backend, source: &KernelSource, dir: Option<&std::path::Path>) -> String {
    let selector = match backend {
        Backend::Cuda => "#define FB_CUDA 1",
        Backend::OpenCl => "#define FB_OPENCL 1",
        Backend::Cpu => "",
    };
    let (header, text) = match dir {
        None => (PORTABILITY_HEADER.to_string(), source.text.to_string()),
        Some(dir) => {
            let read = |name: &str| {
                let path = dir.join(name);
                std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| format!("#error \"{KERNEL_DIR_ENV}: cannot read {}: {e}\"", path.display()))
            };
            (read("fembench.h"), read(source.file))
        }
    };
    format!("{selector}\n#line 1 \"fembench.h\"\n{header}\n#line 1 \"{}\"\n{text}\n", source.file)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: KernelSource = KernelSource { file: "probe.kern", text: "KERNEL void embedded(void) {}" };

    #[test]
    fn a_kernel_folder_replaces_the_embedded_files_and_a_missing_file_fails_the_compile() {
        let dir = std::env::temp_dir().join(format!("fembench-kernel-dir-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("fembench.h"), "/* header from the folder */").unwrap();
        let embedded = translation_unit_from(Backend::Cuda, &SOURCE, None);
        assert!(embedded.contains("KERNEL void embedded") && embedded.contains(PORTABILITY_HEADER));
        // The header is read from the folder; the kernel file is missing there: an #error names it.
        let missing = translation_unit_from(Backend::OpenCl, &SOURCE, Some(&dir));
        assert!(missing.starts_with("#define FB_OPENCL 1") && missing.contains("/* header from the folder */"));
        assert!(!missing.contains("KERNEL void embedded"));
        assert!(missing.contains("#error") && missing.contains(KERNEL_DIR_ENV) && missing.contains("probe.kern"), "{missing}");
        std::fs::write(dir.join("probe.kern"), "KERNEL void from_the_folder(void) {}").unwrap();
        let read = translation_unit_from(Backend::Cuda, &SOURCE, Some(&dir));
        assert!(read.contains("KERNEL void from_the_folder") && !read.contains("#error"));
        assert!(read.contains("#line 1 \"probe.kern\""));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
