//! cuBLAS through cudarc's binding (loaded at run time, like cuSPARSE): the level-1 calls a
//! conjugate gradient written with the vendor libraries makes. The handle is bound to the
//! device's one stream and keeps cuBLAS' default host pointer mode, so `dot` returns its result
//! to the host and waits for it, as in NVIDIA's own CG sample: the round trip a user pays; the
//! `*_to`/`*_by` calls switch to device pointer mode for one call each (scalars stay on the
//! device, as in NVIDIA's CUDA-graph CG sample, the expert's version). Its
//! math mode is set to the default, so FP32 GEMMs do not use TF32 tensor cores. Its workspace is
//! a buffer of ours ([`WORKSPACE_BYTES`], cuBLAS' recommendation for Hopper), so the device
//! memory the library holds is known and a method can count it.

use std::cell::Cell;
use std::ffi::c_int;
use std::rc::Rc;
use std::sync::Arc;

use cudarc::cublas::sys as bl;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};

use crate::vendor::{BatchedGemm, VendorBlas};
use crate::{Backend, Buffer, BufferMem, DeviceError, DeviceResult, Precision};

fn status(call: &'static str, s: bl::cublasStatus_t) -> DeviceResult<()> {
    s.result().map_err(|e| DeviceError::Api { backend: Backend::Cuda, call, detail: format!("{:?}", e.0) })
}

/// The cuBLAS workspace we give the handle (cublasSetWorkspace): 32 MiB, the size the cuBLAS
/// documentation recommends for Hopper.
pub const WORKSPACE_BYTES: usize = 32 << 20;

pub(crate) struct CuBlas {
    handle: bl::cublasHandle_t,
    /// Freed after the handle is destroyed (Drop runs before the fields are dropped).
    workspace: CudaSlice<u8>,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    version: i32,
    /// The device's "inside a timed region" flag: `dot` waits on the stream and is refused there.
    gated: Rc<Cell<bool>>,
}

impl CuBlas {
    pub(crate) fn open(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>, gated: Rc<Cell<bool>>) -> DeviceResult<Self> {
        // SAFETY: a probe of the shared library (cudarc's loader panics when it finds none).
        if !unsafe { bl::is_culib_present() } {
            return Err(DeviceError::Unavailable {
                backend: Backend::Cuda,
                reason: "libcublas was not found (scripts/gpu-env.sh puts the CUDA toolkit's or pip's lib folder on LD_LIBRARY_PATH)"
                    .into(),
            });
        }
        ctx.bind_to_thread().map_err(|e| DeviceError::Api { backend: Backend::Cuda, call: "cuCtxSetCurrent", detail: e.to_string() })?;
        let handle = cudarc::cublas::result::create_handle().map_err(|e| DeviceError::Api {
            backend: Backend::Cuda,
            call: "cublasCreate",
            detail: format!("{:?}", e.0),
        })?;
        let mut version = 0;
        let workspace = stream.alloc_zeros::<u8>(WORKSPACE_BYTES).map_err(|e| DeviceError::Api {
            backend: Backend::Cuda,
            call: "cuMemAlloc (cuBLAS workspace)",
            detail: e.to_string(),
        })?;
        // SAFETY: a live handle and the device's own stream (both held here, the stream outlives
        // it); the workspace is held as long as the handle.
        unsafe {
            let (ws, _sync) = workspace.device_ptr(stream);
            status("cublasSetWorkspace", bl::cublasSetWorkspace_v2(handle, ws as *mut std::ffi::c_void, WORKSPACE_BYTES))?;
            status("cublasSetStream", bl::cublasSetStream_v2(handle, stream.cu_stream() as bl::cudaStream_t))?;
            status("cublasSetPointerMode", bl::cublasSetPointerMode_v2(handle, bl::cublasPointerMode_t::CUBLAS_POINTER_MODE_HOST))?;
            status("cublasSetMathMode", bl::cublasSetMathMode(handle, bl::cublasMath_t::CUBLAS_DEFAULT_MATH))?;
            status("cublasGetVersion", bl::cublasGetVersion_v2(handle, &mut version))?;
        }
        Ok(Self { handle, workspace, ctx: ctx.clone(), stream: stream.clone(), version, gated })
    }

