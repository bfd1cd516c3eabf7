//! OpenCL backend (opencl3, loader opened at run time): NVIDIA's OpenCL, PoCL on the CPU, or any
//! other platform. Devices of all platforms are numbered in one list.

use std::cell::RefCell;
use std::ptr;

use crate::kernel_cache;
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{Device as ClDevice, CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_GPU};
use opencl3::error_codes::ClError;
use opencl3::event::Event;
use opencl3::kernel::Kernel as ClKernel;
use opencl3::memory::{Buffer as ClBuffer, ClMem, CL_MAP_READ, CL_MAP_WRITE, CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::{cl_device_id, cl_event, CL_BLOCKING, CL_NON_BLOCKING};

use crate::api::{
    Arg, Backend, Buffer, BufferMem, Device, DeviceError, DeviceInfo, DeviceResult, HostBuffer, Kernel, KernelInner, Launch, Module,
    ModuleInner,
};
use crate::kernels::{translation_unit, Defines, KernelSource};

fn api(call: &'static str) -> impl FnOnce(ClError) -> DeviceError {
    move |e| DeviceError::Api { backend: Backend::OpenCl, call, detail: e.to_string() }
}

/// (platform name, platform version, device id) for every device of every platform, GPUs first:
/// machines often have PoCL beside a GPU driver, and `--device 0` should mean the GPU.
fn all_devices() -> DeviceResult<Vec<(String, String, cl_device_id)>> {
    if !cl3::is_opencl_runtime_available() {
        return Err(DeviceError::Unavailable {
            backend: Backend::OpenCl,
            reason: "no OpenCL loader (libOpenCL.so.1) could be loaded".into(),
        });
    }
    let platforms = opencl3::platform::get_platforms().map_err(|e| DeviceError::Unavailable {
        backend: Backend::OpenCl,
        reason: format!("clGetPlatformIDs: {e} (is an ICD installed? OCL_ICD_VENDORS may point at a folder of .icd files)"),
    })?;
    let mut out = Vec::new();
    for p in platforms {
        let name = p.name().unwrap_or_default();
        let version = p.version().unwrap_or_default();
        // A platform with no devices answers CL_DEVICE_NOT_FOUND; that is not an error here.
        for id in p.get_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default() {
            out.push((name.clone(), version.clone(), id));
        }
    }
    out.sort_by_key(|(_, _, id)| {
        let ty = ClDevice::new(*id).dev_type().unwrap_or(0);
        if ty & CL_DEVICE_TYPE_GPU != 0 {
            0
        } else if ty & CL_DEVICE_TYPE_ACCELERATOR != 0 {
            1
        } else {
            2
        }
    });
    Ok(out)
}

fn query_info(platform: &str, index: usize, dev: &ClDevice) -> DeviceResult<DeviceInfo> {
    let q = |call| api(call);
    Ok(DeviceInfo {
        backend: Some(Backend::OpenCl),
        index,
        name: dev.name().map_err(q("CL_DEVICE_NAME"))?.trim().to_string(),
        platform: platform.trim().to_string(),
        driver_version: dev.driver_version().map_err(q("CL_DRIVER_VERSION"))?,
        runtime_version: dev.version().map_err(q("CL_DEVICE_VERSION"))?,
        memory_bytes: dev.global_mem_size().map_err(q("CL_DEVICE_GLOBAL_MEM_SIZE"))?,
        compute_units: dev.max_compute_units().map_err(q("CL_DEVICE_MAX_COMPUTE_UNITS"))?,
        fp64: dev.double_fp_config().map(|c| c != 0).unwrap_or(false),
        cache_bytes: dev.global_mem_cache_size().unwrap_or(0),
        local_mem_bytes: dev.local_mem_size().unwrap_or(0),
        max_work_group: dev.max_work_group_size().unwrap_or(1),
        // NVIDIA's driver names the architecture through cl_nv_device_attribute_query.
        compute_capability: match (dev.compute_capability_major_nv(), dev.compute_capability_minor_nv()) {
            (Ok(major), Ok(minor)) => Some(format!("{major}.{minor}")),
            _ => None,
        },
        clock_mhz: dev.max_clock_frequency().unwrap_or(0),
        max_alloc_bytes: dev.max_mem_alloc_size().unwrap_or(0),
        // NVIDIA's cl_nv_device_attribute_query: bus and slot (device << 3 | function).
        pci_bus_id: match (dev.pci_bus_id_nv(), dev.pci_slot_id_nv()) {
            (Ok(bus), Ok(slot)) => Some(format!("00000000:{bus:02X}:{:02X}.{}", slot >> 3, slot & 7)),
            _ => None,
        },
        // OpenCL has no portable device UUID (the CUDA backend records NVIDIA's).
        uuid: None,
    })
}

pub fn list() -> DeviceResult<Vec<DeviceInfo>> {
    all_devices()?.into_iter().enumerate().map(|(i, (platform, _, id))| query_info(&platform, i, &ClDevice::new(id))).collect()
}

pub struct OpenClDevice {
    device: ClDevice,
    context: Context,
    queue: CommandQueue,
    info: DeviceInfo,
    /// Events of the launches and copies enqueued inside `time_events`.
    recording: RefCell<Option<Vec<Event>>>,
    /// The user event the first command of a timed region waits for.
    gate: RefCell<Option<cl_event>>,
    /// The compilations asked of this device (the run's kernels.json).
    compiled: RefCell<std::collections::BTreeSet<kernel_cache::Request>>,
}

impl OpenClDevice {
    pub fn open(index: usize) -> DeviceResult<Self> {
        let devices = all_devices()?;
        let count = devices.len();
        let Some((platform, _, id)) = devices.into_iter().nth(index) else {
            return Err(DeviceError::NoSuchDevice { backend: Backend::OpenCl, index, count });
        };
        let device = ClDevice::new(id);
        let info = query_info(&platform, index, &device)?;
        let context = Context::from_device(&device).map_err(api("clCreateContext"))?;
        // The OpenCL 1.2 entry point works on every platform; profiling gives device timestamps.
        #[allow(deprecated)]
        let queue = CommandQueue::create_default(&context, CL_QUEUE_PROFILING_ENABLE).map_err(api("clCreateCommandQueue"))?;
        Ok(Self { device, context, queue, info, recording: RefCell::new(None), gate: RefCell::new(None), compiled: Default::default() })
    }

    fn record(&self, event: Event) {
        if let Some(events) = self.recording.borrow_mut().as_mut() {
            events.push(event);
        }
    }

    /// The wait list of the next command: the gate, for the first command of a timed region
    /// (the queue is in order, so the rest follow it).
    fn wait_list(&self) -> Vec<cl_event> {
        let first = self.recording.borrow().as_ref().is_some_and(|e| e.is_empty());
        match *self.gate.borrow() {
            Some(g) if first => vec![g],
            _ => vec![],
        }
    }

    fn refuse_inside_gate(&self, call: &'static str) -> DeviceResult<()> {
        if self.gate.borrow().is_some() {
            return Err(DeviceError::Api {
                backend: Backend::OpenCl,
                call,
                detail: "a blocking call inside a timed region (it would wait on the closed gate)".into(),
            });
        }
        Ok(())
    }

    fn mem<'a>(&self, buf: &'a Buffer) -> DeviceResult<&'a ClBuffer<u8>> {
        match &buf.mem {
            BufferMem::OpenCl(b) => Ok(b),
            _ => Err(DeviceError::ForeignBuffer),
        }
    }
}

