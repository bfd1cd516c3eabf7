//! The device API every backend implements and every algorithm is written against: device
//! facts, buffers (device and pinned host), compiled modules and kernels, launches, and the
//! `Device` trait with event timing.

use serde::{Deserialize, Serialize};

pub use fembench_core::{Backend, Precision};

use crate::kernels::{Defines, KernelSource};

/// What `harness devices` prints and what every result row's metadata names.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub backend: Option<Backend>,
    /// Index within its backend (`--device N`).
    pub index: usize,
    pub name: String,
    /// OpenCL platform name, or "CUDA".
    pub platform: String,
    pub driver_version: String,
    /// CUDA driver API version, or the device's OpenCL version.
    pub runtime_version: String,
    pub memory_bytes: u64,
    pub compute_units: u32,
    pub fp64: bool,
    /// Last-level cache size, used for the cold-cache flush and to label cache-resident sizes.
    pub cache_bytes: u64,
    /// Shared (local) memory per work-group.
    pub local_mem_bytes: u64,
    pub max_work_group: usize,
    /// e.g. "9.0" for CUDA devices (and NVIDIA devices through OpenCL).
    pub compute_capability: Option<String>,
    /// Maximum core clock in MHz, as the driver reports it (0 where unknown).
    #[serde(default)]
    pub clock_mhz: u32,
    /// Largest single allocation the driver allows (OpenCL's CL_DEVICE_MAX_MEM_ALLOC_SIZE).
    #[serde(default)]
    pub max_alloc_bytes: u64,
    /// PCI address as NVML spells it ("00000000:19:00.0"), for NVIDIA devices: how the clocks,
    /// temperature and power of each case are read.
    #[serde(default)]
    pub pci_bus_id: Option<String>,
    /// The GPU's UUID as nvidia-smi prints it ("GPU-8f0e...-..."), for CUDA devices: which card of
    /// a node a run (or a worker's shard: its rows carry `device_index`) ran on.
    #[serde(default)]
    pub uuid: Option<String>,
}

