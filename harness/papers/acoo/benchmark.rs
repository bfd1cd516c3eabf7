//! The a-COO experiments: cases (method x mesh level) and their runs, on a device or the host.

use std::sync::{Arc, OnceLock};

use super::capacitor::{cg, spmv, Capacitor, Solve};
use super::kernel::ACOO;
use super::method::Case;
use super::methods::{MethodRun, Reference};
use super::spec::{Method, Outputs, Point, Problem_, Sweep};
use crate::benchmark::{Benchmark, CaseCtx, CaseError, Measured, MemoryEstimate, Spec};
use crate::cache::ProblemCache;
use crate::context::RunContext;
use crate::experiment::Params;
use crate::kernels::KernelSource;
use crate::{Backend, Precision};

pub struct AcooCapacitor;

/// A mesh level's problem and its f64 reference solution, shared by its cases.
struct Prepared {
    level: u32,
    capacitor: Capacitor,
    /// Host seconds of the pre-processing (Fig. 5): mesh generation (Delaunay and refinement),
    /// adjacency (free-node numbering, CSR pattern and element slots) and a balanced coloring.
    mesh_s: f64,
    adjacency_s: f64,
    coloring_s: f64,
    /// That balanced coloring of the elements, used by every colored method of the level.
    colors: Vec<Vec<u32>>,
    /// `TriMesh::coordinate_ratio` of the mesh (X/h in the CSR check's bound).
    coordinate_ratio: f64,
    /// CG to 1e-13 on the triplet assembly (no slots): the solution and the CSR values every
    /// method is checked against.
    reference: OnceLock<(Solve, Vec<f64>)>,
}

/// The run's built problems, two at most.
fn problems(run: &RunContext) -> Arc<ProblemCache<u32, Prepared>> {
    run.state("acoo problems", || ProblemCache::new(2))
}

fn prepared(run: &RunContext, level: u32) -> Result<Arc<Prepared>, CaseError> {
    problems(run).get_or_build(level, || {
        let t0 = std::time::Instant::now();
        let m = super::capacitor::mesh(level as usize);
        let t1 = std::time::Instant::now();
        let capacitor = Capacitor::from_mesh(&m);
        let t2 = std::time::Instant::now();
        let colors = fembench_fem::coloring::balanced(capacitor.elements(), 0).map_err(CaseError::Failed)?;
        let (mesh_s, adjacency_s, coloring_s) = ((t1 - t0).as_secs_f64(), (t2 - t1).as_secs_f64(), t2.elapsed().as_secs_f64());
        let coordinate_ratio = m.coordinate_ratio();
        Ok(Prepared { level, capacitor, mesh_s, adjacency_s, coloring_s, colors, coordinate_ratio, reference: OnceLock::new() })
    })
}

impl Prepared {
    /// The reference, through the prepared-problem cache. The pre-processing stages above
    /// (Fig. 5's) are timed on a real build in every process; the reference is not timed.
    fn reference(&self, max_iterations: usize) -> &(Solve, Vec<f64>) {
        self.reference.get_or_init(|| {
            let params = format!("level={} max_iterations={max_iterations} tolerance=1e-13", self.level);
            let recipe = crate::prep_cache::Recipe { kind: "acoo-reference", code: crate::prep_code::ACOO, params: &params };
            crate::prep_cache::cached(recipe, || {
                let c = &self.capacitor;
                let (vals, rhs) = c.assemble_by_sorting();
                (cg(&rhs, 1e-13, max_iterations, |p, q| spmv(&c.pattern, &vals, p, q)), vals)
            })
        })
    }
}