impl Device for OpenClDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn alloc(&self, bytes: usize) -> DeviceResult<Buffer> {
        // SAFETY: no host pointer; the buffer is written before it is read.
        let buf =
            unsafe { ClBuffer::<u8>::create(&self.context, CL_MEM_READ_WRITE, bytes.max(1), ptr::null_mut()) }.map_err(|e| match e.0 {
                opencl3::error_codes::CL_MEM_OBJECT_ALLOCATION_FAILURE
                | opencl3::error_codes::CL_OUT_OF_RESOURCES
                | opencl3::error_codes::CL_INVALID_BUFFER_SIZE => DeviceError::OutOfMemory { bytes, detail: e.to_string() },
                _ => api("clCreateBuffer")(e),
            })?;
        Ok(Buffer { bytes, mem: BufferMem::OpenCl(buf) })
    }

    fn upload(&self, dst: &mut Buffer, data: &[u8]) -> DeviceResult<()> {
        self.refuse_inside_gate("clEnqueueWriteBuffer")?;
        let BufferMem::OpenCl(b) = &mut dst.mem else { return Err(DeviceError::ForeignBuffer) };
        // SAFETY: blocking write from a live slice no longer than the buffer.
        unsafe { self.queue.enqueue_write_buffer(b, CL_BLOCKING, 0, data, &[]) }.map_err(api("clEnqueueWriteBuffer"))?;
        Ok(())
    }

    fn download_at(&self, src: &Buffer, offset: usize, out: &mut [u8]) -> DeviceResult<()> {
        self.refuse_inside_gate("clEnqueueReadBuffer")?;
        src.check_range(offset, out.len())?;
        let b = self.mem(src)?;
        // SAFETY: blocking read into a live slice, inside the buffer (checked above).
        unsafe { self.queue.enqueue_read_buffer(b, CL_BLOCKING, offset, out, &[]) }.map_err(api("clEnqueueReadBuffer"))?;
        Ok(())
    }

    fn copy(&self, dst: &mut Buffer, src: &Buffer, bytes: usize) -> DeviceResult<()> {
        let s = self.mem(src)?;
        let BufferMem::OpenCl(d) = &mut dst.mem else { return Err(DeviceError::ForeignBuffer) };
        // SAFETY: both buffers hold at least `bytes` bytes (checked by the caller's sizes).
        let ev = unsafe { self.queue.enqueue_copy_buffer(s, d, 0, 0, bytes, &self.wait_list()) }.map_err(api("clEnqueueCopyBuffer"))?;
        self.record(ev);
        Ok(())
    }

    fn compile(&self, source: &KernelSource, defines: &Defines) -> DeviceResult<Module> {
        self.compiled.borrow_mut().insert(kernel_cache::Request {
            backend: Backend::OpenCl,
            device: self.info.name.clone(),
            file: source.file.into(),
            defines: defines.0.clone(),
        });
        let (program, _) = cached_program(&self.context, &self.device, &self.info, source, defines)?;
        Ok(Module::new(source, defines, Backend::OpenCl, ModuleInner::OpenCl(program)))
    }

    fn precompile(&self, jobs: &[(KernelSource, Defines)]) -> Vec<DeviceResult<bool>> {
        use rayon::prelude::*;
        let (device, info) = (&self.device, &self.info);
        let build = |context: &Result<Context, i32>, (source, defines): &(KernelSource, Defines)| match context {
            Ok(c) => cached_program(c, device, info, source, defines).map(|(_, compiled)| compiled),
            Err(code) => Err(api("clCreateContext")(ClError(*code))),
        };
        // NVIDIA's OpenCL compiler segfaults on a program without a kernel (H200, driver 580):
        // the precompile crashes came from stale list entries, which `precompile` now skips.
        // NVIDIA still builds one program at a time (parallel builds not re-tried since); other
        // drivers (PoCL) build on every core, each worker in a context of its own. The binaries
        // go to the disk cache, which every context of the device reads.
        if !compiles_in_parallel(&info.platform) {
            let context = Context::from_device(device).map_err(|e| e.0);
            return jobs.iter().map(|job| build(&context, job)).collect();
        }
        jobs.par_iter().map_init(|| Context::from_device(device).map_err(|e| e.0), |c, job| build(c, job)).collect()
    }

    fn kernel(&self, module: &Module, name: &str) -> DeviceResult<Kernel> {
        let ModuleInner::OpenCl(p) = &module.inner else { return Err(DeviceError::ForeignBuffer) };
        let k = ClKernel::create(p, name).map_err(|e| DeviceError::Api {
            backend: Backend::OpenCl,
            call: "clCreateKernel",
            detail: format!("{name} in {}: {e}", module.file),
        })?;
        Ok(Kernel {
            name: name.into(),
            args_of: name.into(),
            inner: KernelInner::OpenCl(k),
            signature: module.signature(name)?,
            real: module.real,
        })
    }

    fn launch(&self, kernel: &Kernel, launch: Launch, args: &[Arg]) -> DeviceResult<()> {
        let KernelInner::OpenCl(k) = &kernel.inner else { return Err(DeviceError::ForeignBuffer) };
        kernel.check(args)?;
        let bad = |e: ClError| DeviceError::BadArgument { kernel: kernel.name.clone(), detail: e.to_string() };
        for (i, arg) in args.iter().enumerate() {
            let i = i as u32;
            // SAFETY: each value is passed by reference with its exact size; cl_mem handles are
            // owned by live buffers.
            unsafe {
                match arg {
                    Arg::Buf(b) => k.set_arg(i, &self.mem(b)?.get()),
                    Arg::U32(v) => k.set_arg(i, v),
                    Arg::I32(v) => k.set_arg(i, v),
                    Arg::I64(v) => k.set_arg(i, v),
                    Arg::F32(v) => k.set_arg(i, v),
                    Arg::F64(v) => k.set_arg(i, v),
                }
            }
            .map_err(bad)?;
        }
        let global = launch.groups * launch.group_size;
        let local = launch.group_size;
        // SAFETY: one-dimensional sizes that live across the call.
        let ev =
            unsafe { self.queue.enqueue_nd_range_kernel(k.get(), 1, ptr::null(), &global, &local, &self.wait_list()) }.map_err(|e| {
                DeviceError::Api { backend: Backend::OpenCl, call: "clEnqueueNDRangeKernel", detail: format!("{}: {e}", kernel.name) }
            })?;
        self.record(ev);
        Ok(())
    }

    fn synchronize(&self) -> DeviceResult<()> {
        self.refuse_inside_gate("clFinish")?;
        self.queue.finish().map_err(api("clFinish"))
    }

    /// The region spans from the START of its first command to the END of its last (profiling
    /// timestamps, nanoseconds). The first command waits on a user event that is completed only
    /// after the whole body is enqueued, so no host time is counted (see measure.rs).
    fn time_events(&self, body: &mut dyn FnMut() -> DeviceResult<()>) -> DeviceResult<f64> {
        let gate = cl3::event::create_user_event(self.context.get()).map_err(|e| api("clCreateUserEvent")(ClError(e)))?;
        *self.gate.borrow_mut() = Some(gate);
        *self.recording.borrow_mut() = Some(Vec::new());
        let result = body();
        let events = self.recording.borrow_mut().take().unwrap_or_default();
        *self.gate.borrow_mut() = None;
        let flushed = self.queue.flush().map_err(api("clFlush"));
        // Open the gate whatever happened, so the queue never waits forever.
        let opened = cl3::event::set_user_event_status(gate, cl3::event::CL_COMPLETE).map_err(|e| api("clSetUserEventStatus")(ClError(e)));
        // SAFETY: the user event was created above and is released once; commands that wait on
        // it hold their own reference.
        let _ = unsafe { cl3::event::release_event(gate) };
        result?;
        flushed?;
        opened?;
        self.synchronize()?;
        let (Some(first), Some(last)) = (events.first(), events.last()) else {
            return Err(DeviceError::Unsupported("timed region enqueued no command".into()));
        };
        let start = first.profiling_command_start().map_err(api("CL_PROFILING_COMMAND_START"))?;
        let end = last.profiling_command_end().map_err(api("CL_PROFILING_COMMAND_END"))?;
        Ok(end.saturating_sub(start) as f64 * 1e-9)
    }

    fn alloc_host(&self, bytes: usize) -> DeviceResult<HostBuffer> {
        let size = bytes.max(1);
        // SAFETY: no host pointer given; the driver allocates (page-locked on NVIDIA).
        let buf = unsafe { ClBuffer::<u8>::create(&self.context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, size, ptr::null_mut()) }
            .map_err(|e| DeviceError::OutOfMemory { bytes, detail: format!("host-visible buffer: {e}") })?;
        let mut mapped: opencl3::types::cl_mem = ptr::null_mut();
        // SAFETY: a blocking map of the whole buffer; the pointer stays valid until unmapped.
        let ev = unsafe { self.queue.enqueue_map_buffer(&buf, CL_BLOCKING, CL_MAP_READ | CL_MAP_WRITE, 0, size, &mut mapped, &[]) }
            .map_err(api("clEnqueueMapBuffer"))?;
        drop(ev);
        let queue = self.queue.get();
        // SAFETY: the queue handle is retained for the release closure and released there.
        unsafe { cl3::command_queue::retain_command_queue(queue) }.map_err(|e| api("clRetainCommandQueue")(ClError(e)))?;
        let ptr = mapped as *mut u8;
        let release = move || {
            // SAFETY: unmap the region mapped above on the retained queue, wait, then release.
            unsafe {
                if let Ok(ev) = cl3::command_queue::enqueue_unmap_mem_object(queue, buf.get(), mapped as *mut _, 0, ptr::null()) {
                    let _ = cl3::event::wait_for_events(&[ev]);
                    let _ = cl3::event::release_event(ev);
                }
                let _ = cl3::command_queue::release_command_queue(queue);
            }
            drop(buf);
        };
        // SAFETY: the mapped region is valid for `size` bytes until the release closure unmaps it.
        Ok(unsafe { HostBuffer::from_raw(ptr, bytes, true, Some(Box::new(release))) })
    }

    fn upload_async(&self, dst: &mut Buffer, src: &HostBuffer, bytes: usize) -> DeviceResult<()> {
        if bytes > src.len() || bytes > dst.bytes {
            return Err(DeviceError::Unsupported(format!("upload of {bytes} bytes: host {} / device {} bytes", src.len(), dst.bytes)));
        }
        let BufferMem::OpenCl(b) = &mut dst.mem else { return Err(DeviceError::ForeignBuffer) };
        let wait = self.wait_list();
        // SAFETY: non-blocking write from host memory the caller keeps until the next sync.
        let ev = unsafe { self.queue.enqueue_write_buffer(b, CL_NON_BLOCKING, 0, &src.as_slice()[..bytes], &wait) }
            .map_err(api("clEnqueueWriteBuffer"))?;
        self.record(ev);
        Ok(())
    }

    fn download_async(&self, src: &Buffer, dst: &mut HostBuffer, bytes: usize) -> DeviceResult<()> {
        if bytes > dst.len() || bytes > src.bytes {
            return Err(DeviceError::Unsupported(format!("download of {bytes} bytes: device {} / host {} bytes", src.bytes, dst.len())));
        }
        let b = self.mem(src)?;
        let wait = self.wait_list();
        // SAFETY: non-blocking read into host memory the caller reads only after the next sync.
        let ev = unsafe { self.queue.enqueue_read_buffer(b, CL_NON_BLOCKING, 0, &mut dst.as_mut_slice()[..bytes], &wait) }
            .map_err(api("clEnqueueReadBuffer"))?;
        self.record(ev);
        Ok(())
    }

    fn touch(&self, buf: &mut Buffer) -> DeviceResult<()> {
        self.upload(buf, &[0u8])
    }

    fn compiled(&self) -> Vec<kernel_cache::Request> {
        self.compiled.borrow().iter().cloned().collect()
    }

    fn allocation_note(&self) -> &'static str {
        "clCreateBuffer and a one-byte blocking write to each buffer (drivers allocate at first use)"
    }
}

