//! One GPU's step as the case lifecycle runs it ([`crate::lifecycle`]): the fields, the
//! method's matrix and kernel set up outside any timer; the checked pass is the first
//! `check_steps` increments from rest on poisoned outputs, compared with the oracle; a timed
//! pass is `timed_steps` increments in one device-event region, continuing from there.

use std::marker::PhantomData;

use super::blocked::BlockData;
use super::gpu::{receiver_discrepancy, FullRun, StepRun, VendorMatrix};
use super::kernel::POGO;
use super::kernel::{PeerUpdate, Rotation, SellArrays, Sources, StepBlock, StepSell, TraceRow};
use super::method::{Case, DeviceMethod};
use super::prepared::Prepared;
use super::spec::Method;
use super::system::Placed;
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::scan::fill_words;
use crate::device::vendor::VendorOp;
use crate::device::{Buffer, Device, DeviceExt, DeviceResult, Kernel, Launch, RealArg};
use crate::kernels::Defines;
use crate::lifecycle::{drive, Driven, PassMethod};
use crate::measure::{CacheMode, Pass, Timer, Timing};
use crate::real::Real;

/// Where a method's arrays lie: the paper's kernel on its memory arrangement (two planes of
/// blocks x 512 slots), the sliced ELL sorted by link count (sigma > 1) at its sorted
/// positions, the others in dof order.
#[derive(Clone, Copy)]
pub(crate) struct Layout<'p> {
    pub(crate) placed: Option<&'p Placed>,
    pub(crate) blocked: Option<&'p BlockData>,
    /// Entries of U (the arranged length where placed).
    pub(crate) ndof: usize,
}

impl<'p> Layout<'p> {
    pub(crate) fn of(prep: &'p Prepared, method: Method) -> Result<Self, CaseError> {
        let blocked = method
            .blocker()
            .map(|b| {
                prep.blocked(b).as_ref().map(|a| &a.data).map_err(|e| CaseError::Failed(format!("section 3.2's memory arrangement: {e}")))
            })
            .transpose()?;
        let placed = match method {
            Method::SELL | Method::SELL_KF32 => prep.sell.placed.as_ref(),
            _ => blocked.map(|b| &b.placed),
        };
        Ok(Layout { placed, blocked, ndof: placed.map_or(2 * prep.sys.nodes, |p| p.len) })
    }

    /// A vector in this layout back in dof order.
    pub(crate) fn to_dofs(&self, v: Vec<f64>) -> Vec<f64> {
        match self.placed {
            Some(p) => p.to_dofs(&v),
            None => v,
        }
    }
}

/// The fields U (three, rotated), C', the sources and receivers, and the checked pass's trace.
pub(crate) struct Fields {
    pub(crate) cp: Buffer,
    pub(crate) u: [Buffer; 3],
    src_dof: Buffer,
    src_coef: Buffer,
    rec_dof: Buffer,
    nsrc: usize,
    pub(crate) nrec: usize,
    pub(crate) trace: Buffer,
    /// Rows of the checked trace (one a checked step).
    rows: usize,
}

fn to_t<T: Real>(v: &[f64]) -> Vec<T> {
    v.iter().map(|&x| T::from_f64(x)).collect()
}

impl Fields {
    pub(crate) fn upload<T: Real>(dev: &dyn Device, prep: &Prepared, layout: &Layout) -> DeviceResult<Fields> {
        let (sys, s, ndof) = (&prep.sys, std::mem::size_of::<T>(), layout.ndof);
        let (cp, src_dof, src_coef, rec_dof) =
            layout.placed.map_or((&sys.cp, &sys.src_dof, &sys.src_coef, &sys.rec_dof), |p| (&p.cp, &p.src_dof, &p.src_coef, &p.rec_dof));
        let (nsrc, nrec) = (src_dof.len(), rec_dof.len());
        let rows = prep.check_steps.max(1);
        Ok(Fields {
            cp: dev.upload_slice(&to_t::<T>(cp))?,
            u: [dev.alloc(ndof * s)?, dev.alloc(ndof * s)?, dev.alloc(ndof * s)?],
            src_dof: dev.upload_slice(&src_dof.iter().copied().chain([0]).collect::<Vec<u32>>())?,
            src_coef: dev.upload_slice(&to_t::<T>(&src_coef.iter().copied().chain([0.0]).collect::<Vec<_>>()))?,
            rec_dof: dev.upload_slice(&rec_dof.iter().copied().chain([0]).collect::<Vec<u32>>())?,
            nsrc,
            nrec,
            trace: dev.alloc((rows * nrec).max(1) * s)?,
            rows,
        })
    }

