//! What most users do (beyond the paper): no symbolic kernel; every element writes its 576 (row,
//! column) pairs beside K^e, the pairs are sorted into CSR order, and the shared kernels of
//! `coo_sum` sum the duplicates (gathering the values from K^e through the sort's permutation).
//! Stages: elements, triplets, sort, sum (ours). `coo-radix` sorts with the shared device radix
//! sort (CUB's algorithm, as CuPy's `tocsr`), `coo-cusparse` (CUDA only) with cuSPARSE's legacy
//! sort, whose calls wait on the stream inside.

use super::method::{Case, DeviceMethod};
use std::marker::PhantomData;

use super::assembly::WARM_ONLY;
use super::formats::Format;
use super::formats::{self, Check};
use super::gpu::{check_on_device, stages_of, DeviceRun, Elements, CHECK_ENTRIES, SANFUI};
use super::kernel::Triplets;
use super::reference::Prepared;
use super::spec::Method;
use super::spmv::{self, Assembled, VendorInput};
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::coo_sum::{sum_duplicates, CooSumKernels, CooSumScratch, CsrOut, SortedCoo};
use crate::device::radix_sort::{CooArrays, CooRadixSort, SortOp};
use crate::device::scan::ScanKernels;
use crate::device::{Buffer, Device, DeviceExt, DeviceResult, Kernel, Launch};
use crate::kernels::Defines;
use crate::lifecycle::{drive, warm_only, Driven, PassMethod};
use crate::measure::{Pass, Timer};
use crate::real::Real;

/// The COO routes (element triplets sorted into CSR, duplicates summed): cuSPARSE's sort or
/// the device radix sort, by the case's name.
pub struct CooRoute;

impl DeviceMethod for CooRoute {
    fn run<T: Real>(&self, ctx: &mut CaseCtx, dev: &dyn Device, case: &Case) -> Result<DeviceRun, CaseError> {
        run_peer::<T>(ctx, dev, case.prep, case.method)
    }
}

fn run_peer<T: Real>(ctx: &mut CaseCtx, dev: &dyn Device, prep: &Prepared, method: Method) -> Result<DeviceRun, CaseError> {
    let mode = warm_only(ctx.policy, WARM_ONLY)?;
    let s = std::mem::size_of::<T>();
    let nb = &prep.nb;
    let (ne, nn) = (prep.mesh.num_elements(), nb.nodes());
    let (rows, pairs, nnz) = (3 * nn, 576 * ne, 9 * nb.blocks());
    if pairs >= i32::MAX as usize {
        return Err(CaseError::Failed(format!(
            "the COO sort takes a 32-bit entry count; {ne} elements give {pairs} triplets (576 each), over 2^31 - 1"
        )));
    }
    let defines = Defines::for_precision(T::PRECISION);
    let el = Elements::new::<T>(ctx, dev, prep, &defines, false)?;
    let b = CooBuffers::new(dev, rows, pairs, (nnz, s))?;
    let radix = method == Method::COO_RADIX;
    // The radix sort's kernels only for its route.
    let (radix_k, scan) = (if radix { Some(ctx.modules.radix_sort(dev)?) } else { None }, ctx.modules.scan(dev)?);
    let arrays = CooArrays { rows, cols: rows, pairs, row: &b.row, col: &b.col, perm: &b.perm, row_ptr: &b.row_ptr_dup };
    let sort: Box<dyn SortOp + '_> = if let Some(radix_k) = &radix_k {
        Box::new(CooRadixSort::new(dev, radix_k, &scan, arrays)?)
    } else {
        Box::new(dev.sparse()?.coo_sort_to_csr(arrays)?)
    };
    let bytes = el.bytes
        + 4 * 3 * pairs
        + 4 * (rows + 1)
        + CooSumScratch::bytes(pairs)
        + formats::storage_bytes(Format::CSR, nb, s)
        + sort.workspace_bytes();
    let kernels = (ctx.modules.kernel_for::<Triplets>(dev, &SANFUI, &defines)?, ctx.modules.coo_sum(dev, T::PRECISION)?);
    let mut route = CooRouteCase::<T> { dev, prep, method, el: &el, b: &b, sort, scan: &scan, kernels, real: PhantomData };
    let Driven { staged, verdict: check } = drive(ctx, dev, &mut route, mode)?;
    let a = Assembled {
        format: Format::CSR,
        idx_r: &b.out_ptr,
        idx_c: &b.out_col,
        vals: &b.out_val,
        vendor: Some(VendorInput::Csr(&b.out_ptr, &b.out_col, &b.out_val)),
    };
    let spmv = spmv::measure::<T>(ctx, dev, prep, &a)?;
    Ok(DeviceRun {
        staged,
        check,
        device_bytes: bytes as f64,
        storage_bytes: formats::storage_bytes(Format::CSR, nb, s) as f64,
        setup_s: 0.0,
        spmv,
        costs: Vec::new(),
        extras: Vec::new(),
        library: None,
    })
}

