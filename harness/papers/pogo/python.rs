//! The library peers (the `external` kind, `peers/pogo_step.py`): Eq. (4)'s step as a user of
//! NVIDIA Warp (`warp.sparse`'s BSR SpMV and an update kernel, in CUDA graphs) or JAX (BCSR in
//! a jitted `fori_loop`) writes it, on the operators the harness builds, handed over as arrays.
//! The script runs the checked steps from rest and hands back U after them; it is checked here
//! against the element-by-element f64 oracle like every method.

use super::gpu::StepRun;
use super::method::{About, Case, PogoMethod};
use crate::benchmark::{CaseCtx, CaseError};
use crate::external::{self, Inputs, Script};
use crate::measure::Timing;

const SCRIPT: Script = Script { file: "pogo_step.py", text: include_str!("../../../peers/pogo_step.py") };

/// A route of the script, by its registered name.
pub struct PythonStep(pub About);

impl PogoMethod for PythonStep {
    fn about(&self) -> &About {
        &self.0
    }
    fn run(&self, ctx: &mut CaseCtx, case: &Case) -> Result<StepRun, CaseError> {
        let name = self.0.names[0];
        let device = external::cuda_device(ctx, name)?;
        if case.prep.sys.dim != 2 {
            return Err(CaseError::Skipped(format!("{name} steps 2D models (2 x 2 node blocks)")));
        }
        let steps = if device.is_some() { case.steps } else { case.cpu_steps };
        let (u, warm, library) = run_script(ctx, case, name, device, steps)?;
        Ok(checked(case.prep, &u, warm, steps, library))
    }
}

/// The script's route `name` on the case: U after the checked steps, its warm repetitions (of
/// `steps` steps each) and its library.
fn run_script(
    ctx: &mut CaseCtx,
    case: &Case,
    name: &str,
    device: Option<usize>,
    steps: usize,
) -> Result<(Vec<f64>, Timing, String), CaseError> {
    let inputs = inputs(case, steps)?;
    let out = external::run_for(ctx, device, &SCRIPT, name, inputs)?;
    let u = out.output("u")?.to_vec();
    let warm = out.timings.into_iter().next().ok_or_else(|| CaseError::Failed("external peer: no timings".into()))?;
    Ok((u, warm, out.library))
}

/// The route's run, its U checked against the oracle's after the checked steps (a short U or a
/// NaN gives a NaN error, which fails the row).
fn checked(prep: &super::prepared::Prepared, u: &[f64], warm: Timing, steps: usize, library: String) -> StepRun {
    let error = crate::fem::verify::relative_l2(u, &prep.reference);
    let per_step = Timing { samples: warm.samples.iter().map(|s| s / steps as f64).collect(), ..warm };
    StepRun {
        per_step,
        error,
        trace_error: f64::NAN,
        device_bytes: 0.0,
        vendor_version: None,
        col16: false,
        graph: false,
        full: None,
        checked_steps: prep.check_steps,
        library: Some(library),
    }
}

/// K' (CSR in 2 x 2 node blocks), C', the source's dofs and coefficients, the amplitudes of the
/// checked steps (as the host step takes them), and the step counts.
fn inputs(case: &Case, timed_steps: usize) -> Result<Inputs, CaseError> {
    let (prep, sys) = (case.prep, &case.prep.sys);
    let m = &prep.model;
    let amp: Vec<f64> = (0..prep.check_steps).map(|k| m.source.signal.at((m.check_start + k) as f64 * m.dt)).collect();
    Ok(Inputs::new()?
        .u32s("row_ptr", &sys.pattern.row_ptr)?
        .u32s("col", &sys.pattern.col)?
        .f64s("kp", &sys.kp)?
        .f64s("cp", &sys.cp)?
        .u32s("src_dof", &sys.src_dof)?
        .f64s("src_coef", &sys.src_coef)?
        .f64s("amp", &amp)?
        .scalar("check_steps", prep.check_steps as f64)
        .scalar("timed_steps", timed_steps as f64))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::benchmark::Target;

    use super::super::benchmark::row;
    use super::super::prepared::{Built, Prepared};
    use super::super::spec::{Method, ModelName, Point};
    use super::*;
    use crate::benchmark::ModuleCache;
    use crate::context::RunContext;
    use crate::measure::MeasurePolicy;
    use crate::results::Status;
    use crate::Precision;

    /// Warp's and JAX's routes on their CPU devices, through the script: their rows verify and
    /// name the library, and the check fails on a wrong entry, a NaN and a short answer. Without
    /// the library (and FEMBENCH_REQUIRE_PYTHON unset) a route is skipped with a line saying so.
    #[test]
    fn library_steps_verify_and_their_check_fails_on_a_wrong_a_nan_and_a_short_answer() {
        let built = Built::new(|| ModelName::Weld.build(16.0), 30, 512).unwrap();
        let prep = Prepared::from_built(built, None);
        for (name, module, prefix) in [("warp-cpu", "warp", "Warp "), ("jax-cpu", "jax", "JAX ")] {
            let with = std::process::Command::new("python3").args(["-c", &format!("import {module}")]).status().is_ok_and(|s| s.success());
            if !with {
                assert!(std::env::var_os("FEMBENCH_REQUIRE_PYTHON").is_none(), "FEMBENCH_REQUIRE_PYTHON is set and there is no {module}");
                eprintln!("skipped: no Python with {module}");
                continue;
            }
            let method = Method::named(name).unwrap();
            let run = Arc::new(RunContext::default());
            let policy = MeasurePolicy { warmup: 0, min_reps: 2, max_reps: 2, min_time_s: 0.0, ..MeasurePolicy::default() };
            let mut modules = ModuleCache::default();
            let mut ctx = CaseCtx::alone(Target::Cpu, &run, Precision::F64, &policy, &mut modules);
            let case = Case { prep: &prep, method, steps: 3, cpu_steps: 3, full: None };
            let (u, warm, library) = run_script(&mut ctx, &case, name, None, 3).unwrap();
            assert!(library.starts_with(prefix) && library.contains("cpu"), "{library}");
            let point = Point { method, model: ModelName::Weld, coarsen: 16.0 };
            let status = |u: &[f64]| row(&prep, &point, Precision::F64, checked(&prep, u, warm.clone(), 3, library.clone()), 3).status;
            assert_eq!(status(&u), Status::Ok, "{name}: its own answer fails");
            // The largest displacement, off by a part in 10^6.
            let k = (0..u.len()).max_by(|&a, &b| u[a].abs().total_cmp(&u[b].abs())).expect("dofs");
            let mut wrong = u.clone();
            wrong[k] *= 1.0 + 1e-6;
            assert_eq!(status(&wrong), Status::Failed, "{name}: a wrong entry passed");
            wrong[k] = f64::NAN;
            assert_eq!(status(&wrong), Status::Failed, "{name}: a NaN passed");
            assert_eq!(status(&u[..u.len() - 2]), Status::Failed, "{name}: a short answer passed");
        }
    }
}
