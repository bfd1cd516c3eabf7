//! The Banaś et al. experiments: cases (variant x degree), the staged GPU run the paper's
//! Tables 6/7 time (input preparation, device memory allocation, input transfer, kernel, output
//! transfer), the CPU reference, and the reports: Tables 3/4 (the plan), 5-7 (stages), the best
//! variant per degree, Fig. 2 (stacked stage times) and Fig. 3 (GFLOP/s against p).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use polars::prelude::DataFrame;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::elasticity::{element_dofs, element_flops, element_matrices, element_matrices_into, rigid_body_residual, PrismMesh};
use super::plan::{Plan, Tuning, Variant};
use super::prism::{jacobian_terms, Reference, MAX_DEGREE};
use super::BANAS;
use crate::benchmark::{Benchmark, CaseCtx, CaseError, Measured, Spec, Target};
use crate::device::{Arg, Backend, Buffer, Device, HostBuffer, Launch};
use crate::experiment::{cartesian, NonEmpty, ParamValue, Params};
use crate::kernels::KernelSource;
use crate::measure::{CacheMode, Timer, Timing};
use crate::real::Real;
use crate::report::{fmt_num, frame, Figure, ReportCtx, ReportError, ReportItem, Series, Table};
use crate::Precision;

pub struct BanasIntegration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Algorithm 2 in f64 on the host, rayon-parallel over elements (the paper's OpenMP code).
    CpuReference,
    RegJac,
    RegNojac,
    ShmJac,
    ShmNojac,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self.variant() {
            Some(v) => v.as_str(),
            None => "cpu-reference",
        }
    }
    fn variant(self) -> Option<Variant> {
        match self {
            Method::CpuReference => None,
            Method::RegJac => Some(Variant::RegJac),
            Method::RegNojac => Some(Variant::RegNojac),
            Method::ShmJac => Some(Variant::ShmJac),
            Method::ShmNojac => Some(Variant::ShmNojac),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    pub method: NonEmpty<Method>,
    /// Polynomial degree p, 1..7.
    pub degree: NonEmpty<u32>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Problem_ {
    /// Element matrices one launch writes, in MiB; the planner fits the elements per launch to
    /// it and to the device's memory (the paper's launches wrote about 300 MB).
    pub output_mib: f64,
    /// Fraction of every launch's elements checked against the f64 reference after every pass
    /// (evenly spread, first and last included; at least one); the whole output is also scanned
    /// for NaN left of the poison. Default 0.01.
    pub verify_fraction: f64,
    /// Elements the CPU reference integrates per timed repetition (default: 8 per thread).
    pub cpu_elements: Option<usize>,
    /// Override the planner's work-group size.
    pub group_size: Option<usize>,
    /// REG: override the planner's blocks per thread, as [rows, columns].
    pub reg_blocks: Option<[usize; 2]>,
    /// SHM: shared memory for a part of A^e, in bytes (ceiling: the device's limit).
    pub shared_bytes: Option<usize>,
}

impl Default for Problem_ {
    fn default() -> Self {
        Problem_ { output_mib: 256.0, verify_fraction: 0.01, cpu_elements: None, group_size: None, reg_blocks: None, shared_bytes: None }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableName {
    /// Table 2: entries of the arrays the integration works on, ours beside the paper's.
    Sizes,
    /// Tables 3/4: the plan the host computed from the device's limits.
    Plan,
    /// Tables 5/6/7: per element, the time of each stage, flops and GFLOP/s.
    Stages,
    /// Per degree: the best variant, its GFLOP/s and fraction of peak, against the CPU.
    Best,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FigureName {
    /// Fig. 2: stage times per element against p, stacked.
    StageTimes,
    /// Fig. 3: kernel GFLOP/s against p.
    GflopsVsDegree,
}

pub type Outputs = crate::experiment::Outputs<TableName, FigureName>;

#[derive(Debug, Clone, Copy)]
pub struct Point {
    pub method: Method,
    pub degree: u32,
}

/// The stages of one GPU run, in the order the paper's tables list them.
pub const STAGES: [&str; 5] = ["prepare", "allocate", "upload", "kernel", "download"];

/// A mesh, its reference data and the f64 matrices of the elements checked, shared by the
/// cases of one (degree, elements).
struct Prepared {
    re: Reference,
    mesh: PrismMesh,
    checked: Vec<usize>,
    expected: OnceLock<Vec<f64>>,
}

impl Prepared {
    fn expected(&self) -> &[f64] {
        self.expected.get_or_init(|| element_matrices(&self.re, &self.mesh, &self.checked))
    }
}

type Cache = Mutex<BTreeMap<(u32, usize), Arc<Prepared>>>;

fn prepared(degree: u32, elements: usize, verify_fraction: f64) -> Result<Arc<Prepared>, CaseError> {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    // A panic while a mesh was built left nothing half-inserted: the cache stays usable.
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = cache.get(&(degree, elements)) {
        return Ok(p.clone());
    }
    // Meshes of another degree are not needed again: sweeps run degree by degree.
    cache.retain(|k, _| k.0 == degree);
    let re = Reference::new(degree as usize).map_err(CaseError::Failed)?;
    let mesh = PrismMesh::with_elements(elements);
    let m = ((verify_fraction * elements as f64).ceil() as usize).clamp(1, elements);
    let mut checked: Vec<usize> = (0..m).map(|i| if m == 1 { 0 } else { i * (elements - 1) / (m - 1) }).collect();
    checked.dedup();
    let p = Arc::new(Prepared { re, mesh, checked, expected: OnceLock::new() });
    cache.insert((degree, elements), p.clone());
    Ok(p)
}

impl Benchmark for BanasIntegration {
    const NAME: &'static str = "banas-integration";
    const KERNELS: &'static [KernelSource] = &[BANAS];
    type Sweep = Sweep;
    type Problem = Problem_;
    type Outputs = Outputs;
    type Point = Point;

    fn points(s: &Sweep) -> Vec<Point> {
        let axes = vec![s.degree.iter().map(|&v| v as usize).collect::<Vec<_>>(), (0..s.method.len()).collect()];
        cartesian(&axes).into_iter().map(|p| Point { method: s.method[p[1]], degree: p[0] as u32 }).collect()
    }

    fn params(p: &Point) -> Params {
        Params::default().push("method", ParamValue::Str(p.method.as_str().into())).push("degree", ParamValue::Int(p.degree as i64))
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
        }
        Ok(())
    }

    /// The f64 CPU reference runs on the cpu backend; the four GPU variants on CUDA and OpenCL in
    /// f32 and f64.
    fn case_exists(point: &Point, backend: Backend, precision: Precision) -> bool {
        match backend {
            Backend::Cpu => point.method.variant().is_none() && precision == Precision::F64,
            _ => point.method.variant().is_some(),
        }
    }

    fn run(ctx: &mut CaseCtx, problem: &Problem_, point: &Point) -> Result<Vec<Measured>, CaseError> {
        match (point.method.variant(), &ctx.target, ctx.precision) {
            (None, Target::Cpu, Precision::F64) => run_cpu(ctx, problem, point),
            (None, Target::Cpu, Precision::F32) => Err(CaseError::Skipped("the CPU reference runs in f64, as the paper's baseline".into())),
            (None, Target::Gpu(_), _) => Err(CaseError::Skipped("cpu-reference runs on the cpu backend".into())),
            (Some(_), Target::Cpu, _) => Err(CaseError::Skipped("the GPU variants run on GPU backends".into())),
            (Some(v), Target::Gpu(dev), Precision::F32) => run_gpu::<f32>(ctx, *dev, problem, point, v),
            (Some(v), Target::Gpu(dev), Precision::F64) => run_gpu::<f64>(ctx, *dev, problem, point, v),
        }
    }

    fn report(spec: &Spec<Self>, rows: &DataFrame, ctx: &ReportCtx) -> Result<Vec<ReportItem>, ReportError> {
        let r = Rows::read(rows, ctx)?;
        let mut items = Vec::new();
        for t in &spec.outputs.tables {
            items.extend(
                match t {
                    TableName::Sizes => vec![sizes_table(&spec.id)],
                    TableName::Plan => plan_tables(&spec.id, &r),
                    TableName::Stages => stage_tables(&spec.id, &r),
                    TableName::Best => vec![best_table(&spec.id, &r)],
                }
                .into_iter()
                .map(ReportItem::Table),
            );
        }
        for f in &spec.outputs.figures {
            items.extend(
                match f {
                    FigureName::StageTimes => stage_figures(&spec.id, &r),
                    FigureName::GflopsVsDegree => gflops_figures(&spec.id, &r),
                }
                .into_iter()
                .map(ReportItem::Figure),
            );
        }
        Ok(items)
    }
}

fn run_cpu(ctx: &mut CaseCtx, problem: &Problem_, point: &Point) -> Result<Vec<Measured>, CaseError> {
    let threads = rayon::current_num_threads();
    let n = problem.cpu_elements.unwrap_or(8 * threads).max(1);
    let prep = prepared(point.degree, n, 1.0 / n as f64)?;
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

/// Lengths (in reals) of the four input arrays of a launch: derivatives, quadrature, the
/// per-element geometry (six vertices for JAC, Jacobian terms of every point for NOJAC), Lamé.
fn input_lengths(prep: &Prepared, jac: bool) -> [usize; 4] {
    let (nq, ne) = (prep.re.nq(), prep.mesh.len());
    [prep.re.dphi.len(), 4 * nq, if jac { 18 * ne } else { 10 * nq * ne }, 2 * ne]
}

/// The "input data preparation" stage: the host arrays of one launch, written into the
/// (pinned) host buffers the upload reads from.
fn prepare_inputs<T: Real>(prep: &Prepared, jac: bool, host: &mut [HostBuffer]) {
    let re = &prep.re;
    let mesh = &prep.mesh;
    let [dphi, quad, per_element, lame] = host else { unreachable!("four input buffers") };
    for (d, &v) in dphi.typed_mut::<T>().iter_mut().zip(&re.dphi) {
        *d = T::from_f64(v);
    }
    for (d, v) in quad.typed_mut::<T>().iter_mut().zip(re.quad.iter().flat_map(|q| [q.xi[0], q.xi[1], q.xi[2], q.w])) {
        *d = T::from_f64(v);
    }
    let per = per_element.typed_mut::<T>();
    if jac {
        per.par_chunks_mut(18).enumerate().for_each(|(e, out)| {
            for (d, v) in out.iter_mut().zip(mesh.element_vertices(e).into_iter().flatten()) {
                *d = T::from_f64(v);
            }
        });
    } else {
        let chunk = 10 * re.nq();
        per.par_chunks_mut(chunk).enumerate().for_each(|(e, out)| {
            let x = mesh.element_vertices(e);
            for (d, v) in out.iter_mut().zip(re.quad.iter().flat_map(|pt| jacobian_terms(&x, pt))) {
                *d = T::from_f64(v);
            }
        });
    }
    for (e, pair) in lame.typed_mut::<T>().chunks_mut(2).enumerate() {
        let (l, m) = mesh.lame(e);
        pair[0] = T::from_f64(l);
        pair[1] = T::from_f64(m);
    }
}

/// One pass's check: the checked elements against the f64 reference (largest relative Frobenius
/// error), and NaN anywhere in the whole output (left of the poison: an element not written).
fn check_pass<T: Real>(out: &[T], prep: &Prepared, size: usize) -> f64 {
    if out.par_iter().any(|v| v.to_f64().is_nan()) {
        return f64::NAN;
    }
    let expected = prep.expected();
    let mut error: f64 = 0.0;
    for (k, &e) in prep.checked.iter().enumerate() {
        let want = &expected[k * size..(k + 1) * size];
        let got = &out[e * size..(e + 1) * size];
        let (mut diff, mut norm) = (0.0, 0.0);
        for (g, w) in got.iter().zip(want) {
            diff += (g.to_f64() - w).powi(2);
            norm += w * w;
        }
        let rel = (diff / norm).sqrt();
        error = if rel.is_nan() { f64::NAN } else { error.max(rel) };
    }
    error
}

fn run_gpu<T: Real>(
    ctx: &mut CaseCtx,
    dev: &dyn Device,
    problem: &Problem_,
    point: &Point,
    variant: Variant,
) -> Result<Vec<Measured>, CaseError> {
    let nsh = super::prism::shape_functions(point.degree as usize);
    let nq = super::prism::quadrature(point.degree as usize).map_err(CaseError::Failed)?.len();
    let tuning = Tuning {
        output_bytes: (problem.output_mib * (1u64 << 20) as f64) as usize,
        group_size: problem.group_size,
        reg_blocks: problem.reg_blocks,
        shared_bytes: problem.shared_bytes,
    };
    let plan = Plan::new(variant, nsh, nq, T::PRECISION, dev.info(), &tuning).map_err(CaseError::Failed)?;
    let prep = prepared(point.degree, plan.elements, problem.verify_fraction)?;
    let ne = prep.mesh.len();
    let kernel = ctx.modules.kernel(dev, &BANAS, &plan.defines(T::PRECISION), "banas_integrate")?;
    let size = element_dofs(nsh).pow(2);
    let out_len = ne * size;
    let rb = plan.real_bytes;
    let lengths = input_lengths(&prep, variant.jac());
    // Host memory of every timed transfer, pinned, allocated once outside every timer.
    let mut host_in: Vec<HostBuffer> = lengths.iter().map(|&n| dev.alloc_host(n * rb)).collect::<Result<_, _>>()?;
    let mut host_out = dev.alloc_host(out_len * rb)?;
    let pinned = host_out.pinned() && host_in.iter().all(|h| h.pinned());
    let sizes = [lengths[0], lengths[1], lengths[2], lengths[3], out_len];
    let memory = sizes.iter().sum::<usize>() * rb;
    let launch = Launch { groups: plan.groups, group_size: plan.group_size };

    let mut rows = Vec::new();
    let mut worst: f64 = 0.0;
    let mut passes_checked = 0usize;
    for &mode in ctx.policy.modes.iter() {
        let flusher = match mode {
            CacheMode::Cold => Some(ctx.flusher.ok_or_else(|| CaseError::Failed("cold mode asked for, but no cache flusher".into()))?),
            CacheMode::Warm => None,
        };
        let mut samples: [Vec<f64>; 5] = Default::default();
        let mut pass = 0usize;
        let mut last_check = 0;
        // The paper times each stage of one pass; we repeat whole passes (the first `warmup`
        // untimed) until the kernel's samples satisfy the policy (count, time, noise).
        loop {
            let t0 = Instant::now();
            prepare_inputs::<T>(&prep, variant.jac(), &mut host_in);
            let t_prepare = t0.elapsed().as_secs_f64();

            // A real allocation each pass: memory pooled by the last pass goes back first.
            dev.release_pooled_memory()?;
            let t0 = Instant::now();
            let mut bufs: Vec<Buffer> = sizes.iter().map(|&n| dev.alloc((n * rb).max(1))).collect::<Result<_, _>>()?;
            for b in bufs.iter_mut() {
                dev.touch(b)?;
            }
            dev.synchronize()?;
            let t_allocate = t0.elapsed().as_secs_f64();
            // Poison the output: an element the kernel does not write stays NaN. The inputs are
            // filled too, so that every page is mapped before the timed upload: a first write
            // into memory fresh from the driver costs a variable amount (up to 2.9x the upload
            // time between back-to-back runs on an H200 before this).
            for b in &bufs {
                ctx.modules.poison(dev, b)?;
            }
            dev.synchronize()?;

            let t_upload = dev.time_events(&mut || {
                for (b, h) in bufs.iter_mut().zip(&host_in) {
                    let n = h.len();
                    dev.upload_async(b, h, n)?;
                }
                Ok(())
            })?;
            if let Some(f) = flusher {
                f.flush(dev, pass as u32)?;
            }
            // The kernel reads vertices (JAC) or Jacobian terms (NOJAC): one buffer fills both slots.
            let args = [
                Arg::Buf(&bufs[0]),
                Arg::Buf(&bufs[1]),
                Arg::Buf(&bufs[2]),
                Arg::Buf(&bufs[2]),
                Arg::Buf(&bufs[3]),
                Arg::Buf(&bufs[4]),
                Arg::I32(ne as i32),
                Arg::I32(plan.parts as i32),
            ];
            let t_kernel = dev.time_events(&mut || dev.launch(&kernel, launch, &args))?;
            let t_download = dev.time_events(&mut || dev.download_async(&bufs[4], &mut host_out, out_len * rb))?;
            drop(bufs);

            let error = check_pass(&host_out.typed::<T>()[..out_len], &prep, size);
            worst = if error.is_nan() || worst.is_nan() { f64::NAN } else { worst.max(error) };
            passes_checked += 1;
            if pass >= ctx.policy.warmup as usize {
                for (s, t) in samples.iter_mut().zip([t_prepare, t_allocate, t_upload, t_kernel, t_download]) {
                    s.push(t);
                }
                if ctx.policy.done(&samples[3], &mut last_check) {
                    break;
                }
            }
            pass += 1;
        }
        rows.push((mode, samples));
    }
    dev.release_pooled_memory()?;

    let tolerance = if T::PRECISION == Precision::F32 { 1e-4 } else { 1e-10 };
    let paper_flops = element_flops(nsh, nq) * ne as f64;
    let executed_flops = plan.executed_flops_per_element() * ne as f64;
    let extras = [
        ("elements", ne as f64),
        ("checked_elements", prep.checked.len() as f64),
        ("checked_passes", passes_checked as f64),
        ("pinned_host", pinned as u8 as f64),
        ("group_size", plan.group_size as f64),
        ("parts", plan.parts as f64),
        ("blocks_per_thread", plan.blocks_per_thread as f64),
        ("reg_rows", plan.rb as f64),
        ("reg_cols", plan.cb as f64),
        ("groups", plan.groups as f64),
        ("shared_bytes", plan.shared_bytes as f64),
        ("input_mb", plan.input_bytes(variant.jac()) as f64 / 1e6),
        ("output_mb", (plan.elements * plan.output_bytes_per_element()) as f64 / 1e6),
        ("performed_blocks", plan.performed_blocks() as f64),
    ];
    let mut out = Vec::new();
    for (mode, samples) in rows {
        let mut totals = vec![0.0; samples[0].len()];
        for (stage, s) in STAGES.iter().zip(samples) {
            for (t, v) in totals.iter_mut().zip(&s) {
                *t += v;
            }
            let timer = if matches!(*stage, "prepare" | "allocate") { Timer::HostWall } else { Timer::DeviceEvent };
            let mut m = Measured::verified(stage, Timing { samples: s, timer, mode }, worst, tolerance);
            match *stage {
                "kernel" => m = m.flops(executed_flops).paper_flops(paper_flops).memory(memory as f64),
                "upload" => m = m.bytes((lengths.iter().sum::<usize>() * rb) as f64),
                "download" => m = m.bytes((out_len * rb) as f64),
                _ => {}
            }
            out.push(m);
        }
        out.push(
            Measured::verified("total", Timing { samples: totals, timer: Timer::StageSum, mode }, worst, tolerance)
                .flops(executed_flops)
                .paper_flops(paper_flops),
        );
    }
    Ok(out
        .into_iter()
        .map(|mut m| {
            for (k, v) in extras {
                m = m.extra(k, v);
            }
            m
        })
        .collect())
}

// ---------------------------------------------------------------------------------------------
// Reports

/// The paper's Table 3 (GTX580), p = 2..7.
/// Table 2 of the paper, p = 1..7: entries of the quadrature points and weights, of the shape
/// functions and their derivatives at one point and at all points, and 3x3 blocks of A^e.
const PAPER_TABLE2: [(&str, [u64; 7]); 4] = [
    ("xi^Q and w^Q", [24, 72, 192, 320, 600, 924, 1344]),
    ("phi^Q[i_Q] (one point)", [24, 72, 160, 300, 504, 784, 1152]),
    ("phi^Q (all points)", [144, 1296, 7680, 24000, 75600, 181104, 387072]),
    ("A^e (3x3 blocks)", [36, 324, 1600, 5625, 15876, 38416, 82944]),
];

/// The same four sizes from this module's basis and quadrature (4 numbers per point: a value
/// and three derivatives, or three coordinates and a weight).
fn table2_sizes(p: usize) -> Result<[u64; 4], String> {
    let nq = super::prism::quadrature(p)?.len() as u64;
    let nsh = super::prism::shape_functions(p) as u64;
    Ok([4 * nq, 4 * nsh, 4 * nsh * nq, nsh * nsh])
}

/// Table 2: what the element sizes imply for memory, computed here, with the paper's row under
/// each (static: it depends on p only, not on the run).
fn sizes_table(id: &str) -> Table {
    let ours: Vec<Result<[u64; 4], String>> = (1..=MAX_DEGREE).map(table2_sizes).collect();
    let mut rows = Vec::new();
    for (k, (name, paper)) in PAPER_TABLE2.iter().enumerate() {
        let mut row = vec![name.to_string(), "fembench".to_string()];
        row.extend(ours.iter().map(|o| o.as_ref().map(|s| s[k].to_string()).unwrap_or_else(|e| format!("({e})"))));
        rows.push(row);
        let mut row = vec![String::new(), "paper".to_string()];
        row.extend(paper.iter().map(|v| v.to_string()));
        rows.push(row);
    }
    let mut header = vec!["entries of".to_string(), "source".to_string()];
    header.extend((1..=MAX_DEGREE).map(|p| format!("p={p}")));
    Table {
        name: format!("{id}-table2"),
        title: "Table 2: entries (3x3 blocks for A^e) of the arrays numerical integration works on".into(),
        header,
        rows,
        notes: vec!["From this module's prism basis and quadrature (N_sh, N_Q of Table 1); the paper's values under each row.".into()],
    }
}

const PAPER_PLAN_GTX580: [(&str, [f64; 6]); 8] = [
    ("parts of A^e, REG", [2.0, 4.0, 11.0, 32.0, 76.0, 162.0]),
    ("parts of A^e, SHM", [1.0, 2.0, 6.0, 16.0, 38.0, 81.0]),
    ("blocks per thread, SHM", [2.0, 2.0, 2.0, 2.0, 2.0, 2.0]),
    ("elements per launch", [29056.0, 5376.0, 1904.0, 672.0, 224.0, 112.0]),
    ("elements per work-group", [227.0, 48.0, 17.0, 6.0, 2.0, 1.0]),
    ("input MB, JAC", [8.87, 1.67, 0.67, 0.50, 0.76, 1.52]),
    ("input MB, NOJAC", [19.95, 9.85, 5.83, 3.92, 2.15, 1.80]),
    ("output MB", [323.21, 295.31, 367.70, 366.28, 295.44, 318.94]),
];

/// Per element, microseconds, p = 2..7: (variant, kernel, total, GFLOP/s) of Tables 6 and 7.
type PaperRows = [(&'static str, [f64; 6], [f64; 6], [f64; 6]); 4];
const PAPER_GTX580: PaperRows = [
    (
        "reg-jac",
        [2.10, 27.16, 124.0, 679.3, 3010.0, 9894.0],
        [24.61, 147.6, 469.1, 1641.0, 5298.0, 14817.0],
        [208.0, 230.0, 235.0, 240.0, 204.0, 200.0],
    ),
    (
        "reg-nojac",
        [1.21, 17.80, 80.07, 439.9, 2117.0, 7203.0],
        [25.99, 149.1, 442.0, 1433.0, 4458.0, 12213.0],
        [366.0, 354.0, 366.0, 372.0, 291.0, 276.0],
    ),
    (
        "shm-jac",
        [1.91, 23.06, 114.2, 477.4, 2318.0, 7357.0],
        [24.41, 143.5, 459.4, 1439.0, 4605.0, 12280.0],
        [228.0, 270.0, 274.0, 274.0, 254.0, 253.0],
    ),
    (
        "shm-nojac",
        [1.30, 19.05, 94.31, 490.9, 1932.0, 6199.0],
        [26.07, 150.4, 456.2, 1484.0, 4273.0, 11208.0],
        [338.0, 328.0, 334.0, 324.0, 306.0, 302.0],
    ),
];
const PAPER_HD5870: PaperRows = [
    (
        "reg-jac",
        [3.13, 53.73, 325.3, 1779.0, 9496.0, 34568.0],
        [10.77, 91.32, 458.9, 2177.0, 10418.0, 36618.0],
        [139.0, 103.0, 92.0, 94.0, 69.0, 63.0],
    ),
    (
        "reg-nojac",
        [4.06, 34.61, 190.8, 985.0, 4684.0, 17094.0],
        [13.35, 76.68, 332.0, 1404.0, 5632.0, 19202.0],
        [109.0, 162.0, 159.0, 172.0, 141.0, 130.0],
    ),
    (
        "shm-jac",
        [3.90, 63.74, 297.5, 1477.0, 6428.0, 21359.0],
        [11.54, 101.3, 431.0, 1876.0, 7350.0, 23408.0],
        [111.0, 110.0, 106.0, 106.0, 93.0, 89.0],
    ),
    (
        "shm-nojac",
        [5.33, 67.90, 305.9, 1519.0, 6152.0, 20742.0],
        [14.62, 109.9, 447.1, 1937.0, 7101.0, 22850.0],
        [82.0, 103.0, 103.0, 104.0, 98.0, 92.0],
    ),
];
/// Table 5: the Xeon E5-2670 (8 cores, f64, OpenMP), microseconds and GFLOP/s per element.
const PAPER_XEON_US: [f64; 6] = [9.25, 104.4, 672.5, 3285.0, 16180.0, 101309.0];
const PAPER_XEON_GFLOPS: [f64; 6] = [41.06, 46.87, 42.37, 45.79, 34.61, 17.35];
/// Single-precision peaks the paper quotes, GFLOP/s.
const PAPER_PEAK_GTX580: f64 = 1581.0;

fn paper_at(values: &[f64; 6], degree: i64) -> Option<f64> {
    (2..=7).contains(&degree).then(|| values[(degree - 2) as usize])
}

/// The columns the Banaś reports read.
struct Rows {
    backend: Vec<String>,
    device: Vec<String>,
    precision: Vec<String>,
    method: Vec<String>,
    metric: Vec<String>,
    degree: Vec<i64>,
    status: Vec<String>,
    mode: Vec<String>,
    time: Vec<f64>,
    /// GFLOP/s by the executed count, and by the paper's count.
    gflops: Vec<f64>,
    paper_gflops: Vec<f64>,
    extras: BTreeMap<&'static str, Vec<f64>>,
    /// Peak GFLOP/s of each row's device and precision, where known.
    peak: Vec<f64>,
}

const EXTRA_COLUMNS: [&str; 11] = [
    "elements",
    "group_size",
    "parts",
    "blocks_per_thread",
    "reg_rows",
    "reg_cols",
    "input_mb",
    "output_mb",
    "threads",
    "groups",
    "shared_bytes",
];

impl Rows {
    fn read(df: &DataFrame, ctx: &ReportCtx) -> Result<Self, ReportError> {
        let opt = |c: &str| frame::nums(df, c).unwrap_or_else(|_| vec![f64::NAN; df.height()]);
        let backend = frame::strs(df, "backend")?;
        let device = frame::strs(df, "device")?;
        let precision = frame::strs(df, "precision")?;
        let peak = (0..df.height())
            .map(|i| {
                let prec = if precision[i] == "f64" { Precision::F64 } else { Precision::F32 };
                ctx.meta
                    .devices
                    .iter()
                    .find(|d| d.name == device[i] && d.backend.map(|b| b.as_str()) == Some(backend[i].as_str()))
                    .and_then(|d| d.peak_gflops(prec))
                    .unwrap_or(f64::NAN)
            })
            .collect();
        Ok(Rows {
            method: frame::strs(df, "method")?,
            metric: frame::strs(df, "metric")?,
            degree: frame::nums(df, "degree")?.into_iter().map(|v| v as i64).collect(),
            status: frame::strs(df, "status")?,
            mode: frame::strs(df, "mode").unwrap_or_else(|_| vec![String::new(); df.height()]),
            time: frame::nums(df, "time_median_s")?,
            gflops: opt("gflops"),
            paper_gflops: opt("paper_gflops"),
            extras: EXTRA_COLUMNS.iter().map(|&c| (c, opt(c))).collect(),
            backend,
            device,
            precision,
            peak,
        })
    }
    fn extra(&self, name: &str, i: usize) -> f64 {
        self.extras.get(name).map_or(f64::NAN, |v| v[i])
    }
    fn ok(&self, i: usize) -> bool {
        self.status[i] == "ok" && self.time[i].is_finite()
    }
    /// Microseconds per element.
    fn us(&self, i: usize) -> f64 {
        self.time[i] / self.extra("elements", i) * 1e6
    }
    /// (backend, device, precision, cache mode) groups with measured GPU rows, in order (a
    /// backend whose cases were all skipped gets no table or figure).
    fn gpu_groups(&self) -> Vec<(String, String, String, String)> {
        let mut g = Vec::new();
        for i in 0..self.method.len() {
            let key = (self.backend[i].clone(), self.device[i].clone(), self.precision[i].clone(), self.mode[i].clone());
            if self.backend[i] != "cpu" && self.ok(i) && !g.contains(&key) {
                g.push(key);
            }
        }
        g
    }
    fn degrees(&self) -> Vec<i64> {
        let mut d: Vec<i64> = self.degree.clone();
        d.sort();
        d.dedup();
        d
    }
    fn find(&self, group: &(String, String, String, String), method: &str, metric: &str, degree: i64) -> Option<usize> {
        (0..self.method.len()).find(|&i| {
            self.backend[i] == group.0
                && self.device[i] == group.1
                && self.precision[i] == group.2
                && (self.mode[i] == group.3 || self.status[i] != "ok")
                && self.method[i] == method
                && self.metric[i] == metric
                && self.degree[i] == degree
        })
    }
    /// The CPU reference row of a degree (f64, the host the run was on).
    fn cpu(&self, degree: i64) -> Option<usize> {
        (0..self.method.len()).find(|&i| self.method[i] == "cpu-reference" && self.degree[i] == degree && self.ok(i))
    }
}

fn cell(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite()).map(fmt_num).unwrap_or_else(|| "-".into())
}

fn plan_tables(id: &str, r: &Rows) -> Vec<Table> {
    let degrees = r.degrees();
    r.gpu_groups()
        .into_iter()
        .map(|g| {
            let at = |method: &str, d: i64, col: &str| r.find(&g, method, "kernel", d).map(|i| r.extra(col, i));
            let mut header = vec!["quantity".to_string()];
            header.extend(degrees.iter().map(|d| format!("p={d}")));
            let mut rows = Vec::new();
            let mut add = |label: &str, f: &dyn Fn(i64) -> Option<f64>| {
                let mut row = vec![label.to_string()];
                row.extend(degrees.iter().map(|&d| cell(f(d))));
                rows.push(row);
            };
            add("work-group size, REG", &|d| at("reg-jac", d, "group_size").or(at("reg-nojac", d, "group_size")));
            add("parts of A^e, REG", &|d| at("reg-jac", d, "parts").or(at("reg-nojac", d, "parts")));
            add("blocks per thread, REG", &|d| at("reg-jac", d, "blocks_per_thread").or(at("reg-nojac", d, "blocks_per_thread")));
            add("work-group size, SHM", &|d| at("shm-jac", d, "group_size").or(at("shm-nojac", d, "group_size")));
            add("parts of A^e, SHM", &|d| at("shm-jac", d, "parts").or(at("shm-nojac", d, "parts")));
            add("blocks per thread, SHM", &|d| at("shm-jac", d, "blocks_per_thread").or(at("shm-nojac", d, "blocks_per_thread")));
            add("shared memory per group, SHM [B]", &|d| at("shm-jac", d, "shared_bytes").or(at("shm-nojac", d, "shared_bytes")));
            let any = |d: i64, col: &str| ["reg-jac", "reg-nojac", "shm-jac", "shm-nojac"].iter().find_map(|m| at(m, d, col));
            add("elements per launch", &|d| any(d, "elements"));
            add("input MB, JAC", &|d| at("reg-jac", d, "input_mb").or(at("shm-jac", d, "input_mb")));
            add("input MB, NOJAC", &|d| at("reg-nojac", d, "input_mb").or(at("shm-nojac", d, "input_mb")));
            add("output MB", &|d| any(d, "output_mb"));
            for (label, values) in PAPER_PLAN_GTX580 {
                let mut row = vec![format!("paper GTX580: {label}")];
                row.extend(degrees.iter().map(|&d| cell(paper_at(&values, d))));
                rows.push(row);
            }
            Table {
                name: format!("{id}-plan-{}-{}-{}", g.0, g.2, g.3),
                title: format!("Tables 3/4: the plan from the device's limits ({} on {}, {}, {} cache)", g.0, g.1, g.2, g.3),
                header,
                rows,
                notes: vec![
                    "One work-group per (element, part of A^e); REG parts are tiles of rows x columns of 3x3 blocks, SHM parts runs of blocks in row order.".into(),
                    "The paper's work-groups loop over several elements (its 'elements per work-group'); here that is 1 / parts.".into(),
                ],
            }
        })
        .collect()
}

fn stage_tables(id: &str, r: &Rows) -> Vec<Table> {
    let degrees = r.degrees();
    let mut tables = Vec::new();
    for g in r.gpu_groups() {
        let mut header = vec!["variant".to_string(), "per element".into()];
        header.extend(degrees.iter().map(|d| format!("p={d}")));
        let mut rows = Vec::new();
        for v in Variant::ALL.map(|v| v.as_str()) {
            if !degrees.iter().any(|&d| r.find(&g, v, "kernel", d).is_some()) {
                continue;
            }
            for stage in STAGES.iter().chain(&["total"]) {
                let mut row = vec![v.to_string(), format!("{stage} [us]")];
                row.extend(degrees.iter().map(|&d| cell(r.find(&g, v, stage, d).filter(|&i| r.ok(i)).map(|i| r.us(i)))));
                rows.push(row);
            }
            let mut row = vec![v.to_string(), "kernel GFLOP/s (paper's count)".into()];
            row.extend(degrees.iter().map(|&d| cell(r.find(&g, v, "kernel", d).filter(|&i| r.ok(i)).map(|i| r.paper_gflops[i]))));
            rows.push(row);
            let mut row = vec![v.to_string(), "kernel GFLOP/s (executed)".into()];
            row.extend(degrees.iter().map(|&d| cell(r.find(&g, v, "kernel", d).filter(|&i| r.ok(i)).map(|i| r.gflops[i]))));
            rows.push(row);
            let mut row = vec![v.to_string(), "% of peak (executed)".into()];
            row.extend(
                degrees.iter().map(|&d| cell(r.find(&g, v, "kernel", d).filter(|&i| r.ok(i)).map(|i| 100.0 * r.gflops[i] / r.peak[i]))),
            );
            rows.push(row);
        }
        let mut row = vec!["cpu-reference (f64, this host)".to_string(), "time [us]".into()];
        row.extend(degrees.iter().map(|&d| cell(r.cpu(d).map(|i| r.us(i)))));
        rows.push(row);
        let mut row = vec!["cpu-reference (f64, this host)".to_string(), "GFLOP/s (paper's count)".into()];
        row.extend(degrees.iter().map(|&d| cell(r.cpu(d).map(|i| r.paper_gflops[i]))));
        rows.push(row);
        for (gpu, paper) in [("GTX580", &PAPER_GTX580), ("HD5870", &PAPER_HD5870)] {
            for (v, kernel, total, gflops) in paper.iter() {
                for (what, values) in [("kernel [us]", kernel), ("total [us]", total), ("kernel GFLOP/s", gflops)] {
                    let mut row = vec![format!("paper {gpu}: {v}"), what.to_string()];
                    row.extend(degrees.iter().map(|&d| cell(paper_at(values, d))));
                    rows.push(row);
                }
            }
        }
        for (what, values) in [("time [us]", &PAPER_XEON_US), ("GFLOP/s", &PAPER_XEON_GFLOPS)] {
            let mut row = vec!["paper Xeon E5-2670 (f64)".to_string(), what.to_string()];
            row.extend(degrees.iter().map(|&d| cell(paper_at(values, d))));
            rows.push(row);
        }
        tables.push(Table {
            name: format!("{id}-stages-{}-{}-{}", g.0, g.2, g.3),
            title: format!("Tables 5-7: per-element time of each stage and kernel GFLOP/s ({} on {}, {}, {} cache)", g.0, g.1, g.2, g.3),
            header,
            rows,
            notes: vec![
                "Median over repetitions of whole passes. prepare and allocate by the host's wall clock; upload, kernel and download by device events (the paper timed every stage on the host). Every output was poisoned before the pass and checked after it.".into(),
                "upload and download from page-locked (pinned) host memory, allocated once outside the timers.".into(),
                format!("allocate: {}", if g.0 == "cuda" {
                    "cuMemAllocAsync from a memory pool trimmed to zero before every pass (the memory comes from the driver each time), stream synchronised"
                } else {
                    "clCreateBuffer and a one-byte blocking write to each buffer (drivers allocate at first use)"
                }),
                "GFLOP/s by the paper's count (63 flops per 3x3 block update, 20 per shape function per point) to compare with the paper, and by the flops the kernel executes (44 per block update, 15 per shape function, plus padding and per-part work; banas/plan.rs), from which % of peak is computed.".into(),
            ],
        });
    }
    tables
}

fn best_table(id: &str, r: &Rows) -> Table {
    let mut rows = Vec::new();
    for g in r.gpu_groups() {
        for d in r.degrees() {
            let best = Variant::ALL
                .iter()
                .filter_map(|v| r.find(&g, v.as_str(), "kernel", d).filter(|&i| r.ok(i)).map(|i| (v.as_str(), i)))
                .min_by(|a, b| r.time[a.1].total_cmp(&r.time[b.1]));
            let Some((v, k)) = best else { continue };
            let total = r.find(&g, v, "total", d).filter(|&i| r.ok(i)).map(|i| r.us(i));
            let cpu = r.cpu(d).map(|i| r.us(i));
            let paper_best =
                PAPER_GTX580.iter().filter_map(|(pv, _, _, gf)| paper_at(gf, d).map(|x| (*pv, x))).max_by(|a, b| a.1.total_cmp(&b.1));
            rows.push(vec![
                g.0.clone(),
                g.1.clone(),
                format!("{} ({})", g.2, g.3),
                d.to_string(),
                v.to_string(),
                fmt_num(r.paper_gflops[k]),
                fmt_num(r.gflops[k]),
                cell(Some(100.0 * r.gflops[k] / r.peak[k])),
                fmt_num(r.us(k)),
                cell(total),
                cell(cpu),
                cell(cpu.map(|c| c / r.us(k))),
                cell(cpu.zip(total).map(|(c, t)| c / t)),
                paper_best.map(|(pv, x)| format!("{pv} {x:.0} ({:.0}%)", 100.0 * x / PAPER_PEAK_GTX580)).unwrap_or_else(|| "-".into()),
            ]);
        }
    }
    Table {
        name: format!("{id}-best"),
        title: "The best variant per degree: kernel GFLOP/s, fraction of peak, per-element times against the CPU reference".into(),
        header: [
            "backend",
            "device",
            "precision (cache)",
            "p",
            "best variant",
            "kernel GFLOP/s (paper's count)",
            "kernel GFLOP/s (executed)",
            "% of peak (executed)",
            "kernel us/element",
            "total us/element",
            "cpu us/element",
            "kernel vs cpu",
            "total vs cpu",
            "paper GTX580 best (% of 1581)",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        notes: vec![
            "Best: the shortest kernel time. Peak: compute units x FP32 (or FP64) lanes per SM x 2 x the driver's maximum clock; the share of peak is from the executed flops, the paper's count is shown to compare with the paper's GFLOP/s.".into(),
            "kernel vs cpu: the GPU kernel alone (f32 or f64, as the row) against the f64 CPU reference, rayon-parallel over elements on every core of the host the run was on, its output allocated once outside the timer; total vs cpu: every stage of the GPU pass (prepare, allocate, upload, kernel, download).".into(),
        ],
    }
}

fn stage_figures(id: &str, r: &Rows) -> Vec<Figure> {
    let mut figs = Vec::new();
    for g in r.gpu_groups() {
        for v in Variant::ALL.map(|v| v.as_str()) {
            let mut series = Vec::new();
            let mut cumulative: BTreeMap<i64, f64> = BTreeMap::new();
            for (k, stage) in STAGES.iter().enumerate() {
                let mut pts = Vec::new();
                for d in r.degrees() {
                    if let Some(i) = r.find(&g, v, stage, d).filter(|&i| r.ok(i)) {
                        let c = cumulative.entry(d).or_insert(0.0);
                        *c += r.us(i);
                        pts.push((d as f64, *c));
                    }
                }
                if !pts.is_empty() {
                    let label = if k == 0 { stage.to_string() } else { format!("+ {stage}") };
                    series.push(Series { label, points: pts, reference: false });
                }
            }
            let cpu: Vec<(f64, f64)> = r.degrees().into_iter().filter_map(|d| r.cpu(d).map(|i| (d as f64, r.us(i)))).collect();
            if !cpu.is_empty() {
                series.push(Series { label: "CPU reference (f64, this host)".into(), points: cpu, reference: true });
            }
            if series.iter().any(|s| !s.reference && s.points.len() > 1) {
                figs.push(Figure {
                    name: format!("{id}-stage-times-{}-{}-{}-{v}", g.0, g.2, g.3),
                    title: format!("Fig. 2: stage times per element, stacked ({v}, {} {}, {})", g.0, g.1, g.2),
                    x_label: "degree p".into(),
                    y_label: "microseconds per element (cumulative)".into(),
                    log_x: false,
                    log_y: true,
                    series,
                });
            }
        }
    }
    figs
}

fn gflops_figures(id: &str, r: &Rows) -> Vec<Figure> {
    let mut figs = Vec::new();
    for g in r.gpu_groups() {
        let mut series = Vec::new();
        for v in Variant::ALL.map(|v| v.as_str()) {
            let pts: Vec<(f64, f64)> = r
                .degrees()
                .into_iter()
                .filter_map(|d| r.find(&g, v, "kernel", d).filter(|&i| r.ok(i)).map(|i| (d as f64, r.paper_gflops[i])))
                .collect();
            if !pts.is_empty() {
                series.push(Series { label: v.to_string(), points: pts, reference: false });
            }
        }
        let cpu: Vec<(f64, f64)> = r.degrees().into_iter().filter_map(|d| r.cpu(d).map(|i| (d as f64, r.paper_gflops[i]))).collect();
        if !cpu.is_empty() {
            series.push(Series { label: "CPU reference (f64, this host)".into(), points: cpu, reference: false });
        }
        for (v, _, _, gf) in PAPER_GTX580.iter() {
            let pts: Vec<(f64, f64)> = (2..=7).map(|d| (d as f64, gf[(d - 2) as usize])).collect();
            series.push(Series { label: format!("paper GTX580 {v}"), points: pts, reference: true });
        }
        series.push(Series {
            label: "paper Xeon E5-2670".into(),
            points: (2..=7).map(|d| (d as f64, PAPER_XEON_GFLOPS[(d - 2) as usize])).collect(),
            reference: true,
        });
        if series.iter().any(|s| !s.reference && s.points.len() > 1) {
            figs.push(Figure {
                name: format!("{id}-gflops-{}-{}-{}", g.0, g.2, g.3),
                title: format!("Fig. 3: kernel GFLOP/s against degree ({} {}, {})", g.0, g.1, g.2),
                x_label: "degree p".into(),
                y_label: "GFLOP/s (paper's flop count)".into(),
                log_x: false,
                log_y: true,
                series,
            });
        }
    }
    figs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_sizes_from_our_basis_and_quadrature_are_the_papers_table_2() {
        for p in 1..=MAX_DEGREE {
            let ours = table2_sizes(p).unwrap();
            for (k, (name, paper)) in PAPER_TABLE2.iter().enumerate() {
                assert_eq!(ours[k], paper[p - 1], "{name} at p = {p}");
            }
        }
        let t = sizes_table("banas");
        assert_eq!(t.rows.len(), 8);
        assert!(t.rows.iter().all(|r| r.len() == 2 + MAX_DEGREE));
    }
}
