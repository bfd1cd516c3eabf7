//! The device methods: our sliced-ELL step (K' in the working precision or in f32) and the
//! cuSPARSE steps (CSR, or cuSPARSE's own sliced ELL) followed by one update kernel; the kernel that writes U_next also adds the
//! source and records the receivers. A timed repetition
//! is `timed_steps` steps in one device-event region; the checked pass starts from rest on
//! poisoned buffers and is compared with the oracle.

use super::prepared::Prepared;
use super::spec::Method;
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::scan::fill_words;
use crate::device::vendor::{Compressed, Sliced, VendorOp, VendorSparse};
use crate::device::{Arg, Buffer, Device, DeviceExt, DeviceResult, Launch};
use crate::kernels::{Defines, KernelSource};
use crate::measure::{run_staged, CacheMode, Timer, Timing};
use crate::real::Real;

/// The kernel file.
pub const POGO: KernelSource = KernelSource { file: "pogo.kern", text: include_str!("../../../kernels/pogo.kern") };

/// The matrix of a vendor step (CSR, or sliced ELL of 32-row slices) and its shape.
struct VendorMatrix {
    /// CSR: row offsets, columns, values; sliced ELL: slice offsets, columns, values.
    buffers: [Buffer; 3],
    shape: VendorShape,
    bytes: usize,
}

#[derive(Clone, Copy)]
enum VendorShape {
    Csr { rows: usize, nnz: usize },
    Sliced { rows: usize, nnz: usize, stored: usize },
}

/// cuSPARSE's sliced ELL: 32-row slices (a warp's rows).
const VENDOR_SLICE: usize = 32;