    /// The device address of `buf`, which must hold `n` values of `precision`.
    fn ptr(&self, buf: &Buffer, n: usize, precision: Precision) -> DeviceResult<u64> {
        let need = n * precision.bytes();
        if buf.bytes() < need {
            return Err(DeviceError::Unsupported(format!(
                "cuBLAS call over {n} values: the buffer holds {} bytes, not {need}",
                buf.bytes()
            )));
        }
        match &buf.mem {
            BufferMem::Cuda(s) => Ok(s.device_ptr(&self.stream).0),
            _ => Err(DeviceError::ForeignBuffer),
        }
    }

    fn n(n: usize) -> DeviceResult<c_int> {
        c_int::try_from(n).map_err(|_| DeviceError::Unsupported(format!("cuBLAS takes a 32-bit length; {n} does not fit")))
    }
}

impl CuBlas {
    /// Runs `call` with the handle in device pointer mode (scalars read and written on the
    /// device), then puts the default host mode back.
    fn on_device_scalars(&self, call: impl FnOnce() -> DeviceResult<()>) -> DeviceResult<()> {
        // SAFETY: a live handle; the mode is host state of the handle, read at each call.
        unsafe {
            status("cublasSetPointerMode", bl::cublasSetPointerMode_v2(self.handle, bl::cublasPointerMode_t::CUBLAS_POINTER_MODE_DEVICE))?;
        }
        let result = call();
        // SAFETY: as above.
        unsafe {
            status("cublasSetPointerMode", bl::cublasSetPointerMode_v2(self.handle, bl::cublasPointerMode_t::CUBLAS_POINTER_MODE_HOST))?;
        }
        result
    }

    /// The device address of scalar `at` of `buf`.
    fn scalar(&self, buf: &Buffer, at: usize, precision: Precision) -> DeviceResult<u64> {
        Ok(self.ptr(buf, at + 1, precision)? + (at * precision.bytes()) as u64)
    }
}

impl VendorBlas for CuBlas {
    fn library(&self) -> String {
        let v = self.version;
        format!("cuBLAS {}.{}.{}", v / 10000, v % 10000 / 100, v % 100)
    }

    fn workspace_bytes(&self) -> usize {
        self.workspace.len()
    }

    fn dot(&self, precision: Precision, n: usize, x: &Buffer, y: &Buffer) -> DeviceResult<f64> {
        if self.gated.get() {
            return Err(DeviceError::Api {
                backend: Backend::Cuda,
                call: "cublasDot",
                detail: "a dot product to host memory inside a gated timed region (it waits on the stream): use time_events_open".into(),
            });
        }
        let (px, py, len) = (self.ptr(x, n, precision)?, self.ptr(y, n, precision)?, Self::n(n)?);
        // SAFETY: both buffers hold n values of this precision; the result is host memory.
        unsafe {
            match precision {
                Precision::F64 => {
                    let mut r = 0f64;
                    status("cublasDdot", bl::cublasDdot_v2(self.handle, len, px as *const f64, 1, py as *const f64, 1, &mut r))?;
                    Ok(r)
                }
                Precision::F32 => {
                    let mut r = 0f32;
                    status("cublasSdot", bl::cublasSdot_v2(self.handle, len, px as *const f32, 1, py as *const f32, 1, &mut r))?;
                    Ok(r as f64)
                }
            }
        }
    }

