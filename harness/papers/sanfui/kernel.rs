//! The module's kernel file, in a leaf module of its own: the device methods (gpu.rs), the SpMV
//! (spmv.rs) and the cuSPARSE peer (peer.rs) all launch from it.

use crate::kernels::KernelSource;

/// The kernel file.
pub const SANFUI: KernelSource = KernelSource { file: "sanfui.kern", text: include_str!("../../../kernels/sanfui.kern") };
