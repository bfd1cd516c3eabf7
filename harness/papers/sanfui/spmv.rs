//! y = A x on each method's assembled matrix (beyond the paper: COOM and ELLM are 3x3 block
//! formats, and an assembled matrix is worth what a solver can do with it). Ours: one kernel per
//! format (`sanfui_spmv`); the vendor's, on CUDA in the same process: cuSPARSE's CSR SpMV on CSR
//! (and on ELLM converted to CSR), its BSR SpMV (3x3 blocks, row-major) on COOM, whose values are
//! BSR's block by block. Each is timed on its own (not in the assembly's total) and checked
//! against the f64 reference matrix times the same x.

use super::formats::storage_bytes;
use super::formats::Format;
use super::kernel::{Spmv, SANFUI};
use super::reference::Prepared;
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::scan::fill_words;
use crate::device::vendor::Compressed;
use crate::device::{Buffer, Device, DeviceExt, DeviceResult, Launch};
use crate::kernels::Defines;
use crate::measure::{time_device, Timing};
// The input vector (both signs, no two neighbours alike) and max_i |y_i - ref_i| / scale_i.
use crate::real::Real;
use fembench_fem::verify::{max_scaled_error as worst, probe_vector as x_vector};

/// One method's assembled matrix on the device.
pub(crate) struct Assembled<'a> {
    pub(crate) format: Format,
    /// The format's row-side array (COO: R; CSR: row offsets; COOM: Phi; ELL, ELLM: unused).
    pub(crate) idx_r: &'a Buffer,
    pub(crate) idx_c: &'a Buffer,
    pub(crate) vals: &'a Buffer,
    /// What cuSPARSE multiplies: CSR arrays (row offsets, columns, values) or COOM's blocks as
    /// BSR (node offsets, neighbour nodes, values).
    pub(crate) vendor: Option<VendorInput<'a>>,
}

