//! cuSPARSE through cudarc's binding (loaded at run time, like the driver and NVRTC): the handle
//! is bound to the device's one stream, so that its calls queue behind our own launches and inside
//! our gated, event-timed regions. Plans allocate their workspace when made; `enqueue` only calls.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::cusparse::sys as sp;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};

use crate::vendor::{Compressed, CooArrays, Sliced, VendorOp, VendorSparse};
use crate::{Backend, Buffer, BufferMem, DeviceError, DeviceResult, Precision};

fn status(call: &'static str, s: sp::cusparseStatus_t) -> DeviceResult<()> {
    s.result().map_err(|e| DeviceError::Api { backend: Backend::Cuda, call, detail: format!("{:?}", e.0) })
}

fn as_i32(what: &str, n: usize) -> DeviceResult<i32> {
    i32::try_from(n).map_err(|_| DeviceError::Unsupported(format!("cuSPARSE takes a 32-bit {what}; {n} does not fit")))
}

pub(crate) struct CuSparse {
    handle: sp::cusparseHandle_t,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    version: i32,
}

impl CuSparse {
    pub(crate) fn open(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>) -> DeviceResult<Self> {
        // SAFETY: a probe of the shared library (cudarc's loader panics when it finds none).
        if !unsafe { sp::is_culib_present() } {
            return Err(DeviceError::Unavailable {
                backend: Backend::Cuda,
                reason: "libcusparse was not found (scripts/gpu-env.sh puts the CUDA toolkit's or pip's lib folder on LD_LIBRARY_PATH)"
                    .into(),
            });
        }
        ctx.bind_to_thread().map_err(|e| DeviceError::Api { backend: Backend::Cuda, call: "cuCtxSetCurrent", detail: e.to_string() })?;
        let handle = cudarc::cusparse::result::create().map_err(|e| DeviceError::Api {
            backend: Backend::Cuda,
            call: "cusparseCreate",
            detail: format!("{:?}", e.0),
        })?;
        let mut version = 0;
        // SAFETY: a live handle and the device's own stream (which outlives it: both held here).
        unsafe {
            status("cusparseSetStream", sp::cusparseSetStream(handle, stream.cu_stream() as sp::cudaStream_t))?;
            status("cusparseGetVersion", sp::cusparseGetVersion(handle, &mut version))?;
        }
        Ok(Self { handle, ctx: ctx.clone(), stream: stream.clone(), version })
    }

    fn ptr(&self, buf: &Buffer) -> DeviceResult<*mut c_void> {
        match &buf.mem {
            BufferMem::Cuda(s) => Ok(s.device_ptr(&self.stream).0 as *mut c_void),
            _ => Err(DeviceError::ForeignBuffer),
        }
    }

    fn workspace(&self, bytes: usize) -> DeviceResult<Option<CudaSlice<u8>>> {
        if bytes == 0 {
            return Ok(None);
        }
        // SAFETY: scratch memory the library writes before it reads.
        unsafe { self.stream.alloc::<u8>(bytes) }
            .map(Some)
            .map_err(|e| DeviceError::OutOfMemory { bytes, detail: format!("cuSPARSE workspace: {e}") })
    }

