//! Vendor sparse libraries (cuSPARSE on CUDA), the peers "what a user would do" is measured by.
//! They run in the same process, on the same stream, as our kernels: a call is planned once,
//! outside the timers (descriptors, workspace), and its plan enqueues only the work, so that it can
//! sit inside a timed region beside our own launches.

use crate::{Buffer, DeviceResult, Precision};

/// A planned vendor call: `enqueue` adds its work to the device's stream and does not wait.
pub trait VendorOp {
    fn enqueue(&self) -> DeviceResult<()>;
    /// Bytes of the workspace the library asked for (allocated when the call was planned).
    fn workspace_bytes(&self) -> usize;
}

/// The calls of a vendor sparse library the benchmarks use. Every index is a zero-based 32-bit
/// int, as the libraries' legacy conversion routines require.
pub trait VendorSparse {
    /// The library and its version, e.g. "cuSPARSE 12.6.3".
    fn library(&self) -> String;
    /// Its version as one number (cuSPARSE: major * 1000 + minor * 100 + patch).
    fn version(&self) -> u32;

    /// y = A x with A in CSR (`rows` x `cols`, `nnz` entries).
    fn csr_spmv<'a>(&'a self, a: Compressed<'a>, x: &'a Buffer, y: &'a Buffer) -> DeviceResult<Box<dyn VendorOp + 'a>>;

    /// y = A x with A in BSR: square blocks of `block`, each stored row-major; `a` counts
    /// blocks (`a.rows` x `a.cols` blocks, `a.nnz` of them stored).
    fn bsr_spmv<'a>(&'a self, a: Compressed<'a>, block: usize, x: &'a Buffer, y: &'a Buffer) -> DeviceResult<Box<dyn VendorOp + 'a>>;

    /// y = A x with A in sliced ELL ([`Sliced`]).
    fn sell_spmv<'a>(&'a self, a: Sliced<'a>, x: &'a Buffer, y: &'a Buffer) -> DeviceResult<Box<dyn VendorOp + 'a>>;

    /// Sorts the COO pairs (`coo.row`, `coo.col`) in place by row and, within a row, by
    /// column, and writes the CSR row offsets of the sorted pairs (duplicates kept) into
    /// `coo.row_ptr` (`rows` + 1). `coo.perm` receives the permutation: sorted entry i is input
    /// entry perm[i], so the caller gathers the values. cuSPARSE: identity permutation,
    /// `coosortByRow`, `coo2csr`, then `csrsort` (stable), which composes the permutation.
    fn coo_sort_to_csr<'a>(&'a self, coo: CooArrays<'a>) -> DeviceResult<Box<dyn VendorOp + 'a>>;
}

/// A compressed-row matrix on the device (CSR, or BSR counted in blocks): `rows` x `cols`,
/// `nnz` stored entries, 32-bit indices, values in `precision`.
#[derive(Clone, Copy)]
pub struct Compressed<'a> {
    pub precision: Precision,
    pub rows: usize,
    pub cols: usize,
    pub nnz: usize,
    pub row_ptr: &'a Buffer,
    pub col: &'a Buffer,
    pub val: &'a Buffer,
}

/// A sliced-ELL matrix on the device (`fembench_fem::csr::SlicedEll`'s layout): `rows` x `cols`,
/// `nnz` entries, slices of `slice` rows stored column by column in `stored` slots (padding:
/// column -1), 32-bit slice offsets and columns, values in `precision`.
#[derive(Clone, Copy)]
pub struct Sliced<'a> {
    pub precision: Precision,
    pub rows: usize,
    pub cols: usize,
    pub nnz: usize,
    pub slice: usize,
    pub stored: usize,
    pub slice_ptr: &'a Buffer,
    pub col: &'a Buffer,
    pub val: &'a Buffer,
}

/// `pairs` (row, column) pairs of a `rows` x `cols` matrix on the device (32-bit each), to be
/// sorted in place, with room for the permutation (`perm`, `pairs`) and the CSR row offsets
/// (`row_ptr`, `rows` + 1): what the vendor sort and our radix sort
/// ([`crate::radix_sort::CooRadixSort`]) both take.
#[derive(Clone, Copy)]
pub struct CooArrays<'a> {
    pub rows: usize,
    pub cols: usize,
    pub pairs: usize,
    pub row: &'a Buffer,
    pub col: &'a Buffer,
    pub perm: &'a Buffer,
    pub row_ptr: &'a Buffer,
}

/// The shape and mode of a batched GEMM ([`VendorBlas::gemm_tn_batched`]).
#[derive(Debug, Clone, Copy)]
pub struct BatchedGemm {
    pub precision: Precision,
    pub k: usize,
    pub n: usize,
    pub batch: usize,
    /// f32 inputs rounded to TF32 on the tensor cores, FP32 accumulation.
    pub tf32: bool,
    /// Add into C (beta 1) rather than overwrite it (beta 0).
    pub accumulate: bool,
}

/// The level-1 calls of a vendor BLAS (cuBLAS on CUDA) that a conjugate gradient written with
/// the vendor libraries makes. Scalars pass through host memory (the libraries' default), so
/// `dot` waits for its result: such a CG must be timed with `Device::time_events_open`.
pub trait VendorBlas {
    /// The library and its version, e.g. "cuBLAS 13.1.0".
    fn library(&self) -> String;
    /// Device bytes the library holds as its workspace (a method using it counts them).
    fn workspace_bytes(&self) -> usize;
    /// x . y over `n` values, returned to the host.
    fn dot(&self, precision: Precision, n: usize, x: &Buffer, y: &Buffer) -> DeviceResult<f64>;
    /// y += alpha x.
    fn axpy(&self, precision: Precision, n: usize, alpha: f64, x: &Buffer, y: &Buffer) -> DeviceResult<()>;
    /// x *= alpha.
    fn scal(&self, precision: Precision, n: usize, alpha: f64, x: &Buffer) -> DeviceResult<()>;
    /// out[at] = x . y, written on the device (cuBLAS' device pointer mode): no host wait, so
    /// it may sit inside a gated timed region.
    fn dot_to(&self, precision: Precision, n: usize, x: &Buffer, y: &Buffer, out: &Buffer, at: usize) -> DeviceResult<()>;
    /// y += alpha[at] x, the scalar read on the device.
    fn axpy_by(&self, precision: Precision, n: usize, alpha: &Buffer, at: usize, x: &Buffer, y: &Buffer) -> DeviceResult<()>;
    /// x *= alpha[at], the scalar read on the device.
    fn scal_by(&self, precision: Precision, n: usize, alpha: &Buffer, at: usize, x: &Buffer) -> DeviceResult<()>;
    /// y = x.
    fn copy(&self, precision: Precision, n: usize, x: &Buffer, y: &Buffer) -> DeviceResult<()>;
    /// C_b = A_b^T B_b (or C_b += A_b^T B_b) for every b of `g`: A_b and B_b are `k` x `n`
    /// column-major, one after the other (stride k n), C_b is `n` x `n` column-major (stride n n).
    /// A strided-batched GEMM (cuBLAS: `cublas[SD]gemmStridedBatched` in the default math mode,
    /// FP32 without TF32 and f64 on the FP64 tensor cores where the GPU has them; with `tf32`,
    /// `cublasGemmStridedBatchedEx` with `CUBLAS_COMPUTE_32F_FAST_TF32`). It only enqueues, so it
    /// may sit inside a timed region.
    fn gemm_tn_batched(&self, g: &BatchedGemm, a: &Buffer, b: &Buffer, c: &Buffer) -> DeviceResult<()>;
}
