//! What most users do (beyond the paper, CUDA only): no symbolic kernel; every element writes its
//! 576 (row, column) pairs beside K^e, cuSPARSE sorts the pairs into CSR order, and our kernels
//! sum the duplicates: head flags, the shared exclusive scan (each run's CSR index), a segmented
//! sum gathering the values from K^e through cuSPARSE's permutation, and the row offsets mapped
//! onto the summed entries. Stages: elements, triplets, sort (cuSPARSE), sum (ours).

use super::formats::{self, Check};
use super::gpu::{stages_of, DeviceRun, Elements, SANFUI};
use super::reference::Prepared;
use super::spec::{Format, Method};
use super::spmv::{self, Assembled, VendorInput};
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::scan::{exclusive_scan, scan_sums_len};
use crate::device::{Arg, Device, DeviceExt, DeviceResult, Launch};
use crate::kernels::Defines;
use crate::measure::{run_staged, CacheMode};
use crate::real::Real;

pub(crate) fn run_peer<T: Real>(ctx: &mut CaseCtx, dev: &dyn Device, prep: &Prepared) -> Result<DeviceRun, CaseError> {
    let s = std::mem::size_of::<T>();
    let nb = &prep.nb;
    let (ne, nn) = (prep.mesh.num_elements(), nb.nodes());
    let (rows, pairs, nnz) = (3 * nn, 576 * ne, 9 * nb.blocks());
    if pairs >= i32::MAX as usize {
        return Err(CaseError::Failed(format!(
            "cuSPARSE's COO sort takes a 32-bit entry count; {ne} elements give {pairs} triplets (576 each), over 2^31 - 1"
        )));
    }
    let defines = Defines::for_precision(T::PRECISION);
    let el = Elements::new::<T>(ctx, dev, prep, &defines, false)?;
    let lib = dev.sparse()?;
    let (row, col, perm, head, slot) =
        (dev.alloc(4 * pairs)?, dev.alloc(4 * pairs)?, dev.alloc(4 * pairs)?, dev.alloc(4 * pairs)?, dev.alloc(4 * (pairs + 1))?);
    let (row_ptr_dup, sums) = (dev.alloc(4 * (rows + 1))?, dev.alloc(4 * scan_sums_len(pairs + 1))?);
    let (out_ptr, out_col, out_val) = (dev.alloc(4 * (rows + 1))?, dev.alloc(4 * nnz)?, dev.alloc(s * nnz)?);
    let sort = lib.coo_sort_to_csr(rows, rows, pairs, &row, &col, &perm, &row_ptr_dup)?;
    let bytes = el.bytes
        + 4 * (5 * pairs + 1)
        + 4 * (rows + 1)
        + 4 * scan_sums_len(pairs + 1)
        + formats::storage_bytes(Format::Csr, nb, s)
        + sort.workspace_bytes();
    let mut k = |name| ctx.modules.kernel(dev, &SANFUI, &defines, name);
    let (triplets, heads, segsum, compact) = (k("sanfui_triplets")?, k("sanfui_heads")?, k("sanfui_segsum")?, k("sanfui_compact_rows")?);
    let scan = ctx.modules.scan(dev)?;
    let cover = |n: usize| Launch::cover(n.max(1), 256);
    let body = |timed: &mut dyn FnMut(&'static str, &mut dyn FnMut() -> DeviceResult<()>) -> DeviceResult<()>| {
        timed("elements", &mut || el.launch(dev))?;
        timed("triplets", &mut || {
            dev.launch(&triplets, cover(pairs), &[Arg::Buf(&el.conn), Arg::Buf(&row), Arg::Buf(&col), Arg::I64(ne as i64)])
        })?;
        timed("sort", &mut || sort.enqueue())?;
        timed("sum", &mut || {
            dev.launch(&heads, cover(pairs), &[Arg::Buf(&row), Arg::Buf(&col), Arg::Buf(&head), Arg::I64(pairs as i64)])?;
            exclusive_scan(dev, &scan, &head, &slot, &sums, pairs, pairs + 1)?;
            let args = [
                Arg::Buf(&col),
                Arg::Buf(&perm),
                Arg::Buf(&el.ke),
                Arg::Buf(&head),
                Arg::Buf(&slot),
                Arg::Buf(&out_col),
                Arg::Buf(&out_val),
                Arg::I64(pairs as i64),
            ];
            dev.launch(&segsum, cover(pairs), &args)?;
            dev.launch(&compact, cover(rows + 1), &[Arg::Buf(&row_ptr_dup), Arg::Buf(&slot), Arg::Buf(&out_ptr), Arg::I64(rows as i64)])
        })
    };
    // cuSPARSE's sorts wait on the stream inside (seen on an H200: a gated region deadlocks),
    // so the sort stage is timed with an open gate: its host gaps count, as for a user.
    let staged = run_staged(ctx.policy, CacheMode::Warm, &stages_of(Method::CooCusparse), "sort", |pass| -> Result<(), CaseError> {
        Ok(body(&mut |name, f| if name == "sort" { pass.device_open(dev, name, f) } else { pass.device(dev, name, f) })?)
    })?;
    for b in [&el.ke, &row, &col, &perm, &head, &slot, &row_ptr_dup, &out_ptr, &out_col, &out_val] {
        ctx.modules.poison(dev, b)?;
    }
    body(&mut |_, f| f())?;
    let (rp, cl): (Vec<i32>, Vec<i32>) = (dev.download_vec(&out_ptr, rows + 1)?, dev.download_vec(&out_col, nnz)?);
    let got: Vec<f64> = dev.download_vec::<T>(&out_val, nnz)?.into_iter().map(|v| v.to_f64()).collect();
    let check: Check = formats::check(Format::Csr, nb, &rp, &cl, &got, &prep.pattern, &prep.reference, &prep.scale);
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
    })
}
