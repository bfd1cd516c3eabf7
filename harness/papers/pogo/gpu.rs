//! What the one-GPU steps share: the kernel file, the vendor step's matrix (cuSPARSE's CSR,
//! or its sliced ELL of 32-row slices), what a method's steps measured ([`StepRun`]), the full
//! run and its check against the CPU window, and the paper's receiver discrepancy. The steps
//! themselves, as the case lifecycle runs them, are [`super::stepper`].

use super::spec::Method;
use crate::device::vendor::{Compressed, Sliced, VendorOp, VendorSparse};
use crate::device::{Buffer, Device, DeviceExt, DeviceResult};
use crate::measure::Timing;
use crate::real::Real;

/// The matrix of a vendor step (CSR, or sliced ELL of 32-row slices) and its shape.
pub(crate) struct VendorMatrix {
    /// CSR: row offsets, columns, values; sliced ELL: slice offsets, columns, values.
    pub(crate) buffers: [Buffer; 3],
    pub(crate) shape: VendorShape,
    pub(crate) bytes: usize,
}

#[derive(Clone, Copy)]
pub(crate) enum VendorShape {
    Csr { rows: usize, nnz: usize },
    Sliced { rows: usize, nnz: usize, stored: usize },
}

/// cuSPARSE's sliced ELL: 32-row slices (a warp's rows).
const VENDOR_SLICE: usize = 32;

impl VendorMatrix {
    pub(crate) fn upload<T: Real>(dev: &dyn Device, method: Method, sys: &super::system::System, kp: &[T]) -> DeviceResult<VendorMatrix> {
        let p = &sys.pattern;
        let (rows, nnz) = (p.rows(), p.nnz());
        let (buffers, shape) = if method == Method::SELL_CUSPARSE {
            let ell = crate::fem::csr::SlicedEll::of(p, VENDOR_SLICE);
            let stored = ell.col.len();
            let b = [dev.upload_slice(&ell.slice_ptr)?, dev.upload_slice(&ell.col)?, dev.upload_slice(&ell.values(kp))?];
            (b, VendorShape::Sliced { rows, nnz, stored })
        } else {
            ([dev.upload_slice(&p.row_ptr)?, dev.upload_slice(&p.col)?, dev.upload_slice(kp)?], VendorShape::Csr { rows, nnz })
        };
        let bytes = buffers.iter().map(|b| b.bytes()).sum();
        Ok(VendorMatrix { buffers, shape, bytes })
    }
}

impl VendorShape {
    /// y = K' x by the library, on the matrix's buffers (`m`, as uploaded).
    pub(crate) fn spmv<'a>(
        self,
        lib: &'a dyn VendorSparse,
        precision: crate::Precision,
        m: &'a [Buffer],
        x: &'a Buffer,
        y: &'a Buffer,
    ) -> DeviceResult<Box<dyn VendorOp + 'a>> {
        match self {
            VendorShape::Csr { rows, nnz } => {
                lib.csr_spmv(Compressed { precision, rows, cols: rows, nnz, row_ptr: &m[0], col: &m[1], val: &m[2] }, x, y)
            }
            VendorShape::Sliced { rows, nnz, stored } => lib.sell_spmv(
                Sliced { precision, rows, cols: rows, nnz, slice: VENDOR_SLICE, stored, slice_ptr: &m[0], col: &m[1], val: &m[2] },
                x,
                y,
            ),
        }
    }
}

/// A method's measured steps and its check.
pub struct StepRun {
    /// Seconds per step, one sample per repetition.
    pub per_step: Timing,
    /// ||U - U_oracle|| / ||U_oracle|| after the checked pass.
    pub error: f64,
    /// max |trace - oracle| at the receivers over max |U_oracle| at the end of the checked pass.
    pub trace_error: f64,
    pub device_bytes: f64,
    pub vendor_version: Option<u32>,
    /// The sliced ELL's columns went as 16-bit offsets.
    pub col16: bool,
    /// Each timed pass's steps were replayed as one CUDA graph (the rows' `step_graph`).
    pub graph: bool,
    /// The full-length run, where one was asked for.
    pub full: Option<FullRun>,
    /// Steps of the checked pass (`error` is after them).
    pub checked_steps: usize,
    /// The library and its version, for a library's route (`peers/pogo_step.py`).
    pub library: Option<String>,
}

