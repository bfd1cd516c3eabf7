//! The Python peers (the `external` kind, `peers/cecka_assembly.py`): the assembly as a user of
//! CuPy, PyTorch, SciPy or JAX writes it, run by the script on the case's device, checked here against
//! the f64 reference like every method (its CSR pattern too, where the route builds one).
//!
//! Each route computes the element matrices from the node coordinates every repetition (the
//! reference integrals are handed over, as a user's element code would tabulate them), then
//! assembles: `cupy-tocsr` and `scipy-tocsr` by COO -> CSR (sort, duplicates summed), and
//! `torch-index-add` by `index_add_` into CSR slots through a map built once, and
//! `jax-segment-sum` (on the GPU) and `jax-cpu` (on JAX's CPU device) by `jax.ops.segment_sum`
//! through the same map, in one jitted function.

use std::time::Instant;

use super::cost::{coo_route_bytes, element_flops, slot_route_bytes};
use super::method::{CeckaMethod, Role, Runs};
use super::problem::checked::{checked_rows_by, same_pattern, Cost, GpuRun, Rounding};
use super::problem::prepared::Prepared;
use super::problem::system::{Problem, SOURCE_F};
use super::spec::{Point, Problem_};
use crate::benchmark::{CaseCtx, CaseError, Measured};
use crate::external::{self, Inputs, Script};
use crate::real::Real;

const SCRIPT: Script = Script { file: "cecka_assembly.py", text: include_str!("../../../peers/cecka_assembly.py") };

/// A Python route of the script, by its name there.
pub(crate) struct PythonRoute {
    name: &'static [&'static str],
    runs: Runs,
    /// How it computes the entries (a FEM library by quadrature), which sets its check's rounding.
    rounding: Rounding,
    /// The route adds into CSR slots through the slot map (PyTorch's `index_add_`); the others
    /// build their CSR pattern by COO -> CSR.
    slot_map: bool,
}

/// CuPy's `coo_matrix(...).tocsr()` after vectorized element matrices.
pub(crate) const CUPY_TOCSR: PythonRoute =
    PythonRoute { name: &["cupy-tocsr"], runs: Runs::Cuda, slot_map: false, rounding: Rounding::Formula };
/// PyTorch's `index_add_` into CSR slots after vectorized element matrices.
pub(crate) const TORCH_INDEX_ADD: PythonRoute =
    PythonRoute { name: &["torch-index-add"], runs: Runs::Cuda, slot_map: true, rounding: Rounding::Formula };
/// The same function under `torch.compile` (Inductor; compiled in the checked pass).
pub(crate) const TORCH_COMPILE: PythonRoute =
    PythonRoute { name: &["torch-compile"], runs: Runs::Cuda, slot_map: true, rounding: Rounding::Formula };
/// SciPy's `coo_matrix(...).tocsr()` on the host (f64) after vectorized NumPy element matrices,
/// as scikit-fem assembles.
pub(crate) const SCIPY_TOCSR: PythonRoute =
    PythonRoute { name: &["scipy-tocsr"], runs: Runs::Host, slot_map: false, rounding: Rounding::Formula };
/// JAX, as JAX-FEM assembles: element terms and `jax.ops.segment_sum` into the CSR slots, one
/// jitted function, on the case's GPU.
pub(crate) const JAX_SEGMENT_SUM: PythonRoute =
    PythonRoute { name: &["jax-segment-sum"], runs: Runs::Cuda, slot_map: true, rounding: Rounding::Formula };
/// The same on JAX's CPU device (the host backend).
pub(crate) const JAX_CPU: PythonRoute = PythonRoute { name: &["jax-cpu"], runs: Runs::Host, slot_map: true, rounding: Rounding::Formula };
/// NVIDIA Warp's FEM toolkit: `fem.integrate` of the Laplace form on a `Trimesh2D` Lagrange
/// space into a BSR matrix, the source and the prescribed values by `fem.integrate` and
/// `bsr_mv`; handed over as CSR in our dofs.
pub(crate) const WARP_FEM: PythonRoute =
    PythonRoute { name: &["warp-fem"], runs: Runs::Cuda, slot_map: false, rounding: Rounding::Quadrature };
/// The same on Warp's CPU device.
pub(crate) const WARP_CPU: PythonRoute =
    PythonRoute { name: &["warp-cpu"], runs: Runs::Host, slot_map: false, rounding: Rounding::Quadrature };

impl CeckaMethod for PythonRoute {
    fn names(&self) -> &'static [&'static str] {
        self.name
    }
    fn role(&self) -> Role {
        Role::Peer
    }
    fn runs(&self) -> Runs {
        self.runs
    }
    fn external(&self) -> bool {
        true
    }
    fn fem_library(&self) -> bool {
        self.name[0].starts_with("jax-") || self.name[0].starts_with("warp-") || self.name[0] == "torch-compile"
    }
    fn run(&self, ctx: &mut CaseCtx, _: &Problem_, prep: &Prepared, point: &Point) -> Result<Vec<Measured>, CaseError> {
        match ctx.precision {
            crate::Precision::F32 => python_rows::<f32>(ctx, prep, point, self),
            crate::Precision::F64 => python_rows::<f64>(ctx, prep, point, self),
        }
    }
}

