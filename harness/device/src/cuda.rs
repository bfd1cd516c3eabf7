//! CUDA backend: cudarc's driver API with dynamic loading, kernels compiled at run time by NVRTC.

use std::cell::Cell;
use std::sync::Arc;

use cudarc::driver::{
    sys::{CUdevice_attribute as Attr, CUevent_flags},
    CudaContext, CudaEvent, CudaStream, DevicePtr, DriverError, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::Ptx;

use crate::kernel_cache;
use crate::nvrtc::cached_cubin;
pub use crate::nvrtc::{compile_cubin, compile_ptx, nvrtc_present, nvrtc_version};

use crate::api::{
    Arg, Backend, Buffer, BufferMem, Device, DeviceError, DeviceInfo, DeviceResult, HostBuffer, Kernel, KernelInner, Launch, Module,
    ModuleInner,
};
use crate::kernels::{Defines, KernelSource};

fn api(call: &'static str) -> impl FnOnce(DriverError) -> DeviceError {
    move |e| DeviceError::Api { backend: Backend::Cuda, call, detail: e.to_string() }
}

/// Is libcuda loadable? cudarc panics on first use when it is not, so ask first.
fn driver_present() -> DeviceResult<()> {
    // SAFETY: only tries to dlopen the library.
    if unsafe { cudarc::driver::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(DeviceError::Unavailable { backend: Backend::Cuda, reason: "no CUDA driver library (libcuda.so) could be loaded".into() })
    }
}

fn driver_version() -> String {
    let mut v = 0;
    // SAFETY: plain out-parameter; the library is loaded (driver_present checked by callers).
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) };
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

fn device_count() -> DeviceResult<usize> {
    driver_present()?;
    CudaContext::device_count().map(|n| n as usize).map_err(|e| DeviceError::Unavailable { backend: Backend::Cuda, reason: e.to_string() })
}

fn query_info(ctx: &Arc<CudaContext>, index: usize) -> DeviceResult<DeviceInfo> {
    let attr = |a: Attr| ctx.attribute(a).map_err(api("cuDeviceGetAttribute"));
    let (major, minor) = ctx.compute_capability().map_err(api("cuDeviceGetAttribute"))?;
    Ok(DeviceInfo {
        backend: Some(Backend::Cuda),
        index,
        name: ctx.name().map_err(api("cuDeviceGetName"))?,
        platform: "CUDA".into(),
        driver_version: driver_version(),
        runtime_version: nvrtc_version().map(|v| format!("NVRTC {v}")).unwrap_or_else(|| "no NVRTC".into()),
        memory_bytes: ctx.total_mem().map_err(api("cuDeviceTotalMem"))? as u64,
        compute_units: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
        fp64: true,
        cache_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as u64,
        // Static shared arrays (how the kernels size theirs) get this much without an opt-in.
        local_mem_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)? as u64,
        max_work_group: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)? as usize,
        compute_capability: Some(format!("{major}.{minor}")),
        clock_mhz: (attr(Attr::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)? / 1000) as u32,
        // The driver API has no per-allocation limit; device memory bounds it.
        max_alloc_bytes: ctx.total_mem().map_err(api("cuDeviceTotalMem"))? as u64,
        pci_bus_id: Some(format!(
            "{:08X}:{:02X}:{:02X}.0",
            attr(Attr::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)?,
            attr(Attr::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)?,
            attr(Attr::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)?
        )),
        uuid: ctx.uuid().ok().map(|u| crate::api::gpu_uuid(&u.bytes.map(|b| b as u8))),
    })
}

pub fn list() -> DeviceResult<Vec<DeviceInfo>> {
    let n = device_count()?;
    (0..n)
        .map(|i| {
            let ctx = CudaContext::new(i).map_err(api("cuCtxCreate"))?;
            query_info(&ctx, i)
        })
        .collect()
}

/// The gate of timed regions: a 32-bit counter in pinned, device-mapped host memory. The stream
/// waits (cuStreamWaitValue32, >=) for the value of the current region, which the host writes
/// once it has enqueued the whole body.
/// How long a timed body may take to enqueue before the gate is opened for it.
const WATCHDOG: std::time::Duration = std::time::Duration::from_secs(30);

struct Gate {
    host: *mut u32,
    device: cudarc::driver::sys::CUdeviceptr,
    next: Cell<u32>,
}