    fn axpy(&self, precision: Precision, n: usize, alpha: f64, x: &Buffer, y: &Buffer) -> DeviceResult<()> {
        let (px, py, len) = (self.ptr(x, n, precision)?, self.ptr(y, n, precision)?, Self::n(n)?);
        // SAFETY: both buffers hold n values of this precision; alpha is read from the host.
        unsafe {
            match precision {
                Precision::F64 => {
                    status("cublasDaxpy", bl::cublasDaxpy_v2(self.handle, len, &alpha, px as *const f64, 1, py as *mut f64, 1))
                }
                Precision::F32 => {
                    let a = alpha as f32;
                    status("cublasSaxpy", bl::cublasSaxpy_v2(self.handle, len, &a, px as *const f32, 1, py as *mut f32, 1))
                }
            }
        }
    }

    fn scal(&self, precision: Precision, n: usize, alpha: f64, x: &Buffer) -> DeviceResult<()> {
        let (px, len) = (self.ptr(x, n, precision)?, Self::n(n)?);
        // SAFETY: the buffer holds n values of this precision; alpha is read from the host.
        unsafe {
            match precision {
                Precision::F64 => status("cublasDscal", bl::cublasDscal_v2(self.handle, len, &alpha, px as *mut f64, 1)),
                Precision::F32 => {
                    let a = alpha as f32;
                    status("cublasSscal", bl::cublasSscal_v2(self.handle, len, &a, px as *mut f32, 1))
                }
            }
        }
    }

    fn gemm_tn_batched(&self, g: &BatchedGemm, a: &Buffer, b: &Buffer, c: &Buffer) -> DeviceResult<()> {
        let (precision, batch) = (g.precision, g.batch);
        let (kn, nn) = (g.k * g.n, g.n * g.n);
        let (pa, pb, pc) = (self.ptr(a, kn * batch, precision)?, self.ptr(b, kn * batch, precision)?, self.ptr(c, nn * batch, precision)?);
        let (ki, ni, bi) = (Self::n(g.k)?, Self::n(g.n)?, Self::n(batch)?);
        let (t, no) = (bl::cublasOperation_t::CUBLAS_OP_T, bl::cublasOperation_t::CUBLAS_OP_N);
        let (sk, sn) = (kn as i64, nn as i64);
        let beta = if g.accumulate { 1.0 } else { 0.0 };
        if g.tf32 {
            if precision != Precision::F32 {
                return Err(DeviceError::Unsupported("TF32 GEMMs take f32 inputs".into()));
            }
            let (one, beta) = (1f32, beta as f32);
            let (one, beta) = (&one as *const f32 as *const std::ffi::c_void, &beta as *const f32 as *const std::ffi::c_void);
            let r32 = bl::cudaDataType::CUDA_R_32F;
            let (a, b, c) = (pa as *const std::ffi::c_void, pb as *const std::ffi::c_void, pc as *mut std::ffi::c_void);
            let compute = bl::cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32;
            // SAFETY: the three buffers hold `batch` matrices of these shapes (checked above);
            // alpha and beta are host f32 (the handle's host pointer mode).
            let s = unsafe {
                bl::cublasGemmStridedBatchedEx(
                    self.handle,
                    t,
                    no,
                    ni,
                    ni,
                    ki,
                    one,
                    a,
                    r32,
                    ki,
                    sk,
                    b,
                    r32,
                    ki,
                    sk,
                    beta,
                    c,
                    r32,
                    ni,
                    sn,
                    bi,
                    compute,
                    bl::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                )
            };
            return status("cublasGemmStridedBatchedEx", s);
        }
        // One call per precision, the same arguments: A^T (op T, k x n, lda k) times B (k x n, ldb k)
        // into C (n x n, ldc n), alpha 1 and beta read from the host.
        macro_rules! gemm {
            ($call:ident, $t:ty) => {{
                let (one, beta): ($t, $t) = (1.0, beta as $t);
                let (a, b, c) = (pa as *const $t, pb as *const $t, pc as *mut $t);
                // SAFETY: the three buffers hold `batch` matrices of these shapes (checked above).
                let s = unsafe { bl::$call(self.handle, t, no, ni, ni, ki, &one, a, ki, sk, b, ki, sk, &beta, c, ni, sn, bi) };
                status(stringify!($call), s)
            }};
        }
        match precision {
            Precision::F64 => gemm!(cublasDgemmStridedBatched, f64),
            Precision::F32 => gemm!(cublasSgemmStridedBatched, f32),
        }
    }