/// The rows of `point`'s Python route, checked like every method's and naming the library.
fn python_rows<T: Real>(ctx: &mut CaseCtx, prep: &Prepared, point: &Point, route: &PythonRoute) -> Result<Vec<Measured>, CaseError> {
    let (run, library) = run_python::<T>(ctx, prep, route)?;
    checked_rows_by(prep, point, run, Some(&library), route.rounding)
}

/// Runs `route` on the case's target (a CUDA device, or the host for SciPy); returns its run
/// and its library with the version.
fn run_python<T: Real>(ctx: &mut CaseCtx, prep: &Prepared, route: &PythonRoute) -> Result<(GpuRun<T>, String), CaseError> {
    let name = route.name[0];
    let p = &prep.problem;
    let device = external::cuda_device(ctx, name)?;
    let setup_start = Instant::now();
    let inputs = inputs(p, route.slot_map)?;
    let setup_s = setup_start.elapsed().as_secs_f64();
    let out = external::run_for(ctx, device, &SCRIPT, name, inputs)?;
    if !route.slot_map {
        same_pattern(p, out.output("indptr")?, out.output("indices")?)?;
    }
    let entries = p.en() * p.en() * p.ne();
    let s = ctx.precision.bytes();
    let bytes = if route.slot_map { slot_route_bytes(p, s) } else { coo_route_bytes(p, s) };
    let cost = Cost {
        bytes,
        flops: p.ne() as f64 * element_flops(p.en() as f64, false) + entries as f64,
        // What the library allocates is its own: not counted.
        memory: f64::NAN,
        setup_s,
        // SciPy's host route: one thread (no BLAS call of any size), as Warp's CPU device runs its
        // kernels; JAX's CPU device takes the threads XLA gives it.
        extras: if device.is_none() && !route.slot_map {
            vec![("triplets", entries as f64), ("threads", 1.0)]
        } else {
            vec![("triplets", entries as f64)]
        },
    };
    let vals = out.output("vals")?.iter().map(|&v| T::from_f64(v)).collect();
    let rhs = out.output("rhs")?.iter().map(|&v| T::from_f64(v)).collect();
    let run = GpuRun::new(out.timings, vals, rhs, cost);
    Ok((run, out.library))
}

