//! What most users do (beyond the paper): no symbolic kernel; every element writes its 576 (row,
//! column) pairs beside K^e, the pairs are sorted into CSR order, and the shared kernels of
//! `coo_sum` sum the duplicates (gathering the values from K^e through the sort's permutation).
//! Stages: elements, triplets, sort, sum (ours). `coo-radix` sorts with the shared device radix
//! sort (CUB's algorithm, as CuPy's `tocsr`), `coo-cusparse` (CUDA only) with cuSPARSE's legacy
//! sort, whose calls wait on the stream inside.

use super::formats::{self, Check};
use super::gpu::{check_on_device, stages_of, DeviceRun, Elements, CHECK_ENTRIES, SANFUI};
use super::reference::Prepared;
use super::spec::{Format, Method};
use super::spmv::{self, Assembled, VendorInput};
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::coo_sum::{sum_duplicates, CooSumScratch, CsrOut, SortedCoo};
use crate::device::radix_sort::{CooArrays, CooRadixSort, SortOp};
use crate::device::{Arg, Device, DeviceResult, Launch};
use crate::kernels::Defines;
use crate::measure::{run_staged, CacheMode};
use crate::real::Real;

pub(crate) fn run_peer<T: Real>(ctx: &mut CaseCtx, dev: &dyn Device, prep: &Prepared, method: Method) -> Result<DeviceRun, CaseError> {
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
    let (row, col, perm, row_ptr_dup) = (dev.alloc(4 * pairs)?, dev.alloc(4 * pairs)?, dev.alloc(4 * pairs)?, dev.alloc(4 * (rows + 1))?);
    let scratch = CooSumScratch::new(dev, pairs)?;
    let (out_ptr, out_col, out_val) = (dev.alloc(4 * (rows + 1))?, dev.alloc(4 * nnz)?, dev.alloc(s * nnz)?);
    let radix = method == Method::CooRadix;
    // The radix sort's kernels only for its route.
    let (radix_k, scan) = (if radix { Some(ctx.modules.radix_sort(dev)?) } else { None }, ctx.modules.scan(dev)?);
    let arrays = CooArrays { rows, cols: rows, pairs, row: &row, col: &col, perm: &perm, row_ptr: &row_ptr_dup };
    let sort: Box<dyn SortOp + '_> = if let Some(radix_k) = &radix_k {
        Box::new(CooRadixSort::new(dev, radix_k, &scan, arrays)?)
    } else {
        Box::new(dev.sparse()?.coo_sort_to_csr(arrays)?)
    };
    let bytes = el.bytes
        + 4 * 3 * pairs
        + 4 * (rows + 1)
        + CooSumScratch::bytes(pairs)
        + formats::storage_bytes(Format::Csr, nb, s)
        + sort.workspace_bytes();
    let mut k = |name| ctx.modules.kernel(dev, &SANFUI, &defines, name);
    let triplets = k("sanfui_triplets")?;
    let sum = ctx.modules.coo_sum(dev, T::PRECISION)?;
    let coo = SortedCoo { rows, pairs, row: &row, col: &col, perm: &perm, row_ptr: &row_ptr_dup, vals: &el.ke };
    let out = CsrOut { row_ptr: &out_ptr, col: &out_col, val: &out_val };
    let cover = |n: usize| Launch::cover(n.max(1), 256);
    let body = |timed: &mut dyn FnMut(&'static str, &mut dyn FnMut() -> DeviceResult<()>) -> DeviceResult<()>| {
        timed("elements", &mut || el.launch(dev))?;
        timed("triplets", &mut || {
            dev.launch(&triplets, cover(pairs), &[Arg::Buf(&el.conn), Arg::Buf(&row), Arg::Buf(&col), Arg::I64(ne as i64)])
        })?;
        timed("sort", &mut || sort.enqueue())?;
        timed("sum", &mut || sum_duplicates(dev, &sum, &scan, &scratch, &coo, &out))
    };
    // cuSPARSE's sorts wait on the stream inside (seen on an H200: a gated region deadlocks),
    // so its sort stage is timed with an open gate: its host gaps count, as for a user. The
    // radix sort does not wait: device events time it like every other stage.
    let staged = run_staged(ctx.policy, CacheMode::Warm, &stages_of(method), "sort", |pass| -> Result<(), CaseError> {
        Ok(body(&mut |name, f| if name == "sort" && !radix { pass.device_open(dev, name, f) } else { pass.device(dev, name, f) })?)
    })?;
    for b in [&el.ke, &row, &col, &perm, &scratch.head, &scratch.slot, &row_ptr_dup, &out_ptr, &out_col, &out_val] {
        ctx.modules.poison(dev, b)?;
    }
    body(&mut |_, f| f())?;
    let check: Check = check_on_device::<T>(dev, Format::Csr, (Some(&out_ptr), &out_col, &out_val), prep, CHECK_ENTRIES)?;
    let a = Assembled {
        format: Format::Csr,
        idx_r: &out_ptr,
        idx_c: &out_col,
        vals: &out_val,
        vendor: Some(VendorInput::Csr(&out_ptr, &out_col, &out_val)),
    };
    let spmv = spmv::measure::<T>(ctx, dev, prep, &a)?;
    Ok(DeviceRun {
        staged,
        check,
        device_bytes: bytes as f64,
        storage_bytes: formats::storage_bytes(Format::Csr, nb, s) as f64,
        setup_s: 0.0,
        spmv,
        costs: Vec::new(),
        extras: Vec::new(),
    })
}