    /// (U_prev, U_curr, U_next) of step k.
    pub(crate) fn rotation(&self, k: usize) -> (&Buffer, &Buffer, &Buffer) {
        (&self.u[k % 3], &self.u[(k + 1) % 3], &self.u[(k + 2) % 3])
    }

    /// The sources at the force's amplitude `amp`, and the receivers.
    fn sources(&self, precision: crate::Precision, amp: f64) -> Sources<'_> {
        Sources {
            src_dof: &self.src_dof,
            src_coef: &self.src_coef,
            nsrc: self.nsrc as u32,
            amp: RealArg::new(precision, amp),
            rec_dof: &self.rec_dof,
            nrec: self.nrec as u32,
        }
    }
}

/// What one step launches: our sliced-ELL kernel, the paper's kernel on its arrangement, or
/// the library's SpMV (one plan per rotation: a plan is bound to its x and y) and the update.
pub(crate) enum Step<'a> {
    Sell { kernel: Kernel, kvals: Buffer, slice_ptr: Buffer, col: Buffer },
    Block { kernel: Kernel, kvals: Buffer, lptr: Buffer, table: Buffer, blocks: usize },
    Vendor { ops: Vec<Box<dyn VendorOp + 'a>>, update: Kernel },
}

/// K' in f32 for the kf32 methods, else in the working precision.
fn upload_k<T: Real>(dev: &dyn Device, method: Method, vals: &[f64]) -> DeviceResult<Buffer> {
    if method.kf32() {
        dev.upload_slice(&vals.iter().map(|&v| v as f32).collect::<Vec<f32>>())
    } else {
        dev.upload_slice(&to_t::<T>(vals))
    }
}

impl<'a> Step<'a> {
    /// Our sliced ELL (`sell`, `sell-kf32`), its columns as 16-bit offsets where they fit (the
    /// second value: whether they did).
    pub(crate) fn sell<T: Real>(ctx: &mut CaseCtx, dev: &dyn Device, prep: &Prepared, method: Method) -> Result<(Self, bool), CaseError> {
        let sell = &prep.sell;
        let short = sell.col16();
        let col16 = short.is_some();
        let col = match short {
            Some(c) => dev.upload_slice(&c)?,
            None => dev.upload_slice(&sell.col)?,
        };
        let double_k = T::PRECISION == crate::Precision::F64 && !method.kf32();
        let defines = Defines::for_precision(T::PRECISION).with("KVAL_IS_DOUBLE", double_k as u8).with("COL16", col16 as u8);
        let kernel = ctx.modules.kernel_for::<StepSell>(dev, &POGO, &defines)?;
        Ok((
            Step::Sell { kernel, kvals: upload_k::<T>(dev, method, &sell.vals)?, slice_ptr: dev.upload_slice(&sell.slice_ptr)?, col },
            col16,
        ))
    }

    /// The paper's kernel on its arrangement `b`.
    pub(crate) fn block<T: Real>(ctx: &mut CaseCtx, dev: &dyn Device, b: &BlockData, method: Method) -> Result<Self, CaseError> {
        let double_k = T::PRECISION == crate::Precision::F64 && !method.kf32();
        // Four blocks of 512 threads an SM where K' is f32 (fewer registers a thread).
        let defines = Defines::for_precision(T::PRECISION)
            .with("PLINKS", b.arr.links)
            .with("KVAL_IS_DOUBLE", double_k as u8)
            .with("PB_MIN_BLOCKS", 4 - double_k as u8);
        Ok(Step::Block {
            kernel: ctx.modules.kernel_for::<StepBlock>(dev, &POGO, &defines)?,
            kvals: upload_k::<T>(dev, method, &b.kvals)?,
            lptr: dev.upload_slice(&b.lptr)?,
            table: dev.upload_slice(&b.arr.table)?,
            blocks: b.arr.blocks,
        })
    }

