//! The Cecka et al. experiments: cases, their runs on each backend, and their reports.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use polars::prelude::DataFrame;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::nz_plans::{self, GlobalPlan, Packed, SharedAtomicPlan, SharedPlan};
use super::system::{
    assemble_by_search, assemble_dummy, assemble_parallel_into, assemble_serial, assemble_serial_into, check_bounds, color_elements,
    compare, error_bounds, Bounds, Problem, System, SOURCE_F,
};
use super::CECKA;
use crate::benchmark::{Benchmark, CaseCtx, CaseError, Measured, MemoryEstimate, Spec, Target};
use crate::device::{Arg, Backend, Device, DeviceExt, Launch};
use crate::experiment::{cartesian, NonEmpty, ParamValue, Params};
use crate::kernels::{Defines, KernelSource};
use crate::measure::{measure_device, measure_host, Timing};
use crate::real::Real;
use crate::report::{fmt_num, frame, Figure, ReportCtx, ReportError, ReportItem, Series, Table};
use crate::Precision;

pub struct CeckaAssembly;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Algorithm 1, serial, f64 (the paper's CPU baseline). CPU backend.
    CpuSerial,
    /// Algorithm 1 over colors with rayon. CPU backend.
    CpuParallel,
    /// 4.1: one thread per element, one launch per color.
    ElemColor,
    ElemColorDummy,
    /// 4.2: METIS element partitions with shared-memory prefetch, element data to global
    /// memory, then the LPT-packed reduction array.
    GlobalNz,
    GlobalNzDummy,
    /// 4.3: METIS node partitions, scatter array into shared memory, element data and
    /// reduction in shared memory.
    SharedNz,
    SharedNzDummy,
    /// 4.4: one thread per non-zero, the element subroutine recomputed for every contribution.
    LocalNz,
    LocalNzDummy,
    /// Beyond the paper: one thread per element, atomic adds into precomputed CSR slots.
    ElemAtomic,
    ElemAtomicDummy,
    /// Beyond the paper: SharedNZ's node partitions, element entries added by shared-memory
    /// atomics into the block's own rows (16-bit slots), each target written once.
    SharedAtomic,
    SharedAtomicDummy,
}

/// How a GPU method assembles; each has a full and a dummy variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Cpu,
    Elem,
    GlobalNz,
    SharedNz,
    LocalNz,
    SharedAtomic,
}

impl Method {
    pub const ALL: [Method; 14] = [
        Method::CpuSerial,
        Method::CpuParallel,
        Method::ElemColor,
        Method::ElemColorDummy,
        Method::GlobalNz,
        Method::GlobalNzDummy,
        Method::SharedNz,
        Method::SharedNzDummy,
        Method::LocalNz,
        Method::LocalNzDummy,
        Method::ElemAtomic,
        Method::ElemAtomicDummy,
        Method::SharedAtomic,
        Method::SharedAtomicDummy,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Method::CpuSerial => "cpu-serial",
            Method::CpuParallel => "cpu-parallel",
            Method::ElemColor => "elem-color",
            Method::ElemColorDummy => "elem-color-dummy",
            Method::GlobalNz => "global-nz",
            Method::GlobalNzDummy => "global-nz-dummy",
            Method::SharedNz => "shared-nz",
            Method::SharedNzDummy => "shared-nz-dummy",
            Method::LocalNz => "local-nz",
            Method::LocalNzDummy => "local-nz-dummy",
            Method::ElemAtomic => "elem-atomic",
            Method::ElemAtomicDummy => "elem-atomic-dummy",
            Method::SharedAtomic => "shared-atomic",
            Method::SharedAtomicDummy => "shared-atomic-dummy",
        }
    }
    fn family(self) -> Family {
        match self {
            Method::CpuSerial | Method::CpuParallel => Family::Cpu,
            Method::ElemColor | Method::ElemColorDummy | Method::ElemAtomic | Method::ElemAtomicDummy => Family::Elem,
            Method::GlobalNz | Method::GlobalNzDummy => Family::GlobalNz,
            Method::SharedNz | Method::SharedNzDummy => Family::SharedNz,
            Method::LocalNz | Method::LocalNzDummy => Family::LocalNz,
            Method::SharedAtomic | Method::SharedAtomicDummy => Family::SharedAtomic,
        }
    }
    fn on_cpu(self) -> bool {
        self.family() == Family::Cpu
    }
    /// A dummy variant, by its name: every `*-dummy` method and only those (a hand list once
    /// forgot SharedAtomicDummy, which then ran the full kernel).
    pub fn dummy(self) -> bool {
        self.as_str().ends_with("-dummy")
    }
    /// The full method a dummy stands beside (itself for a full method).
    pub fn full(self) -> Method {
        let name = self.as_str().strip_suffix("-dummy").unwrap_or(self.as_str());
        Method::ALL.into_iter().find(|m| m.as_str() == name).unwrap_or(self)
    }
    fn colored(self) -> bool {
        matches!(self, Method::ElemColor | Method::ElemColorDummy | Method::CpuParallel)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    pub method: NonEmpty<Method>,
    /// Uniform refinements of the coarse plate mesh: level 0 has about 290 P1 elements, each
    /// level four times more (level 7: about 4.8M, Table VI's largest).
    pub level: NonEmpty<u32>,
    /// Lagrange order, 1..6.
    pub order: NonEmpty<u32>,
    /// Minimum number of colors for the colored methods (0: as few as greedy coloring finds).
    #[serde(default)]
    pub colors: Option<NonEmpty<u32>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Problem_ {
    /// Work-group size of every kernel (and the lanes of the packed arrays). Default: 256 for
    /// GlobalNZ and SharedNZ, 128 for the others.
    pub group_size: Option<u32>,
    /// GlobalNZ and SharedAtomic: elements per METIS part (thread block) to aim for. Default:
    /// 512 (GlobalNZ), 1024 (SharedAtomic).
    pub elements_per_block: Option<u32>,
    /// GlobalNZ and LocalNZ: non-zeros (reduction lists) per thread block, per thread. Default 4.
    pub targets_per_thread: Option<u32>,
    /// Shared memory a block may use, in bytes; default and ceiling: the device's own limit
    /// (the paper's SharedNZ fails at order 5 on 16 KiB).
    pub shared_bytes: Option<u64>,
    /// SharedAtomic through CUDA: blocks per multiprocessor the compiler must fit in registers
    /// (`__launch_bounds__`); default: the compiler's choice.
    pub min_blocks_per_sm: Option<u32>,
    /// A Gmsh mesh instead of the plate with holes; `level` then counts uniform refinements of it.
    pub mesh: Option<MeshFile>,
    /// SharedAtomic: loop iterations whose global loads a thread issues together before it uses
    /// them (the kernel is latency-bound); default 8 (H200, P1, f32: 0.235, 0.224, 0.213 ms for 2, 4, 8).
    pub load_batch: Option<u32>,
}

/// A user's own domain: an ASCII Gmsh mesh of 3-node triangles and its Dirichlet groups.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeshFile {
    /// Path of the `.msh` file (format 4.1 or 2.2), relative to the working directory.
    pub gmsh: std::path::PathBuf,
    /// Physical group of boundary lines (its name, or its number) -> prescribed value g.
    pub dirichlet: BTreeMap<String, f64>,
}

impl MeshFile {
    fn read(&self) -> Result<super::mesh::TriMesh, fembench_fem::gmsh::GmshError> {
        fembench_fem::gmsh::read(&self.gmsh, &self.dirichlet)
    }
}

