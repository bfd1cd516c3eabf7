//! A split model stepped on P GPUs: each part's sliced ELL, vectors, sources and receivers on
//! its GPU; an increment steps every part's sent rows, starts the halo exchange (NCCL, one group
//! of sends and receives on each GPU's exchange stream), steps the interior rows meanwhile, and
//! makes each GPU's next increment wait for its halo. One GPU runs the same kernels with no
//! exchange, on any backend; P > 1 needs CUDA, NCCL and P GPUs, or the case is skipped.

use std::sync::Arc;

use super::ready::{part_blocks, Outcome, Ready};
use super::split::Split;
use super::stepper::{Stepper, Writes};
use super::upload::OnGpu;
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::nccl::nccl_missing;
use crate::device::Device;
use crate::measure::{repeat, CacheMode, Timer, Timing};
use crate::pogo::spec::Method;
use crate::real::Real;
use crate::Backend;

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
    /// Host seconds per increment to enqueue the timed increments (median of the repetitions):
    /// where it nears the device time, the host, not the GPUs, sets the pace.
    pub host_s: f64,
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

/// A deterministic state over every dof, so that every halo matters from the first increment
/// of the checked pass (a wave from rest reaches a cut only after many increments).
pub fn start_state(dofs: usize) -> Vec<f64> {
    (0..dofs).map(|d| 1e-9 * ((d as f64) * 0.618).sin()).collect()
}

/// What a case's increments read besides the model: the plan, the start (rest for the arrival
/// study, [`start_state`] else) and the receivers' count.
struct Drive<'a> {
    ready: &'a Ready,
    plan: &'a Plan,
    start: Option<Vec<f64>>,
    width: usize,
}

impl<'a> Drive<'a> {
    fn new(ready: &'a Ready, plan: &'a Plan) -> Self {
        let start = (!plan.arrival()).then(|| start_state(ready.sys.dofs()));
        Drive { ready, plan, start, width: ready.sys.rec_dof.len() }
    }
    /// Increment k's force and trace row (every increment its own row in the arrival study).
    fn at(&self, k: usize) -> Writes {
        let m = &self.ready.model;
        Writes { amp: m.signal().at(k as f64 * m.dt()), row: if self.plan.arrival() { k as i64 } else { 0 } }
    }
    fn trace_rows(&self) -> usize {
        if self.plan.arrival() {
            self.plan.checked_steps
        } else {
            1
        }
    }
}

impl Plan {
    /// The arrival study's plan: its checked run is the timed one.
    fn arrival(&self) -> bool {
        self.timed_steps == 0
    }
}

/// The checked pass: U (dof order) and, in the arrival study, the traces after the plan's
/// checked increments from the start, with the device seconds they took.
fn checked_pass<T: Real>(stepper: &mut Stepper<T>, drive: &Drive) -> Result<(Outcome, f64), CaseError> {
    stepper.load(drive.start.as_deref())?;
    let steps = drive.plan.checked_steps;
    let seconds = stepper.gpus.time(&mut || (0..steps).try_for_each(|k| stepper.increment(k, drive.at(k), true, true)))?;
    stepper.gpus.synchronize()?;
    let u = stepper.gather_u(steps)?;
    let trace = if drive.plan.arrival() { stepper.gather_trace(drive.width)? } else { Vec::new() };
    Ok((Outcome { u, trace }, seconds))
}

/// The one-GPU run's outcome of the same model, method, precision and checked increments: the
/// one stored by the run's one-GPU case, or (where that case ran in another process, or the
/// model has no one-GPU case, as the weak study's larger ones) a checked pass on `dev` now.
/// None where that pass cannot be made (the model does not fit one GPU).
fn one_gpu_outcome<T: Real>(ctx: &mut CaseCtx, dev: &dyn Device, drive: &Drive) -> Option<Arc<Outcome>> {
    let key = (drive.plan.method, T::PRECISION, drive.plan.checked_steps);
    if let Some(one) = drive.ready.one_gpu.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Some(one.clone());
    }
    let whole = drive.ready.split(1);
    let whole = whole.as_ref().as_ref().ok()?;
    let arranged = drive.ready.arranged_for(drive.plan.method, 1);
    let blocks = part_blocks(&arranged).ok()?;
    let mut stepper = Stepper::<T>::new(ctx, dev, whole, drive.plan.method, blocks, drive.trace_rows()).ok()?;
    let (outcome, _) = checked_pass(&mut stepper, drive).ok()?;
    let outcome = Arc::new(outcome);
    drive.ready.one_gpu.lock().unwrap_or_else(|e| e.into_inner()).insert(key, outcome.clone());
    Some(outcome)
}