/// The mesh, its dofs, the prescribed values and the reference integrals; the slot map for the
/// slot route.
fn inputs(p: &Problem, slots: bool) -> Result<Inputs, CaseError> {
    let r = &p.refs;
    let mut inputs = Inputs::new()?
        .f64s("x", &p.mesh.x)?
        .f64s("y", &p.mesh.y)?
        .f64s("g", &p.g)?
        .u32s("conn", &p.mesh.elems)?
        .i32s("dof", &p.dof)?
        .f64s("sxx", &r.sxx)?
        .f64s("sxy", &r.sxy)?
        .f64s("syy", &r.syy)?
        .f64s("m", &r.m)?
        .scalar("en", p.en() as f64)
        .scalar("n_free", p.n_free as f64)
        .scalar("nnz", p.nnz() as f64)
        .scalar("source_f", SOURCE_F);
    if slots {
        inputs = inputs.i32s("slots", &p.slots)?;
    }
    Ok(inputs)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::benchmark::Target;

    use super::super::problem::prepared::prepared;
    use super::super::spec::Method;
    use super::*;
    use crate::benchmark::ModuleCache;
    use crate::context::RunContext;
    use crate::measure::MeasurePolicy;
    use crate::results::Status;
    use crate::Precision;

    fn python_with_scipy() -> bool {
        std::process::Command::new("python3").args(["-c", "import numpy, scipy"]).status().is_ok_and(|s| s.success())
    }

    /// SciPy's route on the host, through the script: its rows verify against the f64
    /// reference, and the same run with one entry off by a part in 10^6 fails (the check can fail).
    #[test]
    fn scipy_route_verifies_and_a_wrong_entry_fails() {
        if !python_with_scipy() {
            assert!(
                std::env::var_os("FEMBENCH_REQUIRE_PYTHON").is_none(),
                "FEMBENCH_REQUIRE_PYTHON is set and there is no Python with SciPy"
            );
            eprintln!("skipped: no Python with NumPy and SciPy");
            return;
        }
        on_the_host(&SCIPY_TOCSR, |prep, point, out, library| {
            assert!(library.starts_with("SciPy "), "{library}");
            let cost = Cost { extras: vec![], ..out.cost.clone() };
            let mut wrong = GpuRun::new(out.timings.clone(), out.vals.clone(), out.rhs.clone(), cost);
            let rows = checked_rows_by(prep, point, out, Some(&library), Rounding::Formula).unwrap();
            assert!(rows.iter().all(|m| m.status == Status::Ok && m.library.as_deref() == Some(library.as_str())), "{:?}", rows[0].reason);
            let k = wrong.vals.len() / 2;
            wrong.vals[k] *= 1.0 + 1e-6;
            let rows = checked_rows_by(prep, point, wrong, None, Rounding::Formula).unwrap();
            assert!(rows.iter().all(|m| m.status == Status::Failed), "a wrong entry passed");
        });
    }

    /// Runs a host route of the script at level 0, order 2, f64, and hands its outputs over.
    fn on_the_host(route: &PythonRoute, f: impl FnOnce(&Prepared, &Point, GpuRun<f64>, String)) {
        let run = Arc::new(RunContext::default());
        let policy = MeasurePolicy { warmup: 0, min_reps: 2, max_reps: 2, min_time_s: 0.0, ..MeasurePolicy::default() };
        let mut modules = ModuleCache::default();
        let mut ctx = CaseCtx::alone(Target::Cpu, &run, Precision::F64, &policy, &mut modules);
        let point = Point { method: Method::named(route.name[0]).unwrap(), level: 0, order: 2, min_colors: 0 };
        let prep = prepared(&run, None, point.level, point.order).unwrap();
        let (out, library) = run_python::<f64>(&mut ctx, &prep, route).unwrap();
        f(&prep, &point, out, library);
    }

    /// JAX's route on its CPU device, through the script: its rows verify, and its check fails
    /// on a wrong entry, a NaN and a short answer.
    #[test]
    fn jax_route_verifies_and_its_check_fails_on_a_wrong_a_nan_and_a_short_answer() {
        library_route_is_checked(&JAX_CPU, "jax", "JAX ");
    }

    /// Warp's route on its CPU device, the same way.
    #[test]
    fn warp_route_verifies_and_its_check_fails_on_a_wrong_a_nan_and_a_short_answer() {
        library_route_is_checked(&WARP_CPU, "warp", "Warp ");
    }

    /// A library's host route: its rows verify, its library is named, and its check fails on a
    /// wrong entry, a NaN and a short answer. Without the library (and FEMBENCH_REQUIRE_PYTHON
    /// unset) it is skipped with a line saying so.
    fn library_route_is_checked(route: &PythonRoute, module: &str, prefix: &str) {
        let with = std::process::Command::new("python3").args(["-c", &format!("import {module}")]).status().is_ok_and(|s| s.success());
        if !with {
            assert!(std::env::var_os("FEMBENCH_REQUIRE_PYTHON").is_none(), "FEMBENCH_REQUIRE_PYTHON is set and there is no {module}");
            eprintln!("skipped: no Python with {module}");
            return;
        }
        on_the_host(route, |prep, point, out, library| {
            assert!(library.starts_with(prefix) && library.contains("cpu"), "{library}");
            let again = |f: &dyn Fn(&mut GpuRun<f64>)| {
                let mut r =
                    GpuRun::new(out.timings.clone(), out.vals.clone(), out.rhs.clone(), Cost { extras: vec![], ..out.cost.clone() });
                f(&mut r);
                checked_rows_by(prep, point, r, None, route.rounding).map(|rows| rows.iter().all(|m| m.status == Status::Failed))
            };
            assert!(matches!(again(&|_| {}), Ok(false)), "the route's own answer fails its check");
            let k = out.vals.len() / 3;
            assert!(matches!(again(&|r| r.vals[k] *= 1.0 + 1e-6), Ok(true)), "a wrong entry passed");
            assert!(matches!(again(&|r| r.rhs[1] = f64::NAN), Ok(true)), "a NaN passed");
            assert!(!matches!(again(&|r| r.vals.truncate(k)), Ok(false)), "a short answer passed");
            let rows = checked_rows_by(prep, point, out, Some(&library), route.rounding).unwrap();
            assert!(rows.iter().all(|m| m.status == Status::Ok), "{:?}", rows[0].reason);
        });
    }

    #[test]
    fn a_route_with_another_pattern_fails() {
        let p = Problem::new(0, 1);
        let indptr: Vec<f64> = p.row_ptr.iter().map(|&v| v as f64).collect();
        let mut indices: Vec<f64> = p.col.iter().map(|&v| v as f64).collect();
        assert!(same_pattern(&p, &indptr, &indices).is_ok());
        indices.swap(0, 1);
        assert!(matches!(same_pattern(&p, &indptr, &indices), Err(CaseError::Failed(r)) if r.contains("entry 0")));
        assert!(same_pattern(&p, &indptr[1..], &indices).is_err());
    }
}