impl VendorMatrix {
    fn upload<T: Real>(dev: &dyn Device, method: Method, sys: &super::system::System, kp: &[T]) -> DeviceResult<VendorMatrix> {
        let p = &sys.pattern;
        let (rows, nnz) = (p.rows(), p.nnz());
        let (buffers, shape) = if method == Method::SellCusparse {
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
    fn spmv<'a>(
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
    /// The full-length run, where one was asked for.
    pub full: Option<FullRun>,
    /// Steps of the checked pass (`error` is after them).
    pub checked_steps: usize,
}

/// Runs `method` on the device in precision T.
pub fn run_device<T: Real>(
    ctx: &mut CaseCtx,
    dev: &dyn Device,
    prep: &Prepared,
    method: Method,
    timed_steps: usize,
    full_window: Option<(usize, usize)>,
) -> Result<StepRun, CaseError> {
    let sys = &prep.sys;
    let n = sys.nodes;
    let s = std::mem::size_of::<T>();
    let to_t = |v: &[f64]| v.iter().map(|&x| T::from_f64(x)).collect::<Vec<T>>();
    // The paper's kernel works on its memory arrangement: U, C', the sources and receivers at
    // the arranged positions (two planes of blocks x 512 slots); the sliced ELL sorted by link
    // count (sigma > 1) at its sorted positions; the others in dof order.
    let blocked = method
        .blocker()
        .map(|b| prep.blocked(b).as_ref().map(|a| &a.data).map_err(|e| CaseError::Failed(format!("section 3.2's memory arrangement: {e}"))))
        .transpose()?;
    let placed = match method {
        Method::Sell | Method::SellKf32 => prep.sell.placed.as_ref(),
        _ => blocked.map(|b| &b.placed),
    };
    let ndof = placed.map_or(2 * n, |p| p.len);
    let (cp_h, src_dof_h, src_coef_h, rec_dof_h) =
        placed.map_or((&sys.cp, &sys.src_dof, &sys.src_coef, &sys.rec_dof), |p| (&p.cp, &p.src_dof, &p.src_coef, &p.rec_dof));
    let to_dofs = |v: Vec<f64>| match placed {
        Some(p) => p.to_dofs(&v),
        None => v,
    };
    let cp = dev.upload_slice(&to_t(cp_h))?;
    let u: Vec<Buffer> = (0..3).map(|_| dev.alloc(ndof * s)).collect::<DeviceResult<_>>()?;
    let src_dof = dev.upload_slice(&src_dof_h.iter().copied().chain([0]).collect::<Vec<u32>>())?;
    let src_coef = dev.upload_slice(&to_t(&src_coef_h.iter().copied().chain([0.0]).collect::<Vec<_>>()))?;
    let rec_dof = dev.upload_slice(&rec_dof_h.iter().copied().chain([0]).collect::<Vec<u32>>())?;
    let (nsrc, nrec) = (src_dof_h.len(), rec_dof_h.len());
    let rows = prep.check_steps.max(1);
    let trace = dev.alloc((rows * nrec).max(1) * s)?;
    let defines = Defines::for_precision(T::PRECISION);
    let fill = ctx.modules.filler(dev)?;
    let signal = prep.model.source.signal;
    let (dt, start) = (prep.model.dt, prep.model.check_start);
    let mut device_bytes = (3 * ndof * s) as f64;

    // The method's step k: U_next from (U_prev, U_curr), the source at t = k dt and the
    // receivers' row, as a closure over the rotation.
    // Its arguments: the rotation k, the force's amplitude, the trace buffer and its row.
    type StepFn<'a> = Box<dyn Fn(usize, f64, &Buffer, i64) -> DeviceResult<()> + 'a>;
    let tail = |amp: f64| {
        [
            Arg::Buf(&src_dof),
            Arg::Buf(&src_coef),
            Arg::U32(nsrc as u32),
            Arg::real(T::PRECISION, amp),
            Arg::Buf(&rec_dof),
            Arg::U32(nrec as u32),
        ]
    };
    let rot = |k: usize| (&u[k % 3], &u[(k + 1) % 3], &u[(k + 2) % 3]);
    let cp = &cp;
    let sell = &prep.sell;
    let mut held: Vec<Buffer> = Vec::new();
    let mut ops: Vec<Box<dyn VendorOp + '_>> = Vec::new();
    let mut vendor_version = None;
    let mut col16 = false;
    // K' in f32 for the kf32 methods, else in the working precision.
    let upload_k = |vals: &[f64]| -> DeviceResult<Buffer> {
        if method.kf32() {
            dev.upload_slice(&vals.iter().map(|&v| v as f32).collect::<Vec<f32>>())
        } else {
            dev.upload_slice(&to_t(vals))
        }
    };
    let step: StepFn = match method {
        Method::Sell | Method::SellKf32 => {
            let kf32 = method.kf32();
            let kvals = upload_k(&sell.vals)?;
            let slice_ptr = dev.upload_slice(&sell.slice_ptr)?;
            let short = sell.col16();
            col16 = short.is_some();
            let col = match short {
                Some(c) => dev.upload_slice(&c)?,
                None => dev.upload_slice(&sell.col)?,
            };
            device_bytes += (kvals.bytes() + slice_ptr.bytes() + col.bytes()) as f64;
            held.extend([kvals, slice_ptr, col]);
            let defines =
                defines.clone().with("KVAL_IS_DOUBLE", (T::PRECISION == crate::Precision::F64 && !kf32) as u8).with("COL16", col16 as u8);
            let kern = ctx.modules.kernel(dev, &POGO, &defines, "pogo_step_sell")?;
            let held = &held;
            Box::new(move |k, amp, trace: &Buffer, row| {
                let (prev, curr, next) = rot(k);
                let mut args = vec![
                    Arg::Buf(&held[1]),
                    Arg::Buf(&held[2]),
                    Arg::Buf(&held[0]),
                    Arg::Buf(cp),
                    Arg::Buf(prev),
                    Arg::Buf(curr),
                    Arg::Buf(next),
                    Arg::I64(n as i64),
                ];
                args.extend(tail(amp));
                args.extend([Arg::Buf(trace), Arg::I64(row)]);
                dev.launch(&kern, Launch::cover(n.max(1), 256), &args)
            })
        }
        Method::PogoAligned | Method::PogoGreedy | Method::PogoAlignedKf32 => {
            let b = blocked.expect("an arranged method");
            let kf32 = method.kf32();
            let kvals = upload_k(&b.kvals)?;
            let lptr = dev.upload_slice(&b.lptr)?;
            let table = dev.upload_slice(&b.arr.table)?;
            device_bytes += (kvals.bytes() + lptr.bytes() + table.bytes()) as f64;
            held.extend([kvals, lptr, table]);
            let double_k = T::PRECISION == crate::Precision::F64 && !kf32;
            // Four blocks of 512 threads an SM where K' is f32 (fewer registers a thread).
            let defines = defines
                .clone()
                .with("PLINKS", b.arr.links)
                .with("KVAL_IS_DOUBLE", double_k as u8)
                .with("PB_MIN_BLOCKS", 4 - double_k as u8);
            let kern = ctx.modules.kernel(dev, &POGO, &defines, "pogo_step_block")?;
            let (held, blocks) = (&held, b.arr.blocks);
            Box::new(move |k, amp, trace: &Buffer, row| {
                let (prev, curr, next) = rot(k);
                let mut args = vec![
                    Arg::Buf(&held[2]),
                    Arg::Buf(&held[1]),
                    Arg::Buf(&held[0]),
                    Arg::Buf(cp),
                    Arg::Buf(prev),
                    Arg::Buf(curr),
                    Arg::Buf(next),
                    Arg::U32(blocks as u32),
                ];
                args.extend(tail(amp));
                args.extend([Arg::Buf(trace), Arg::I64(row)]);
                dev.launch(&kern, Launch { groups: blocks, group_size: super::arrange::BLOCK }, &args)
            })
        }
        Method::CsrCusparse | Method::SellCusparse => {
            let lib = dev.sparse()?;
            vendor_version = Some(lib.version());
            let matrix = VendorMatrix::upload(dev, method, sys, &to_t(&sys.kp))?;
            device_bytes += matrix.bytes as f64;
            held.extend(matrix.buffers);
            let held = &held;
            // One plan per rotation: a plan is bound to its x and y.
            for r in 0..3 {
                let (_, curr, next) = rot(r);
                let op = matrix.shape.spmv(lib, T::PRECISION, held, curr, next)?;
                device_bytes += op.workspace_bytes() as f64;
                ops.push(op);
            }
            let update = ctx.modules.kernel(dev, &POGO, &defines, "pogo_peer_update")?;
            let ops = &ops;
            Box::new(move |k, amp, trace: &Buffer, row| {
                let (prev, curr, next) = rot(k);
                ops[k % 3].enqueue()?;
                let mut args = vec![Arg::Buf(cp), Arg::Buf(prev), Arg::Buf(next), Arg::I64(ndof as i64)];
                args.extend(tail(amp));
                args.extend([Arg::Buf(curr), Arg::Buf(trace), Arg::I64(row)]);
                dev.launch(&update, Launch::cover(ndof, 256), &args)
            })
        }
        _ => return Err(CaseError::Failed(format!("{} is not a device method", method.as_str()))),
    };

    // The checked pass: U_prev = U_curr = 0, U_next and the trace poisoned.
    fill_words(dev, &fill, &u[0], 0, ndof * s / 4)?;
    fill_words(dev, &fill, &u[1], 0, ndof * s / 4)?;
    ctx.modules.poison(dev, &u[2])?;
    ctx.modules.poison(dev, &trace)?;
    let checked = |k: usize| (signal.at((start + k) as f64 * dt), (k % rows) as i64);
    for k in 0..prep.check_steps {
        let (amp, row) = checked(k);
        step(k, amp, &trace, row)?;
    }
    dev.synchronize()?;
    let last = &u[(prep.check_steps + 1) % 3];
    let got = to_dofs(dev.download_vec::<T>(last, ndof)?.into_iter().map(|v| v.to_f64()).collect());
    let error = crate::fem::verify::relative_l2(&got, &prep.reference);
    let got_trace: Vec<f64> = dev.download_vec::<T>(&trace, rows * nrec)?.into_iter().map(|v| v.to_f64()).collect();
    let field = prep.reference.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let trace_error = receiver_discrepancy(&got_trace, &prep.ref_trace[..(prep.check_steps * nrec).min(prep.ref_trace.len())], nrec, field);

    // Timed repetitions continue from there.
    let mut k = prep.check_steps;
    let stages = [("steps", Timer::DeviceEvent)];
    let staged = run_staged(ctx.policy, CacheMode::Warm, &stages, "steps", |pass| -> Result<(), CaseError> {
        Ok(pass.device(dev, "steps", &mut || {
            for _ in 0..timed_steps {
                let (amp, row) = checked(k);
                step(k, amp, &trace, row)?;
                k += 1;
            }
            Ok(())
        })?)
    })?;
    let t = staged.stages.into_iter().next().map(|(_, t)| t).expect("one stage");
    let per_step = Timing { samples: t.samples.iter().map(|v| v / timed_steps as f64).collect(), timer: t.timer, mode: t.mode };

    // The full run: every increment from rest at t = 0, the receivers recorded at each step,
    // timed in two device-event regions (the gate open: tens of thousands of launches would
    // overfill a closed stream) around a download of U after the CPU window's steps.
    let full = match full_window {
        Some((window, cap)) => {
            let steps = prep.model.increments.min(cap);
            let window = window.min(steps);
            let full_trace = dev.alloc((steps * nrec).max(1) * s)?;
            fill_words(dev, &fill, &u[0], 0, ndof * s / 4)?;
            fill_words(dev, &fill, &u[1], 0, ndof * s / 4)?;
            ctx.modules.poison(dev, &u[2])?;
            ctx.modules.poison(dev, &full_trace)?;
            dev.synchronize()?;
            let run = |from: usize, to: usize| {
                dev.time_events_open(&mut || {
                    for k in from..to {
                        step(k, signal.at(k as f64 * dt), &full_trace, k as i64)?;
                    }
                    Ok(())
                })
            };
            let first = run(0, window)?;
            let at_window = to_dofs(dev.download_vec::<T>(&u[(window + 1) % 3], ndof)?.into_iter().map(|v| v.to_f64()).collect());
            // A run the window covers whole (the arrival check) has no second region.
            let rest = if window < steps { run(window, steps)? } else { 0.0 };
            let trace: Vec<f64> = dev.download_vec::<T>(&full_trace, steps * nrec)?.into_iter().map(|v| v.to_f64()).collect();
            // Checked against the CPU window (computed in the background since the first GPU
            // case of this size) only after the case, so that the device goes on meanwhile
            // ([`FullRun::check`], called from the case's deferred rest).
            Some(FullRun {
                timing: Timing { samples: vec![first + rest], timer: Timer::DeviceEventOpen, mode: CacheMode::Warm },
                steps,
                window,
                at_window,
                trace,
                width: nrec,
            })
        }
        None => None,
    };
    Ok(StepRun { per_step, error, trace_error, device_bytes, vendor_version, col16, full, checked_steps: prep.check_steps })
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
