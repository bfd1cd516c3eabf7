//! The library peers (the `external` kind, `peers/acoo_cg.py`): the capacitor assembled and
//! solved as a user of NVIDIA Warp (an element kernel with atomic adds into a `warp.sparse`
//! matrix on our pattern, then `warp.optim.linear.cg`) or JAX (a jitted element stage with
//! `segment_sum`, then `jax.scipy.sparse.linalg.cg` inside `jit`) writes it. The script times the
//! two stages of every pass (`elements`, `solve`) and hands back the checked pass's solution and
//! iteration count; they are checked here against the f64 reference like every method's.

use std::collections::BTreeMap;

use super::gpu::CgRun;
use super::method::{About, AcooMethod, Case};
use super::methods::MethodRun;
use crate::benchmark::{CaseCtx, CaseError};
use crate::external::{self, Inputs, Script};
use crate::measure::{Staged, Timing};

const SCRIPT: Script = Script { file: "acoo_cg.py", text: include_str!("../../../peers/acoo_cg.py") };

/// A route of the script, by its registered name.
pub struct PythonCg(pub About);

impl AcooMethod for PythonCg {
    fn about(&self) -> &About {
        &self.0
    }
    fn run(&self, ctx: &mut CaseCtx, case: &Case) -> Result<MethodRun, CaseError> {
        let name = self.0.names[0];
        let device = external::cuda_device(ctx, name)?;
        let (x, iterations, staged, library) = run_script(ctx, case, &self.0, device)?;
        Ok(checked(case, &x, iterations, staged, library))
    }
}

/// The script's route (`about`'s name) on the case: the checked pass's solution and iteration
/// count, the timed passes and the library.
fn run_script(ctx: &mut CaseCtx, case: &Case, about: &About, device: Option<usize>) -> Result<(Vec<f64>, f64, Staged, String), CaseError> {
    let (name, inputs) = (about.names[0], inputs(case)?);
    let out = external::run_for(ctx, device, &SCRIPT, name, inputs)?;
    let iterations = out.output("iterations")?.first().copied().unwrap_or(f64::NAN);
    let total = out.timings.first().cloned().ok_or_else(|| CaseError::Failed("external peer: no timings".into()))?;
    let staged = staged(about, total, out.stages.clone(), ctx.policy.warmup as usize)?;
    Ok((out.output("x")?.to_vec(), iterations, staged, out.library))
}

/// The passes as the script timed them: its stages in the method's order, and their totals
/// (`warmup` passes ran before them).
fn staged(about: &About, total: Timing, mut stages: BTreeMap<String, Timing>, warmup: usize) -> Result<Staged, CaseError> {
    let passes = total.samples.len() + warmup;
    let stages = about
        .stages
        .iter()
        .map(|&n| stages.remove(n).map(|t| (n, t)).ok_or_else(|| CaseError::Failed(format!("external peer: no samples of stage {n}"))))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Staged { stages, total, passes })
}

/// The route's run: its solution checked against the reference (a short answer or a NaN gives
/// a NaN error, which fails the row), its iteration count as the library gave it.
fn checked(case: &Case, x: &[f64], iterations: f64, staged: Staged, library: String) -> MethodRun {
    let error = fembench_fem::verify::relative_l2(x, case.reference.x);
    let max = case.problem.max_iterations;
    let iterations = if iterations.is_finite() && iterations >= 0.0 { iterations as usize } else { max };
    let cg = CgRun::counted(iterations, iterations, iterations < max);
    MethodRun {
        staged: vec![staged],
        cg,
        error,
        csr_error: None,
        memory: Default::default(),
        coloring: None,
        product: None,
        library: Some(library),
    }
}