/// Destroys every allocation and all state of device `index`'s primary context, the only way
/// out of a sticky error. No object of the old context may be used afterwards.
fn reset_primary_context(index: usize) -> Result<(), DriverError> {
    // SAFETY: plain driver calls; the runner drops every object of the device before reopening.
    unsafe {
        cudarc::driver::sys::cuInit(0).result()?;
        let mut dev = 0;
        cudarc::driver::sys::cuDeviceGet(&mut dev, index as i32).result()?;
        cudarc::driver::sys::cuDevicePrimaryCtxReset_v2(dev).result()
    }
}

pub struct CudaDevice {
    /// cuSPARSE, opened on first use (or why it could not be); dropped before the stream.
    sparse: std::cell::OnceCell<Result<crate::cuda_sparse::CuSparse, String>>,
    /// cuBLAS, the same way.
    blas: std::cell::OnceCell<Result<crate::cuda_blas::CuBlas, String>>,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    info: DeviceInfo,
    /// NVRTC's real target, e.g. "sm_90": modules are machine code for exactly this GPU.
    arch: &'static str,
    /// Start and stop events, made once (not per repetition).
    events: (CudaEvent, CudaEvent),
    gate: Gate,
    /// True while a timed body is being enqueued behind the closed gate (shared with cuBLAS,
    /// whose dot products wait on the stream).
    gated: std::rc::Rc<Cell<bool>>,
    /// The compilations asked of this device (the run's kernels.json).
    compiled: std::cell::RefCell<std::collections::BTreeSet<kernel_cache::Request>>,
    /// Page-locked staging for large downloads ([`STAGING_BYTES`]), made on first use.
    staging: std::cell::OnceCell<Result<std::cell::RefCell<HostBuffer>, String>>,
}

/// Downloads go through pinned staging, in chunks of this size: a pageable cuMemcpyDtoH into a
/// fresh vector was measured at about 1.3 GB/s on an H200 host (the driver stages it, and the
/// vector's pages fault in on one thread), 1-1.5 s for a 500K-node Sanfui result; a pinned copy
/// runs at the link's speed and the copy out of it runs on every core.
const STAGING_BYTES: usize = 64 << 20;
/// Downloads above this size are staged (the parts of a large result the checks read, such as
/// an ELL slot's rows, are a few MB each).
const STAGED_ABOVE: usize = 1 << 20;

impl Drop for CudaDevice {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // SAFETY: the gate was allocated by cuMemHostAlloc in open() and is freed once; the
        // stream no longer waits on it (every region releases its gate before returning).
        unsafe {
            let _ = self.stream.synchronize();
            let _ = cudarc::driver::result::free_host(self.gate.host as *mut _);
        }
    }
}

impl CudaDevice {
    pub fn open(index: usize) -> DeviceResult<Self> {
        let count = device_count()?;
        if index >= count {
            return Err(DeviceError::NoSuchDevice { backend: Backend::Cuda, index, count });
        }
        // A primary context left in a sticky error state (an illegal address in an earlier
        // case) stays broken after its last user lets go: reset it, then retain it afresh.
        let ctx = match CudaContext::new(index) {
            Ok(ctx) => ctx,
            Err(first) => {
                reset_primary_context(index).map_err(|e| api("cuDevicePrimaryCtxReset")(e))?;
                CudaContext::new(index).map_err(|e| DeviceError::Api {
                    backend: Backend::Cuda,
                    call: "cuCtxCreate",
                    detail: format!("{e} (before the primary context's reset: {first})"),
                })?
            }
        };
        // One stream, ordered by us: cudarc's per-buffer event tracking would add events to every
        // launch, which we do not want inside timed regions.
        // SAFETY: we use a single stream and synchronise it explicitly.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().map_err(api("cuStreamCreate"))?;
        let info = query_info(&ctx, index)?;
        let cc = info.compute_capability.clone().unwrap_or_default().replace('.', "");
        // NVRTC wants a 'static str; the set of architectures is small, so leaking one is fine.
        let arch: &'static str = Box::leak(format!("sm_{cc}").into_boxed_str());
        let timing = Some(CUevent_flags::CU_EVENT_DEFAULT);
        let events = (ctx.new_event(timing).map_err(api("cuEventCreate"))?, ctx.new_event(timing).map_err(api("cuEventCreate"))?);
        // SAFETY: 4 bytes of pinned host memory, mapped into the device's address space; freed in Drop.
        let gate = unsafe {
            let host = cudarc::driver::result::malloc_host(4, cudarc::driver::sys::CU_MEMHOSTALLOC_DEVICEMAP)
                .map_err(api("cuMemHostAlloc"))? as *mut u32;
            host.write_volatile(0);
            let mut device = 0;
            cudarc::driver::sys::cuMemHostGetDevicePointer_v2(&mut device, host as *mut _, 0)
                .result()
                .map_err(api("cuMemHostGetDevicePointer"))?;
            Gate { host, device, next: Cell::new(0) }
        };
        Ok(Self {
            sparse: std::cell::OnceCell::new(),
            blas: std::cell::OnceCell::new(),
            staging: std::cell::OnceCell::new(),
            compiled: Default::default(),
            ctx,
            stream,
            info,
            arch,
            events,
            gate,
            gated: std::rc::Rc::new(Cell::new(false)),
        })
    }

