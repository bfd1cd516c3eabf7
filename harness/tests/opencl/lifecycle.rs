//! The case lifecycle on an OpenCL device: its order (initial state, poison, checked pass,
//! verdict, then the timed passes) and a verdict that fails where the pass leaves an output
//! unwritten.

use std::sync::Arc;

use fembench::benchmark::{CaseCtx, CaseError, ModuleCache, Target};
use fembench::context::RunContext;
use fembench::device::{Buffer, Device, DeviceExt};
use fembench::lifecycle::{drive, warm_only, Driven, PassMethod};
use fembench::measure::{CacheMode, MeasurePolicy, Pass, Timer};
use fembench::Precision;

use crate::common;

/// Writes 1.0 into every word of its output, or (`skip`) into a scratch buffer instead; notes
/// each call.
struct Ones<'a> {
    dev: &'a dyn Device,
    filler: fembench::device::Kernel,
    out: Buffer,
    scratch: Buffer,
    skip: bool,
    calls: Vec<&'static str>,
}

impl PassMethod for Ones<'_> {
    type Verdict = bool;
    fn stages(&self) -> Vec<(&'static str, Timer)> {
        vec![("write", Timer::DeviceEvent)]
    }
    fn decisive(&self) -> &'static str {
        "write"
    }
    fn outputs(&self) -> Vec<&Buffer> {
        vec![&self.out]
    }
    fn reset(&mut self) -> Result<(), CaseError> {
        self.calls.push("reset");
        Ok(())
    }
    fn pass(&mut self, pass: &mut Pass) -> Result<(), CaseError> {
        self.calls.push("pass");
        let (dev, skip) = (self.dev, self.skip);
        let (k, out) = (&self.filler, if skip { &self.scratch } else { &self.out });
        pass.device(dev, "write", &mut || fembench::device::scan::fill_words(dev, k, out, 1.0f32.to_bits(), 64))?;
        Ok(())
    }
    fn verify(&mut self) -> Result<bool, CaseError> {
        self.calls.push("verify");
        let got: Vec<f32> = self.dev.download_vec(&self.out, 64)?;
        Ok(got.iter().all(|&v| v == 1.0))
    }
}

fn drive_ones(skip: bool) -> (Driven<bool>, Vec<&'static str>) {
    let dev = common::opencl_device().expect("an OpenCL device");
    let run = Arc::new(RunContext::default());
    let policy = MeasurePolicy { warmup: 1, min_reps: 3, max_reps: 3, min_time_s: 0.0, ..MeasurePolicy::default() };
    let mut modules = ModuleCache::default();
    let filler = modules.filler(&*dev).unwrap();
    let out = dev.upload_slice(&[1.0f32; 64]).unwrap();
    let scratch = dev.alloc(4 * 64).unwrap();
    let mut m = Ones { dev: &*dev, filler, out, scratch, skip, calls: Vec::new() };
    let mut ctx = CaseCtx::alone(Target::Gpu(&*dev), &run, Precision::F32, &policy, &mut modules);
    let mode = warm_only(ctx.policy, "warm only").unwrap();
    let driven = drive(&mut ctx, &*dev, &mut m, mode).unwrap();
    let calls = std::mem::take(&mut m.calls);
    (driven, calls)
}

#[test]
fn the_lifecycle_checks_a_poisoned_pass_before_timing_and_its_check_can_fail() {
    let _turn = common::opencl_turn();
    if common::opencl_device().is_none() {
        return;
    }
    let (driven, calls) = drive_ones(false);
    assert!(driven.verdict, "a pass that writes its output verifies");
    // The checked pass, then one warm-up and three timed passes.
    assert_eq!(calls, ["reset", "pass", "verify", "pass", "pass", "pass", "pass"]);
    assert_eq!((driven.staged.passes, driven.staged.total.samples.len()), (4, 3));
    // The buffer held 1.0 before the case: only the poison makes a pass that writes nothing fail.
    let (driven, _) = drive_ones(true);
    assert!(!driven.verdict, "a pass that leaves its output unwritten passed");
    let cold = MeasurePolicy { modes: fembench::experiment::NonEmpty(vec![CacheMode::Cold]), ..MeasurePolicy::default() };
    assert!(matches!(warm_only(&cold, "warm only"), Err(CaseError::Failed(r)) if r == "warm only"));
}
