//! fembench-device: the device layer: one trait for allocation, transfers, run-time compilation, launches and
//! event timing, implemented once for CUDA (cudarc: driver API + NVRTC) and once for OpenCL
//! (opencl3). Both are loaded dynamically, so a machine without a CUDA driver or an OpenCL loader
//! still runs everything else and says why a backend is absent.
//!
//! Algorithm host code is written once against [`Device`]; the CPU is not a `Device` but the
//! reference side (each benchmark carries its own f64/rayon implementation).

pub mod api;
pub mod args;
pub mod coo_sum;
pub mod cpu;
pub mod cuda;
mod cuda_blas;
mod cuda_sparse;
mod ext;
pub mod host_cache;
pub mod kernel_cache;
pub mod kernels;
pub mod nccl;
mod nvrtc;
pub mod opencl;
pub mod radix_sort;
pub mod scan;
pub mod signature;
pub mod telemetry;
pub mod vendor;

pub use api::*;
pub use args::{KernelArgs, RealArg};
pub use ext::DeviceExt;
pub use fembench_core::{Backend, Precision};

/// Opens device `index` of a GPU backend.
pub fn open(backend: Backend, index: usize) -> DeviceResult<Box<dyn Device>> {
    match backend {
        Backend::Cuda => Ok(Box::new(cuda::CudaDevice::open(index)?)),
        Backend::OpenCl => Ok(Box::new(opencl::OpenClDevice::open(index)?)),
        Backend::Cpu => Err(DeviceError::Unsupported("the cpu backend runs host reference code, not device kernels".into())),
    }
}

/// Every device each backend can see, or the reason it sees none.
pub fn list(backend: Backend) -> Result<Vec<DeviceInfo>, DeviceError> {
    match backend {
        Backend::Cuda => cuda::list(),
        Backend::OpenCl => opencl::list(),
        Backend::Cpu => Ok(vec![cpu::info()]),
    }
}
