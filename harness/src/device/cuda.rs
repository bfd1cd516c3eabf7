//! CUDA backend: cudarc's driver API with dynamic loading, kernels compiled at run time by NVRTC.

use std::sync::Arc;

use cudarc::driver::{
    sys::{CUdevice_attribute as Attr, CUevent_flags},
    CudaContext, CudaStream, DriverError, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::{CompileError, CompileOptions};

use super::{
    Arg, Backend, Buffer, BufferMem, Device, DeviceError, DeviceInfo, DeviceResult, Kernel, KernelInner, Launch, Module, ModuleInner,
};
use crate::kernels::{translation_unit, Defines, KernelSource};

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

/// Is libnvrtc loadable?
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// NVRTC's version, e.g. "13.0", if the library loads.
pub fn nvrtc_version() -> Option<String> {
    if !nvrtc_present() {
        return None;
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: plain out-parameters.
    let rc = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    (rc == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS).then(|| format!("{major}.{minor}"))
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

/// Compiles a kernel file to PTX for a given virtual architecture without touching a GPU (CI uses
/// this to prove every kernel compiles for CUDA).
pub fn compile_ptx(source: &KernelSource, defines: &Defines, arch: &'static str) -> DeviceResult<String> {
    if !nvrtc_present() {
        return Err(DeviceError::Unavailable { backend: Backend::Cuda, reason: "no NVRTC library (libnvrtc.so) could be loaded".into() });
    }
    let opts = CompileOptions { arch: Some(arch), options: defines.options(), name: Some(source.file.to_string()), ..Default::default() };
    let ptx = cudarc::nvrtc::compile_ptx_with_opts(translation_unit(Backend::Cuda, source), opts).map_err(|e| compile_error(source, e))?;
    Ok(ptx.to_src())
}

fn compile_error(source: &KernelSource, e: CompileError) -> DeviceError {
    match e {
        CompileError::CompileError { nvrtc, options, log } => DeviceError::Compile {
            backend: Backend::Cuda,
            file: source.file.into(),
            options,
            status: format!("{nvrtc:?}"),
            log: log.to_string_lossy().into_owned(),
        },
        other => DeviceError::Compile {
            backend: Backend::Cuda,
            file: source.file.into(),
            options: vec![],
            status: format!("{other:?}"),
            log: String::new(),
        },
    }
}

pub struct CudaDevice {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    info: DeviceInfo,
    /// NVRTC target, e.g. "compute_90", so the driver JIT-compiles for exactly this GPU.
    arch: &'static str,
}

impl CudaDevice {
    pub fn open(index: usize) -> DeviceResult<Self> {
        let count = device_count()?;
        if index >= count {
            return Err(DeviceError::NoSuchDevice { backend: Backend::Cuda, index, count });
        }
        let ctx = CudaContext::new(index).map_err(api("cuCtxCreate"))?;
        // One stream, ordered by us: cudarc's per-buffer event tracking would add events to every
        // launch, which we do not want inside timed regions.
        // SAFETY: we use a single stream and synchronise it explicitly.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().map_err(api("cuStreamCreate"))?;
        let info = query_info(&ctx, index)?;
        let cc = info.compute_capability.clone().unwrap_or_default().replace('.', "");
        // NVRTC wants a 'static str; the set of architectures is small, so leaking one is fine.
        let arch: &'static str = Box::leak(format!("compute_{cc}").into_boxed_str());
        Ok(Self { ctx, stream, info, arch })
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
        let BufferMem::Cuda(s) = &mut dst.mem else { return Err(DeviceError::ForeignBuffer) };
        let mut view = s.slice_mut(0..data.len());
        self.stream.memcpy_htod(data, &mut view).map_err(api("cuMemcpyHtoD"))?;
        self.stream.synchronize().map_err(api("cuStreamSynchronize"))
    }

    fn download(&self, src: &Buffer, out: &mut [u8]) -> DeviceResult<()> {
        let s = self.slice(src)?;
        let view = s.slice(0..out.len());
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
        let opts =
            CompileOptions { arch: Some(self.arch), options: defines.options(), name: Some(source.file.to_string()), ..Default::default() };
        let ptx =
            cudarc::nvrtc::compile_ptx_with_opts(translation_unit(Backend::Cuda, source), opts).map_err(|e| compile_error(source, e))?;
        let module = self.ctx.load_module(ptx).map_err(api("cuModuleLoadData"))?;
        Ok(Module { file: source.file, inner: ModuleInner::Cuda(module) })
    }

    fn kernel(&self, module: &Module, name: &str) -> DeviceResult<Kernel> {
        let ModuleInner::Cuda(m) = &module.inner else { return Err(DeviceError::ForeignBuffer) };
        let f = m.load_function(name).map_err(|e| DeviceError::Api {
            backend: Backend::Cuda,
            call: "cuModuleGetFunction",
            detail: format!("{name} in {}: {e}", module.file),
        })?;
        Ok(Kernel { name: name.into(), inner: KernelInner::Cuda(f) })
    }

    fn launch(&self, kernel: &Kernel, launch: Launch, args: &[Arg]) -> DeviceResult<()> {
        let KernelInner::Cuda(f) = &kernel.inner else { return Err(DeviceError::ForeignBuffer) };
        let mut builder = self.stream.launch_builder(f);
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
        // SAFETY: argument count and types follow the kernel signatures in kernels/; buffers are
        // sized by the host code that launches them.
        unsafe { builder.launch(cfg) }.map_err(|e| DeviceError::Api {
            backend: Backend::Cuda,
            call: "cuLaunchKernel",
            detail: format!("{}: {e}", kernel.name),
        })?;
        Ok(())
    }

    fn synchronize(&self) -> DeviceResult<()> {
        self.stream.synchronize().map_err(api("cuStreamSynchronize"))
    }

    fn time_events(&self, body: &mut dyn FnMut() -> DeviceResult<()>) -> DeviceResult<f64> {
        let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
        let start = self.stream.record_event(flags).map_err(api("cuEventRecord"))?;
        body()?;
        let stop = self.stream.record_event(flags).map_err(api("cuEventRecord"))?;
        stop.synchronize().map_err(api("cuEventSynchronize"))?;
        let ms = start.elapsed_ms(&stop).map_err(api("cuEventElapsedTime"))?;
        Ok(ms as f64 * 1e-3)
    }
}