/// A UUID's 16 bytes as nvidia-smi prints them: "GPU-" and 8-4-4-4-12 lowercase hex digits.
pub fn gpu_uuid(bytes: &[u8; 16]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("GPU-{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

impl DeviceInfo {
    /// Whether the device's kernels run on the host's cores (PoCL): host work beside its cases
    /// would then enter their timings.
    pub fn runs_on_host(&self) -> bool {
        self.platform.contains("Portable Computing Language") || self.backend == Some(Backend::Cpu)
    }

    /// The shared memory a block may use: the device's limit per block, or `requested` if an
    /// experiment asks for less (more is refused).
    pub fn shared_limit(&self, requested: Option<u64>) -> Result<usize, String> {
        let device = self.local_mem_bytes as usize;
        match requested {
            Some(b) if b as usize > device => {
                Err(format!("problem.shared_bytes = {b} exceeds the device's {device} bytes of shared memory per block"))
            }
            Some(b) => Ok(b as usize),
            None => Ok(device),
        }
    }

    /// Theoretical peak in GFLOP/s (one fused multiply-add = 2 flops per lane per clock), from
    /// the compute units, the clock and the FP32/FP64 lanes per streaming multiprocessor of the
    /// NVIDIA architecture named by the compute capability. `None` where the lanes are unknown
    /// (other vendors, or an architecture not listed): reports then print no fraction of peak.
    pub fn peak_gflops(&self, precision: Precision) -> Option<f64> {
        let cc = self.compute_capability.as_deref()?;
        // (FP32 lanes, FP64 lanes) per SM, from NVIDIA's architecture whitepapers.
        let (f32_lanes, f64_lanes) = match cc {
            "6.0" => (64, 32),
            "7.0" => (64, 32),
            "7.5" => (64, 2),
            "8.0" => (64, 32),
            "8.6" | "8.7" | "8.9" => (128, 2),
            "9.0" => (128, 64),
            "10.0" => (128, 64),
            "12.0" => (128, 2),
            _ => return None,
        };
        let lanes = match precision {
            Precision::F32 => f32_lanes,
            Precision::F64 => f64_lanes,
        };
        (self.clock_mhz > 0).then(|| self.compute_units as f64 * lanes as f64 * 2.0 * self.clock_mhz as f64 * 1e-3)
    }

    /// The highest nominal GFLOP/s any unit of the device reaches in `precision`: the vector
    /// peak, or where FP64 tensor cores exist (sm_80, sm_90, sm_100: DMMA, which cuBLAS uses
    /// for DGEMM) twice it. The ceiling no honest f64 count can exceed; share-of-peak figures of
    /// vector kernels use [`DeviceInfo::peak_gflops`].
    /// The dense TF32 tensor-core peak (GFLOP/s, FP32 accumulation): the ceiling of a GEMM on
    /// the TF32 tensor cores. Per SM and clock, 1024 flops on the A100 (8.0) and 2048 on Hopper
    /// (9.0), from NVIDIA's whitepapers: 8 times the FP32 lanes' on both; `None` elsewhere.
    pub fn tf32_ceiling_gflops(&self) -> Option<f64> {
        let times_fp32 = match self.compute_capability.as_deref()? {
            "8.0" | "9.0" => 8.0,
            _ => return None,
        };
        Some(times_fp32 * self.peak_gflops(Precision::F32)?)
    }

    pub fn ceiling_gflops(&self, precision: Precision) -> Option<f64> {
        let peak = self.peak_gflops(precision)?;
        let dmma = precision == Precision::F64 && matches!(self.compute_capability.as_deref(), Some("8.0" | "9.0" | "10.0"));
        Some(if dmma { 2.0 * peak } else { peak })
    }
}

/// Errors of the device layer. Every variant keeps what a user needs to act on it.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    #[error("{backend} is not available: {reason}")]
    Unavailable { backend: Backend, reason: String },
    #[error("{backend} device {index} does not exist ({count} found)")]
    NoSuchDevice { backend: Backend, index: usize, count: usize },
    #[error("compiling {file} for {backend} failed ({status})\noptions: {}\n--- compiler log ---\n{log}", options.join(" "))]
    Compile { backend: Backend, file: String, options: Vec<String>, status: String, log: String },
    #[error("out of device memory allocating {bytes} bytes: {detail}")]
    OutOfMemory { bytes: usize, detail: String },
    #[error("{backend} call {call} failed: {detail}")]
    Api { backend: Backend, call: &'static str, detail: String },
    #[error("kernel {kernel}: bad arguments: {detail}")]
    BadArgument { kernel: String, detail: String },
    #[error("buffer belongs to another backend")]
    ForeignBuffer,
    #[error("{0}")]
    Unsupported(String),
}

pub type DeviceResult<T> = Result<T, DeviceError>;

/// A device allocation. Owned by the backend that made it.
pub struct Buffer {
    pub(crate) bytes: usize,
    pub(crate) mem: BufferMem,
}

pub(crate) enum BufferMem {
    Cuda(cudarc::driver::CudaSlice<u8>),
    OpenCl(opencl3::memory::Buffer<u8>),
}

impl Buffer {
    pub fn bytes(&self) -> usize {
        self.bytes
    }
    /// Refuses a transfer of `len` bytes from byte `offset` that does not lie inside the buffer.
    pub(crate) fn check_range(&self, offset: usize, len: usize) -> DeviceResult<()> {
        if offset.checked_add(len).is_none_or(|end| end > self.bytes) {
            return Err(DeviceError::Unsupported(format!(
                "download of bytes {offset}..{} from a buffer of {}",
                offset.saturating_add(len),
                self.bytes
            )));
        }
        Ok(())
    }
}

/// Host memory for transfers: page-locked (pinned) where the backend can give it, so that a
/// timed copy runs at the link's DMA speed and never waits on page faults. It belongs to the
/// device that made it and must not outlive it.
pub struct HostBuffer {
    pub(crate) ptr: *mut u8,
    pub(crate) bytes: usize,
    pub(crate) pinned: bool,
    pub(crate) release: Option<Box<dyn FnOnce()>>,
}

impl HostBuffer {
    /// # Safety
    /// `ptr` must be valid for `bytes` bytes until `release` runs (or forever if none).
    pub(crate) unsafe fn from_raw(ptr: *mut u8, bytes: usize, pinned: bool, release: Option<Box<dyn FnOnce()>>) -> Self {
        HostBuffer { ptr, bytes, pinned, release }
    }
    pub fn len(&self) -> usize {
        self.bytes
    }
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }
    /// Whether the memory is page-locked (the table of a timed transfer names it).
    pub fn pinned(&self) -> bool {
        self.pinned
    }
    /// Writes the buffer back from the CPU's caches and evicts it (`host_cache`), so that the
    /// upload that follows reads memory, not lines dirty in the cores that wrote them. Returns
    /// whether the platform could.
    pub fn write_back_cpu_caches(&self) -> bool {
        crate::host_cache::write_back(self.as_slice())
    }
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: from_raw's contract.
        unsafe { std::slice::from_raw_parts(self.ptr, self.bytes) }
    }
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: from_raw's contract; &mut self is exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.bytes) }
    }
    /// The buffer as a slice of `T` (the allocation is page-aligned).
    pub fn typed_mut<T: bytemuck::Pod>(&mut self) -> &mut [T] {
        let n = self.bytes / std::mem::size_of::<T>() * std::mem::size_of::<T>();
        bytemuck::cast_slice_mut(&mut self.as_mut_slice()[..n])
    }
    pub fn typed<T: bytemuck::Pod>(&self) -> &[T] {
        bytemuck::cast_slice(&self.as_slice()[..self.bytes / std::mem::size_of::<T>() * std::mem::size_of::<T>()])
    }
}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        if let Some(r) = self.release.take() {
            r();
        }
    }
}