    /// The library's SpMV on `matrix`, one plan per rotation of `fields`, then the update.
    pub(crate) fn vendor<T: Real>(
        ctx: &mut CaseCtx,
        dev: &'a dyn Device,
        matrix: &'a VendorMatrix,
        fields: &'a Fields,
    ) -> Result<Self, CaseError> {
        let lib = dev.sparse()?;
        let ops = (0..3)
            .map(|r| {
                let (_, curr, next) = fields.rotation(r);
                matrix.shape.spmv(lib, T::PRECISION, &matrix.buffers, curr, next)
            })
            .collect::<DeviceResult<Vec<_>>>()?;
        let update = ctx.modules.kernel_for::<PeerUpdate>(dev, &POGO, &Defines::for_precision(T::PRECISION))?;
        Ok(Step::Vendor { ops, update })
    }

    /// Bytes of the step's own device buffers (the library's workspaces included).
    pub(crate) fn bytes(&self) -> usize {
        match self {
            Step::Sell { kvals, slice_ptr, col, .. } => kvals.bytes() + slice_ptr.bytes() + col.bytes(),
            Step::Block { kvals, lptr, table, .. } => kvals.bytes() + lptr.bytes() + table.bytes(),
            Step::Vendor { ops, .. } => ops.iter().map(|op| op.workspace_bytes()).sum(),
        }
    }
}

/// One GPU's stepping: step k makes U_next from (U_prev, U_curr), adds the source at its
/// time and writes the receivers' row of a trace.
pub(crate) struct Stepper<'a, T> {
    pub(crate) dev: &'a dyn Device,
    pub(crate) prep: &'a Prepared,
    pub(crate) layout: Layout<'a>,
    pub(crate) fields: &'a Fields,
    pub(crate) step: Step<'a>,
    pub(crate) fill: Kernel,
    /// The next step's number.
    pub(crate) k: usize,
    pub(crate) timed_steps: usize,
    /// The last timed pass was replayed as a CUDA graph.
    pub(crate) graph: bool,
    pub(crate) real: PhantomData<T>,
}

impl<T: Real> Stepper<'_, T> {
    /// Step k with the force's amplitude `amp`, the receivers into row `row` of `trace`.
    pub(crate) fn launch(&self, k: usize, amp: f64, trace: &Buffer, row: i64) -> DeviceResult<()> {
        let (dev, f, n, ndof) = (self.dev, self.fields, self.prep.sys.nodes, self.layout.ndof);
        let (u_prev, u_curr, u_next) = f.rotation(k);
        let (cp, u) = (&f.cp, Rotation { u_prev, u_curr, u_next });
        // Every kernel ends with the sources, the amplitude, the receivers and the trace's row.
        let (sources, trace) = (f.sources(T::PRECISION, amp), TraceRow { trace, row });
        match &self.step {
            Step::Sell { kernel, kvals: kp, slice_ptr, col } => {
                let args = StepSell { sell: SellArrays { slice_ptr, col, kp, cp }, u, nn: n as i64, sources, trace };
                dev.launch_with(kernel, Launch::cover(n.max(1), 256), &args)
            }
            Step::Block { kernel, kvals: kp, lptr, table, blocks } => {
                let args = StepBlock { table, lptr, kp, cp, u, nblocks: *blocks as u32, sources, trace };
                dev.launch_with(kernel, Launch { groups: *blocks, group_size: super::arrange::BLOCK }, &args)
            }
            Step::Vendor { ops, update } => {
                ops[k % 3].enqueue()?;
                let args = PeerUpdate { cp, u_prev, u_next, ndof: ndof as i64, sources, u_curr, trace };
                dev.launch_with(update, Launch::cover(ndof, 256), &args)
            }
        }
    }

    /// The force's amplitude and the trace row of step k of the checked window.
    fn checked(&self, k: usize) -> (f64, i64) {
        let m = &self.prep.model;
        (m.source.signal.at((m.check_start + k) as f64 * m.dt), (k % self.fields.rows) as i64)
    }

    /// U_prev = U_curr = 0: the model at rest.
    pub(crate) fn at_rest(&self) -> DeviceResult<()> {
        let words = self.layout.ndof * std::mem::size_of::<T>() / 4;
        fill_words(self.dev, &self.fill, &self.fields.u[0], 0, words)?;
        fill_words(self.dev, &self.fill, &self.fields.u[1], 0, words)
    }

    /// Downloads a field (T on the device) as f64.
    pub(crate) fn download(&self, buf: &Buffer, len: usize) -> DeviceResult<Vec<f64>> {
        Ok(self.dev.download_vec::<T>(buf, len)?.into_iter().map(|v| v.to_f64()).collect())
    }
}