pub(crate) enum VendorInput<'a> {
    Csr(&'a Buffer, &'a Buffer, &'a Buffer),
    Bsr(&'a Buffer, &'a Buffer, &'a Buffer),
}

/// One SpMV row: `spmv` (ours) or `spmv-vendor`.
pub(crate) struct SpmvRun {
    pub(crate) name: &'static str,
    pub(crate) result: Result<(Timing, f64), String>,
    /// Compulsory bytes: the stored matrix once, x and y once each.
    pub(crate) bytes: f64,
    /// The vendor library's version (cuSPARSE: major * 1000 + minor * 100 + patch).
    pub(crate) version: Option<u32>,
}

/// The reference y = K x in f64, and each row's scale Σ_j scale_ij |x_j| (the bound of the
/// assembled entries' rounding, carried through the product).
pub(crate) fn reference_y(prep: &Prepared, x: &[f64]) -> (Vec<f64>, Vec<f64>) {
    use rayon::prelude::*;
    let p = &prep.pattern;
    (0..p.rows())
        .into_par_iter()
        .map(|r| {
            (p.row_ptr[r] as usize..p.row_ptr[r + 1] as usize).fold((0.0, 0.0), |(y, s), k| {
                let xj = x[p.col[k] as usize];
                (y + prep.reference[k] * xj, s + prep.scale[k] * xj.abs())
            })
        })
        .unzip()
}

pub(crate) fn measure<T: Real>(ctx: &mut CaseCtx, dev: &dyn Device, prep: &Prepared, a: &Assembled) -> Result<Vec<SpmvRun>, CaseError> {
    let s = std::mem::size_of::<T>();
    let nb = &prep.nb;
    let (nn, rows) = (nb.nodes(), 3 * nb.nodes());
    let nnz = 9 * nb.blocks();
    let (xv, want, scale) = prep.probe.get_or_init(|| {
        let x = x_vector(rows);
        let (y, scale) = reference_y(prep, &x);
        (x, y, scale)
    });
    let x = dev.upload_slice(&xv.iter().map(|&v| T::from_f64(v)).collect::<Vec<T>>())?;
    let y = dev.alloc(s * rows)?;
    let vectors = 2.0 * (s * rows) as f64;
    let defines = Defines::for_precision(T::PRECISION).with("FORMAT", a.format.code());
    let kern = ctx.modules.kernel_for::<Spmv>(dev, &SANFUI, &defines)?;
    let fill = ctx.modules.filler(dev)?;
    let threads = a.format.0.spmv_threads(nb);
    let ours = |_: ()| -> DeviceResult<()> {
        if a.format.0.spmv_adds() {
            fill_words(dev, &fill, &y, 0, rows * s / 4)?;
        }
        let args = Spmv { idx_r: a.idx_r, idx_c: a.idx_c, vals: a.vals, x: &x, y: &y, nn: nn as i64, nnz: nnz as i64 };
        dev.launch_with(&kern, Launch::cover(threads.max(1), 256), &args)
    };
    let mut out = vec![SpmvRun {
        name: "spmv",
        result: timed_and_checked::<T>(ctx, dev, &y, rows, want, scale, &mut || ours(())),
        bytes: storage_bytes(a.format, nb, s) as f64 + vectors,
        version: None,
    }];
    // Vendor rows exist where the backend has a vendor library (CUDA: cuSPARSE).
    let vendor = a.vendor.as_ref().filter(|_| dev.info().backend == Some(crate::Backend::Cuda));
    if let Some(v) = vendor {
        let (result, version, bytes) = match dev.sparse() {
            Err(e) => (Err(e.to_string()), None, 0.0),
            Ok(lib) => {
                let plan = match *v {
                    VendorInput::Csr(row_ptr, col, val) => {
                        lib.csr_spmv(Compressed { precision: T::PRECISION, rows, cols: rows, nnz, row_ptr, col, val }, &x, &y)
                    }
                    VendorInput::Bsr(row_ptr, col, val) => {
                        let blocks = Compressed { precision: T::PRECISION, rows: nn, cols: nn, nnz: nb.blocks(), row_ptr, col, val };
                        lib.bsr_spmv(blocks, 3, &x, &y)
                    }
                };
                let bytes = match v {
                    VendorInput::Csr(..) => storage_bytes(Format::CSR, nb, s) as f64,
                    VendorInput::Bsr(..) => (4 * (nn + 1) + 4 * nb.blocks() + 9 * s * nb.blocks()) as f64,
                } + vectors;
                let result = match plan {
                    Err(e) => Err(e.to_string()),
                    Ok(op) => timed_and_checked::<T>(ctx, dev, &y, rows, want, scale, &mut || op.enqueue()),
                };
                (result, Some(lib.version()), bytes)
            }
        };
        out.push(SpmvRun { name: "spmv-vendor", result, bytes, version });
    }
    Ok(out)
}

fn timed_and_checked<T: Real>(
    ctx: &mut CaseCtx,
    dev: &dyn Device,
    y: &Buffer,
    rows: usize,
    want: &[f64],
    scale: &[f64],
    body: &mut dyn FnMut() -> DeviceResult<()>,
) -> Result<(Timing, f64), String> {
    let mut go = || -> Result<(Timing, f64), CaseError> {
        let timing = time_device(ctx.policy, dev, "spmv", body)?;
        ctx.modules.poison(dev, y)?;
        body()?;
        dev.synchronize()?;
        let got: Vec<f64> = dev.download_vec::<T>(y, rows)?.into_iter().map(|v| v.to_f64()).collect();
        Ok((timing, worst(&got, want, scale)))
    };
    go().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spmv_check_sees_a_wrong_entry_and_a_nan() {
        let prep = Prepared::new([3, 3, 2], 1e-3, 200e9, 0.3);
        let x = x_vector(3 * prep.nb.nodes());
        let (want, scale) = reference_y(&prep, &x);
        // K times a rigid translation is zero: a closed form for the reference product.
        let ones = vec![1.0; x.len()];
        let (rigid, rigid_scale) = reference_y(&prep, &ones);
        assert!(worst(&vec![0.0; rigid.len()], &rigid, &rigid_scale) < 1e-14);
        assert_eq!(worst(&want, &want, &scale), 0.0);
        let mut bad = want.clone();
        bad[5] += 1e-6 * scale[5];
        assert!((worst(&bad, &want, &scale) - 1e-6).abs() < 1e-9);
        bad[5] = f64::NAN;
        assert!(worst(&bad, &want, &scale).is_nan());
    }
}
