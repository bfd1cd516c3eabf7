//! The library peers (the `external` kind, `peers/sanfui_hex8.py`): the box's stiffness matrix
//! assembled as a user of JAX (every K^e by array operations, `segment_sum` into the CSR values
//! through the slot map, one jitted function) or of NVIDIA Warp's FEM toolkit (`fem.Hexmesh`, a
//! vector trilinear space, `fem.integrate` of the elasticity form into BSR) does it, one timed
//! stage (`assembly`). The matrix comes back in our CSR pattern and is checked here against the
//! f64 reference like every method's.

use super::formats::{self, Format};
use super::gpu::DeviceRun;
use super::method::{About, Case, SanfuiMethod};
use crate::benchmark::{CaseCtx, CaseError};
use crate::external::{self, Inputs, Script};
use crate::measure::Staged;

const SCRIPT: Script = Script { file: "sanfui_hex8.py", text: include_str!("../../../peers/sanfui_hex8.py") };

/// A route of the script, by its registered name.
pub struct PythonAssembly(pub About);

impl SanfuiMethod for PythonAssembly {
    fn about(&self) -> &About {
        &self.0
    }
    fn run(&self, ctx: &mut CaseCtx, case: &Case) -> Result<DeviceRun, CaseError> {
        let name = self.0.names[0];
        let device = external::cuda_device(ctx, name)?;
        let (vals, staged, setup_s, library) = run_script(ctx, case, name, device)?;
        Ok(DeviceRun { library: Some(library), ..checked(case, &vals, staged, setup_s) })
    }
}

/// The script's route `name` on the case: the checked pass's values, the timed passes, the
/// host seconds the inputs took and the library.
fn run_script(ctx: &mut CaseCtx, case: &Case, name: &str, device: Option<usize>) -> Result<(Vec<f64>, Staged, f64, String), CaseError> {
    let setup = std::time::Instant::now();
    let inputs = inputs(case)?;
    let setup_s = setup.elapsed().as_secs_f64();
    let out = external::run_for(ctx, device, &SCRIPT, name, inputs)?;
    let total = out.timings.first().cloned().ok_or_else(|| CaseError::Failed("external peer: no timings".into()))?;
    let passes = total.samples.len() + ctx.policy.warmup as usize;
    let staged = Staged { stages: vec![("assembly", total.clone())], passes, total };
    Ok((out.output("vals")?.to_vec(), staged, setup_s, out.library))
}

/// The route's matrix (values in our CSR order) checked against the reference, as the CPU
/// methods' are (a short answer, a NaN or a wrong value fails it).
fn checked(case: &Case, vals: &[f64], staged: Staged, setup_s: f64) -> DeviceRun {
    let p = &case.prep.pattern;
    let as_i32 = |v: &[u32]| v.iter().map(|&x| x as i32).collect::<Vec<_>>();
    let check = if vals.len() == p.nnz() {
        formats::check(Format::CSR, &case.prep.nb, (&as_i32(&p.row_ptr), &as_i32(&p.col)), vals, case.prep.expected())
    } else {
        formats::Check { worst: f64::NAN, structure: Some(format!("{} values handed back, the pattern holds {}", vals.len(), p.nnz())) }
    };
    DeviceRun {
        staged,
        check,
        device_bytes: 0.0,
        storage_bytes: f64::NAN,
        setup_s,
        spmv: Vec::new(),
        costs: Vec::new(),
        extras: Vec::new(),
        library: None,
    }
}

