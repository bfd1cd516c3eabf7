//! A split model stepped on P GPUs: each part's sliced ELL, vectors, sources and receivers on
//! its GPU; an increment steps every part's sent rows, starts the halo exchange (NCCL, one group
//! of sends and receives on each GPU's exchange stream), steps the interior rows meanwhile, and
//! makes each GPU's next increment wait for its halo. One GPU runs the same kernels with no
//! exchange, on any backend; P > 1 needs CUDA, NCCL and P GPUs, or the case is skipped.

use std::sync::Arc;

use super::scaling_ready::{Outcome, Ready};
use super::sell::SlicedEll;
use super::spec::Method;
use super::split::{Part, Split};
use crate::benchmark::{CaseCtx, CaseError, ModuleCache};
use crate::device::nccl::{nccl_missing, NodeGpus, Transfer};
use crate::device::{Arg, Buffer, Device, DeviceExt, DeviceResult, Kernel, Launch};
use crate::kernels::Defines;
use crate::measure::{repeat, CacheMode, Timer, Timing};
use crate::real::Real;
use crate::{Backend, Precision};

/// Whether a case on `gpus` GPUs can run beside `dev`, or why it is skipped.
pub fn can_run(dev: &dyn Device, gpus: usize) -> Result<(), CaseError> {
    if gpus == 1 {
        return Ok(());
    }
    let backend = dev.info().backend;
    if backend != Some(Backend::Cuda) {
        let name = backend.map_or("this backend", Backend::as_str);
        return Err(CaseError::Skipped(format!("the halo exchange goes through NCCL, CUDA's: {name} runs the one-GPU cases only")));
    }
    if let Some(why) = shared_node(std::env::var("FEMBENCH_CONCURRENT_WORKERS").ok()) {
        return Err(CaseError::Skipped(why));
    }
    let count = crate::device::list(Backend::Cuda).map(|l| l.len()).unwrap_or(0);
    if count < gpus {
        return Err(CaseError::Skipped(format!("needs {gpus} GPUs of one node; this node shows {count}")));
    }
    nccl_missing().map_or(Ok(()), |why| Err(CaseError::Skipped(why)))
}

/// Why a multi-GPU case cannot run in a worker of `harness run --gpus` (the variable that
/// `--gpus` sets for its workers, given): each worker holds one GPU while the others run beside
/// it, and a split case takes GPUs 0..P of the node.
fn shared_node(workers_var: Option<String>) -> Option<String> {
    workers_var.map(|_| {
        "a case on several GPUs needs the node to itself, and `--gpus` runs a worker on each GPU: run this file without --gpus".into()
    })
}