/// A full-length run on the device, before its check against the CPU reference's window.
pub struct FullRun {
    /// One sample: seconds for all the increments.
    pub timing: Timing,
    pub steps: usize,
    /// Steps of the CPU reference's window.
    pub window: usize,
    /// U after the window's steps (f64, node-major x, y).
    pub at_window: Vec<f64>,
    /// The receivers' values at every step (`width` values a step, step-major).
    pub trace: Vec<f64>,
    pub width: usize,
}

impl FullRun {
    /// The run checked against the CPU reference's window of its model (`reference`).
    pub fn check(self, reference: &super::prepared::Window) -> CheckedFullRun {
        let (window, nrec) = (self.window, self.width);
        let field_error = crate::fem::verify::relative_l2(&self.at_window, &reference.field);
        let trace_error = receiver_discrepancy(&self.trace[..window * nrec], &reference.trace, nrec, 0.0);
        let stride = (self.steps / 4000).max(1);
        let strided = |v: &[f64]| v.chunks(nrec).step_by(stride).flatten().copied().collect::<Vec<f64>>();
        CheckedFullRun {
            field_error: if self.trace.iter().any(|v| v.is_nan()) { f64::NAN } else { field_error },
            trace_error,
            stride,
            trace: strided(&self.trace),
            reference_trace: strided(&reference.trace),
            window_cpu_s: reference.seconds,
            timing: self.timing,
            steps: self.steps,
            window,
        }
    }
}

/// A full-length run on the device and its check against the CPU reference's window.
pub struct CheckedFullRun {
    /// One sample: seconds for all the increments.
    pub timing: Timing,
    pub steps: usize,
    /// Steps the CPU reference ran, and its host seconds.
    pub window: usize,
    pub window_cpu_s: f64,
    /// ||U - U_cpu|| / ||U_cpu|| after the window's steps (NaN if the trace holds NaN).
    pub field_error: f64,
    /// The paper's discrepancy over the window: max over steps and receivers of
    /// sqrt(dux^2 + duy^2), over the largest sqrt(ux^2 + uy^2) of the CPU's traces.
    pub trace_error: f64,
    /// The traces keep every `stride`-th step (x, y per receiver, step-major).
    pub stride: usize,
    pub trace: Vec<f64>,
    pub reference_trace: Vec<f64>,
}

/// The paper's discrepancy (Fig. 9) between two receiver traces (x, y per receiver,
/// step-major; `width` values a step): max over steps and receivers of sqrt(dux^2 + duy^2),
/// over the largest sqrt(ux^2 + uy^2) of `want` or `floor`, whichever is larger (a short checked
/// pass ends before the wave reaches the receivers, whose traces then hold round-off: the
/// field's largest displacement is its floor); NaN where `got` holds NaN or is short.
pub fn receiver_discrepancy(got: &[f64], want: &[f64], width: usize, floor: f64) -> f64 {
    if got.len() < want.len() || got.iter().any(|v| v.is_nan()) {
        return f64::NAN;
    }
    let (mut worst, mut peak) = (0.0f64, floor);
    for (g, w) in got.chunks(width).zip(want.chunks(width)) {
        for (gp, wp) in g.chunks(2).zip(w.chunks(2)) {
            worst = worst.max((gp[0] - wp[0]).hypot(gp[1] - wp[1]));
            peak = peak.max(wp[0].hypot(wp[1]));
        }
    }
    worst / peak.max(f64::MIN_POSITIVE)
}