impl Problem_ {
    /// The experiment's group size, else each method's best on the H200 (docs/performance-notes.md):
    /// 256 for GlobalNZ and SharedNZ, 128 for the others.
    fn group_size(&self, family: Family) -> usize {
        let default = if matches!(family, Family::GlobalNz | Family::SharedNz) { 256 } else { 128 };
        self.group_size.map_or(default, |g| g as usize)
    }
    /// The experiment's choice, else 512 for GlobalNZ and 1024 for SharedAtomic.
    fn elements_per_block(&self, family: Family) -> usize {
        let default = if family == Family::GlobalNz { 512 } else { 1024 };
        self.elements_per_block.map_or(default, |e| e as usize)
    }
    fn targets_per_block(&self, family: Family) -> usize {
        self.group_size(family) * self.targets_per_thread.unwrap_or(4) as usize
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableName {
    /// Table VI: average relative error of the f32 device system against the f64 host system.
    Table6,
    /// Time, effective bandwidth and speed-up over the serial CPU baseline per method and size.
    Timings,
    /// The fastest of the paper's four methods and the fastest overall, per order, beside the
    /// paper's finding (SharedNZ up to order 3, GlobalNZ from order 4).
    Winners,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FigureName {
    /// Fig. 12: time per element against mesh size.
    TimeVsSize,
    /// Fig. 13/14: time per element against order, full and dummy kernels.
    TimeVsOrder,
    /// Fig. 3: ElemColor time against the number of colors.
    TimeVsColors,
    /// Fig. 13c/14c: full time over dummy time against order, per method (how much of the
    /// time is the element arithmetic).
    DummySpeedup,
}

/// The tables and figures an experiment file may ask for.
pub type Outputs = crate::experiment::Outputs<TableName, FigureName>;

#[derive(Debug, Clone, Copy)]
pub struct Point {
    pub method: Method,
    pub level: u32,
    pub order: u32,
    pub colors: u32,
}

/// Table VI of the paper: (nodes, elements) and the average relative error, the same for all
/// four methods.
pub const PAPER_TABLE6: [(&str, f64); 8] = [
    ("184, 292", 1.6e-7),
    ("664, 1168", 3.0e-7),
    ("2.5K, 4.7K", 6.2e-7),
    ("9.7K, 18.7K", 1.2e-6),
    ("38K, 75K", 2.6e-6),
    ("150K, 299K", 5.2e-6),
    ("600K, 1.2M", 1.1e-5),
    ("2.4M, 4.8M", 2.1e-5),
];

/// A plan (or why it could not be made) and the host seconds it took to make: the method's
/// set-up, reported beside its assembly time.
type Timed<V> = Arc<(Result<V, String>, f64)>;

/// Built problems and their f64 reference systems, shared by consecutive cases.
struct Prepared {
    problem: Problem,
    reference: OnceLock<System>,
    /// The dummy subroutine's system, and the per-entry error bounds of both (in units of u).
    dummy_reference: OnceLock<System>,
    bounds: OnceLock<Bounds>,
    dummy_bounds: OnceLock<Bounds>,
    colors: Mutex<BTreeMap<u32, Timed<Arc<Vec<Vec<u32>>>>>>,
    /// Plans by their parameters; failures are kept too (a partition that does not fit is
    /// not retried for the next precision or backend with the same limits).
    global: Mutex<BTreeMap<[usize; 4], Timed<GlobalPlan>>>,
    shared: Mutex<BTreeMap<[usize; 2], Timed<SharedPlan>>>,
    local: Mutex<BTreeMap<[usize; 2], Timed<Packed>>>,
    shared_atomic: Mutex<BTreeMap<[usize; 2], Timed<SharedAtomicPlan>>>,
}

/// A cache entry, made if missing. The lock is not held while `make` runs, and a panic inside
/// `make` inserts nothing, so neither leaves the cache unusable for later cases.
fn cached<K: Ord + Clone, V>(map: &Mutex<BTreeMap<K, Timed<V>>>, key: K, make: impl FnOnce() -> Result<V, String>) -> Timed<V> {
    if let Some(v) = map.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return v.clone();
    }
    let t0 = Instant::now();
    let made = make();
    let v = Arc::new((made, t0.elapsed().as_secs_f64()));
    map.lock().unwrap_or_else(|e| e.into_inner()).entry(key).or_insert(v).clone()
}

impl Prepared {
    fn reference(&self) -> &System {
        self.reference.get_or_init(|| assemble_serial(&self.problem))
    }
    fn dummy_reference(&self) -> &System {
        self.dummy_reference.get_or_init(|| assemble_dummy(&self.problem))
    }
    fn bounds(&self, dummy: bool) -> &Bounds {
        if dummy {
            self.dummy_bounds.get_or_init(|| error_bounds(&self.problem, true))
        } else {
            self.bounds.get_or_init(|| error_bounds(&self.problem, false))
        }
    }
    /// The element coloring with at least `min` colors, and the seconds it took.
    fn colors(&self, min: u32) -> Result<(Arc<Vec<Vec<u32>>>, f64), CaseError> {
        let c = cached(&self.colors, min, || color_elements(&self.problem.mesh, min as usize).map(Arc::new));
        match &c.0 {
            Ok(groups) => Ok((groups.clone(), c.1)),
            Err(e) => Err(CaseError::Failed(e.clone())),
        }
    }
}

type ProblemKey = (Option<MeshFile>, u32, u32);
static CACHE: Mutex<Vec<(ProblemKey, Arc<Prepared>)>> = Mutex::new(Vec::new());

fn prepared(mesh: Option<&MeshFile>, level: u32, order: u32) -> Result<Arc<Prepared>, CaseError> {
    // A panic while a problem was built inserted nothing: recover the lock and go on.
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let key = (mesh.cloned(), level, order);
    if let Some((_, p)) = cache.iter().find(|(k, _)| *k == key) {
        return Ok(p.clone());
    }
    let problem = match mesh {
        None => Problem::new(level as usize, order as usize),
        Some(m) => {
            let p1 = m.read().map_err(|e| CaseError::Failed(e.to_string()))?;
            Problem::from_p1(&super::mesh::refined(p1, level as usize), level as usize, order as usize)
        }
    };
    let p = Arc::new(Prepared {
        problem,
        reference: OnceLock::new(),
        dummy_reference: OnceLock::new(),
        bounds: OnceLock::new(),
        dummy_bounds: OnceLock::new(),
        colors: Mutex::new(BTreeMap::new()),
        global: Mutex::new(BTreeMap::new()),
        shared: Mutex::new(BTreeMap::new()),
        local: Mutex::new(BTreeMap::new()),
        shared_atomic: Mutex::new(BTreeMap::new()),
    });
    // Two problems at most: the largest P1 mesh holds about a gigabyte of host arrays.
    if cache.len() >= 2 {
        cache.remove(0);
    }
    cache.push((key, p.clone()));
    Ok(p)
}

impl Benchmark for CeckaAssembly {
    const NAME: &'static str = "cecka-assembly";
    const KERNELS: &'static [KernelSource] = &[CECKA];
    type Sweep = Sweep;
    type Problem = Problem_;
    type Outputs = Outputs;
    type Point = Point;

    fn points(s: &Sweep) -> Vec<Point> {
        let colors: Vec<u32> = s.colors.as_ref().map(|c| c.0.clone()).unwrap_or_else(|| vec![0]);
        let axes = vec![
            s.level.iter().map(|&v| v as i64).collect::<Vec<_>>(),
            s.order.iter().map(|&v| v as i64).collect(),
            colors.iter().map(|&v| v as i64).collect(),
            (0..s.method.len() as i64).collect(),
        ];
        cartesian(&axes)
            .into_iter()
            .filter_map(|p| {
                let method = s.method[p[3] as usize];
                // The color count only matters to colored methods: others run once, at 0.
                if !method.colored() && p[2] != colors[0] as i64 {
                    return None;
                }
                Some(Point { method, level: p[0] as u32, order: p[1] as u32, colors: if method.colored() { p[2] as u32 } else { 0 } })
            })
            .collect()
    }

    fn params(p: &Point) -> Params {
        Params::default()
            .push("method", ParamValue::Str(p.method.as_str().into()))
            .push("level", ParamValue::Int(p.level as i64))
            .push("order", ParamValue::Int(p.order as i64))
            .push("min_colors", ParamValue::Int(p.colors as i64))
    }

    fn check(spec: &Spec<Self>) -> Result<(), (String, String)> {
        let quick = spec.quick.as_ref().and_then(|q| q.sweep.as_ref());
        for (at, sweep) in [("sweep", Some(&spec.sweep)), ("quick.sweep", quick)] {
            let Some(sweep) = sweep else { continue };
            if let Some(o) = sweep.order.iter().find(|&&o| !(1..=6).contains(&o)) {
                return Err((format!("{at}.order"), format!("{at}.order: {o} is outside 1..6")));
            }
            if let Some(l) = sweep.level.iter().find(|&&l| l > 8) {
                return Err((format!("{at}.level"), format!("{at}.level: {l} is above 8 (level 7 is already 4.8M elements)")));
            }
            // Colors are bits of a 64-bit mask in the greedy coloring.
            if let Some(c) = sweep.colors.iter().flat_map(|c| c.iter()).find(|&&c| c > 64) {
                return Err((format!("{at}.colors"), format!("{at}.colors: {c} is above 64, the most the element coloring supports")));
            }
        }
        let problems = [("problem", Some(&spec.problem)), ("quick.problem", spec.quick.as_ref().and_then(|q| q.problem.as_ref()))];
        for (at, p) in problems {
            let Some(p) = p else { continue };
            for (name, v) in
                [("group_size", p.group_size), ("elements_per_block", p.elements_per_block), ("targets_per_thread", p.targets_per_thread)]
            {
                if v == Some(0) {
                    return Err((format!("{at}.{name}"), format!("{at}.{name} must be at least 1")));
                }
            }
            if p.group_size.is_some_and(|g| g > 1024) {
                return Err((format!("{at}.group_size"), format!("{at}.group_size must be at most 1024")));
            }
            // An imported mesh is read here, so that `harness validate` names its file and line.
            if let Some(m) = &p.mesh {
                m.read().map_err(|e| (format!("{at}.mesh"), format!("{at}.mesh: {e}")))?;
            }
        }
        Ok(())
    }

    fn memory_estimate(problem: &Problem_, point: &Point) -> Option<MemoryEstimate> {
        // The plate has 288 P1 elements at level 0 (an imported mesh: its own count, unknown
        // here; estimate as the plate). Per element: slots (en^2 x 4 B) and, bounding nnz by
        // ne x en^2, the CSR columns, reference, abs-sum and result arrays (4 + 3 x 8 B), the
        // packed plans (2 x 4 B) and one device copy of the outputs; two problems are cached.
        let _ = problem;
        let ne = 288.0 * 4f64.powi(point.level as i32);
        let en = ((point.order + 1) * (point.order + 2) / 2) as f64;
        let per_element = en * en * (4.0 + 28.0 + 8.0) + en * 40.0;
        Some(MemoryEstimate { host_bytes: ne * per_element, device_bytes: ne * en * en * 16.0 })
    }

    /// The CPU methods run on the cpu backend in f64 (the paper's baseline); the GPU methods on
    /// CUDA and OpenCL in f32 and f64.
    fn case_exists(point: &Point, backend: Backend, precision: Precision) -> bool {
        match backend {
            Backend::Cpu => point.method.on_cpu() && precision == Precision::F64,
            _ => !point.method.on_cpu(),
        }
    }

    fn run(ctx: &mut CaseCtx, problem: &Problem_, point: &Point) -> Result<Vec<Measured>, CaseError> {
        let gpu = matches!(ctx.target, Target::Gpu(_));
        if gpu == point.method.on_cpu() {
            return Err(CaseError::Skipped(format!(
                "{} runs on {}",
                point.method.as_str(),
                if gpu { "the cpu backend" } else { "GPU backends" }
            )));
        }
        if !gpu && ctx.precision == Precision::F32 {
            return Err(CaseError::Skipped("the CPU reference runs in f64, as the paper's baseline".into()));
        }
        let prep = prepared(problem.mesh.as_ref(), point.level, point.order)?;
        match (ctx.precision, &ctx.target) {
            (_, Target::Cpu) => run_cpu(ctx, &prep, point),
            (Precision::F32, Target::Gpu(_)) => run_gpu::<f32>(ctx, problem, &prep, point),
            (Precision::F64, Target::Gpu(_)) => run_gpu::<f64>(ctx, problem, &prep, point),
        }
    }

    fn report(spec: &Spec<Self>, rows: &DataFrame, _ctx: &ReportCtx) -> Result<Vec<ReportItem>, ReportError> {
        let r = Rows::read(rows)?;
        let mut items = Vec::new();
        for t in &spec.outputs.tables {
            items.push(ReportItem::Table(match t {
                TableName::Table6 => table6(&spec.id, &r),
                TableName::Timings => timings_table(&spec.id, &r),
                TableName::Winners => winners_table(&spec.id, &r),
            }));
        }
        for f in &spec.outputs.figures {
            items.extend(
                match f {
                    FigureName::TimeVsSize => figure_by(&spec.id, &r, "size", |i| r.elements[i], "elements", true),
                    FigureName::TimeVsOrder => figure_by(&spec.id, &r, "order", |i| r.order[i], "element order", false),
                    FigureName::TimeVsColors => figure_by(&spec.id, &r, "colors", |i| r.colors_used[i], "number of colors", false),
                    FigureName::DummySpeedup => dummy_speedup(&spec.id, &r),
                }
                .into_iter()
                .map(ReportItem::Figure),
            );
        }
        Ok(items)
    }
}

/// Bytes and flops of the serial algorithm (ElemColor and the CPU code move the same data):
/// per element its connectivity and element data, nodal coordinates and values, the outputs
/// read and written. Flops: the element subroutine's (see [`element_flops`]).
fn cost(p: &Problem, s: usize, dummy: bool) -> (f64, f64) {
    let (en, ne, n) = (p.en() as f64, p.ne() as f64, p.mesh.num_nodes() as f64);
    let bytes =
        en * ne * 4.0 + en * en * ne * 4.0 + 2.0 * n * s as f64 + n * 4.0 + n * s as f64 + 2.0 * (p.nnz() + p.n_free) as f64 * s as f64;
    (bytes, ne * element_flops(en, dummy))
}

fn sizes(prep: &Prepared) -> [(&'static str, f64); 4] {
    let p = &prep.problem;
    [("elements", p.ne() as f64), ("nodes", p.mesh.num_nodes() as f64), ("nnz", p.nnz() as f64), ("unknowns", p.n_free as f64)]
}

/// The CPU baselines, f64. The system is allocated once; each timed repetition zeroes it and
/// assembles (the paper's Algorithm 1 includes the zeroing), so no repetition allocates.
/// cpu-serial is checked against [`assemble_by_search`] (no precomputed slots), not against
/// itself; cpu-parallel against the serial reference.
fn run_cpu(ctx: &mut CaseCtx, prep: &Prepared, point: &Point) -> Result<Vec<Measured>, CaseError> {
    let p = &prep.problem;
    let (colors, color_secs) = match point.method {
        Method::CpuParallel => {
            let (c, t) = prep.colors(point.colors)?;
            (Some(c), t)
        }
        _ => (None, 0.0),
    };
    let mut out = System { vals: vec![f64::NAN; p.nnz()], rhs: vec![f64::NAN; p.n_free] };
    let timing = measure_host::<()>(ctx.policy, &mut || {
        match &colors {
            Some(c) => assemble_parallel_into(p, c, &mut out),
            None => assemble_serial_into(p, &mut out),
        }
        Ok(())
    })
    .map_err(|_| CaseError::Failed("host assembly failed".into()))?;
    let independent;
    let check_against = match point.method {
        Method::CpuSerial => {
            independent = assemble_by_search(p);
            &independent
        }
        _ => prep.reference(),
    };
    let (over, worst) = check_bounds(&out.vals, &out.rhs, check_against, prep.bounds(false), f64::EPSILON / 2.0);
    let cmp = compare(&out.vals, &out.rhs, check_against);
    let (bytes, flops) = cost(p, 8, false);
    let mut m = Measured::verified(point.method.as_str(), timing, worst, 1.0)
        .bytes(bytes)
        .flops(flops)
        .extra("table6_error", cmp.avg_relative)
        .extra("entries_over_bound", over as f64)
        .extra("setup_s", color_secs)
        .extra("threads", if colors.is_some() { rayon::current_num_threads() as f64 } else { 1.0 });
    for (k, v) in sizes(prep) {
        m = m.extra(k, v);
    }
    m = m.extra("colors_used", colors.map_or(0.0, |c| c.len() as f64));
    Ok(vec![m])
}

/// Element subroutine flops, as the kernels execute them: 15 for the geometry (edge vectors,
/// determinant, its inverse, three coefficients), then per (i, j) pair 7 (the three-term
/// combination 5, the Dirichlet fold 2), and 2 per row of F^e. The dummy subroutine: 17 for the
/// geometry and its one entry value, 2 per pair (the fold), 2 per row. Accumulation adds are
/// counted by the methods that do them as flops (GlobalNZ's and SharedNZ's reductions);
/// atomic additions (ElemAtomic, SharedAtomic) are memory operations, not counted.
fn element_flops(en: f64, dummy: bool) -> f64 {
    if dummy {
        17.0 + 2.0 * en * en + 2.0 * en
    } else {
        15.0 + 7.0 * en * en + 2.0 * en
    }
}

/// What one GPU method's run leaves for verification and the row.
struct GpuRun<T> {
    timings: Vec<Timing>,
    /// The outputs of the checked repetition (run on poisoned outputs after the timed ones).
    vals: Vec<T>,
    rhs: Vec<T>,
    bytes: f64,
    flops: f64,
    memory: f64,
    /// Host seconds of the method's set-up for this case: its plan (partitions, packing,
    /// coloring; the time it took when first made) and the uploads of its arrays.
    setup_s: f64,
    extras: Vec<(&'static str, f64)>,
}

fn run_gpu<T: Real>(ctx: &mut CaseCtx, problem: &Problem_, prep: &Prepared, point: &Point) -> Result<Vec<Measured>, CaseError> {
    let run = match point.method.family() {
        Family::Elem => run_elem::<T>(ctx, problem, prep, point)?,
        Family::GlobalNz => run_global_nz::<T>(ctx, problem, prep, point)?,
        Family::SharedNz => run_shared_nz::<T>(ctx, problem, prep, point)?,
        Family::LocalNz => run_local_nz::<T>(ctx, problem, prep, point)?,
        Family::SharedAtomic => run_shared_atomic::<T>(ctx, problem, prep, point)?,
        Family::Cpu => return Err(CaseError::Failed("a CPU method on a GPU target".into())),
    };
    let p = &prep.problem;
    let got_vals: Vec<f64> = run.vals.iter().map(|v| v.to_f64()).collect();
    let got_rhs: Vec<f64> = run.rhs.iter().map(|v| v.to_f64()).collect();
    if got_vals.len() != p.nnz() || got_rhs.len() != p.n_free {
        return Err(CaseError::Failed("the device returned a system of the wrong size".into()));
    }
    // Every entry within its own bound (system.rs: element rounding, coordinate rounding and
    // summation, in units of the precision's u); a dummy kernel against the dummy system.
    let dummy = point.method.dummy();
    let reference = if dummy { prep.dummy_reference() } else { prep.reference() };
    let u = match T::PRECISION {
        Precision::F32 => f32::EPSILON as f64 / 2.0,
        Precision::F64 => f64::EPSILON / 2.0,
    };
    let (over, worst) = check_bounds(&got_vals, &got_rhs, reference, prep.bounds(dummy), u);
    let cmp = compare(&got_vals, &got_rhs, reference);
    // Table VI's average relative error must also stay plausible: 1e-3 in f32 (the paper's
    // largest is 2.1e-5), 1e-10 in f64.
    let avg_limit = if T::PRECISION == Precision::F32 { 1e-3 } else { 1e-10 };
    let error = if cmp.avg_relative.is_nan() || cmp.avg_relative > avg_limit { f64::INFINITY } else { worst };
    Ok(run
        .timings
        .into_iter()
        .map(|t| {
            let mut m = Measured::verified(point.method.as_str(), t, error, 1.0).bytes(run.bytes).flops(run.flops).memory(run.memory);
            if over > 0 || error.is_infinite() {
                m.reason = Some(format!(
                    "verification failed: {over} entries over their error bound (largest error/bound {worst:.3e}), average relative error {:.3e} (limit {avg_limit:.0e})",
                    cmp.avg_relative
                ));
            }
            if !dummy {
                m = m.extra("table6_error", cmp.avg_relative);
            }
            m = m.extra("entries_over_bound", over as f64).extra("setup_s", run.setup_s);
            for (k, v) in sizes(prep) {
                m = m.extra(k, v);
            }
            for &(k, v) in &run.extras {
                m = m.extra(k, v);
            }
            m
        })
        .collect())
}

fn gpu_of<'a>(ctx: &CaseCtx<'a>) -> Result<&'a dyn Device, CaseError> {
    match ctx.target {
        Target::Gpu(dev) => Ok(dev),
        Target::Cpu => Err(CaseError::Failed("not a GPU target".into())),
    }
}

/// Times `body` in every mode the policy asks for, then poisons `outputs` (NaN) and runs one
/// more, untimed repetition: the one whose outputs are checked.
fn time_modes(
    ctx: &mut CaseCtx,
    dev: &dyn Device,
    outputs: &[&crate::device::Buffer],
    body: &mut dyn FnMut() -> crate::device::DeviceResult<()>,
) -> Result<Vec<Timing>, CaseError> {
    let mut timings = Vec::new();
    for &mode in ctx.policy.modes.iter() {
        timings.push(measure_device(dev, ctx.policy, mode, ctx.flusher, body)?);
    }
    dev.synchronize()?;
    for b in outputs {
        ctx.modules.poison(dev, b)?;
    }
    body()?;
    dev.synchronize()?;
    Ok(timings)
}

fn to_real<T: Real>(v: &[f64]) -> Vec<T> {
    v.par_iter().map(|&x| T::from_f64(x)).collect()
}

/// The shared memory a block may use: the device's limit, or less if the experiment asks.
fn shared_limit(dev: &dyn Device, problem: &Problem_) -> Result<usize, CaseError> {
    let device = dev.info().local_mem_bytes as usize;
    match problem.shared_bytes {
        Some(b) if b as usize > device => {
            Err(CaseError::Failed(format!("problem.shared_bytes = {b} exceeds the device's {device} bytes of shared memory per block")))
        }
        Some(b) => Ok(b as usize),
        None => Ok(device),
    }
}

/// Nodal data every NZ method reads: coordinates and prescribed values.
struct Nodal {
    x: crate::device::Buffer,
    y: crate::device::Buffer,
    g: crate::device::Buffer,
    refs: crate::device::Buffer,
    bytes: usize,
}

fn upload_nodal<T: Real>(dev: &dyn Device, p: &Problem) -> Result<Nodal, CaseError> {
    let refs = to_real::<T>(&p.refs.packed());
    Ok(Nodal {
        x: dev.upload_slice(&to_real::<T>(&p.mesh.x))?,
        y: dev.upload_slice(&to_real::<T>(&p.mesh.y))?,
        g: dev.upload_slice(&to_real::<T>(&p.g))?,
        bytes: (3 * p.mesh.num_nodes() + refs.len()) * std::mem::size_of::<T>(),
        refs: dev.upload_slice(&refs)?,
    })
}

/// The combined output of the NZ methods: CSR values, then the right-hand side.
fn split_output<T: Real>(dev: &dyn Device, out: &crate::device::Buffer, p: &Problem) -> Result<(Vec<T>, Vec<T>), CaseError> {
    let mut all = dev.download_vec::<T>(out, nz_plans::num_targets(p))?;
    let rhs = all.split_off(p.nnz());
    Ok((all, rhs))
}

fn sources_in(packed: &Packed) -> usize {
    packed.data.par_iter().filter(|&&v| v > 0).count()
}

fn run_elem<T: Real>(ctx: &mut CaseCtx, problem: &Problem_, prep: &Prepared, point: &Point) -> Result<GpuRun<T>, CaseError> {
    let dev = gpu_of(ctx)?;
    let p = &prep.problem;
    let (en, ne) = (p.en(), p.ne());
    let s = std::mem::size_of::<T>();
    let colored = point.method.colored();
    // Element order on the device: natural for atomics, grouped by color for ElemColor.
    let setup_start = Instant::now();
    let (colors, color_secs) = if colored {
        let (c, t) = prep.colors(point.colors)?;
        (Some(c), t)
    } else {
        (None, 0.0)
    };
    let order: Vec<u32> = match &colors {
        Some(c) => c.iter().flatten().copied().collect(),
        None => (0..ne as u32).collect(),
    };
    let soa_u32 = |width: usize, f: &(dyn Fn(usize, usize) -> u32 + Sync)| -> Vec<u32> {
        (0..width * ne).into_par_iter().map(|idx| f(idx / ne, order[idx % ne] as usize)).collect()
    };
    let conn = soa_u32(en, &|a, e| p.mesh.element(e)[a]);
    let slots: Vec<i32> = soa_u32(en * en, &|k, e| p.slots[e * en * en + k] as u32).into_iter().map(|v| v as i32).collect();
    let nodal = upload_nodal::<T>(dev, p)?;
    let conn_b = dev.upload_slice(&conn)?;
    let dof = dev.upload_slice(&p.dof)?;
    let slots_b = dev.upload_slice(&slots)?;
    let nan = vec![T::nan(); p.nnz().max(p.n_free)];
    let vals = dev.upload_slice(&nan[..p.nnz()])?;
    let rhs = dev.upload_slice(&nan[..p.n_free])?;
    let memory = (conn.len() + slots.len() + p.mesh.num_nodes()) * 4 + nodal.bytes + (p.nnz() + p.n_free) * s;
    drop((conn, slots, nan));
    let setup_s = setup_start.elapsed().as_secs_f64() + color_secs;

    let gs = problem.group_size(Family::Elem);
    let defines =
        Defines::for_precision(T::PRECISION).with("EN", en).with("ATOMIC", (!colored) as u8).with("DUMMY", point.method.dummy() as u8);
    let k = ctx.modules.kernel(dev, &CECKA, &defines, "cecka_elements")?;
    let zero = ctx.modules.kernel(dev, &CECKA, &Defines::for_precision(T::PRECISION), "cecka_zero")?;
    let ranges: Vec<(usize, usize)> = match &colors {
        Some(c) => c
            .iter()
            .scan(0usize, |first, g| {
                let r = (*first, g.len());
                *first += g.len();
                Some(r)
            })
            .collect(),
        None => vec![(0, ne)],
    };
    let f = Arg::real(T::PRECISION, SOURCE_F);
    let timings = time_modes(ctx, dev, &[&vals, &rhs], &mut || {
        dev.launch(&zero, Launch::cover(p.nnz(), 256), &[Arg::Buf(&vals), Arg::I32(p.nnz() as i32)])?;
        dev.launch(&zero, Launch::cover(p.n_free, 256), &[Arg::Buf(&rhs), Arg::I32(p.n_free as i32)])?;
        for &(first, count) in &ranges {
            dev.launch(
                &k,
                Launch::cover(count, gs),
                &[
                    Arg::Buf(&nodal.x),
                    Arg::Buf(&nodal.y),
                    Arg::Buf(&conn_b),
                    Arg::Buf(&dof),
                    Arg::Buf(&nodal.g),
                    Arg::Buf(&nodal.refs),
                    Arg::Buf(&slots_b),
                    Arg::Buf(&vals),
                    Arg::Buf(&rhs),
                    f,
                    Arg::I32(ne as i32),
                    Arg::I32(first as i32),
                    Arg::I32(count as i32),
                ],
            )?;
        }
        Ok(())
    })?;
    let (bytes, flops) = cost(p, s, point.method.dummy());
    Ok(GpuRun {
        timings,
        vals: dev.download_vec::<T>(&vals, p.nnz())?,
        rhs: dev.download_vec::<T>(&rhs, p.n_free)?,
        bytes,
        flops,
        memory: memory as f64,
        setup_s,
        extras: vec![("colors_used", colors.as_ref().map_or(0.0, |c| c.len() as f64))],
    })
}

fn run_global_nz<T: Real>(ctx: &mut CaseCtx, problem: &Problem_, prep: &Prepared, point: &Point) -> Result<GpuRun<T>, CaseError> {
    let dev = gpu_of(ctx)?;
    let p = &prep.problem;
    let (en, ne, s) = (p.en(), p.ne(), std::mem::size_of::<T>());
    let ee = nz_plans::element_entries(en);
    let gs = problem.group_size(Family::GlobalNz);
    let max_nodes = shared_limit(dev, problem)? / (3 * s);
    let epb = problem.elements_per_block(Family::GlobalNz);
    let key = [epb, max_nodes, gs, problem.targets_per_block(Family::GlobalNz)];
    let cached_plan =
        cached(&prep.global, key, || nz_plans::global_plan(p, epb, max_nodes, gs, problem.targets_per_block(Family::GlobalNz)));
    let plan = cached_plan.0.as_ref().map_err(|e| CaseError::Failed(format!("GlobalNZ: {e}")))?;
    let setup_start = Instant::now();
    let nodal = upload_nodal::<T>(dev, p)?;
    let node_ptr = dev.upload_slice(&plan.node_ptr)?;
    let nodes = dev.upload_slice(&plan.nodes)?;
    let elem_ptr = dev.upload_slice(&plan.elem_ptr)?;
    let lconn = dev.upload_slice(&plan.local_conn)?;
    let red = dev.upload_slice(&plan.reduction.data)?;
    let red_ptr = dev.upload_slice(&plan.reduction.ptr)?;
    let element_data = dev.alloc(ne * ee * s)?;
    let out = dev.upload_slice(&vec![T::nan(); nz_plans::num_targets(p)])?;
    let defines =
        Defines::for_precision(T::PRECISION).with("EN", en).with("DUMMY", point.method.dummy() as u8).with("NK_MAX", plan.max_nodes.max(1));
    let elements = ctx.modules.kernel(dev, &CECKA, &defines, "cecka_global_elements")?;
    let reduce = ctx.modules.kernel(dev, &CECKA, &Defines::for_precision(T::PRECISION), "cecka_reduce")?;
    let f = Arg::real(T::PRECISION, SOURCE_F);
    let setup_s = setup_start.elapsed().as_secs_f64() + cached_plan.1;
    let timings = time_modes(ctx, dev, &[&out], &mut || {
        dev.launch(
            &elements,
            Launch { groups: plan.parts, group_size: gs },
            &[
                Arg::Buf(&nodal.x),
                Arg::Buf(&nodal.y),
                Arg::Buf(&nodal.g),
                Arg::Buf(&node_ptr),
                Arg::Buf(&nodes),
                Arg::Buf(&elem_ptr),
                Arg::Buf(&lconn),
                Arg::Buf(&nodal.refs),
                Arg::Buf(&element_data),
                f,
                Arg::I32(ne as i32),
            ],
        )?;
        dev.launch(
            &reduce,
            Launch { groups: plan.reduction.blocks(), group_size: gs },
            &[Arg::Buf(&red), Arg::Buf(&red_ptr), Arg::Buf(&element_data), Arg::Buf(&out)],
        )
    })?;
    let (vals, rhs) = split_output::<T>(dev, &out, p)?;
    let fetched = plan.nodes.len();
    let sources = sources_in(&plan.reduction);
    let bytes = (fetched * 4 + fetched * 3 * s + en * ne * 4 + 2 * (plan.parts + 1) * 4)
        + ne * ee * s
        + plan.reduction.data.len() * 4
        + sources * s
        + nz_plans::num_targets(p) * s;
    let memory = nodal.bytes
        + (plan.node_ptr.len()
            + plan.nodes.len()
            + plan.elem_ptr.len()
            + plan.local_conn.len()
            + plan.reduction.data.len()
            + plan.reduction.ptr.len())
            * 4
        + (ne * ee + nz_plans::num_targets(p)) * s;
    Ok(GpuRun {
        timings,
        vals,
        rhs,
        bytes: bytes as f64,
        flops: ne as f64 * element_flops(en as f64, point.method.dummy()) + sources as f64,
        memory: memory as f64,
        setup_s,
        extras: vec![
            ("blocks", plan.parts as f64),
            ("max_block_nodes", plan.max_nodes as f64),
            ("reduction_padding", plan.reduction.padding()),
        ],
    })
}

fn run_shared_nz<T: Real>(ctx: &mut CaseCtx, problem: &Problem_, prep: &Prepared, point: &Point) -> Result<GpuRun<T>, CaseError> {
    let dev = gpu_of(ctx)?;
    let p = &prep.problem;
    let (en, s) = (p.en(), std::mem::size_of::<T>());
    let gs = problem.group_size(Family::SharedNz);
    let limit = shared_limit(dev, problem)?;
    let max_elements = limit / (nz_plans::shared_slot(en) * s);
    let cached_plan = cached(&prep.shared, [max_elements, gs], || nz_plans::shared_plan(p, max_elements, gs));
    let plan =
        cached_plan.0.as_ref().map_err(|e| CaseError::Failed(format!("SharedNZ with {limit} bytes of shared memory per block: {e}")))?;
    let setup_start = Instant::now();
    let nodal = upload_nodal::<T>(dev, p)?;
    let scat = dev.upload_slice(&plan.scatter.data)?;
    let scat_ptr = dev.upload_slice(&plan.scatter.ptr)?;
    let red = dev.upload_slice(&plan.reduction.data)?;
    let red_ptr = dev.upload_slice(&plan.reduction.ptr)?;
    let counts = dev.upload_slice(&plan.block_elements)?;
    let out = dev.upload_slice(&vec![T::nan(); nz_plans::num_targets(p)])?;
    let defines = Defines::for_precision(T::PRECISION).with("EN", en).with("DUMMY", point.method.dummy() as u8).with("STRIDE", plan.stride);
    let k = ctx.modules.kernel(dev, &CECKA, &defines, "cecka_shared")?;
    let f = Arg::real(T::PRECISION, SOURCE_F);
    let setup_s = setup_start.elapsed().as_secs_f64() + cached_plan.1;
    let timings = time_modes(ctx, dev, &[&out], &mut || {
        dev.launch(
            &k,
            Launch { groups: plan.parts, group_size: gs },
            &[
                Arg::Buf(&nodal.x),
                Arg::Buf(&nodal.y),
                Arg::Buf(&nodal.g),
                Arg::Buf(&scat),
                Arg::Buf(&scat_ptr),
                Arg::Buf(&red),
                Arg::Buf(&red_ptr),
                Arg::Buf(&counts),
                Arg::Buf(&nodal.refs),
                Arg::Buf(&out),
                f,
            ],
        )
    })?;
    let (vals, rhs) = split_output::<T>(dev, &out, p)?;
    let sources = sources_in(&plan.reduction);
    let bytes = plan.scatter.data.len() * 4
        + plan.node_fetches * 3 * s
        + plan.reduction.data.len() * 4
        + (plan.scatter.ptr.len() + plan.reduction.ptr.len() + plan.block_elements.len()) * 4
        + nz_plans::num_targets(p) * s;
    let memory = nodal.bytes
        + (plan.scatter.data.len()
            + plan.scatter.ptr.len()
            + plan.reduction.data.len()
            + plan.reduction.ptr.len()
            + plan.block_elements.len())
            * 4
        + nz_plans::num_targets(p) * s;
    Ok(GpuRun {
        timings,
        vals,
        rhs,
        bytes: bytes as f64,
        flops: plan.element_calls as f64 * element_flops(en as f64, point.method.dummy()) + sources as f64,
        memory: memory as f64,
        setup_s,
        extras: vec![
            ("blocks", plan.parts as f64),
            ("max_block_elements", plan.stride as f64),
            ("shared_bytes", (plan.stride * nz_plans::shared_slot(en) * s) as f64),
            ("element_calls_per_element", plan.element_calls as f64 / p.ne() as f64),
            ("reduction_padding", plan.reduction.padding()),
        ],
    })
}

fn run_shared_atomic<T: Real>(ctx: &mut CaseCtx, problem: &Problem_, prep: &Prepared, point: &Point) -> Result<GpuRun<T>, CaseError> {
    let dev = gpu_of(ctx)?;
    let p = &prep.problem;
    let (en, s) = (p.en(), std::mem::size_of::<T>());
    let gs = problem.group_size(Family::SharedAtomic);
    let limit = shared_limit(dev, problem)?;
    let epb = problem.elements_per_block(Family::SharedAtomic);
    // Calls ordered by color within a block: a warp's elements then rarely share a node.
    let (colors, color_secs) = prep.colors(0)?;
    let cached_plan = cached(&prep.shared_atomic, [limit / s, epb], || {
        let mut color = vec![0u8; p.ne()];
        for (c, group) in colors.iter().enumerate() {
            for &e in group {
                color[e as usize] = c as u8;
            }
        }
        nz_plans::shared_atomic_plan(p, limit / s, epb, &color)
    });
    let plan = cached_plan
        .0
        .as_ref()
        .map_err(|e| CaseError::Failed(format!("SharedAtomic with {limit} bytes of shared memory per block: {e}")))?;
    let setup_start = Instant::now();
    let calls = plan.calls();
    let nodal = upload_nodal::<T>(dev, p)?;
    let node_ptr = dev.upload_slice(&plan.node_ptr)?;
    let nodes = dev.upload_slice(&plan.nodes)?;
    let node_targets = dev.upload_slice(&plan.node_targets)?;
    let call_ptr = dev.upload_slice(&plan.call_ptr)?;
    let lconn = dev.upload_slice(&plan.local_conn)?;
    let lslot = dev.upload_slice(&plan.local_slot)?;
    let slot_ptr = dev.upload_slice(&plan.slot_ptr)?;
    let targets = dev.upload_slice(&plan.targets)?;
    let out = dev.upload_slice(&vec![T::nan(); nz_plans::num_targets(p)])?;
    let defines = Defines::for_precision(T::PRECISION)
        .with("EN", en)
        .with("DUMMY", point.method.dummy() as u8)
        .with("NB_MAX", plan.max_nodes.max(1))
        .with("TK_MAX", plan.max_slots.max(1))
        .with("WG", gs)
        .with("MIN_BLOCKS", problem.min_blocks_per_sm.unwrap_or(0))
        .with("SA_BATCH", problem.load_batch.unwrap_or(8).clamp(1, 16));
    let k = ctx.modules.kernel(dev, &CECKA, &defines, "cecka_shared_atomic")?;
    let f = Arg::real(T::PRECISION, SOURCE_F);
    let setup_s = setup_start.elapsed().as_secs_f64() + cached_plan.1 + color_secs;
    let timings = time_modes(ctx, dev, &[&out], &mut || {
        dev.launch(
            &k,
            Launch { groups: plan.parts, group_size: gs },
            &[
                Arg::Buf(&nodal.x),
                Arg::Buf(&nodal.y),
                Arg::Buf(&nodal.g),
                Arg::Buf(&node_ptr),
                Arg::Buf(&nodes),
                Arg::Buf(&node_targets),
                Arg::Buf(&call_ptr),
                Arg::Buf(&lconn),
                Arg::Buf(&lslot),
                Arg::Buf(&slot_ptr),
                Arg::Buf(&targets),
                Arg::Buf(&nodal.refs),
                Arg::Buf(&out),
                f,
                Arg::I32(calls as i32),
            ],
        )
    })?;
    let (vals, rhs) = split_output::<T>(dev, &out, p)?;
    let fetched = plan.nodes.len();
    let index_bytes =
        (plan.node_ptr.len() + plan.call_ptr.len() + plan.slot_ptr.len() + fetched + plan.node_targets.len() + plan.targets.len()) * 4
            + (plan.local_conn.len() + plan.local_slot.len()) * 2;
    let bytes = index_bytes + fetched * 3 * s + nz_plans::num_targets(p) * s;
    Ok(GpuRun {
        timings,
        vals,
        rhs,
        bytes: bytes as f64,
        // Shared-memory atomic additions are memory operations, not counted as flops.
        flops: calls as f64 * element_flops(en as f64, point.method.dummy()),
        memory: (nodal.bytes + index_bytes + nz_plans::num_targets(p) * s) as f64,
        setup_s,
        extras: vec![
            ("blocks", plan.parts as f64),
            ("shared_bytes", ((plan.max_slots + 5 * plan.max_nodes) * s) as f64),
            ("element_calls_per_element", calls as f64 / p.ne() as f64),
        ],
    })
}

fn run_local_nz<T: Real>(ctx: &mut CaseCtx, problem: &Problem_, prep: &Prepared, point: &Point) -> Result<GpuRun<T>, CaseError> {
    let dev = gpu_of(ctx)?;
    let p = &prep.problem;
    let (en, ne, s) = (p.en(), p.ne(), std::mem::size_of::<T>());
    let gs = problem.group_size(Family::LocalNz);
    let cached_plan = cached(&prep.local, [gs, problem.targets_per_block(Family::LocalNz)], || {
        nz_plans::local_plan(p, gs, problem.targets_per_block(Family::LocalNz))
    });
    let plan = cached_plan.0.as_ref().map_err(|e| CaseError::Failed(format!("LocalNZ: {e}")))?;
    let setup_start = Instant::now();
    let conn: Vec<u32> = (0..en * ne).into_par_iter().map(|idx| p.mesh.element(idx % ne)[idx / ne]).collect();
    let nodal = upload_nodal::<T>(dev, p)?;
    let conn_b = dev.upload_slice(&conn)?;
    let lst = dev.upload_slice(&plan.data)?;
    let lst_ptr = dev.upload_slice(&plan.ptr)?;
    let out = dev.upload_slice(&vec![T::nan(); nz_plans::num_targets(p)])?;
    let defines = Defines::for_precision(T::PRECISION).with("EN", en).with("DUMMY", point.method.dummy() as u8);
    let k = ctx.modules.kernel(dev, &CECKA, &defines, "cecka_local")?;
    let f = Arg::real(T::PRECISION, SOURCE_F);
    let setup_s = setup_start.elapsed().as_secs_f64() + cached_plan.1;
    let timings = time_modes(ctx, dev, &[&out], &mut || {
        dev.launch(
            &k,
            Launch { groups: plan.blocks(), group_size: gs },
            &[
                Arg::Buf(&nodal.x),
                Arg::Buf(&nodal.y),
                Arg::Buf(&nodal.g),
                Arg::Buf(&conn_b),
                Arg::Buf(&lst),
                Arg::Buf(&lst_ptr),
                Arg::Buf(&nodal.refs),
                Arg::Buf(&out),
                f,
                Arg::I32(ne as i32),
            ],
        )
    })?;
    let (vals, rhs) = split_output::<T>(dev, &out, p)?;
    let calls = sources_in(plan);
    let bytes = plan.data.len() * 4 + calls * (en * 4 + 3 * en * s) + nz_plans::num_targets(p) * s;
    let memory = nodal.bytes + (conn.len() + plan.data.len() + plan.ptr.len()) * 4 + nz_plans::num_targets(p) * s;
    Ok(GpuRun {
        timings,
        vals,
        rhs,
        bytes: bytes as f64,
        flops: calls as f64 * (element_flops(en as f64, point.method.dummy()) + 1.0),
        memory: memory as f64,
        setup_s,
        extras: vec![("element_calls_per_element", calls as f64 / ne as f64)],
    })
}

/// The columns the Cecka reports read.
struct Rows {
    backend: Vec<String>,
    device: Vec<String>,
    precision: Vec<String>,
    method: Vec<String>,
    level: Vec<f64>,
    order: Vec<f64>,
    status: Vec<String>,
    mode: Vec<String>,
    time: Vec<f64>,
    gbs: Vec<f64>,
    table6: Vec<f64>,
    elements: Vec<f64>,
    nodes: Vec<f64>,
    colors_used: Vec<f64>,
    setup: Vec<f64>,
    threads: Vec<f64>,
    ci_low: Vec<f64>,
    ci_high: Vec<f64>,
}

impl Rows {
    fn read(df: &DataFrame) -> Result<Self, ReportError> {
        let opt = |c: &str| frame::nums(df, c).unwrap_or_else(|_| vec![f64::NAN; df.height()]);
        Ok(Rows {
            backend: frame::strs(df, "backend")?,
            device: frame::strs(df, "device")?,
            precision: frame::strs(df, "precision")?,
            method: frame::strs(df, "method")?,
            level: frame::nums(df, "level")?,
            order: frame::nums(df, "order")?,
            status: frame::strs(df, "status")?,
            mode: frame::strs(df, "mode")?,
            time: frame::nums(df, "time_median_s")?,
            gbs: frame::nums(df, "bandwidth_gbs")?,
            table6: opt("table6_error"),
            elements: opt("elements"),
            nodes: opt("nodes"),
            colors_used: opt("colors_used"),
            setup: opt("setup_s"),
            threads: opt("threads"),
            ci_low: opt("time_ci_low_s"),
            ci_high: opt("time_ci_high_s"),
        })
    }
    /// A verified warm row (figures and winners compare warm caches).
    fn ok(&self, i: usize) -> bool {
        self.ok_any_mode(i) && self.mode[i] != "cold"
    }
    fn ok_any_mode(&self, i: usize) -> bool {
        self.status[i] == "ok" && self.time[i].is_finite()
    }
}

fn table6(id: &str, r: &Rows) -> Table {
    // (level) -> (method, backend) -> error, f32 device rows of order 1.
    let mut by_level: BTreeMap<i64, BTreeMap<String, f64>> = BTreeMap::new();
    let mut sizes: BTreeMap<i64, (f64, f64)> = BTreeMap::new();
    let mut methods: Vec<String> = Vec::new();
    for i in 0..r.method.len() {
        if r.status[i] != "ok" || r.precision[i] != "f32" || r.order[i] != 1.0 || !r.table6[i].is_finite() {
            continue;
        }
        let col = format!("{} ({})", r.method[i], r.backend[i]);
        if !methods.contains(&col) {
            methods.push(col.clone());
        }
        by_level.entry(r.level[i] as i64).or_default().insert(col, r.table6[i]);
        sizes.insert(r.level[i] as i64, (r.nodes[i], r.elements[i]));
    }
    let mut header = vec!["level".to_string(), "nodes, elements".into()];
    header.extend(methods.iter().cloned());
    header.push("paper (all methods)".into());
    header.push("paper mesh".into());
    let rows = by_level
        .iter()
        .map(|(level, errs)| {
            let (n, e) = sizes[level];
            let mut row = vec![level.to_string(), format!("{}, {}", fmt_count(n), fmt_count(e))];
            row.extend(methods.iter().map(|m| errs.get(m).map(|v| format!("{v:.1e}")).unwrap_or_else(|| "-".into())));
            let paper = PAPER_TABLE6.get(*level as usize);
            row.push(paper.map(|p| format!("{:.1e}", p.1)).unwrap_or_else(|| "-".into()));
            row.push(paper.map(|p| p.0.to_string()).unwrap_or_else(|| "-".into()));
            row
        })
        .collect();
    Table {
        name: format!("{id}-table6"),
        title: "Table VI: average relative error of the f32 device system against the f64 host system (order 1)".into(),
        header,
        rows,
        notes: vec!["Entries whose f64 value is zero to round-off (|A| <= 1e-12 max|A|) are left out of the average.".into()],
    }
}

fn fmt_count(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.0}K", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

fn timings_table(id: &str, r: &Rows) -> Table {
    // Serial CPU time per (level, order, mode), for speed-ups.
    let mut serial: BTreeMap<(i64, i64), f64> = BTreeMap::new();
    for i in 0..r.method.len() {
        if r.ok(i) && r.method[i] == "cpu-serial" {
            serial.insert((r.level[i] as i64, r.order[i] as i64), r.time[i]);
        }
    }
    let mut rows = Vec::new();
    for i in 0..r.method.len() {
        if !r.ok_any_mode(i) {
            continue;
        }
        let key = (r.level[i] as i64, r.order[i] as i64);
        let base = serial.get(&key);
        let speedup = base.map(|s| format!("{:.1}x", s / r.time[i])).unwrap_or_else(|| "-".into());
        let with_setup = match (base, r.setup[i].is_finite()) {
            (Some(s), true) => format!("{:.1}x", s / (r.time[i] + r.setup[i])),
            _ => "-".into(),
        };
        rows.push(vec![
            r.backend[i].clone(),
            r.device[i].clone(),
            r.precision[i].clone(),
            r.method[i].clone(),
            r.mode[i].clone(),
            if r.backend[i] == "cpu" { format!("{:.0}", r.threads[i]) } else { "-".into() },
            format!("{}", key.1),
            format!("{}, {}", fmt_count(r.nodes[i]), fmt_count(r.elements[i])),
            if r.colors_used[i] > 0.0 { format!("{}", r.colors_used[i]) } else { "-".into() },
            format!("{:.4}", r.time[i] * 1e3),
            if r.ci_high[i].is_finite() { format!("{:.1}", 50.0 * (r.ci_high[i] - r.ci_low[i]) / r.time[i]) } else { "-".into() },
            fmt_num(r.time[i] / r.elements[i] * 1e9),
            fmt_num(r.gbs[i]),
            if r.setup[i].is_finite() { format!("{:.1}", r.setup[i] * 1e3) } else { "-".into() },
            speedup,
            with_setup,
        ]);
    }
    Table {
        name: format!("{id}-timings"),
        title: "Assembly time (element kernels + accumulation into CSR; the Elem* and CPU methods also zero the outputs inside the timed region)".into(),
        header: [
            "backend",
            "device",
            "precision",
            "method",
            "cache",
            "CPU threads",
            "order",
            "nodes, elements",
            "colors",
            "ms",
            "+-% (95% CI)",
            "ns/element",
            "GB/s (cost model)",
            "set-up ms",
            "vs serial CPU (f64, 1 thread)",
            "vs serial CPU, set-up included",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        notes: vec![
            "Speed-ups divide the serial f64 CPU assembly (1 thread; zeroing + element loop + accumulation, the system allocated once outside the timer) by the row's time: the GPU row's precision is its own (f32 or f64), so an f32 speed-up compares precisions too.".into(),
            "Set-up: the method's host preprocessing for this mesh (coloring, METIS partitions and LPT packing, as long as they took when first made) plus the allocation and upload of its arrays; 'set-up included' adds it to one assembly.".into(),
            "cache: warm (inputs may be in the L2 from the previous repetition) or cold (the L2 flushed before every repetition).".into(),
            "ms: median of the repetitions; +-%: half the width of its 95% bootstrap interval, relative to it.".into(),
            "The paper: SharedNZ about 35x (8800 GTX) and 65x (Tesla C1060) faster than the serial f64 CPU code at orders 1-2.".into(),
            "Dummy rows use the paper's dummy element kernel (same data in and out, almost no arithmetic), checked against the dummy system.".into(),
        ],
    }
}

fn dummy_speedup(id: &str, r: &Rows) -> Vec<Figure> {
    // (precision) -> (method (backend)) -> order -> (full, dummy) time.
    let mut t: BTreeMap<String, BTreeMap<String, BTreeMap<i64, (f64, f64)>>> = BTreeMap::new();
    for i in 0..r.method.len() {
        if !r.ok(i) || r.backend[i] == "cpu" {
            continue;
        }
        let (base, dummy) = match r.method[i].strip_suffix("-dummy") {
            Some(b) => (b.to_string(), true),
            None => (r.method[i].clone(), false),
        };
        let e = t
            .entry(r.precision[i].clone())
            .or_default()
            .entry(format!("{base} ({})", r.backend[i]))
            .or_default()
            .entry(r.order[i] as i64)
            .or_insert((f64::NAN, f64::NAN));
        if dummy {
            e.1 = r.time[i];
        } else {
            e.0 = r.time[i];
        }
    }
    t.into_iter()
        .filter_map(|(prec, methods)| {
            let series: Vec<Series> = methods
                .into_iter()
                .map(|(label, by_order)| Series {
                    label,
                    points: by_order
                        .into_iter()
                        .filter(|(_, (f, d))| f.is_finite() && d.is_finite())
                        .map(|(o, (f, d))| (o as f64, f / d))
                        .collect(),
                    reference: false,
                })
                .filter(|s| s.points.len() > 1)
                .collect();
            (!series.is_empty()).then(|| Figure {
                name: format!("{id}-dummy-speedup-{prec}"),
                title: format!("Full over dummy element kernel time against order ({prec}); 1 = memory-bound"),
                x_label: "element order".into(),
                y_label: "time full / time dummy".into(),
                log_x: false,
                log_y: false,
                series,
            })
        })
        .collect()
}

/// The paper's fastest method per order (section 6.3, Figs. 13-14).
fn paper_winner(order: i64) -> &'static str {
    if order <= 3 {
        "shared-nz"
    } else {
        "global-nz"
    }
}

fn winners_table(id: &str, r: &Rows) -> Table {
    const PAPER_METHODS: [&str; 4] = ["elem-color", "global-nz", "shared-nz", "local-nz"];
    // (backend, device, precision, level, order) -> (method, time) of full-kernel GPU rows.
    let mut groups: BTreeMap<(String, String, String, i64, i64), Vec<(String, f64)>> = BTreeMap::new();
    for i in 0..r.method.len() {
        if !r.ok(i) || r.backend[i] == "cpu" || r.method[i].ends_with("dummy") {
            continue;
        }
        let key = (r.backend[i].clone(), r.device[i].clone(), r.precision[i].clone(), r.level[i] as i64, r.order[i] as i64);
        groups.entry(key).or_default().push((r.method[i].clone(), r.time[i]));
    }
    let best = |v: &[(String, f64)], paper_only: bool| {
        v.iter()
            .filter(|(m, _)| !paper_only || PAPER_METHODS.contains(&m.as_str()))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(m, t)| format!("{m} ({:.4} ms)", t * 1e3))
            .unwrap_or_else(|| "-".into())
    };
    let rows = groups
        .iter()
        .map(|((backend, device, precision, level, order), v)| {
            vec![
                backend.clone(),
                device.clone(),
                precision.clone(),
                level.to_string(),
                order.to_string(),
                best(v, true),
                paper_winner(*order).to_string(),
                best(v, false),
            ]
        })
        .collect();
    Table {
        name: format!("{id}-winners"),
        title: "Fastest method per order: the paper's four methods, the paper's own finding, and all methods".into(),
        header: [
            "backend",
            "device",
            "precision",
            "level",
            "order",
            "fastest of the paper's methods",
            "paper (8800 GTX, C1060)",
            "fastest overall",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        notes: vec![
            "The paper: SharedNZ fastest up to order 3 and failing at order 5 (16 KiB shared memory); GlobalNZ fastest from order 4."
                .into(),
        ],
    }
}

/// One figure per (GPU backend, precision), as the paper's Figs. 12-14 have one per GPU: the
/// full kernels (their dummies are in the dummy speed-up figure) and the f64 CPU baselines.
fn figure_by(id: &str, r: &Rows, what: &str, x: impl Fn(usize) -> f64, x_label: &str, log_x: bool) -> Vec<Figure> {
    let mut groups: BTreeMap<(String, String), BTreeMap<String, Vec<(f64, f64)>>> = BTreeMap::new();
    let usable = |i: usize| r.ok(i) && r.elements[i].is_finite() && !r.method[i].ends_with("-dummy");
    for i in (0..r.method.len()).filter(|&i| usable(i) && r.backend[i] != "cpu") {
        let key = (r.backend[i].clone(), r.precision[i].clone());
        groups.entry(key).or_default().entry(r.method[i].clone()).or_default().push((x(i), r.time[i] / r.elements[i] * 1e9));
    }
    let keys: Vec<(String, String)> = groups.keys().cloned().collect();
    for i in (0..r.method.len()).filter(|&i| usable(i) && r.backend[i] == "cpu") {
        for key in &keys {
            let series = groups.entry(key.clone()).or_default().entry(format!("{} (CPU, f64)", r.method[i])).or_default();
            series.push((x(i), r.time[i] / r.elements[i] * 1e9));
        }
    }
    groups
        .into_iter()
        .filter(|(_, s)| s.values().any(|v| v.len() > 1))
        .map(|((backend, prec), series)| Figure {
            name: format!("{id}-time-vs-{what}-{backend}-{prec}"),
            title: format!("Assembly time per element vs {x_label} ({backend}, {prec}; CPU in f64)"),
            x_label: x_label.into(),
            y_label: "ns per element".into(),
            log_x,
            log_y: true,
            series: series
                .into_iter()
                .map(|(label, mut pts)| {
                    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                    Series { label, points: pts, reference: false }
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dummy_method_is_a_dummy_of_a_full_method() {
        let dummies: Vec<Method> = Method::ALL.into_iter().filter(|m| m.as_str().ends_with("-dummy")).collect();
        assert_eq!(dummies.len(), 6);
        for m in Method::ALL {
            assert_eq!(m.dummy(), m.as_str().ends_with("-dummy"), "{m:?}");
            if m.dummy() {
                let full = m.full();
                assert!(!full.dummy() && full != m && full.family() == m.family(), "{m:?} -> {full:?}");
            } else {
                assert_eq!(m.full(), m);
            }
        }
        assert!(Method::SharedAtomicDummy.dummy(), "the method a hand list once forgot");
    }

    #[test]
    fn dummy_flops_are_not_the_full_count() {
        for en in [3.0, 6.0, 28.0] {
            assert!(element_flops(en, true) < 0.5 * element_flops(en, false));
        }
    }

    #[test]
    fn a_panic_while_a_plan_is_made_leaves_the_cache_usable() {
        let map: Mutex<BTreeMap<u32, Timed<u32>>> = Mutex::new(BTreeMap::new());
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cached(&map, 1, || panic!("bug while partitioning"))));
        assert!(r.is_err());
        let v = cached(&map, 1, || Ok(7));
        assert_eq!(v.0, Ok(7));
        assert_eq!(cached(&map, 1, || Ok(8)).0, Ok(7), "made once");
    }
}
