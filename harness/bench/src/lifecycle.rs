//! One case's lifecycle, the same for every method that runs in whole passes of its stages
//! (nvbench's `measure_cold`: a checked run, then the trials). A paper supplies the method,
//! already set up outside any timer (its buffers, kernels and library plans), and [`drive`]
//! owns the sequence:
//!
//! 1. the method's initial state is set and its outputs are poisoned (NaN);
//! 2. one checked pass runs, and the method verifies what it wrote;
//! 3. whole passes are timed through `measure::run_staged` under the case's policy.
//!
//! The declared bytes and flops, and the rows, stay with the paper, which knows what they are.

use fembench_device::{Buffer, Device, DeviceResult};
use fembench_measure::{measure_device, run_staged, CacheMode, Gate, MeasurePolicy, Pass, Staged, Timer, Timing};

use crate::benchmark::{CaseCtx, CaseError};

impl<'a> CaseCtx<'a> {
    /// A case on `target` with nothing around it (no flusher, no upcoming cases): what a test
    /// or a tool runs one method in.
    pub fn alone(
        target: crate::benchmark::Target<'a>,
        run: &'a std::sync::Arc<crate::context::RunContext>,
        precision: fembench_core::Precision,
        policy: &'a MeasurePolicy,
        modules: &'a mut crate::benchmark::ModuleCache,
    ) -> Self {
        CaseCtx { target, run, precision, policy, flusher: None, modules, upcoming: &[], deferred: None }
    }
}

/// A method that runs in whole passes of its stages.
pub trait PassMethod {
    /// What verifying the checked pass found (errors, a structure check).
    type Verdict;
    /// The stages of one pass, in table order, each with its clock.
    fn stages(&self) -> Vec<(&'static str, Timer)>;
    /// The stage whose samples decide when the trials are enough.
    fn decisive(&self) -> &'static str;
    /// Every buffer the checked pass must write, poisoned before it.
    fn outputs(&self) -> Vec<&Buffer>;
    /// Sets what the checked pass starts from, where a pass reads what it writes (a time
    /// stepper's fields). Nothing by default.
    fn reset(&mut self) -> Result<(), CaseError> {
        Ok(())
    }
    /// The checked pass; by default one ordinary pass.
    fn checked_pass(&mut self, pass: &mut Pass) -> Result<(), CaseError> {
        self.pass(pass)
    }
    /// One whole pass, each stage through `pass`.
    fn pass(&mut self, pass: &mut Pass) -> Result<(), CaseError>;
    /// Reads back what the checked pass wrote and judges it against the reference.
    fn verify(&mut self) -> Result<Self::Verdict, CaseError>;
}

/// The timed passes and what the checked pass was found to be.
pub struct Driven<V> {
    pub staged: Staged,
    pub verdict: V,
}

/// The policy of the checked pass: one pass, no warm-up.
fn once(policy: &MeasurePolicy) -> MeasurePolicy {
    MeasurePolicy { warmup: 0, min_reps: 1, max_reps: 1, min_time_s: 0.0, max_time_s: 0.0, target_rel_ci: 0.0, ..policy.clone() }
}

/// The checked pass on poisoned outputs, and its verdict.
pub fn checked<M: PassMethod>(ctx: &mut CaseCtx, dev: &dyn Device, method: &mut M) -> Result<M::Verdict, CaseError> {
    method.reset()?;
    for b in method.outputs() {
        ctx.modules.poison(dev, b)?;
    }
    let stages = method.stages();
    run_staged(&once(ctx.policy), CacheMode::Warm, &stages, method.decisive(), |p| method.checked_pass(p))?;
    dev.synchronize()?;
    method.verify()
}

/// Whole passes timed under `policy` in `mode`.
pub fn trials<M: PassMethod>(policy: &MeasurePolicy, method: &mut M, mode: CacheMode) -> Result<Staged, CaseError> {
    let stages = method.stages();
    run_staged(policy, mode, &stages, method.decisive(), |p| method.pass(p))
}

/// The case's lifecycle: the checked pass and its verdict, then the timed passes.
pub fn drive<M: PassMethod>(ctx: &mut CaseCtx, dev: &dyn Device, method: &mut M, mode: CacheMode) -> Result<Driven<M::Verdict>, CaseError> {
    let verdict = checked(ctx, dev, method)?;
    let staged = trials(ctx.policy, method, mode)?;
    Ok(Driven { staged, verdict })
}

/// The lifecycle of a method whose pass is one device body, timed whole in every mode the
/// policy asks for (a cold repetition flushed first, [`measure_device`]): `outputs` poisoned,
/// one checked run of `body`, `read` of what it wrote, then the trials. `gate`: how the timed
/// region holds the body ([`Gate::Open`] for library calls that wait on the stream).
pub fn drive_body<V>(
    ctx: &mut CaseCtx,
    dev: &dyn Device,
    gate: Gate,
    outputs: &[&Buffer],
    body: &mut dyn FnMut() -> DeviceResult<()>,
    read: &mut dyn FnMut() -> Result<V, CaseError>,
) -> Result<(Vec<Timing>, V), CaseError> {
    use fembench_measure::trace::mark;
    mark("prepared");
    for b in outputs {
        ctx.modules.poison(dev, b)?;
    }
    mark("outputs poisoned");
    body()?;
    dev.synchronize()?;
    mark("checked pass ran");
    let checked = read()?;
    mark("checked pass read back");
    let mut timings = Vec::new();
    for &mode in ctx.policy.modes.iter() {
        timings.push(measure_device(dev, ctx.policy, mode, gate, ctx.flusher, body)?);
        mark(mode.as_str());
    }
    Ok((timings, checked))
}

/// The one cache mode of a method whose passes run warm only; where the experiment asks for
/// cold runs, the case fails with `reason`.
pub fn warm_only(policy: &MeasurePolicy, reason: &str) -> Result<CacheMode, CaseError> {
    if policy.modes.contains(&CacheMode::Cold) {
        return Err(CaseError::Failed(reason.to_string()));
    }
    Ok(CacheMode::Warm)
}
