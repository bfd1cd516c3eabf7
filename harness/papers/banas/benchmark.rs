//! The Banaś et al. experiments: cases (variant x degree), the staged GPU run the paper's
//! Tables 6/7 time (input preparation, device memory allocation, input transfer, kernel, output
//! transfer), the CPU reference, and the reports: Tables 3/4 (the plan), 5-7 (stages), the best
//! variant per degree, Fig. 2 (stacked stage times) and Fig. 3 (GFLOP/s against p).

use super::elasticity::{element_dofs, element_flops, element_matrices_into, rigid_body_residual};
use super::kernel::BANAS;
use super::method::{About, BanasMethod};
use super::prism::MAX_DEGREE;
use crate::benchmark::{Benchmark, CaseCtx, CaseError, Measured, MemoryEstimate, Spec, Target};
use crate::device::Backend;
use crate::experiment::Params;
use crate::kernels::KernelSource;
use crate::Precision;

use super::inputs::prepared;
use super::spec::{Outputs, Point, Problem_, Sweep};

pub struct BanasIntegration;

impl Benchmark for BanasIntegration {
    const NAME: &'static str = "banas-integration";
    const COLUMNS: &'static [&'static str] = &[
        "blocks_per_thread",
        "bmatrix_mb",
        "checked_elements",
        "checked_passes",
        "elements",
        "group_size",
        "groups",
        "host_written_back",
        "input_mb",
        "output_mb",
        "parts",
        "performed_blocks",
        "pinned_host",
        "reg_cols",
        "reg_rows",
        "shared_bytes",
        "tensor_fp64",
        "tensor_tf32",
        "threads",
    ];
    const KERNELS: &'static [KernelSource] = &[BANAS];
    const KERNEL_ARGS: &'static [crate::device::args::Declared] = super::kernel::BANAS_ARGS;
    type Sweep = Sweep;
    type Problem = Problem_;
    type Outputs = Outputs;
    type Point = Point;

    fn points(s: &Sweep) -> Vec<Point> {
        s.product()
    }

    fn params(p: &Point) -> Params {
        p.params()
    }

    fn check(spec: &Spec<Self>) -> Result<(), (String, String)> {
        let quick = spec.quick.as_ref().and_then(|q| q.sweep.as_ref());
        for (field, sweep) in [("sweep.degree", Some(&spec.sweep)), ("quick.sweep.degree", quick)] {
            for &d in sweep.into_iter().flat_map(|s| s.degree.iter()) {
                if !(1..=MAX_DEGREE as u32).contains(&d) {
                    return Err((field.into(), format!("{field}: {d} is outside 1..{MAX_DEGREE}")));
                }
            }
        }
        let problems = [("problem", Some(&spec.problem)), ("quick.problem", spec.quick.as_ref().and_then(|q| q.problem.as_ref()))];
        for (at, p) in problems {
            let Some(p) = p else { continue };
            if !(p.output_mib > 0.0 && p.output_mib <= (1u64 << 20) as f64) {
                return Err((format!("{at}.output_mib"), format!("{at}.output_mib must be in (0, 1048576], got {}", p.output_mib)));
            }
            if !(p.verify_fraction > 0.0 && p.verify_fraction <= 1.0) {
                return Err((
                    format!("{at}.verify_fraction"),
                    format!("{at}.verify_fraction must be in (0, 1], got {}", p.verify_fraction),
                ));
            }
            if p.group_size == Some(0) {
                return Err((format!("{at}.group_size"), format!("{at}.group_size must be at least 1")));
            }
            if let Some(t @ [wy, wx, sr, ss]) = p.mma_tiling {
                // Square in f64 (8 x 8 sub-tiles) or in f32 (16 x 8).
                if t.contains(&0) || (wy * sr != wx * ss && 2 * wy * sr != wx * ss) || wy * wx > 32 {
                    let why = "warps and sub-tiles of at least 1, a square tile (rows x sub-tiles x 8 in f64, x 16 in f32 = columns x sub-tiles x 8), at most 32 warps";
                    return Err((format!("{at}.mma_tiling"), format!("{at}.mma_tiling {t:?}: {why}")));
                }
            }
            if p.mma_points.is_some_and(|k| k == 0 || k % 4 != 0) {
                return Err((format!("{at}.mma_points"), format!("{at}.mma_points must be a positive multiple of 4")));
            }
        }
        Ok(())
    }

    /// The f64 CPU reference runs on the cpu backend; the four GPU variants on CUDA and OpenCL in
    /// f32 and f64.
    fn case_exists(point: &Point, backend: Backend, precision: Precision) -> bool {
        point.method.entry().about().has_case(backend, precision)
    }

    /// A launch's output (`output_mib`) on the device with its inputs, and on the host its pinned
    /// staging buffer and the copies the check reads.
    fn memory_estimate(problem: &Problem_, _: &Point) -> Option<MemoryEstimate> {
        let output = problem.output_mib * (1u64 << 20) as f64;
        Some(MemoryEstimate { host_bytes: 3.0 * output, device_bytes: 2.0 * output })
    }

    fn problem_key(point: &Point) -> Option<String> {
        Some(format!("degree={}", point.degree))
    }
    fn run(ctx: &mut CaseCtx, problem: &Problem_, point: &Point) -> Result<Vec<Measured>, CaseError> {
        point.method.entry().run(ctx, problem, point)
    }
}

/// The f64 CPU reference as a measured method.
pub struct HostReference {
    pub about: About,
}

impl BanasMethod for HostReference {
    fn about(&self) -> &About {
        &self.about
    }
    fn run(&self, ctx: &mut CaseCtx, problem: &Problem_, point: &Point) -> Result<Vec<Measured>, CaseError> {
        match (&ctx.target, ctx.precision) {
            (Target::Cpu, Precision::F64) => run_cpu(ctx, problem, point),
            (Target::Cpu, Precision::F32) => Err(CaseError::Skipped("the CPU reference runs in f64, as the paper's baseline".into())),
            (Target::Gpu(_), _) => Err(CaseError::Skipped("cpu-reference runs on the cpu backend".into())),
        }
    }
}

fn run_cpu(ctx: &mut CaseCtx, problem: &Problem_, point: &Point) -> Result<Vec<Measured>, CaseError> {
    let threads = rayon::current_num_threads();
    let n = problem.cpu_elements.unwrap_or(8 * threads).max(1);
    let prep = prepared(ctx.run, point.degree, n, 1.0 / n as f64)?;
    let all: Vec<usize> = (0..n).collect();
    // The output is allocated once; every repetition overwrites it in place.
    let mut out = vec![f64::NAN; element_dofs(prep.re.nsh).pow(2) * n];
    let t = crate::measure::measure_host::<()>(ctx.policy, &mut || {
        element_matrices_into(&prep.re, &prep.mesh, &all, &mut out);
        Ok(())
    })
    .map_err(|_| CaseError::Failed("host integration failed".into()))?;
    // The oracle is checked against closed forms: the six rigid-body modes of element 0.
    let error = rigid_body_residual(&prep.re, &prep.mesh.element_vertices(0), &out[..element_dofs(prep.re.nsh).pow(2)]);
    let flops = element_flops(prep.re.nsh, prep.re.nq()) * n as f64;
    Ok(vec![Measured::verified("kernel", t, error, 1e-10)
        .flops(super::plan::cpu_executed_flops(prep.re.nsh, prep.re.nq()) * n as f64)
        .paper_flops(flops)
        .extra("elements", n as f64)
        .extra("threads", threads as f64)])
}

// ---------------------------------------------------------------------------------------------
// Reports
