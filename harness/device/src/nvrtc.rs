//! NVRTC: kernel files compiled to PTX (CI's check, no GPU needed) and to CUBINs for a device's
//! real architecture (what a CUDA device loads), with the disk cache of the CUBINs.

use cudarc::nvrtc::{CompileError, CompileOptions, Ptx};

use crate::api::{Backend, DeviceError, DeviceResult};
use crate::kernel_cache;
use crate::kernels::{translation_unit, Defines, KernelSource};

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

/// Compiles a kernel file to PTX for a given virtual architecture without touching a GPU (CI uses
/// this to prove every kernel compiles for CUDA).
pub fn compile_ptx(source: &KernelSource, defines: &Defines, arch: &'static str) -> DeviceResult<String> {
    nvrtc_loadable()?;
    Ok(nvrtc(source, defines, arch)?.to_src())
}

/// Compiles a kernel file to a CUBIN for a real architecture (`sm_90`) without touching a GPU:
/// what a device loads (see [`cached_cubin`]).
pub fn compile_cubin(source: &KernelSource, defines: &Defines, sm: &str) -> DeviceResult<Vec<u8>> {
    nvrtc_loadable()?;
    nvrtc_cubin(source, defines, sm)
}

fn nvrtc_loadable() -> DeviceResult<()> {
    if nvrtc_present() {
        Ok(())
    } else {
        Err(DeviceError::Unavailable { backend: Backend::Cuda, reason: "no NVRTC library (libnvrtc.so) could be loaded".into() })
    }
}

fn nvrtc_options(source: &KernelSource, defines: &Defines, arch: &'static str) -> CompileOptions {
    CompileOptions { arch: Some(arch), options: defines.options(), name: Some(source.file.to_string()), ..Default::default() }
}

/// One NVRTC compilation, no cache.
fn nvrtc(source: &KernelSource, defines: &Defines, arch: &'static str) -> DeviceResult<Ptx> {
    cudarc::nvrtc::compile_ptx_with_opts(translation_unit(Backend::Cuda, source), nvrtc_options(source, defines, arch))
        .map_err(|e| compile_error(source, e))
}

/// The options of a CUBIN compilation: the defines, then the real architecture.
fn cubin_options(defines: &Defines, sm: &str) -> Vec<String> {
    let mut options = defines.options();
    options.push(format!("--gpu-architecture={sm}"));
    options
}

/// One NVRTC compilation to a CUBIN (machine code for `sm`), no cache. cudarc's safe API returns
/// PTX only, so this goes through its NVRTC calls.
fn nvrtc_cubin(source: &KernelSource, defines: &Defines, sm: &str) -> DeviceResult<Vec<u8>> {
    use cudarc::nvrtc::{result, sys};
    let failed = |status: String, options: Vec<String>, log: String| DeviceError::Compile {
        backend: Backend::Cuda,
        file: source.file.into(),
        options,
        status,
        log,
    };
    let unit = std::ffi::CString::new(translation_unit(Backend::Cuda, source))
        .map_err(|_| failed("the source holds a NUL byte".into(), vec![], String::new()))?;
    let name = std::ffi::CString::new(source.file).map_err(|_| failed("the file name holds a NUL byte".into(), vec![], String::new()))?;
    let prog =
        result::create_program(&unit, Some(&name)).map_err(|e| failed(format!("nvrtcCreateProgram: {e:?}"), vec![], String::new()))?;
    /// Destroys the program on every path (`unit` and `name` outlive it).
    struct Program(sys::nvrtcProgram);
    impl Drop for Program {
        fn drop(&mut self) {
            // SAFETY: made by create_program above and destroyed once, here.
            let _ = unsafe { result::destroy_program(self.0) };
        }
    }
    let prog = Program(prog);
    let options = cubin_options(defines, sm);
    // SAFETY: a live program; the calls fill buffers of the sizes NVRTC reports.
    unsafe {
        if let Err(e) = result::compile_program(prog.0, &options) {
            let log = result::get_program_log(prog.0)
                .map(|l| std::ffi::CStr::from_ptr(l.as_ptr()).to_string_lossy().into_owned())
                .unwrap_or_default();
            return Err(failed(format!("{e:?}"), options, log));
        }
        let mut size = 0usize;
        sys::nvrtcGetCUBINSize(prog.0, &mut size)
            .result()
            .map_err(|e| failed(format!("nvrtcGetCUBINSize: {e:?}"), options.clone(), String::new()))?;
        let mut cubin = vec![0u8; size];
        sys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr().cast())
            .result()
            .map_err(|e| failed(format!("nvrtcGetCUBIN: {e:?}"), options.clone(), String::new()))?;
        Ok(cubin)
    }
}

/// A CUBIN from the disk cache, or compiled by NVRTC and stored there (true when compiled now).
/// No GPU is touched, so many may run at once. Machine code, not PTX: the driver loads a CUBIN
/// as it is, while PTX is compiled again by its JIT at every module load (0.07-0.4 s a case on
/// an H200, 41 s over a whole reproduction).
pub(crate) fn cached_cubin(source: &KernelSource, defines: &Defines, sm: &'static str) -> DeviceResult<(Vec<u8>, bool)> {
    let unit = translation_unit(Backend::Cuda, source);
    let version = nvrtc_version().unwrap_or_default();
    let options = cubin_options(defines, sm).join(" ");
    let key = kernel_cache::key(&[b"cuda-cubin", unit.as_bytes(), options.as_bytes(), version.as_bytes()]);
    if let Some(cubin) = kernel_cache::load(&key, "cubin") {
        return Ok((cubin, false));
    }
    let cubin = nvrtc_cubin(source, defines, sm)?;
    kernel_cache::store(&key, "cubin", &cubin);
    Ok((cubin, true))
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
