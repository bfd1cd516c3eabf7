//! The Python peers (the `external` kind, `peers/banas_gemm.py`): A^e = B^T (w D B) as a user of
//! PyTorch (`torch-bmm`) or CuPy (`cupy-matmul`) writes it, B formed with the library's einsum
//! and the batched GEMM one call, on the case's device, for the same elements as the cuBLAS peer;
//! and NumPy's route on the host (`numpy-matmul`, f64), for the CPU reference's elements.
//! The script returns the checked elements' matrices and the count of NaN entries in the whole
//! output; both are judged here against the f64 reference like every method's output.

use super::elasticity::{element_dofs, element_flops};
use std::sync::Arc;

use super::inputs::{checked_error, prepared, with_extras, Prepared};
use super::method::{About, BanasMethod};
use super::peer::{peer_problem, tolerance};
use super::prism::jacobian_terms;
use super::spec::{Method, Point, Problem_};
use crate::benchmark::{CaseCtx, CaseError, Measured, Target};
use crate::device::Backend;
use crate::external::{self, Inputs, Script};
use crate::Precision;

const SCRIPT: Script = Script { file: "banas_gemm.py", text: include_str!("../../../peers/banas_gemm.py") };

/// The rows of `point`'s Python route on `dev`: the whole route (B and the GEMM) as the `kernel`
/// metric, beside the cuBLAS peer's, naming the library.
/// A route a Python script runs (PyTorch, CuPy on the GPU; NumPy on the host).
pub struct PythonRoute {
    pub about: About,
}

impl BanasMethod for PythonRoute {
    fn about(&self) -> &About {
        &self.about
    }
    fn run(&self, ctx: &mut CaseCtx, problem: &Problem_, point: &Point) -> Result<Vec<Measured>, CaseError> {
        run_python_peer(ctx, problem, point)
    }
}

pub(crate) fn run_python_peer(ctx: &mut CaseCtx, problem: &Problem_, point: &Point) -> Result<Vec<Measured>, CaseError> {
    let gpu = match ctx.target {
        Target::Gpu(dev) => Some(dev),
        Target::Cpu => None,
    };
    let (prep, nsh, nq, device) = match (gpu, point.method) {
        (None, Method::NUMPY_MATMUL) => {
            let (prep, nsh, nq) = host_problem(ctx, problem, point)?;
            (prep, nsh, nq, None)
        }
        (Some(dev), m) if m != Method::NUMPY_MATMUL && dev.info().backend == Some(Backend::Cuda) => {
            let (prep, nsh, nq) = peer_problem(ctx, dev, problem, point, ctx.precision)?;
            (prep, nsh, nq, Some(dev.info().index))
        }
        _ => return Err(CaseError::Skipped(format!("{} does not run on this backend", point.method.as_str()))),
    };
    let (ne, n, k) = (prep.mesh.len(), element_dofs(nsh), 6 * nq);
    let inputs = inputs(&prep, nsh, nq)?;
    let out = external::run_for(ctx, device, &SCRIPT, point.method.as_str(), inputs)?;
    let error = error_of(&prep, out.output("a")?, out.output("nan")?, n * n)?;
    let flops = 2.0 * (n * n * k) as f64 * ne as f64;
    let extras = [
        ("elements", ne as f64),
        ("checked_elements", prep.checked.len() as f64),
        ("checked_passes", 1.0),
        ("output_mb", (ctx.precision.bytes() * n * n * ne) as f64 / 1e6),
        (crate::report::physics::TF32_COLUMN, 0.0),
        // PyTorch's and CuPy's f64 products call cuBLAS' DGEMM (FP64 tensor cores); NumPy runs
        // on the host.
        (crate::report::physics::FP64_TENSOR_COLUMN, (device.is_some() && ctx.precision == Precision::F64) as u8 as f64),
    ];
    let tolerance = tolerance(point.method, ctx.precision);
    let paper_flops = element_flops(nsh, nq) * ne as f64;
    let rows = out
        .timings
        .into_iter()
        .map(|t| Measured::verified("kernel", t, error, tolerance).flops(flops).paper_flops(paper_flops).library(&out.library));
    Ok(with_extras(rows.collect(), &extras))
}

/// The CPU reference's problem (its elements, each checked) and its shape (N_sh, N_Q).
fn host_problem(ctx: &mut CaseCtx, problem: &Problem_, point: &Point) -> Result<(Arc<Prepared>, usize, usize), CaseError> {
    let n = problem.cpu_elements.unwrap_or(8 * rayon::current_num_threads()).max(1);
    let prep = prepared(ctx.run, point.degree, n, 1.0)?;
    let (nsh, nq) = (prep.re.nsh, prep.re.nq());
    Ok((prep, nsh, nq))
}