/// A compiled program (CUDA module or OpenCL program) from one kernel file and one set of defines.
pub struct Module {
    pub(crate) file: &'static str,
    pub(crate) inner: ModuleInner,
    /// The translation unit it was compiled from, comments blanked once, and the precision of
    /// its `real`: where each kernel's signature is read.
    pub(crate) code: String,
    pub(crate) real: Precision,
}

impl Module {
    pub(crate) fn new(
        source: &crate::kernels::KernelSource,
        defines: &crate::kernels::Defines,
        backend: Backend,
        inner: ModuleInner,
    ) -> Self {
        let code = crate::signature::without_comments(&crate::kernels::translation_unit(backend, source));
        Module { file: source.file, inner, code, real: defines.real() }
    }

    /// The signature of `kernel` in this module's source, or an error naming the file.
    pub(crate) fn signature(&self, kernel: &str) -> DeviceResult<crate::signature::Signature> {
        crate::signature::parse_code(&self.code, kernel, self.real)
            .map_err(|detail| DeviceError::BadArgument { kernel: kernel.into(), detail: format!("{detail} ({})", self.file) })
    }
}

pub(crate) enum ModuleInner {
    Cuda(std::sync::Arc<cudarc::driver::CudaModule>),
    OpenCl(opencl3::program::Program),
}

/// One kernel entry point of a [`Module`].
pub struct Kernel {
    pub(crate) name: String,
    /// The kernel whose argument struct it takes: its own name, or another kernel's of the same
    /// parameters ([`Kernel::with_arguments_of`]).
    pub(crate) args_of: String,
    pub(crate) inner: KernelInner,
    /// Its parameters, against which every launch's arguments are checked.
    pub(crate) signature: crate::signature::Signature,
    /// The precision of its module's `real`.
    pub(crate) real: Precision,
}

/// Work recorded once and replayed by one launch (a CUDA graph): [`Device::capture`].
pub struct Graph {
    pub(crate) inner: cudarc::driver::CudaGraph,
}

pub(crate) enum KernelInner {
    Cuda(cudarc::driver::CudaFunction),
    OpenCl(opencl3::kernel::Kernel),
}

impl Kernel {
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn signature(&self) -> &crate::signature::Signature {
        &self.signature
    }
    /// Refuses arguments whose count or kinds differ from the kernel's parameters.
    pub(crate) fn check(&self, args: &[Arg]) -> DeviceResult<()> {
        self.signature.check(args.iter().map(Arg::kind)).map_err(|detail| DeviceError::BadArgument { kernel: self.name.clone(), detail })
    }
}