/// The checked pass's errors: U against the oracle, and the receivers' traces.
pub(crate) struct Checked {
    pub(crate) error: f64,
    pub(crate) trace_error: f64,
}

impl<T: Real> PassMethod for Stepper<'_, T> {
    type Verdict = Checked;
    fn stages(&self) -> Vec<(&'static str, Timer)> {
        vec![("steps", Timer::DeviceEvent)]
    }
    fn decisive(&self) -> &'static str {
        "steps"
    }
    fn outputs(&self) -> Vec<&Buffer> {
        vec![&self.fields.u[2], &self.fields.trace]
    }
    fn reset(&mut self) -> Result<(), CaseError> {
        self.k = 0;
        Ok(self.at_rest()?)
    }
    /// The first `check_steps` increments, untimed (as many launches as that takes).
    fn checked_pass(&mut self, _: &mut Pass) -> Result<(), CaseError> {
        for k in 0..self.prep.check_steps {
            let (amp, row) = self.checked(k);
            self.launch(k, amp, &self.fields.trace, row)?;
        }
        self.k = self.prep.check_steps;
        Ok(())
    }
    /// `timed_steps` increments from step k in one device-event region. Where the backend has
    /// graphs (CUDA), the pass's launches are recorded first (untimed: nothing runs) and replayed
    /// by one launch, as the Warp step (`warp-bsr`) is; elsewhere they are enqueued one by one.
    fn pass(&mut self, pass: &mut Pass) -> Result<(), CaseError> {
        let (first, this) = (self.k, &*self);
        let mut enqueue = || -> DeviceResult<()> {
            (first..first + this.timed_steps).try_for_each(|k| {
                let (amp, row) = this.checked(k);
                this.launch(k, amp, &this.fields.trace, row)
            })
        };
        let recorded = this.dev.record_if_graphs(&mut enqueue)?;
        pass.device(this.dev, "steps", &mut || match &recorded {
            Some(graph) => this.dev.launch_graph(graph),
            None => enqueue(),
        })?;
        self.k = first + self.timed_steps;
        self.graph = recorded.is_some();
        Ok(())
    }
    fn verify(&mut self) -> Result<Checked, CaseError> {
        let (prep, f) = (self.prep, self.fields);
        let last = &f.u[(prep.check_steps + 1) % 3];
        let got = self.layout.to_dofs(self.download(last, self.layout.ndof)?);
        let error = crate::fem::verify::relative_l2(&got, &prep.reference);
        let got_trace = self.download(&f.trace, f.rows * f.nrec)?;
        let field = prep.reference.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let want = &prep.ref_trace[..(prep.check_steps * f.nrec).min(prep.ref_trace.len())];
        Ok(Checked { error, trace_error: receiver_discrepancy(&got_trace, want, f.nrec, field) })
    }
}

/// Runs `method` on the device in precision T: set up, driven by the case lifecycle (the
/// checked pass from rest, then the timed passes), then the full run where one is asked for.
/// Every device stepping method (ours, the paper's kernel, the cuSPARSE steps): the case's name
/// and its registry line pick the layout and the step.
pub struct DeviceStep;

impl DeviceMethod for DeviceStep {
    fn run<T: Real>(&self, ctx: &mut CaseCtx, dev: &dyn Device, case: &Case) -> Result<StepRun, CaseError> {
        run_device::<T>(ctx, dev, case.prep, case.method, case.steps, case.full)
    }
}