/// The checked elements' error against the reference; NaN where any entry of the whole output
/// was NaN (an element left unwritten) or the script returned other than one matrix a checked
/// element.
fn error_of(prep: &Prepared, a: &[f64], nan: &[f64], size: usize) -> Result<f64, CaseError> {
    if a.len() != prep.checked.len() * size {
        return Err(CaseError::Failed(format!(
            "the script returned {} values for {} checked elements of {size}",
            a.len(),
            prep.checked.len()
        )));
    }
    if nan.first().is_none_or(|&c| c != 0.0) {
        return Ok(f64::NAN);
    }
    Ok(checked_error(prep, size, |k, _| &a[k * size..(k + 1) * size]))
}

/// The NOJAC inputs in f64 (the script casts them to the case's precision): the reference
/// derivatives, every point's Jacobian terms, the Lamé pairs, and the elements to return.
fn inputs(prep: &Prepared, nsh: usize, nq: usize) -> Result<Inputs, CaseError> {
    let ne = prep.mesh.len();
    let jterms: Vec<f64> = (0..ne)
        .flat_map(|e| {
            let x = prep.mesh.element_vertices(e);
            prep.re.quad.iter().flat_map(|pt| jacobian_terms(&x, pt)).collect::<Vec<_>>()
        })
        .collect();
    let lame: Vec<f64> = (0..ne).flat_map(|e| <[f64; 2]>::from(prep.mesh.lame(e))).collect();
    let checked: Vec<i32> = prep.checked.iter().map(|&e| e as i32).collect();
    Ok(Inputs::new()?
        .f64s("dphi", &prep.re.dphi)?
        .f64s("jterms", &jterms)?
        .f64s("lame", &lame)?
        .i32s("checked", &checked)?
        .scalar("nsh", nsh as f64)
        .scalar("nq", nq as f64)
        .scalar("elements", ne as f64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::benchmark::ModuleCache;
    use crate::context::RunContext;
    use crate::measure::MeasurePolicy;
    use crate::results::Status;
    use crate::Precision;

    fn python_with_numpy() -> bool {
        std::process::Command::new("python3").args(["-c", "import numpy"]).status().is_ok_and(|s| s.success())
    }

    /// NumPy's route on the host, through the script (the same code as PyTorch's and CuPy's but
    /// for the library's calls): its matrices verify against the f64 reference at p = 1 and 3;
    /// and the check fails a wrong matrix, a NaN left in the output, or a short answer.
    #[test]
    fn numpy_route_verifies_and_wrong_answers_fail() {
        if !python_with_numpy() {
            assert!(std::env::var_os("FEMBENCH_REQUIRE_PYTHON").is_none(), "FEMBENCH_REQUIRE_PYTHON is set and there is no NumPy");
            eprintln!("skipped: no Python with NumPy");
            return;
        }
        let run = Arc::new(RunContext::default());
        let policy = MeasurePolicy { warmup: 0, min_reps: 2, max_reps: 2, min_time_s: 0.0, ..MeasurePolicy::default() };
        let mut modules = ModuleCache::default();
        let mut ctx = CaseCtx::alone(Target::Cpu, &run, Precision::F64, &policy, &mut modules);
        let problem = Problem_ { cpu_elements: Some(3), ..Problem_::default() };
        for degree in [1, 3] {
            let rows = run_python_peer(&mut ctx, &problem, &Point { method: Method::NUMPY_MATMUL, degree }).unwrap();
            assert_eq!(rows.len(), 1);
            assert_eq!(rows[0].status, Status::Ok, "p = {degree}: {:?}", rows[0].reason);
            assert!(rows[0].library.as_deref().is_some_and(|l| l.starts_with("NumPy ")), "{:?}", rows[0].library);
        }
        let prep = prepared(&run, 1, 3, 1.0).unwrap();
        let size = element_dofs(prep.re.nsh).pow(2);
        let zeros = vec![0.0; prep.checked.len() * size];
        assert_eq!(error_of(&prep, &zeros, &[0.0], size).unwrap(), 1.0, "a zero matrix is wholly wrong");
        assert!(error_of(&prep, &zeros, &[1.0], size).unwrap().is_nan(), "a NaN left in the output");
        assert!(error_of(&prep, &zeros[1..], &[0.0], size).is_err(), "a short answer");
    }
}