/// A kernel argument. Scalars must match the kernel's parameter types exactly.
#[derive(Clone, Copy)]
pub enum Arg<'a> {
    Buf(&'a Buffer),
    U32(u32),
    I32(i32),
    /// `idx_t` in the kernels.
    I64(i64),
    F32(f32),
    F64(f64),
}

impl<'a> Arg<'a> {
    /// The kind of parameter this argument fills.
    pub fn kind(&self) -> crate::signature::Param {
        use crate::signature::Param;
        match self {
            Arg::Buf(_) => Param::Buffer,
            Arg::U32(_) => Param::U32,
            Arg::I32(_) => Param::I32,
            Arg::I64(_) => Param::I64,
            Arg::F32(_) => Param::F32,
            Arg::F64(_) => Param::F64,
        }
    }

    /// A `real` scalar in the precision the kernel was compiled for.
    pub fn real(precision: Precision, value: f64) -> Arg<'static> {
        match precision {
            Precision::F32 => Arg::F32(value as f32),
            Precision::F64 => Arg::F64(value),
        }
    }
}

/// One-dimensional launch geometry: `groups` work-groups of `group_size` work-items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    pub groups: usize,
    pub group_size: usize,
}

impl Launch {
    /// Enough groups of `group_size` to cover `items` work-items.
    pub fn cover(items: usize, group_size: usize) -> Self {
        Launch { groups: items.div_ceil(group_size).max(1), group_size }
    }
}

/// The one interface algorithm host code is written against.
pub trait Device {
    fn info(&self) -> &DeviceInfo;

    fn alloc(&self, bytes: usize) -> DeviceResult<Buffer>;
    fn upload(&self, dst: &mut Buffer, data: &[u8]) -> DeviceResult<()>;
    /// Reads `out.len()` bytes of `src` from byte `offset` on (a part of a result too large to
    /// hold on the host at once is checked part by part).
    fn download_at(&self, src: &Buffer, offset: usize, out: &mut [u8]) -> DeviceResult<()>;
    fn download(&self, src: &Buffer, out: &mut [u8]) -> DeviceResult<()> {
        self.download_at(src, 0, out)
    }
    /// Device-to-device copy through the API (cuMemcpyDtoD / clEnqueueCopyBuffer): the reference
    /// a copy kernel is measured against.
    fn copy(&self, dst: &mut Buffer, src: &Buffer, bytes: usize) -> DeviceResult<()>;

    /// Compiles one kernel file with the given defines. Errors keep options and the compiler log.
    fn compile(&self, source: &KernelSource, defines: &Defines) -> DeviceResult<Module>;
    /// Compiles these programs into the disk kernel cache ahead of the cases that will load
    /// them, in parallel where the backend allows; one result per job, `Ok(true)` when it was
    /// compiled now and `Ok(false)` when the cache had it.
    fn precompile(&self, jobs: &[(KernelSource, Defines)]) -> Vec<DeviceResult<bool>>;
    fn kernel(&self, module: &Module, name: &str) -> DeviceResult<Kernel>;
    /// Enqueues a launch, once its arguments match the kernel's parameters in count and kind
    /// (read from the kernel's source: [`Kernel::signature`]); errors found only at execution
    /// surface at the next synchronisation. What stays the caller's contract: every buffer is
    /// as large as the indices the kernel derives from the other arguments.
    fn launch(&self, kernel: &Kernel, launch: Launch, args: &[Arg]) -> DeviceResult<()>;
    fn synchronize(&self) -> DeviceResult<()>;

    /// Runs `body` (which only enqueues work) behind a gate and returns the device time from
    /// the gate's opening to the end of the body's last command, in seconds (see
    /// `measure.rs` for the semantics shared by every backend). A synchronising call inside
    /// `body` is refused with an error instead of waiting on the closed gate.
    fn time_events(&self, body: &mut dyn FnMut() -> DeviceResult<()>) -> DeviceResult<f64>;