impl Benchmark for AcooCapacitor {
    const NAME: &'static str = "acoo-capacitor";
    const COLUMNS: &'static [&'static str] = &[
        "adjacency_s",
        "bytes_per_element",
        "cg_fused",
        "cg_graph",
        "cg_single",
        "coloring_s",
        "colors",
        "csr_bound",
        "csr_error",
        "device_bytes",
        "iteration_gap",
        "iterations",
        "iterations_performed",
        "mesh_s",
        "nnz",
        "nodes",
        "paper_bytes_per_element",
        "preprocess_coloring_s",
        "reference_iterations",
        "triangles",
        "unknowns",
    ];
    const KERNELS: &'static [KernelSource] = &[ACOO];
    const KERNEL_ARGS: &'static [crate::device::args::Declared] = super::kernel::ACOO_ARGS;
    type Sweep = Sweep;
    type Problem = Problem_;
    type Outputs = Outputs;
    type Point = Point;

    fn points(sweep: &Sweep) -> Vec<Point> {
        sweep.product()
    }
    fn params(p: &Point) -> Params {
        p.params()
    }
    fn check(spec: &Spec<Self>) -> Result<(), (String, String)> {
        let p = &spec.problem;
        let f = p.f32.as_ref();
        type Rule = (fn(f64) -> bool, &'static str);
        let tolerance: Rule = (|v| v > 0.0 && v < 1.0, "in (0, 1)");
        let error: Rule = (|v| v > 0.0, "positive");
        let slack: Rule = (|v| (0.0..1.0).contains(&v), "in [0, 1)");
        let fields = [
            ("problem.tolerance", Some(p.tolerance), tolerance),
            ("problem.f32.tolerance", f.map(|s| s.tolerance), tolerance),
            ("problem.max_error", Some(p.max_error), error),
            ("problem.f32.max_error", f.map(|s| s.max_error), error),
            ("problem.iteration_slack", Some(p.iteration_slack), slack),
            ("problem.f32.iteration_slack", f.and_then(|s| s.iteration_slack), slack),
        ];
        for (field, v, (ok, what)) in fields {
            if let Some(v) = v.filter(|&v| !ok(v)) {
                return Err((field.into(), format!("{field} must be {what}, got {v}")));
            }
        }
        if spec.sweep.level.iter().any(|&l| l > 7) {
            return Err(("sweep.level".into(), "sweep.level goes up to 7 (about 150M triangles)".into()));
        }
        Ok(())
    }
    fn memory_estimate(_: &Problem_, p: &Point) -> Option<MemoryEstimate> {
        // About 7.6K triangles at level 0, x4 per level; host: mesh, pattern, slots, reference.
        let ne = 7.6e3 * 4f64.powi(p.level as i32);
        Some(MemoryEstimate { host_bytes: ne * 260.0, device_bytes: ne * 200.0 })
    }
    fn case_exists(p: &Point, backend: Backend, precision: Precision) -> bool {
        p.method.runs_on(backend) && (backend != Backend::Cpu || precision == Precision::F64)
    }
    fn problem_key(point: &Point) -> Option<String> {
        Some(format!("level={}", point.level))
    }
    fn run(ctx: &mut CaseCtx, problem: &Problem_, point: &Point) -> Result<Vec<Measured>, CaseError> {
        let problem = &problem.at(ctx.precision);
        let prep = prepared(ctx.run, point.level)?;
        let c = &prep.capacitor;
        let (reference, reference_vals) = prep.reference(problem.max_iterations.max(10 * c.n_free));
        let case = Case {
            problem,
            c,
            colors: (&prep.colors[..], prep.coloring_s),
            reference: Reference { x: &reference.x, vals: reference_vals },
        };
        let run = point.method.entry().run(ctx, &case)?;
        let pre = [("mesh_s", prep.mesh_s), ("adjacency_s", prep.adjacency_s), ("preprocess_coloring_s", prep.coloring_s)];
        // The consolidated CSR must hold the reference's values (scaled by the largest entry) to
        // 64 u (1 + X / h): the kernel's edge vectors come from coordinates rounded to the working
        // precision, X the largest coordinate, h the smallest altitude (H200, f32: 1.2e-4 at 7.7M
        // triangles; f64: 4.4e-16). A wrong column fails the pattern check, a lost contribution
        // is of the order of an entry.
        let csr_bound = 64.0 * ctx.precision.unit_roundoff() * (1.0 + prep.coordinate_ratio);
        // The product on its own (the `spmv` row): within that bound plus its own rounding.
        let bounds = (csr_bound, csr_bound + 64.0 * ctx.precision.unit_roundoff());
        Ok(rows(problem, bounds, c, reference, point.method, run)
            .into_iter()
            .map(|m| pre.iter().fold(m, |m, &(k, v)| m.extra(k, v)))
            .collect())
    }
}