/// The box (coordinates, elements), our CSR pattern, each element's node pairs' places in the
/// neighbour lists (the slot map's parts) and the Lamé parameters.
fn inputs(case: &Case) -> Result<Inputs, CaseError> {
    let (prep, m) = (case.prep, &case.prep.mesh);
    let coords: Vec<[f64; 3]> = (0..m.num_nodes() as u32).map(|v| m.coords(v)).collect();
    let axis = |c: usize| coords.iter().map(|x| x[c]).collect::<Vec<f64>>();
    let nb = &prep.nb;
    let kpos: Vec<i32> = (0..m.num_elements())
        .flat_map(|e| {
            let nodes = m.element(e);
            nodes.iter().flat_map(move |&a| {
                let list = &nb.list[nb.ptr[a as usize] as usize..nb.ptr[a as usize + 1] as usize];
                nodes.iter().map(move |&b| list.iter().position(|&x| x == b as i32).map_or(-1, |k| k as i32))
            })
        })
        .collect();
    Ok(Inputs::new()?
        .f64s("x", &axis(0))?
        .f64s("y", &axis(1))?
        .f64s("z", &axis(2))?
        .u32s("elems", &m.elems)?
        .u32s("row_ptr", &prep.pattern.row_ptr)?
        .u32s("col", &prep.pattern.col)?
        .i32s("kpos", &kpos)?
        .scalar("lambda", prep.lambda)
        .scalar("mu", prep.mu))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::benchmark::Target;

    use super::super::reference::Prepared;
    use super::super::spec::{Method, Problem_};
    use super::*;
    use crate::benchmark::ModuleCache;
    use crate::context::RunContext;
    use crate::measure::MeasurePolicy;
    use crate::Precision;

    /// JAX's and Warp's routes on their CPU devices, through the script: their matrices pass the
    /// check against the f64 reference, and it fails on a wrong entry, a NaN and a short answer.
    /// Without the library (and FEMBENCH_REQUIRE_PYTHON unset) a route is skipped with a line
    /// saying so.
    #[test]
    fn library_assemblies_verify_and_their_check_fails_on_a_wrong_a_nan_and_a_short_answer() {
        let prep = Prepared::new([5, 3, 4], 1e-3, 2e11, 0.3);
        let problem = Problem_::default();
        for (name, module, prefix) in [("jax-cpu", "jax", "JAX "), ("warp-cpu", "warp", "Warp ")] {
            let with = std::process::Command::new("python3").args(["-c", &format!("import {module}")]).status().is_ok_and(|s| s.success());
            if !with {
                assert!(std::env::var_os("FEMBENCH_REQUIRE_PYTHON").is_none(), "FEMBENCH_REQUIRE_PYTHON is set and there is no {module}");
                eprintln!("skipped: no Python with {module}");
                continue;
            }
            let case = Case { prep: &prep, problem: &problem, method: Method::named(name).unwrap() };
            let run = Arc::new(RunContext::default());
            let policy = MeasurePolicy { warmup: 0, min_reps: 2, max_reps: 2, min_time_s: 0.0, ..MeasurePolicy::default() };
            let mut modules = ModuleCache::default();
            let mut ctx = CaseCtx::alone(Target::Cpu, &run, Precision::F64, &policy, &mut modules);
            let (vals, staged, _, library) = run_script(&mut ctx, &case, name, None).unwrap();
            assert!(library.starts_with(prefix) && library.contains("cpu"), "{library}");
            let tol = super::super::benchmark::tolerance(Precision::F64, prep.x_over_h);
            let passes = |v: &[f64]| {
                let c = checked(&case, v, staged.clone(), 0.0).check;
                c.structure.is_none() && c.worst <= tol
            };
            assert!(passes(&vals), "{name}: its own matrix fails: {:?}", checked(&case, &vals, staged.clone(), 0.0).check.worst);
            let k = (0..vals.len()).max_by(|&a, &b| vals[a].abs().total_cmp(&vals[b].abs())).expect("entries");
            let mut wrong = vals.clone();
            wrong[k] *= 1.0 + 1e-6;
            assert!(!passes(&wrong), "{name}: a wrong entry passed");
            wrong[k] = f64::NAN;
            assert!(!passes(&wrong), "{name}: a NaN passed");
            assert!(!passes(&vals[..vals.len() - 1]), "{name}: a short answer passed");
        }
    }
}