    /// y = A x planned: `make` creates A's descriptor; x and y with their lengths.
    fn spmv<'a>(
        &'a self,
        precision: Precision,
        make: impl FnOnce(*mut sp::cusparseSpMatDescr_t, sp::cudaDataType) -> sp::cusparseStatus_t,
        alg: sp::cusparseSpMVAlg_t,
        (cols, x): (usize, &'a Buffer),
        (rows, y): (usize, &'a Buffer),
    ) -> DeviceResult<Box<dyn VendorOp + 'a>> {
        let dtype = match precision {
            Precision::F32 => sp::cudaDataType::CUDA_R_32F,
            Precision::F64 => sp::cudaDataType::CUDA_R_64F,
        };
        let mut op = Spmv {
            sp: self,
            mat: std::ptr::null_mut(),
            x: std::ptr::null_mut(),
            y: std::ptr::null_mut(),
            ws: None,
            ws_bytes: 0,
            dtype,
            alg,
            scalars: Scalars { one64: 1.0, zero64: 0.0, one32: 1.0, zero32: 0.0 },
        };
        // SAFETY: descriptors over live device buffers that the returned plan borrows; each one
        // made is destroyed by the plan's Drop, also when a later call here fails.
        unsafe {
            status("cusparseCreateCsr/Bsr", make(&mut op.mat, dtype))?;
            status("cusparseCreateDnVec", sp::cusparseCreateDnVec(&mut op.x, cols as i64, self.ptr(x)?, dtype))?;
            status("cusparseCreateDnVec", sp::cusparseCreateDnVec(&mut op.y, rows as i64, self.ptr(y)?, dtype))?;
            let (alpha, beta) = op.scalars.get(dtype);
            let mut bytes = 0usize;
            status(
                "cusparseSpMV_bufferSize",
                sp::cusparseSpMV_bufferSize(
                    self.handle,
                    sp::cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE,
                    alpha,
                    op.mat,
                    op.x,
                    beta,
                    op.y,
                    dtype,
                    alg,
                    &mut bytes,
                ),
            )?;
            op.ws = self.workspace(bytes)?;
            op.ws_bytes = bytes;
            let ws = op.ws_ptr();
            status(
                "cusparseSpMV_preprocess",
                sp::cusparseSpMV_preprocess(
                    self.handle,
                    sp::cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE,
                    alpha,
                    op.mat,
                    op.x,
                    beta,
                    op.y,
                    dtype,
                    alg,
                    ws,
                ),
            )?;
        }
        // One call outside any timer: cuSPARSE loads its kernels on a routine's first use and
        // waits on the stream then (seen on an H200), which a gated timed region cannot allow.
        op.enqueue()?;
        self.stream.synchronize().map_err(|e| DeviceError::Api {
            backend: Backend::Cuda,
            call: "cuStreamSynchronize",
            detail: e.to_string(),
        })?;
        Ok(Box::new(op))
    }
}

impl Drop for CuSparse {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // SAFETY: the handle was made in open() and is destroyed once.
        unsafe {
            let _ = cudarc::cusparse::result::destroy(self.handle);
        }
    }
}

/// 1 and 0 in both precisions, kept in the plan: cuSPARSE reads alpha and beta from host memory.
struct Scalars {
    one64: f64,
    zero64: f64,
    one32: f32,
    zero32: f32,
}

impl Scalars {
    fn get(&self, dtype: sp::cudaDataType) -> (*const c_void, *const c_void) {
        if dtype == sp::cudaDataType::CUDA_R_64F {
            (&self.one64 as *const f64 as *const c_void, &self.zero64 as *const f64 as *const c_void)
        } else {
            (&self.one32 as *const f32 as *const c_void, &self.zero32 as *const f32 as *const c_void)
        }
    }
}

struct Spmv<'a> {
    sp: &'a CuSparse,
    mat: sp::cusparseSpMatDescr_t,
    x: sp::cusparseDnVecDescr_t,
    y: sp::cusparseDnVecDescr_t,
    ws: Option<CudaSlice<u8>>,
    ws_bytes: usize,
    dtype: sp::cudaDataType,
    alg: sp::cusparseSpMVAlg_t,
    scalars: Scalars,
}

impl Spmv<'_> {
    fn ws_ptr(&self) -> *mut c_void {
        self.ws.as_ref().map_or(std::ptr::null_mut(), |w| w.device_ptr(&self.sp.stream).0 as *mut c_void)
    }
}

impl VendorOp for Spmv<'_> {
    fn enqueue(&self) -> DeviceResult<()> {
        let (alpha, beta) = self.scalars.get(self.dtype);
        // SAFETY: the descriptors and the workspace were made for exactly this call.
        unsafe {
            status(
                "cusparseSpMV",
                sp::cusparseSpMV(
                    self.sp.handle,
                    sp::cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE,
                    alpha,
                    self.mat,
                    self.x,
                    beta,
                    self.y,
                    self.dtype,
                    self.alg,
                    self.ws_ptr(),
                ),
            )
        }
    }
    fn workspace_bytes(&self) -> usize {
        self.ws_bytes
    }
}

impl Drop for Spmv<'_> {
    fn drop(&mut self) {
        // SAFETY: each descriptor is destroyed once, if it was made.
        unsafe {
            if !self.mat.is_null() {
                sp::cusparseDestroySpMat(self.mat);
            }
            for v in [self.x, self.y] {
                if !v.is_null() {
                    sp::cusparseDestroyDnVec(v);
                }
            }
        }
    }
}