    fn refuse_inside_gate(&self, call: &'static str) -> DeviceResult<()> {
        if self.gated.get() {
            return Err(DeviceError::Api {
                backend: Backend::Cuda,
                call,
                detail: "a synchronising call inside a timed region (it would wait on the closed gate)".into(),
            });
        }
        Ok(())
    }

    /// A large download, chunk by chunk through the pinned staging buffer; each chunk is copied
    /// out on every core (which also spreads the destination's first-touch page faults).
    fn download_staged(&self, src: &Buffer, offset: usize, out: &mut [u8], staging: &mut HostBuffer) -> DeviceResult<()> {
        use rayon::prelude::*;
        let base = self.device_ptr(src)? + offset as u64;
        for (i, chunk) in out.chunks_mut(STAGING_BYTES).enumerate() {
            let n = chunk.len();
            // SAFETY: the chunk lies inside `src` (checked by download_at) and inside the staging buffer;
            // the staging buffer is read only after the stream is synchronised.
            unsafe {
                cudarc::driver::result::memcpy_dtoh_async(
                    &mut staging.as_mut_slice()[..n],
                    base + (i * STAGING_BYTES) as u64,
                    self.stream.cu_stream(),
                )
            }
            .map_err(api("cuMemcpyDtoHAsync"))?;
            self.stream.synchronize().map_err(api("cuStreamSynchronize"))?;
            chunk.par_chunks_mut(1 << 20).zip(staging.as_slice()[..n].par_chunks(1 << 20)).for_each(|(d, s)| d.copy_from_slice(s));
        }
        Ok(())
    }

    /// The stream every launch, copy and timing of this device goes to.
    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
    pub(crate) fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }
    /// A buffer's device address (for NCCL, which takes raw pointers).
    pub(crate) fn raw_ptr(&self, buf: &Buffer) -> DeviceResult<cudarc::driver::sys::CUdeviceptr> {
        self.device_ptr(buf)
    }

    fn device_ptr(&self, buf: &Buffer) -> DeviceResult<cudarc::driver::sys::CUdeviceptr> {
        let s = self.slice(buf)?;
        let (ptr, _sync) = s.device_ptr(&self.stream);
        Ok(ptr)
    }

    /// A launch on `stream`, a stream of this device's context: its own, or a second one that
    /// runs beside it (the halo exchange's, for the rows it sends).
    pub(crate) fn launch_on(&self, stream: &CudaStream, kernel: &Kernel, launch: Launch, args: &[Arg]) -> DeviceResult<()> {
        let KernelInner::Cuda(f) = &kernel.inner else { return Err(DeviceError::ForeignBuffer) };
        kernel.check(args)?;
        let mut builder = stream.launch_builder(f);
        for arg in args {
            match arg {
                Arg::Buf(b) => {
                    builder.arg(self.slice(b)?);
                }
                Arg::U32(v) => {
                    builder.arg(v);
                }
                Arg::I32(v) => {
                    builder.arg(v);
                }
                Arg::I64(v) => {
                    builder.arg(v);
                }
                Arg::F32(v) => {
                    builder.arg(v);
                }
                Arg::F64(v) => {
                    builder.arg(v);
                }
            }
        }
        let cfg = LaunchConfig { grid_dim: (launch.groups as u32, 1, 1), block_dim: (launch.group_size as u32, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: the arguments match the kernel's parameters in count and kind (checked above);
        // buffers are sized by the host code that launches them (the launch's contract).
        unsafe { builder.launch(cfg) }.map_err(|e| DeviceError::Api {
            backend: Backend::Cuda,
            call: "cuLaunchKernel",
            detail: format!("{}: {e}", kernel.name),
        })?;
        Ok(())
    }

    fn slice<'a>(&self, buf: &'a Buffer) -> DeviceResult<&'a cudarc::driver::CudaSlice<u8>> {
        match &buf.mem {
            BufferMem::Cuda(s) => Ok(s),
            _ => Err(DeviceError::ForeignBuffer),
        }
    }
}