/// The arguments of `pogo_step_sell_rows` (kernels/pogo.kern), named, in the kernel's order.
pub struct SellRows<'a> {
    /// The sliced ELL (slice pointers, columns, K') and C'.
    pub sell: [&'a Buffer; 4],
    /// U_prev, U_curr, U_next.
    pub u: [&'a Buffer; 3],
    /// The positions first..last stepped.
    pub rows: (usize, usize),
    /// The sources' dofs, coefficients and count.
    pub src: (&'a Buffer, &'a Buffer, u32),
    /// The force's amplitude, in the kernel's precision.
    pub amp: Arg<'static>,
    /// The receivers' dofs and count.
    pub rec: (&'a Buffer, u32),
    /// The trace and the row this increment writes.
    pub trace: (&'a Buffer, i64),
}

impl<'a> SellRows<'a> {
    pub fn args(&self) -> [Arg<'a>; 17] {
        let [slice_ptr, col, kvals, cp] = self.sell;
        let [prev, curr, next] = self.u;
        [
            Arg::Buf(slice_ptr),
            Arg::Buf(col),
            Arg::Buf(kvals),
            Arg::Buf(cp),
            Arg::Buf(prev),
            Arg::Buf(curr),
            Arg::Buf(next),
            Arg::I64(self.rows.0 as i64),
            Arg::I64(self.rows.1 as i64),
            Arg::Buf(self.src.0),
            Arg::Buf(self.src.1),
            Arg::U32(self.src.2),
            self.amp,
            Arg::Buf(self.rec.0),
            Arg::U32(self.rec.1),
            Arg::Buf(self.trace.0),
            Arg::I64(self.trace.1),
        ]
    }
}

/// What a case runs: the method, the checked increments and the increments of a timed
/// repetition (0: the checked run is the timed one, the arrival study's).
pub struct Plan {
    pub method: Method,
    pub checked_steps: usize,
    pub timed_steps: usize,
}

/// A case's measurements.
pub struct SplitRun {
    /// Seconds per increment (the slowest GPU's device time), one sample per repetition.
    pub per_increment: Timing,
    /// Seconds per increment of the exchange alone and of the steps alone (P > 1; NaN else).
    pub exchange_s: f64,
    pub compute_s: f64,
    /// ||U - U_cpu|| / ||U_cpu|| after the checked increments.
    pub error: f64,
    /// The receivers' traces against the CPU's (arrival study; NaN else).
    pub trace_error: f64,
    /// max |U - U_one| over max |U_one| (and the same for the traces), against the one-GPU
    /// run of the same model, method and precision (NaN where none ran before).
    pub vs_one_gpu: f64,
    pub cpu_reference_s: f64,
    pub checked_steps: usize,
    pub timed_steps: usize,
    pub col16: bool,
    pub device_bytes: f64,
    pub nccl_version: Option<i32>,
    /// Each GPU's name (the node's, for the row).
    pub gpu_names: Vec<String>,
}

/// The GPUs a case runs on: the runner's own device, or P devices of the node with NCCL.
enum Gpus<'a> {
    One(&'a dyn Device),
    Node(NodeGpus),
}

impl Gpus<'_> {
    fn dev(&self, r: usize) -> &dyn Device {
        match self {
            Gpus::One(d) => *d,
            Gpus::Node(n) => n.device(r),
        }
    }
    fn time(&self, body: &mut dyn FnMut() -> DeviceResult<()>) -> DeviceResult<f64> {
        match self {
            Gpus::One(d) => d.time_events_open(body),
            Gpus::Node(n) => n.time(body),
        }
    }
    fn synchronize(&self) -> DeviceResult<()> {
        match self {
            Gpus::One(d) => d.synchronize(),
            Gpus::Node(n) => n.synchronize(),
        }
    }
}

/// One part's arrays on its GPU.
struct OnGpu {
    u: [Buffer; 3],
    cp: Buffer,
    slice_ptr: Buffer,
    col: Buffer,
    kvals: Buffer,
    src_dof: Buffer,
    src_coef: Buffer,
    rec_dof: Buffer,
    nsrc: usize,
    nrec: usize,
    trace: Buffer,
    trace_rows: usize,
    /// Per send: the positions and the staging for a send that is not one contiguous run.
    packs: Vec<Option<(Buffer, Buffer)>>,
    rows: Kernel,
    pack: Kernel,
}

impl OnGpu {
    fn bytes(&self) -> usize {
        let packs: usize = self.packs.iter().flatten().map(|(a, b)| a.bytes() + b.bytes()).sum();
        self.u.iter().map(Buffer::bytes).sum::<usize>()
            + [&self.cp, &self.slice_ptr, &self.col, &self.kvals, &self.trace].iter().map(|b| b.bytes()).sum::<usize>()
            + packs
    }
}

struct Stepper<'a, T: Real> {
    gpus: Gpus<'a>,
    split: &'a Split,
    parts: Vec<OnGpu>,
    col16: bool,
    _t: std::marker::PhantomData<T>,
}

fn upload_part<T: Real>(
    dev: &dyn Device,
    modules: &mut ModuleCache,
    part: &Part,
    method: Method,
    trace_rows: usize,
) -> DeviceResult<(OnGpu, bool)> {
    let to_t = |v: &[f64]| v.iter().map(|&x| T::from_f64(x)).collect::<Vec<T>>();
    let sell = SlicedEll::new(&part.sys, 1);
    let short = sell.col16();
    let col16 = short.is_some();
    let kf32 = method.kf32();
    let kvals = if kf32 {
        dev.upload_slice(&sell.vals.iter().map(|&v| v as f32).collect::<Vec<f32>>())?
    } else {
        dev.upload_slice(&to_t(&sell.vals))?
    };
    let col = match short {
        Some(c) => dev.upload_slice(&c)?,
        None => dev.upload_slice(&sell.col)?,
    };
    let sys = &part.sys;
    let defines = Defines::for_precision(T::PRECISION)
        .with("KVAL_IS_DOUBLE", (T::PRECISION == Precision::F64 && !kf32) as u8)
        .with("COL16", col16 as u8);
    let ndof = 2 * part.len();
    let s = std::mem::size_of::<T>();
    let nrec = sys.rec_dof.len();
    let packs = part
        .sends
        .iter()
        .map(|l| match l.contiguous() {
            Some(_) => Ok(None),
            None => Ok(Some((dev.upload_slice(&l.at)?, dev.alloc(2 * l.at.len() * s)?))),
        })
        .collect::<DeviceResult<Vec<_>>>()?;
    let on = OnGpu {
        u: [dev.alloc(ndof * s)?, dev.alloc(ndof * s)?, dev.alloc(ndof * s)?],
        cp: dev.upload_slice(&to_t(&sys.cp))?,
        slice_ptr: dev.upload_slice(&sell.slice_ptr)?,
        col,
        kvals,
        src_dof: dev.upload_slice(&sys.src_dof.iter().copied().chain([0]).collect::<Vec<u32>>())?,
        src_coef: dev.upload_slice(&to_t(&sys.src_coef.iter().copied().chain([0.0]).collect::<Vec<f64>>()))?,
        rec_dof: dev.upload_slice(&sys.rec_dof.iter().copied().chain([0]).collect::<Vec<u32>>())?,
        nsrc: sys.src_dof.len(),
        nrec,
        trace: dev.alloc((trace_rows * nrec).max(1) * s)?,
        trace_rows,
        packs,
        rows: modules.kernel(dev, &super::gpu::POGO, &defines, "pogo_step_sell_rows")?,
        pack: modules.kernel(dev, &super::gpu::POGO, &Defines::for_precision(T::PRECISION), "pogo_pack")?,
    };
    Ok((on, col16))
}

impl<'a, T: Real> Stepper<'a, T> {
    fn new(ctx: &mut CaseCtx, dev: &'a dyn Device, split: &'a Split, method: Method, trace_rows: usize) -> Result<Self, CaseError> {
        let p = split.parts.len();
        let gpus = if p == 1 { Gpus::One(dev) } else { Gpus::Node(NodeGpus::open(p)?) };
        let mut parts = Vec::with_capacity(p);
        let mut col16 = true;
        for (r, part) in split.parts.iter().enumerate() {
            let mut own = ModuleCache::default();
            let modules = if p == 1 { &mut *ctx.modules } else { &mut own };
            let (on, c16) = upload_part::<T>(gpus.dev(r), modules, part, method, trace_rows)?;
            col16 &= c16;
            parts.push(on);
        }
        Ok(Stepper { gpus, split, parts, col16, _t: std::marker::PhantomData })
    }

    /// U_prev = U_curr = `start` (dof order; zeros where None), U_next and the traces poisoned.
    fn load(&mut self, start: Option<&[f64]>) -> Result<(), CaseError> {
        for (r, (part, on)) in self.split.parts.iter().zip(&mut self.parts).enumerate() {
            let dev = self.gpus.dev(r);
            let local: Vec<T> = match start {
                Some(u) => part.node_at.iter().flat_map(|&i| [u[2 * i as usize], u[2 * i as usize + 1]]).map(T::from_f64).collect(),
                None => vec![T::from_f64(0.0); 2 * part.len()],
            };
            for b in &mut on.u[..2] {
                dev.upload(b, bytemuck::cast_slice(&local))?;
            }
            // A module cache belongs to one device.
            let mut modules = ModuleCache::default();
            modules.poison(dev, &on.u[2])?;
            modules.poison(dev, &on.trace)?;
            dev.synchronize()?;
        }
        Ok(())
    }

    fn launch_rows(&self, r: usize, k: usize, amp: f64, row: i64, first: usize, last: usize) -> DeviceResult<()> {
        if last <= first {
            return Ok(());
        }
        let on = &self.parts[r];
        let step = SellRows {
            sell: [&on.slice_ptr, &on.col, &on.kvals, &on.cp],
            u: [&on.u[k % 3], &on.u[(k + 1) % 3], &on.u[(k + 2) % 3]],
            rows: (first, last),
            src: (&on.src_dof, &on.src_coef, on.nsrc as u32),
            amp: Arg::real(T::PRECISION, amp),
            rec: (&on.rec_dof, on.nrec as u32),
            trace: (&on.trace, row),
        };
        self.gpus.dev(r).launch(&on.rows, Launch::cover(last - first, 256), &step.args())
    }

    fn launch_packs(&self, r: usize, k: usize) -> DeviceResult<()> {
        let on = &self.parts[r];
        for (l, pack) in self.split.parts[r].sends.iter().zip(&on.packs) {
            if let Some((at, out)) = pack {
                let args = [Arg::Buf(at), Arg::Buf(&on.u[(k + 2) % 3]), Arg::Buf(out), Arg::U32(l.at.len() as u32)];
                self.gpus.dev(r).launch(&on.pack, Launch::cover(l.at.len(), 256), &args)?;
            }
        }
        Ok(())
    }

    fn exchange(&self, nodes: &NodeGpus, k: usize) -> DeviceResult<()> {
        let s = std::mem::size_of::<T>();
        let mut sends = Vec::new();
        let mut recvs = Vec::new();
        for (part, on) in self.split.parts.iter().zip(&self.parts) {
            let next = &on.u[(k + 2) % 3];
            sends.push(
                part.sends
                    .iter()
                    .zip(&on.packs)
                    .map(|(l, pack)| match (pack, l.contiguous()) {
                        (Some((_, out)), _) => Transfer { peer: l.peer, buf: out, offset: 0, count: 2 * l.at.len() },
                        (None, first) => {
                            Transfer { peer: l.peer, buf: next, offset: 2 * s * first.unwrap_or(0) as usize, count: 2 * l.at.len() }
                        }
                    })
                    .collect::<Vec<_>>(),
            );
            recvs.push(
                part.recvs
                    .iter()
                    .map(|l| Transfer { peer: l.peer, buf: next, offset: 2 * s * l.at[0] as usize, count: 2 * l.at.len() })
                    .collect::<Vec<_>>(),
            );
        }
        nodes.start_exchange(T::PRECISION, &sends, &recvs)
    }

    /// Increment k: the sent rows, the exchange started, the interior rows, the exchange's end
    /// awaited by each GPU's next increment. `steps`/`swap` leave out either side (for timing
    /// the exchange and the steps alone).
    fn increment(&self, k: usize, amp: f64, row: i64, steps: bool, swap: bool) -> DeviceResult<()> {
        let n = self.split.parts.len();
        if steps {
            for (r, part) in self.split.parts.iter().enumerate() {
                self.launch_rows(r, k, amp, row, part.interior, part.owned)?;
                self.launch_packs(r, k)?;
            }
        }
        let node = match &self.gpus {
            Gpus::Node(nodes) if swap && n > 1 => Some(nodes),
            _ => None,
        };
        if let Some(nodes) = node {
            self.exchange(nodes, k)?;
        }
        if steps {
            for (r, part) in self.split.parts.iter().enumerate() {
                self.launch_rows(r, k, amp, row, 0, part.interior)?;
            }
        }
        if let Some(nodes) = node {
            nodes.finish_exchange()?;
        }
        Ok(())
    }

    /// The model's U (dof order) after increment k's predecessor: each part's current vector.
    fn gather_u(&self, k: usize) -> DeviceResult<Vec<f64>> {
        let mut curr = Vec::with_capacity(self.parts.len());
        for (r, (part, on)) in self.split.parts.iter().zip(&self.parts).enumerate() {
            let v: Vec<f64> =
                self.gpus.dev(r).download_vec::<T>(&on.u[(k + 1) % 3], 2 * part.len())?.into_iter().map(|x| x.to_f64()).collect();
            curr.push(v);
        }
        let refs: Vec<&[f64]> = curr.iter().map(Vec::as_slice).collect();
        Ok(self.split.gather(&refs))
    }

    /// The model's receivers' traces (x, y per receiver, step-major) from the parts' rows.
    fn gather_trace(&self, width: usize) -> DeviceResult<Vec<f64>> {
        let rows = self.parts.first().map_or(0, |p| p.trace_rows);
        let mut out = vec![f64::NAN; rows * width];
        for (r, (part, on)) in self.split.parts.iter().zip(&self.parts).enumerate() {
            let got = self.gpus.dev(r).download_vec::<T>(&on.trace, rows * on.nrec)?;
            for step in 0..rows {
                for (t, &g) in part.rec_index.iter().enumerate() {
                    out[step * width + g] = got[step * on.nrec + t].to_f64();
                }
            }
        }
        Ok(out)
    }
}

/// A deterministic state over every dof, so that every halo matters from the first increment
/// of the checked pass (a wave from rest reaches a cut only after many increments).
pub fn start_state(dofs: usize) -> Vec<f64> {
    (0..dofs).map(|d| 1e-9 * ((d as f64) * 0.618).sin()).collect()
}

pub fn run<T: Real>(ctx: &mut CaseCtx, dev: &dyn Device, ready: &Ready, split: &Split, plan: &Plan) -> Result<SplitRun, CaseError> {
    let arrival = plan.timed_steps == 0;
    let width = ready.sys.rec_dof.len();
    let trace_rows = if arrival { plan.checked_steps } else { 1 };
    let mut stepper = Stepper::<T>::new(ctx, dev, split, plan.method, trace_rows)?;
    let (dt, signal) = (ready.model.dt, ready.model.source.signal);
    let amp = |k: usize| signal.at(k as f64 * dt);
    let start = (!arrival).then(|| start_state(2 * ready.sys.nodes));
    let reference = ready.reference(plan.checked_steps, start.as_deref());
    // NCCL connects each pair of ranks (and allocates its buffers) on their first send and
    // receive: one exchange first, untimed, so that no timed region holds that set-up. `load`
    // then overwrites what it moved.
    if split.parts.len() > 1 {
        stepper.increment(0, 0.0, 0, false, true)?;
        stepper.gpus.synchronize()?;
    }
    stepper.load(start.as_deref())?;
    let row = |k: usize| if arrival { k as i64 } else { 0 };
    let checked = stepper.gpus.time(&mut || (0..plan.checked_steps).try_for_each(|k| stepper.increment(k, amp(k), row(k), true, true)))?;
    stepper.gpus.synchronize()?;
    let u = stepper.gather_u(plan.checked_steps)?;
    let trace = if arrival { stepper.gather_trace(width)? } else { Vec::new() };
    let error = crate::fem::verify::relative_l2(&u, &reference.outcome.u);
    let trace_error = if arrival { super::gpu::receiver_discrepancy(&trace, &reference.outcome.trace, width, 0.0) } else { f64::NAN };
    let vs_one_gpu = compare_with_one_gpu(ready, plan, T::PRECISION, split.parts.len(), Outcome { u, trace });
    let mut k = plan.checked_steps;
    let per_increment = if arrival {
        Timing { samples: vec![checked / plan.checked_steps as f64], timer: Timer::DeviceEventOpen, mode: CacheMode::Warm }
    } else {
        let samples = repeat(ctx.policy, |_| -> Result<f64, CaseError> {
            let t = stepper.gpus.time(&mut || {
                (k..k + plan.timed_steps).try_for_each(|j| stepper.increment(j, amp(j), 0, true, true))?;
                Ok(())
            })?;
            k += plan.timed_steps;
            Ok(t / plan.timed_steps as f64)
        })?;
        Timing { samples, timer: Timer::DeviceEventOpen, mode: CacheMode::Warm }
    };
    let (exchange_s, compute_s) =
        if split.parts.len() > 1 && !arrival { parts_alone(&stepper, &mut k, plan.timed_steps, &amp)? } else { (f64::NAN, f64::NAN) };
    let nccl_version = match &stepper.gpus {
        Gpus::Node(n) => n.nccl_version(),
        Gpus::One(_) => None,
    };
    let gpu_names = (0..split.parts.len()).map(|r| stepper.gpus.dev(r).info().name.clone()).collect();
    Ok(SplitRun {
        per_increment,
        exchange_s,
        compute_s,
        error,
        trace_error,
        vs_one_gpu,
        cpu_reference_s: reference.seconds,
        checked_steps: plan.checked_steps,
        timed_steps: if arrival { plan.checked_steps } else { plan.timed_steps },
        col16: stepper.col16,
        device_bytes: stepper.parts.iter().map(OnGpu::bytes).sum::<usize>() as f64,
        nccl_version,
        gpu_names,
    })
}

/// Seconds per increment of the exchange alone and of the steps alone (three repetitions each,
/// the median): what the overlap hides.
fn parts_alone<T: Real>(stepper: &Stepper<T>, k: &mut usize, steps: usize, amp: &dyn Fn(usize) -> f64) -> Result<(f64, f64), CaseError> {
    let mut alone = |with_steps: bool, with_swap: bool| -> Result<f64, CaseError> {
        let mut v = Vec::new();
        for _ in 0..3 {
            let from = *k;
            v.push(
                stepper.gpus.time(&mut || (from..from + steps).try_for_each(|j| stepper.increment(j, amp(j), 0, with_steps, with_swap)))?,
            );
            *k += steps;
        }
        v.sort_by(f64::total_cmp);
        Ok(v[1] / steps as f64)
    };
    Ok((alone(false, true)?, alone(true, false)?))
}

/// The largest difference from the one-GPU run of the same model, method and precision, over
/// the largest value of that run (U, and the traces where recorded); the one-GPU run stores
/// its outcome for the others.
fn compare_with_one_gpu(ready: &Ready, plan: &Plan, precision: Precision, parts: usize, got: Outcome) -> f64 {
    let key = (plan.method, precision, plan.checked_steps);
    let mut runs = ready.one_gpu.lock().unwrap_or_else(|e| e.into_inner());
    if parts == 1 {
        runs.insert(key, Arc::new(got));
        return 0.0;
    }
    let Some(one) = runs.get(&key) else { return f64::NAN };
    let rel = |a: &[f64], b: &[f64]| {
        if a.len() != b.len() || a.iter().any(|v| v.is_nan()) {
            return f64::NAN;
        }
        let peak = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / peak.max(f64::MIN_POSITIVE)
    };
    let t = if got.trace.is_empty() { 0.0 } else { rel(&got.trace, &one.trace) };
    rel(&got.u, &one.u).max(t)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_worker_of_gpus_all_skips_the_cases_on_several_gpus() {
        assert!(super::shared_node(Some("3".into())).is_some_and(|r| r.contains("without --gpus")));
        assert!(super::shared_node(Some("0".into())).is_some());
        assert_eq!(super::shared_node(None), None);
    }
}