struct CooSort<'a> {
    sp: &'a CuSparse,
    dims: (i32, i32, i32),
    ptrs: [*mut c_void; 4],
    descr: sp::cusparseMatDescr_t,
    ws: Option<CudaSlice<u8>>,
    ws_bytes: usize,
}

impl VendorOp for CooSort<'_> {
    fn enqueue(&self) -> DeviceResult<()> {
        let (m, n, nnz) = self.dims;
        let [row, col, perm, row_ptr] = self.ptrs.map(|p| p as *mut i32);
        let ws = self.ws.as_ref().map_or(std::ptr::null_mut(), |w| w.device_ptr(&self.sp.stream).0 as *mut c_void);
        let h = self.sp.handle;
        // SAFETY: buffers of at least nnz (row, col, perm) and m + 1 (row_ptr) ints, checked when
        // the plan was made; the workspace is the larger of the two sorts' requests.
        unsafe {
            status("cusparseCreateIdentityPermutation", sp::cusparseCreateIdentityPermutation(h, nnz, perm))?;
            status("cusparseXcoosortByRow", sp::cusparseXcoosortByRow(h, m, n, nnz, row, col, perm, ws))?;
            status("cusparseXcoo2csr", sp::cusparseXcoo2csr(h, row, nnz, m, row_ptr, sp::cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO))?;
            status("cusparseXcsrsort", sp::cusparseXcsrsort(h, m, n, nnz, self.descr, row_ptr, col, perm, ws))
        }
    }
    fn workspace_bytes(&self) -> usize {
        self.ws_bytes
    }
}

impl Drop for CooSort<'_> {
    fn drop(&mut self) {
        if !self.descr.is_null() {
            // SAFETY: made once in coo_sort_to_csr.
            unsafe { sp::cusparseDestroyMatDescr(self.descr) };
        }
    }
}

fn check_len(what: &str, buf: &Buffer, bytes: usize) -> DeviceResult<()> {
    if buf.bytes < bytes {
        return Err(DeviceError::Unsupported(format!("cuSPARSE call: {what} holds {} bytes, {bytes} needed", buf.bytes)));
    }
    Ok(())
}

impl VendorSparse for CuSparse {
    fn version(&self) -> u32 {
        self.version.max(0) as u32
    }

    fn library(&self) -> String {
        let v = self.version;
        format!("cuSPARSE {}.{}.{}", v / 1000, v % 1000 / 100, v % 100)
    }

    fn csr_spmv<'a>(&'a self, a: Compressed<'a>, x: &'a Buffer, y: &'a Buffer) -> DeviceResult<Box<dyn VendorOp + 'a>> {
        let Compressed { precision, rows, cols, nnz, row_ptr, col, val } = a;
        let s = precision.bytes();
        check_len("row_ptr", row_ptr, 4 * (rows + 1))?;
        check_len("col", col, 4 * nnz)?;
        check_len("val", val, s * nnz)?;
        check_len("x", x, s * cols)?;
        check_len("y", y, s * rows)?;
        let nnz_i = as_i32("nnz", nnz)?;
        let (p_rp, p_c, p_v) = (self.ptr(row_ptr)?, self.ptr(col)?, self.ptr(val)?);
        let i32i = sp::cusparseIndexType_t::CUSPARSE_INDEX_32I;
        let make = |mat: *mut sp::cusparseSpMatDescr_t, dtype| unsafe {
            // SAFETY: see spmv().
            sp::cusparseCreateCsr(
                mat,
                rows as i64,
                cols as i64,
                nnz_i as i64,
                p_rp,
                p_c,
                p_v,
                i32i,
                i32i,
                sp::cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO,
                dtype,
            )
        };
        self.spmv(precision, make, sp::cusparseSpMVAlg_t::CUSPARSE_SPMV_CSR_ALG1, (cols, x), (rows, y))
    }