pub fn run<T: Real>(ctx: &mut CaseCtx, dev: &dyn Device, ready: &Ready, split: &Split, plan: &Plan) -> Result<SplitRun, CaseError> {
    let drive = Drive::new(ready, plan);
    let several = split.parts.len() > 1;
    // Before the node's GPUs are opened, so that the one-GPU pass has GPU 0 to itself.
    let one = if several { one_gpu_outcome::<T>(ctx, dev, &drive) } else { None };
    let reference = ready.reference(plan.checked_steps, drive.start.as_deref());
    let arranged = ready.arranged_for(plan.method, split.parts.len());
    let blocks = part_blocks(&arranged).map_err(|e| CaseError::Failed(format!("section 3.2's memory arrangement of a part: {e}")))?;
    let mut stepper = Stepper::<T>::new(ctx, dev, split, plan.method, blocks, drive.trace_rows())?;
    // NCCL connects each pair of ranks (and allocates its buffers) on their first send and
    // receive: one exchange first, untimed, so that no timed region holds that set-up. The
    // checked pass's load then overwrites what it moved.
    if several {
        stepper.increment(0, Writes { amp: 0.0, row: 0 }, false, true)?;
        stepper.gpus.synchronize()?;
    }
    let (got, checked) = checked_pass(&mut stepper, &drive)?;
    let error = crate::fem::verify::relative_l2(&got.u, &reference.outcome.u);
    let trace_error = if plan.arrival() {
        crate::pogo::gpu::receiver_discrepancy(&got.trace, &reference.outcome.trace, drive.width, 0.0)
    } else {
        f64::NAN
    };
    let vs_one_gpu = match &one {
        Some(one) => difference(&got, one),
        None => f64::NAN,
    };
    if !several {
        ready.one_gpu.lock().unwrap_or_else(|e| e.into_inner()).insert((plan.method, T::PRECISION, plan.checked_steps), Arc::new(got));
    }
    let mut k = plan.checked_steps;
    let (per_increment, host_s) = if plan.arrival() {
        (
            Timing { samples: vec![checked / plan.checked_steps as f64], timer: Timer::DeviceEventOpen, mode: CacheMode::Warm, batch: 1 },
            f64::NAN,
        )
    } else {
        timed_increments(ctx, &stepper, &mut k, plan.timed_steps, &|j| drive.at(j))?
    };
    let (exchange_s, compute_s) =
        if several && !plan.arrival() { parts_alone(&stepper, &mut k, plan.timed_steps, &|j| drive.at(j))? } else { (f64::NAN, f64::NAN) };
    Ok(SplitRun {
        per_increment,
        exchange_s,
        compute_s,
        host_s,
        error,
        trace_error,
        vs_one_gpu,
        cpu_reference_s: reference.seconds,
        checked_steps: plan.checked_steps,
        timed_steps: if plan.arrival() { plan.checked_steps } else { plan.timed_steps },
        col16: stepper.col16,
        device_bytes: stepper.parts.iter().map(OnGpu::bytes).sum::<usize>() as f64,
        nccl_version: stepper.nccl_version(),
        gpu_names: (0..split.parts.len()).map(|r| stepper.gpus.dev(r).info().name.clone()).collect(),
    })
}

/// The timed repetitions of `steps` increments from increment k on: the device seconds per
/// increment (the slowest GPU's), and the host's seconds per increment to enqueue them (median).
fn timed_increments<T: Real>(
    ctx: &CaseCtx,
    stepper: &Stepper<T>,
    k: &mut usize,
    steps: usize,
    at: &dyn Fn(usize) -> Writes,
) -> Result<(Timing, f64), CaseError> {
    let mut host = Vec::new();
    let samples = repeat(ctx.policy, |_| -> Result<f64, CaseError> {
        let from = *k;
        let t = stepper.gpus.time(&mut || {
            let enqueue = std::time::Instant::now();
            (from..from + steps).try_for_each(|j| stepper.increment(j, at(j), true, true))?;
            host.push(enqueue.elapsed().as_secs_f64() / steps as f64);
            Ok(())
        })?;
        *k += steps;
        Ok(t / steps as f64)
    })?;
    host.sort_by(f64::total_cmp);
    let host_s = host.get(host.len() / 2).copied().unwrap_or(f64::NAN);
    Ok((Timing { samples, timer: Timer::DeviceEventOpen, mode: CacheMode::Warm, batch: 1 }, host_s))
}

/// Seconds per increment of the exchange alone and of the steps alone (three repetitions each,
/// the median): what the overlap hides.
fn parts_alone<T: Real>(stepper: &Stepper<T>, k: &mut usize, steps: usize, at: &dyn Fn(usize) -> Writes) -> Result<(f64, f64), CaseError> {
    let mut alone = |with_steps: bool, with_swap: bool| -> Result<f64, CaseError> {
        let mut v = Vec::new();
        for _ in 0..3 {
            let from = *k;
            v.push(stepper.gpus.time(&mut || (from..from + steps).try_for_each(|j| stepper.increment(j, at(j), with_steps, with_swap)))?);
            *k += steps;
        }
        v.sort_by(f64::total_cmp);
        Ok(v[1] / steps as f64)
    };
    Ok((alone(false, true)?, alone(true, false)?))
}

/// The largest difference of `got` from the one-GPU run's outcome, over the largest value of
/// that run (U, and the traces where recorded); NaN where the sizes differ or `got` has a NaN.
fn difference(got: &Outcome, one: &Outcome) -> f64 {
    let rel = |a: &[f64], b: &[f64]| {
        if a.len() != b.len() || a.iter().any(|v| v.is_nan()) {
            return f64::NAN;
        }
        let peak = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / peak.max(f64::MIN_POSITIVE)
    };
    let t = if got.trace.is_empty() { 0.0 } else { rel(&got.trace, &one.trace) };
    let u = rel(&got.u, &one.u);
    if u.is_nan() || t.is_nan() {
        f64::NAN
    } else {
        u.max(t)
    }
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