    /// As [`Device::time_events`], without holding the work back until the whole body is
    /// enqueued: for library calls that wait on the stream themselves (cuSPARSE's sorts), which
    /// a closed gate would deadlock. Host time between the calls then counts, as it does for a
    /// user of the library.
    fn time_events_open(&self, body: &mut dyn FnMut() -> DeviceResult<()>) -> DeviceResult<f64> {
        self.time_events(body)
    }

    /// Records what `body` enqueues as one graph instead of running it, to be replayed by
    /// [`Device::launch_graph`] (CUDA graphs; other backends have none). `body` must not wait on
    /// the device.
    fn capture(&self, _body: &mut dyn FnMut() -> DeviceResult<()>) -> DeviceResult<Graph> {
        Err(DeviceError::Unsupported("graphs of recorded work are CUDA's".into()))
    }
    /// Enqueues a graph made by [`Device::capture`] on this device.
    fn launch_graph(&self, _graph: &Graph) -> DeviceResult<()> {
        Err(DeviceError::Unsupported("graphs of recorded work are CUDA's".into()))
    }

    /// Host memory for timed transfers: pinned where the backend can give it.
    fn alloc_host(&self, bytes: usize) -> DeviceResult<HostBuffer> {
        let mut v = vec![0u8; bytes.max(1)].into_boxed_slice();
        let ptr = v.as_mut_ptr();
        let owner = std::cell::Cell::new(Some(v));
        // SAFETY: the boxed slice lives until the release closure drops it.
        Ok(unsafe { HostBuffer::from_raw(ptr, bytes, false, Some(Box::new(move || drop(owner.take())))) })
    }
    /// Enqueues a host-to-device copy of `bytes` bytes without waiting (allowed inside a timed
    /// body); `src` must stay untouched until the next synchronisation.
    fn upload_async(&self, dst: &mut Buffer, src: &HostBuffer, bytes: usize) -> DeviceResult<()>;
    /// Enqueues a device-to-host copy without waiting; read `dst` only after synchronising.
    fn download_async(&self, src: &Buffer, dst: &mut HostBuffer, bytes: usize) -> DeviceResult<()>;

    /// Returns memory the backend keeps pooled after frees to the driver, so that the next
    /// allocation is a real one (CUDA's stream-ordered pool). No-op where nothing is pooled.
    fn release_pooled_memory(&self) -> DeviceResult<()> {
        Ok(())
    }
    /// Forces a buffer's memory to exist on the device (OpenCL drivers allocate lazily, at the
    /// first use): one byte written.
    fn touch(&self, _buf: &mut Buffer) -> DeviceResult<()> {
        Ok(())
    }
    /// How allocation is timed on this backend, for the tables that show it.
    fn allocation_note(&self) -> &'static str {
        "allocation"
    }
    /// The compilations asked of this device so far (backend, device, kernel file, definitions):
    /// what a run writes as its kernels.json, for `harness precompile`.
    fn compiled(&self) -> Vec<crate::kernel_cache::Request> {
        Vec::new()
    }
    /// False once the device is in an error state that later work cannot leave (CUDA's sticky
    /// errors after an illegal address): the runner then opens it again.
    fn healthy(&self) -> bool {
        true
    }
    /// The vendor sparse library of this device (cuSPARSE on CUDA), loaded on first use, or why
    /// there is none.
    fn sparse(&self) -> DeviceResult<&dyn crate::vendor::VendorSparse> {
        Err(DeviceError::Unsupported(format!("{} has no vendor sparse library in fembench (cuSPARSE is CUDA's)", self.info().name)))
    }

    /// The vendor BLAS of this device (cuBLAS on CUDA), loaded on first use, or why not.
    fn blas(&self) -> DeviceResult<&dyn crate::vendor::VendorBlas> {
        Err(DeviceError::Unsupported(format!("{} has no vendor BLAS in fembench (cuBLAS is CUDA's)", self.info().name)))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_uuid_reads_as_nvidia_smi_prints_it() {
        let bytes: [u8; 16] = [0x8f, 0x0e, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab];
        assert_eq!(super::gpu_uuid(&bytes), "GPU-8f0e1234-5678-9abc-def0-0123456789ab");
    }
}