/// The mesh, the prescribed values, the free numbering, the slot map, the CSR pattern and the
/// stopping rule.
fn inputs(case: &Case) -> Result<Inputs, CaseError> {
    let c = case.c;
    let tris: Vec<u32> = c.tris.iter().flatten().copied().collect();
    Ok(Inputs::new()?
        .f64s("x", &c.x)?
        .f64s("y", &c.y)?
        .u32s("tris", &tris)?
        .i32s("dof", &c.dof)?
        .f64s("g", &c.g)?
        .i32s("slots", &c.slots)?
        .u32s("row_ptr", &c.pattern.row_ptr)?
        .u32s("col", &c.pattern.col)?
        .scalar("tol", case.problem.tolerance)
        .scalar("max_iter", case.problem.max_iterations as f64))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::benchmark::Target;

    use super::super::benchmark::rows;
    use super::super::capacitor::{cg, spmv, Capacitor};
    use super::super::methods::Reference;
    use super::super::spec::{Method, Problem_};
    use super::*;
    use crate::benchmark::ModuleCache;
    use crate::context::RunContext;
    use crate::measure::MeasurePolicy;
    use crate::results::Status;
    use crate::Precision;

    /// Warp's and JAX's routes on their CPU devices, through the script: their rows verify and
    /// name the library and their CG's iteration count, and the check fails on a wrong entry, a NaN,
    /// a short answer and a CG that ran to its cap. Without
    /// the library (and FEMBENCH_REQUIRE_PYTHON unset) a route is skipped with a line saying so.
    #[test]
    fn library_solves_verify_and_their_check_fails_on_a_wrong_a_nan_and_a_short_answer() {
        let c = Capacitor::new(0);
        let (vals, rhs) = c.assemble_by_sorting();
        let problem = Problem_::default();
        let reference = cg(&rhs, problem.tolerance, problem.max_iterations, |p, q| spmv(&c.pattern, &vals, p, q));
        let case = Case { problem: &problem, c: &c, colors: (&[], 0.0), reference: Reference { x: &reference.x, vals: &vals } };
        for (name, module, prefix) in [("warp-cpu", "warp", "Warp "), ("jax-cpu", "jax", "JAX ")] {
            let with = std::process::Command::new("python3").args(["-c", &format!("import {module}")]).status().is_ok_and(|s| s.success());
            if !with {
                assert!(std::env::var_os("FEMBENCH_REQUIRE_PYTHON").is_none(), "FEMBENCH_REQUIRE_PYTHON is set and there is no {module}");
                eprintln!("skipped: no Python with {module}");
                continue;
            }
            let run = Arc::new(RunContext::default());
            let policy = MeasurePolicy { warmup: 0, min_reps: 2, max_reps: 2, min_time_s: 0.0, ..MeasurePolicy::default() };
            let mut modules = ModuleCache::default();
            let mut ctx = CaseCtx::alone(Target::Cpu, &run, Precision::F64, &policy, &mut modules);
            let method = Method::named(name).unwrap();
            let (x, iterations, staged, library) = run_script(&mut ctx, &case, method.entry().about(), None).unwrap();
            assert!(library.starts_with(prefix) && library.contains("cpu"), "{library}");
            assert_eq!(staged.stages.iter().map(|s| s.0).collect::<Vec<_>>(), ["elements", "solve"]);
            let statuses_counted = |x: &[f64], iterations: f64| {
                let run = checked(&case, x, iterations, staged.clone(), library.clone());
                rows(&problem, (1e-12, 1e-12), &c, &reference, method, run).iter().map(|m| m.status).collect::<Vec<_>>()
            };
            let statuses = |x: &[f64]| statuses_counted(x, iterations);
            assert!(statuses(&x).iter().all(|s| *s == Status::Ok), "{name}: its own answer fails");
            // The count the route reports is its CG's: the reference's, give or take one.
            assert!(
                (iterations - reference.iterations as f64).abs() <= 1.0,
                "{name}: {iterations} iterations, the reference {}",
                reference.iterations
            );
            let capped = statuses_counted(&x, problem.max_iterations as f64);
            assert!(capped.iter().all(|s| *s == Status::Failed), "{name}: a CG that ran to its cap passed");
            let k = (0..x.len()).max_by(|&a, &b| x[a].abs().total_cmp(&x[b].abs())).expect("unknowns");
            let mut wrong = x.clone();
            wrong[k] *= 1.0 + 1e-3;
            assert!(statuses(&wrong).iter().all(|s| *s == Status::Failed), "{name}: a wrong entry passed");
            wrong[k] = f64::NAN;
            assert!(statuses(&wrong).iter().all(|s| *s == Status::Failed), "{name}: a NaN passed");
            assert!(statuses(&x[..x.len() - 1]).iter().all(|s| *s == Status::Failed), "{name}: a short answer passed");
        }
    }
}