/// The route's buffers: the triplets' rows and columns, the sort's permutation and duplicate
/// row offsets, the summing scratch and the CSR it writes.
struct CooBuffers {
    row: Buffer,
    col: Buffer,
    perm: Buffer,
    row_ptr_dup: Buffer,
    scratch: CooSumScratch,
    out_ptr: Buffer,
    out_col: Buffer,
    out_val: Buffer,
}

impl CooBuffers {
    /// For `rows` CSR rows, `pairs` triplets and `nnz` summed entries of `s` bytes.
    fn new(dev: &dyn Device, rows: usize, pairs: usize, (nnz, s): (usize, usize)) -> DeviceResult<Self> {
        Ok(CooBuffers {
            row: dev.alloc(4 * pairs)?,
            col: dev.alloc(4 * pairs)?,
            perm: dev.alloc(4 * pairs)?,
            row_ptr_dup: dev.alloc(4 * (rows + 1))?,
            scratch: CooSumScratch::new(dev, pairs)?,
            out_ptr: dev.alloc(4 * (rows + 1))?,
            out_col: dev.alloc(4 * nnz)?,
            out_val: dev.alloc(s * nnz)?,
        })
    }
}

/// A COO route as the case lifecycle runs it: elements, triplets, sort, sum.
struct CooRouteCase<'a, T> {
    dev: &'a dyn Device,
    prep: &'a Prepared,
    method: Method,
    el: &'a Elements,
    b: &'a CooBuffers,
    sort: Box<dyn SortOp + 'a>,
    scan: &'a ScanKernels,
    /// The triplets kernel and the duplicate summing kernels.
    kernels: (Kernel, CooSumKernels),
    real: PhantomData<T>,
}

impl<T: Real> PassMethod for CooRouteCase<'_, T> {
    type Verdict = Check;
    fn stages(&self) -> Vec<(&'static str, Timer)> {
        stages_of(self.method)
    }
    fn decisive(&self) -> &'static str {
        "sort"
    }
    fn outputs(&self) -> Vec<&Buffer> {
        let b = self.b;
        vec![&self.el.ke, &b.row, &b.col, &b.perm, &b.scratch.head, &b.scratch.slot, &b.row_ptr_dup, &b.out_ptr, &b.out_col, &b.out_val]
    }
    fn pass(&mut self, pass: &mut Pass) -> Result<(), CaseError> {
        let (dev, b, el) = (self.dev, self.b, self.el);
        let ne = self.prep.mesh.num_elements();
        let (rows, pairs) = (3 * self.prep.nb.nodes(), 576 * ne);
        pass.device(dev, "elements", &mut || el.launch(dev))?;
        let args = Triplets { conn: &el.conn, row: &b.row, col: &b.col, ne: ne as i64 };
        pass.device(dev, "triplets", &mut || dev.launch_with(&self.kernels.0, Launch::cover(pairs.max(1), 256), &args))?;
        // cuSPARSE's sorts wait on the stream inside (seen on an H200: a gated region
        // deadlocks), so its sort stage is timed with an open gate: its host gaps count, as for
        // a user. The radix sort does not wait: device events time it like every other stage.
        let sort = &*self.sort;
        if self.method == Method::COO_RADIX {
            pass.device(dev, "sort", &mut || sort.enqueue())?;
        } else {
            pass.device_open(dev, "sort", &mut || sort.enqueue())?;
        }
        let coo = SortedCoo { rows, pairs, row: &b.row, col: &b.col, perm: &b.perm, row_ptr: &b.row_ptr_dup, vals: &el.ke };
        let out = CsrOut { row_ptr: &b.out_ptr, col: &b.out_col, val: &b.out_val };
        pass.device(dev, "sum", &mut || sum_duplicates(dev, &self.kernels.1, self.scan, &b.scratch, &coo, &out))?;
        Ok(())
    }
    fn verify(&mut self) -> Result<Check, CaseError> {
        let b = self.b;
        Ok(check_on_device::<T>(self.dev, Format::CSR, (Some(&b.out_ptr), &b.out_col, &b.out_val), self.prep, CHECK_ENTRIES)?)
    }
}