/// One row per stage the method has, plus the total; all carry the checks and the counts.
/// `bounds`: the largest scaled error the consolidated CSR (A-FEM) may have, and the product's.
pub(crate) fn rows(
    problem: &Problem_,
    bounds: (f64, f64),
    c: &Capacitor,
    reference: &Solve,
    method: Method,
    run: MethodRun,
) -> Vec<Measured> {
    let (csr_bound, product_bound) = bounds;
    // The iteration count must be the reference's to within two, or `iteration_slack` of it on
    // long solves, and the solve converged.
    let reference_iterations = reference.iterations_to(problem.tolerance).unwrap_or(reference.iterations);
    let iteration_gap = run.cg.iterations.abs_diff(reference_iterations);
    let mut reason = None;
    if !run.cg.converged {
        reason = Some(format!("CG did not converge in {} iterations", run.cg.performed));
    }
    match run.csr_error {
        Some(e) if e.is_infinite() => reason = Some("the consolidated CSR's pattern is not the reference's".into()),
        Some(e) if !(e <= csr_bound) => {
            reason =
                Some(format!("the consolidated CSR's values are {e:.2e} of the largest entry off the reference (bound {csr_bound:.2e})"))
        }
        _ => {}
    }
    let extras = extras(c, method, &run, csr_bound, (reference_iterations, iteration_gap));
    let mut out = Vec::new();
    // The product on its own, with its own check (the probe against the f64 reference matrix),
    // not part of the total.
    if let Some(p) = &run.product {
        let mut m = Measured::verified("spmv", p.timing.clone(), p.error, product_bound).bytes(p.bytes);
        for (k, v) in &extras {
            m = m.extra(k, *v);
        }
        out.push(m);
    }
    for staged in run.staged {
        for (name, t) in staged.stages.into_iter().chain([("total", staged.total)]) {
            let mut m = Measured::verified(name, t, run.error, problem.max_error);
            if let Some(l) = &run.library {
                m = m.library(l);
            }
            if let Some(r) = &reason {
                m = failed(m, r);
            } else if iteration_gap as f64 > 2f64.max(problem.iteration_slack * reference_iterations as f64) {
                m = failed(m, &format!("{} CG iterations, the reference took {}", run.cg.iterations, reference_iterations));
            }
            for (k, v) in &extras {
                m = m.extra(k, *v);
            }
            out.push(m);
        }
    }
    out
}

/// The columns every row of a run carries: the mesh, the CG's counts and how it ran, memory,
/// coloring and the consolidated CSR's check.
fn extras(
    c: &Capacitor,
    method: Method,
    run: &MethodRun,
    csr_bound: f64,
    (reference_iterations, iteration_gap): (usize, usize),
) -> Vec<(&'static str, f64)> {
    let ne = c.num_elements() as f64;
    let mut extras = vec![
        ("triangles", ne),
        ("nodes", c.num_nodes() as f64),
        ("unknowns", c.n_free as f64),
        ("nnz", c.pattern.nnz() as f64),
        ("iterations", run.cg.iterations as f64),
        ("iterations_performed", run.cg.performed as f64),
        ("reference_iterations", reference_iterations as f64),
        ("iteration_gap", iteration_gap as f64),
    ];
    // How our device CG and the vendor CGs ran (the libraries' and the host's CGs are their own).
    if run.library.is_none() && !method.on_cpu() {
        extras.extend([
            ("cg_graph", run.cg.graph as u8 as f64),
            ("cg_fused", run.cg.fused as u8 as f64),
            ("cg_single", run.cg.single as u8 as f64),
        ]);
    }
    if run.memory.peak > 0 {
        extras.push(("device_bytes", run.memory.peak as f64));
        extras.push(("bytes_per_element", run.memory.peak as f64 / ne));
    }
    if let Some(b) = method.paper_bytes_per_element() {
        extras.push(("paper_bytes_per_element", b));
    }
    if let Some((secs, colors)) = run.coloring {
        extras.push(("coloring_s", secs));
        extras.push(("colors", colors as f64));
    }
    if let Some(e) = run.csr_error {
        extras.push(("csr_error", e));
        extras.push(("csr_bound", csr_bound));
    }
    extras
}

fn failed(mut m: Measured, reason: &str) -> Measured {
    m.status = crate::results::Status::Failed;
    m.reason = Some(reason.to_string());
    m.timing = None;
    m
}