pub fn run_device<T: Real>(
    ctx: &mut CaseCtx,
    dev: &dyn Device,
    prep: &Prepared,
    method: Method,
    timed_steps: usize,
    full_window: Option<(usize, usize)>,
) -> Result<StepRun, CaseError> {
    let layout = Layout::of(prep, method)?;
    let fields = Fields::upload::<T>(dev, prep, &layout)?;
    let vendor = if method.vendor() { Some(VendorMatrix::upload(dev, method, &prep.sys, &to_t::<T>(&prep.sys.kp))?) } else { None };
    let (step, col16) = match (method, &vendor, layout.blocked) {
        (Method::SELL | Method::SELL_KF32, _, _) => Step::sell::<T>(ctx, dev, prep, method)?,
        (_, Some(m), _) => (Step::vendor::<T>(ctx, dev, m, &fields)?, false),
        (_, None, Some(b)) => (Step::block::<T>(ctx, dev, b, method)?, false),
        _ => return Err(CaseError::Failed(format!("{} is not a device method", method.as_str()))),
    };
    let s = std::mem::size_of::<T>();
    let device_bytes = (3 * layout.ndof * s + step.bytes() + vendor.as_ref().map_or(0, |m| m.bytes)) as f64;
    let fill = ctx.modules.filler(dev)?;
    let mut stepper = Stepper::<T> { dev, prep, layout, fields: &fields, step, fill, k: 0, timed_steps, graph: false, real: PhantomData };
    let Driven { staged, verdict } = drive(ctx, dev, &mut stepper, CacheMode::Warm)?;
    let t = staged.stages.into_iter().next().map(|(_, t)| t).expect("one stage");
    let per_step =
        Timing { samples: t.samples.iter().map(|v| v / timed_steps as f64).collect(), timer: t.timer, mode: t.mode, batch: t.batch };
    let full = full_window.map(|w| full_run(ctx, &stepper, w)).transpose()?;
    Ok(StepRun {
        per_step,
        error: verdict.error,
        trace_error: verdict.trace_error,
        device_bytes,
        vendor_version: vendor.is_some().then(|| dev.sparse().map(|l| l.version())).transpose()?,
        col16,
        graph: stepper.graph,
        full,
        checked_steps: prep.check_steps,
        library: None,
    })
}

/// The full run: every increment from rest at t = 0, the receivers recorded at each step,
/// timed in two device-event regions (the gate open: tens of thousands of launches would
/// overfill a closed stream) around a download of U after the CPU window's steps.
fn full_run<T: Real>(ctx: &mut CaseCtx, st: &Stepper<T>, (window, cap): (usize, usize)) -> Result<FullRun, CaseError> {
    let (dev, prep, nrec) = (st.dev, st.prep, st.fields.nrec);
    let steps = prep.model.increments.min(cap);
    let window = window.min(steps);
    let full_trace = dev.alloc((steps * nrec).max(1) * std::mem::size_of::<T>())?;
    st.at_rest()?;
    ctx.modules.poison(dev, &st.fields.u[2])?;
    ctx.modules.poison(dev, &full_trace)?;
    dev.synchronize()?;
    let (signal, dt) = (prep.model.source.signal, prep.model.dt);
    let run = |from: usize, to: usize| {
        dev.time_events_open(&mut || {
            for k in from..to {
                st.launch(k, signal.at(k as f64 * dt), &full_trace, k as i64)?;
            }
            Ok(())
        })
    };
    let first = run(0, window)?;
    let at_window = st.layout.to_dofs(st.download(&st.fields.u[(window + 1) % 3], st.layout.ndof)?);
    // A run the window covers whole (the arrival check) has no second region.
    let rest = if window < steps { run(window, steps)? } else { 0.0 };
    let trace = st.download(&full_trace, steps * nrec)?;
    // Checked against the CPU window (computed in the background since the first GPU case of
    // this size) only after the case, so that the device goes on meanwhile ([`FullRun::check`],
    // called from the case's deferred rest).
    Ok(FullRun {
        timing: Timing { samples: vec![first + rest], timer: Timer::DeviceEventOpen, mode: CacheMode::Warm, batch: 1 },
        steps,
        window,
        at_window,
        trace,
        width: nrec,
    })
}