    fn bsr_spmv<'a>(&'a self, a: Compressed<'a>, block: usize, x: &'a Buffer, y: &'a Buffer) -> DeviceResult<Box<dyn VendorOp + 'a>> {
        let Compressed { precision, rows: block_rows, cols: block_cols, nnz: nnzb, row_ptr, col, val } = a;
        let s = precision.bytes();
        let (rows, cols) = (block * block_rows, block * block_cols);
        check_len("row_ptr", row_ptr, 4 * (block_rows + 1))?;
        check_len("col", col, 4 * nnzb)?;
        check_len("val", val, s * nnzb * block * block)?;
        check_len("x", x, s * cols)?;
        check_len("y", y, s * rows)?;
        as_i32("block count", nnzb)?;
        let (p_rp, p_c, p_v) = (self.ptr(row_ptr)?, self.ptr(col)?, self.ptr(val)?);
        let i32i = sp::cusparseIndexType_t::CUSPARSE_INDEX_32I;
        let make = |mat: *mut sp::cusparseSpMatDescr_t, dtype| unsafe {
            // SAFETY: see spmv().
            sp::cusparseCreateBsr(
                mat,
                block_rows as i64,
                block_cols as i64,
                nnzb as i64,
                block as i64,
                block as i64,
                p_rp,
                p_c,
                p_v,
                i32i,
                i32i,
                sp::cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO,
                dtype,
                sp::cusparseOrder_t::CUSPARSE_ORDER_ROW,
            )
        };
        self.spmv(precision, make, sp::cusparseSpMVAlg_t::CUSPARSE_SPMV_BSR_ALG1, (cols, x), (rows, y))
    }

    fn sell_spmv<'a>(&'a self, a: Sliced<'a>, x: &'a Buffer, y: &'a Buffer) -> DeviceResult<Box<dyn VendorOp + 'a>> {
        let Sliced { precision, rows, cols, nnz, slice, stored, slice_ptr, col, val } = a;
        let s = precision.bytes();
        check_len("slice_ptr", slice_ptr, 4 * (rows.div_ceil(slice) + 1))?;
        check_len("col", col, 4 * stored)?;
        check_len("val", val, s * stored)?;
        check_len("x", x, s * cols)?;
        check_len("y", y, s * rows)?;
        as_i32("stored entries", stored)?;
        let (p_sp, p_c, p_v) = (self.ptr(slice_ptr)?, self.ptr(col)?, self.ptr(val)?);
        let i32i = sp::cusparseIndexType_t::CUSPARSE_INDEX_32I;
        let make = |mat: *mut sp::cusparseSpMatDescr_t, dtype| unsafe {
            // SAFETY: see spmv().
            sp::cusparseCreateSlicedEll(
                mat,
                rows as i64,
                cols as i64,
                nnz as i64,
                stored as i64,
                slice as i64,
                p_sp,
                p_c,
                p_v,
                i32i,
                i32i,
                sp::cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO,
                dtype,
            )
        };
        self.spmv(precision, make, sp::cusparseSpMVAlg_t::CUSPARSE_SPMV_SELL_ALG1, (cols, x), (rows, y))
    }

    fn coo_sort_to_csr<'a>(&'a self, coo: CooArrays<'a>) -> DeviceResult<Box<dyn VendorOp + 'a>> {
        let CooArrays { rows, cols, pairs: nnz, row, col, perm, row_ptr } = coo;
        for (what, b) in [("row", row), ("col", col), ("perm", perm)] {
            check_len(what, b, 4 * nnz)?;
        }
        check_len("row_ptr", row_ptr, 4 * (rows + 1))?;
        let dims = (as_i32("row count", rows)?, as_i32("column count", cols)?, as_i32("nnz", nnz)?);
        let ptrs = [self.ptr(row)?, self.ptr(col)?, self.ptr(perm)?, self.ptr(row_ptr)?];
        let mut op = CooSort { sp: self, dims, ptrs, descr: std::ptr::null_mut(), ws: None, ws_bytes: 0 };
        let (mut a, mut b) = (0usize, 0usize);
        // SAFETY: size queries on live buffers; the descriptor is destroyed by the plan's Drop.
        unsafe {
            status("cusparseCreateMatDescr", sp::cusparseCreateMatDescr(&mut op.descr))?;
            let (m, n, z) = dims;
            let (r, c, p) = (ptrs[0] as *const i32, ptrs[1] as *const i32, ptrs[3] as *const i32);
            status("cusparseXcoosort_bufferSizeExt", sp::cusparseXcoosort_bufferSizeExt(self.handle, m, n, z, r, c, &mut a))?;
            status("cusparseXcsrsort_bufferSizeExt", sp::cusparseXcsrsort_bufferSizeExt(self.handle, m, n, z, p, c, &mut b))?;
        }
        op.ws_bytes = a.max(b);
        op.ws = self.workspace(op.ws_bytes)?;
        Ok(Box::new(op))
    }
}