impl Device for CudaDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn alloc(&self, bytes: usize) -> DeviceResult<Buffer> {
        // SAFETY: uninitialised device memory; every benchmark writes before it reads.
        let slice = unsafe { self.stream.alloc::<u8>(bytes.max(1)) }.map_err(|e| {
            if e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                DeviceError::OutOfMemory { bytes, detail: e.to_string() }
            } else {
                api("cuMemAlloc")(e)
            }
        })?;
        Ok(Buffer { bytes, mem: BufferMem::Cuda(slice) })
    }

    fn upload(&self, dst: &mut Buffer, data: &[u8]) -> DeviceResult<()> {
        self.refuse_inside_gate("cuMemcpyHtoD")?;
        let BufferMem::Cuda(s) = &mut dst.mem else { return Err(DeviceError::ForeignBuffer) };
        let mut view = s.slice_mut(0..data.len());
        self.stream.memcpy_htod(data, &mut view).map_err(api("cuMemcpyHtoD"))?;
        self.stream.synchronize().map_err(api("cuStreamSynchronize"))
    }

    fn download_at(&self, src: &Buffer, offset: usize, out: &mut [u8]) -> DeviceResult<()> {
        self.refuse_inside_gate("cuMemcpyDtoH")?;
        src.check_range(offset, out.len())?;
        if out.len() > STAGED_ABOVE {
            let staging =
                self.staging.get_or_init(|| self.alloc_host(STAGING_BYTES).map(std::cell::RefCell::new).map_err(|e| e.to_string()));
            if let Ok(staging) = staging {
                return self.download_staged(src, offset, out, &mut staging.borrow_mut());
            }
        }
        let s = self.slice(src)?;
        let view = s.slice(offset..offset + out.len());
        self.stream.memcpy_dtoh(&view, out).map_err(api("cuMemcpyDtoH"))?;
        self.stream.synchronize().map_err(api("cuStreamSynchronize"))
    }

    fn copy(&self, dst: &mut Buffer, src: &Buffer, bytes: usize) -> DeviceResult<()> {
        let s = self.slice(src)?.slice(0..bytes);
        let BufferMem::Cuda(d) = &mut dst.mem else { return Err(DeviceError::ForeignBuffer) };
        let mut d = d.slice_mut(0..bytes);
        self.stream.memcpy_dtod(&s, &mut d).map_err(api("cuMemcpyDtoD"))
    }

    fn compile(&self, source: &KernelSource, defines: &Defines) -> DeviceResult<Module> {
        self.compiled.borrow_mut().insert(kernel_cache::Request {
            backend: Backend::Cuda,
            device: self.info.name.clone(),
            file: source.file.into(),
            defines: defines.0.clone(),
        });
        let (cubin, _) = cached_cubin(source, defines, self.arch)?;
        let module = self.ctx.load_module(Ptx::from_binary(cubin)).map_err(api("cuModuleLoadData"))?;
        Ok(Module::new(source, defines, Backend::Cuda, ModuleInner::Cuda(module)))
    }

    fn precompile(&self, jobs: &[(KernelSource, Defines)]) -> Vec<DeviceResult<bool>> {
        use rayon::prelude::*;
        let arch = self.arch;
        jobs.par_iter().map(|(source, defines)| cached_cubin(source, defines, arch).map(|(_, compiled)| compiled)).collect()
    }

    fn kernel(&self, module: &Module, name: &str) -> DeviceResult<Kernel> {
        let ModuleInner::Cuda(m) = &module.inner else { return Err(DeviceError::ForeignBuffer) };
        let f = m.load_function(name).map_err(|e| DeviceError::Api {
            backend: Backend::Cuda,
            call: "cuModuleGetFunction",
            detail: format!("{name} in {}: {e}", module.file),
        })?;
        Ok(Kernel {
            name: name.into(),
            args_of: name.into(),
            inner: KernelInner::Cuda(f),
            signature: module.signature(name)?,
            real: module.real,
        })
    }

    fn launch(&self, kernel: &Kernel, launch: Launch, args: &[Arg]) -> DeviceResult<()> {
        self.launch_on(&self.stream, kernel, launch, args)
    }

    fn synchronize(&self) -> DeviceResult<()> {
        self.refuse_inside_gate("cuStreamSynchronize")?;
        self.stream.synchronize().map_err(api("cuStreamSynchronize"))
    }

    fn time_events_open(&self, body: &mut dyn FnMut() -> DeviceResult<()>) -> DeviceResult<f64> {
        self.ctx.bind_to_thread().map_err(api("cuCtxSetCurrent"))?;
        let (start, stop) = &self.events;
        start.record(&self.stream).map_err(api("cuEventRecord"))?;
        body()?;
        stop.record(&self.stream).map_err(api("cuEventRecord"))?;
        stop.synchronize().map_err(api("cuEventSynchronize"))?;
        let ms = start.elapsed_ms(stop).map_err(api("cuEventElapsedTime"))?;
        Ok(ms as f64 * 1e-3)
    }

    fn capture(&self, body: &mut dyn FnMut() -> DeviceResult<()>) -> DeviceResult<crate::api::Graph> {
        use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
        self.refuse_inside_gate("cuStreamBeginCapture")?;
        // Relaxed: the libraries' calls inside (cuBLAS, cuSPARSE) may touch the context.
        self.stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED).map_err(api("cuStreamBeginCapture"))?;
        let recorded = body();
        let graph = self.stream.end_capture(CUgraphInstantiate_flags(0)).map_err(api("cuStreamEndCapture"))?;
        recorded?;
        let inner = graph.ok_or_else(|| DeviceError::Api {
            backend: Backend::Cuda,
            call: "cuStreamEndCapture",
            detail: "nothing was recorded".into(),
        })?;
        Ok(crate::api::Graph { inner })
    }

    fn launch_graph(&self, graph: &crate::api::Graph) -> DeviceResult<()> {
        graph.inner.launch().map_err(api("cuGraphLaunch"))
    }

    fn time_events(&self, body: &mut dyn FnMut() -> DeviceResult<()>) -> DeviceResult<f64> {
        let value = self.gate.next.get().wrapping_add(1);
        self.gate.next.set(value);
        self.ctx.bind_to_thread().map_err(api("cuCtxSetCurrent"))?;
        // SAFETY: the gate's device address stays mapped for the device's lifetime.
        unsafe {
            cudarc::driver::sys::cuStreamWaitValue32_v2(
                self.stream.cu_stream(),
                self.gate.device,
                value,
                cudarc::driver::sys::CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_GEQ as u32,
            )
        }
        .result()
        .map_err(api("cuStreamWaitValue32"))?;
        let (start, stop) = &self.events;
        // A call in the body that waits on the stream (a library routine that synchronises)
        // would wait for the closed gate forever: a watchdog opens it after WATCHDOG and the
        // region is reported as failed instead of hanging the run.
        let fired = std::sync::atomic::AtomicBool::new(false);
        let host = self.gate.host as usize;
        let enqueued = std::thread::scope(|scope| {
            let (done, wait) = std::sync::mpsc::channel::<()>();
            let fired = &fired;
            scope.spawn(move || {
                if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(WATCHDOG) {
                    fired.store(true, std::sync::atomic::Ordering::SeqCst);
                    // SAFETY: the gate's pinned word outlives this scope; a volatile store.
                    unsafe { (host as *mut u32).write_volatile(value) };
                }
            });
            self.gated.set(true);
            let enqueued = start
                .record(&self.stream)
                .map_err(api("cuEventRecord"))
                .and_then(|_| body())
                .and_then(|_| stop.record(&self.stream).map_err(api("cuEventRecord")));
            self.gated.set(false);
            // Open the gate whatever happened, so the stream never waits forever.
            // SAFETY: pinned host memory the device reads; a volatile store after a fence.
            unsafe {
                std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
                self.gate.host.write_volatile(value);
            }
            let _ = done.send(());
            enqueued
        });
        if fired.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(DeviceError::Api {
                backend: Backend::Cuda,
                call: "time_events",
                detail: format!("the timed body did not finish enqueueing within {WATCHDOG:?} (a call in it waited on the stream)"),
            });
        }
        enqueued?;
        stop.synchronize().map_err(api("cuEventSynchronize"))?;
        let ms = start.elapsed_ms(stop).map_err(api("cuEventElapsedTime"))?;
        Ok(ms as f64 * 1e-3)
    }

    fn alloc_host(&self, bytes: usize) -> DeviceResult<HostBuffer> {
        self.ctx.bind_to_thread().map_err(api("cuCtxSetCurrent"))?;
        // SAFETY: page-locked memory, freed by the release closure with the context current.
        unsafe {
            let ptr = cudarc::driver::result::malloc_host(bytes.max(1), 0).map_err(|e| {
                if e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                    DeviceError::OutOfMemory { bytes, detail: format!("pinned host memory: {e}") }
                } else {
                    api("cuMemHostAlloc")(e)
                }
            })? as *mut u8;
            let ctx = self.ctx.clone();
            let release = move || {
                let _ = ctx.bind_to_thread();
                let _ = cudarc::driver::result::free_host(ptr as *mut _);
            };
            Ok(HostBuffer::from_raw(ptr, bytes, true, Some(Box::new(release))))
        }
    }

    fn upload_async(&self, dst: &mut Buffer, src: &HostBuffer, bytes: usize) -> DeviceResult<()> {
        if bytes > src.len() || bytes > dst.bytes {
            return Err(DeviceError::Unsupported(format!("upload of {bytes} bytes: host {} / device {} bytes", src.len(), dst.bytes)));
        }
        let ptr = self.device_ptr(dst)?;
        // SAFETY: sizes checked above; the caller keeps `src` alive and untouched until the next sync.
        unsafe { cudarc::driver::result::memcpy_htod_async(ptr, &src.as_slice()[..bytes], self.stream.cu_stream()) }
            .map_err(api("cuMemcpyHtoDAsync"))
    }

    fn download_async(&self, src: &Buffer, dst: &mut HostBuffer, bytes: usize) -> DeviceResult<()> {
        if bytes > dst.len() || bytes > src.bytes {
            return Err(DeviceError::Unsupported(format!("download of {bytes} bytes: device {} / host {} bytes", src.bytes, dst.len())));
        }
        let ptr = self.device_ptr(src)?;
        // SAFETY: sizes checked above; the caller reads `dst` only after the next sync.
        unsafe { cudarc::driver::result::memcpy_dtoh_async(&mut dst.as_mut_slice()[..bytes], ptr, self.stream.cu_stream()) }
            .map_err(api("cuMemcpyDtoHAsync"))
    }

    fn release_pooled_memory(&self) -> DeviceResult<()> {
        if !self.ctx.has_async_alloc() {
            return Ok(());
        }
        self.synchronize()?;
        // SAFETY: plain out-parameter, then a trim of the device's current pool.
        unsafe {
            let mut pool = std::ptr::null_mut();
            cudarc::driver::sys::cuDeviceGetMemPool(&mut pool, self.ctx.cu_device()).result().map_err(api("cuDeviceGetMemPool"))?;
            cudarc::driver::sys::cuMemPoolTrimTo(pool, 0).result().map_err(api("cuMemPoolTrimTo"))
        }
    }

    fn compiled(&self) -> Vec<kernel_cache::Request> {
        self.compiled.borrow().iter().cloned().collect()
    }

    fn allocation_note(&self) -> &'static str {
        if self.ctx.has_async_alloc() {
            "cuMemAllocAsync from a pool trimmed to zero before every pass (memory comes from the driver each time), stream synchronised"
        } else {
            "cuMemAlloc"
        }
    }

    fn sparse(&self) -> DeviceResult<&dyn crate::vendor::VendorSparse> {
        match self.sparse.get_or_init(|| crate::cuda_sparse::CuSparse::open(&self.ctx, &self.stream).map_err(|e| e.to_string())) {
            Ok(s) => Ok(s),
            Err(why) => Err(DeviceError::Unavailable { backend: Backend::Cuda, reason: format!("cuSPARSE: {why}") }),
        }
    }

    fn blas(&self) -> DeviceResult<&dyn crate::vendor::VendorBlas> {
        let open = || crate::cuda_blas::CuBlas::open(&self.ctx, &self.stream, self.gated.clone()).map_err(|e| e.to_string());
        match self.blas.get_or_init(open) {
            Ok(b) => Ok(b),
            Err(why) => Err(DeviceError::Unavailable { backend: Backend::Cuda, reason: format!("cuBLAS: {why}") }),
        }
    }

    fn healthy(&self) -> bool {
        // A sticky error (illegal address, launch failure) is returned by every later call.
        self.ctx.bind_to_thread().is_ok() && self.stream.synchronize().is_ok() && self.ctx.check_err().is_ok()
    }
}