/// A built program from the cached binary, or built from source and its binary stored (true
/// when compiled now). OpenCL contexts may be used from several threads at once.
fn cached_program(
    context: &Context,
    device: &ClDevice,
    i: &DeviceInfo,
    source: &KernelSource,
    defines: &Defines,
) -> DeviceResult<(Program, bool)> {
    let options = defines.options();
    let joined = options.join(" ");
    let text = translation_unit(Backend::OpenCl, source);
    let target = format!("{}|{}|{}|{}", i.platform, i.name, i.driver_version, i.runtime_version);
    let key = kernel_cache::key(&[b"opencl", text.as_bytes(), joined.as_bytes(), target.as_bytes()]);
    if let Some(binary) = kernel_cache::load(&key, "clbin") {
        // SAFETY: the program is made for this context's own device.
        let cached = unsafe { Program::create_from_binary(context, &[device.id()], &[&binary]) }
            .and_then(|mut p| p.build(&[device.id()], &joined).map(|_| p));
        if let Ok(program) = cached {
            return Ok((program, false));
        }
    }
    let mut program = Program::create_from_source(context, &text).map_err(api("clCreateProgramWithSource"))?;
    if let Err(e) = program.build(&[device.id()], &joined) {
        let log = program.get_build_log(device.id()).unwrap_or_default();
        return Err(DeviceError::Compile { backend: Backend::OpenCl, file: source.file.into(), options, status: e.to_string(), log });
    }
    if let Some(binary) = program.get_binaries().ok().and_then(|b| b.into_iter().next()) {
        kernel_cache::store(&key, "clbin", &binary);
    }
    Ok((program, true))
}

/// Whether the platform's compiler may build programs from several threads at once.
fn compiles_in_parallel(platform: &str) -> bool {
    !platform.to_ascii_lowercase().contains("nvidia")
}

#[cfg(test)]
mod tests {
    #[test]
    fn nvidia_builds_one_program_at_a_time_and_pocl_on_every_core() {
        assert!(!super::compiles_in_parallel("NVIDIA CUDA"));
        assert!(super::compiles_in_parallel("Portable Computing Language"));
    }
}