    fn dot_to(&self, precision: Precision, n: usize, x: &Buffer, y: &Buffer, out: &Buffer, at: usize) -> DeviceResult<()> {
        let (px, py, len) = (self.ptr(x, n, precision)?, self.ptr(y, n, precision)?, Self::n(n)?);
        let po = self.scalar(out, at, precision)?;
        // SAFETY: both vectors hold n values, `out` holds scalar `at`; device pointer mode.
        self.on_device_scalars(|| unsafe {
            match precision {
                Precision::F64 => {
                    status("cublasDdot", bl::cublasDdot_v2(self.handle, len, px as *const f64, 1, py as *const f64, 1, po as *mut f64))
                }
                Precision::F32 => {
                    status("cublasSdot", bl::cublasSdot_v2(self.handle, len, px as *const f32, 1, py as *const f32, 1, po as *mut f32))
                }
            }
        })
    }

    fn axpy_by(&self, precision: Precision, n: usize, alpha: &Buffer, at: usize, x: &Buffer, y: &Buffer) -> DeviceResult<()> {
        let (px, py, len) = (self.ptr(x, n, precision)?, self.ptr(y, n, precision)?, Self::n(n)?);
        let pa = self.scalar(alpha, at, precision)?;
        // SAFETY: both vectors hold n values, `alpha` holds scalar `at`; device pointer mode.
        self.on_device_scalars(|| unsafe {
            match precision {
                Precision::F64 => {
                    status("cublasDaxpy", bl::cublasDaxpy_v2(self.handle, len, pa as *const f64, px as *const f64, 1, py as *mut f64, 1))
                }
                Precision::F32 => {
                    status("cublasSaxpy", bl::cublasSaxpy_v2(self.handle, len, pa as *const f32, px as *const f32, 1, py as *mut f32, 1))
                }
            }
        })
    }

    fn scal_by(&self, precision: Precision, n: usize, alpha: &Buffer, at: usize, x: &Buffer) -> DeviceResult<()> {
        let (px, len) = (self.ptr(x, n, precision)?, Self::n(n)?);
        let pa = self.scalar(alpha, at, precision)?;
        // SAFETY: the vector holds n values, `alpha` holds scalar `at`; device pointer mode.
        self.on_device_scalars(|| unsafe {
            match precision {
                Precision::F64 => status("cublasDscal", bl::cublasDscal_v2(self.handle, len, pa as *const f64, px as *mut f64, 1)),
                Precision::F32 => status("cublasSscal", bl::cublasSscal_v2(self.handle, len, pa as *const f32, px as *mut f32, 1)),
            }
        })
    }

    fn copy(&self, precision: Precision, n: usize, x: &Buffer, y: &Buffer) -> DeviceResult<()> {
        let (px, py, len) = (self.ptr(x, n, precision)?, self.ptr(y, n, precision)?, Self::n(n)?);
        // SAFETY: both buffers hold n values of this precision.
        unsafe {
            match precision {
                Precision::F64 => status("cublasDcopy", bl::cublasDcopy_v2(self.handle, len, px as *const f64, 1, py as *mut f64, 1)),
                Precision::F32 => status("cublasScopy", bl::cublasScopy_v2(self.handle, len, px as *const f32, 1, py as *mut f32, 1)),
            }
        }
    }
}

impl Drop for CuBlas {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // SAFETY: the handle was made in open() and is destroyed once.
        unsafe {
            let _ = cudarc::cublas::result::destroy_handle(self.handle);
        }
    }
}
