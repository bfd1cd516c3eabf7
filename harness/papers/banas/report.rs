//! Tables and figures of the Banaś et al. experiments, from stored rows only.

use std::collections::BTreeMap;

use polars::prelude::*;

use super::paper::{
    paper_at, PAPER_GTX580, PAPER_HD5870, PAPER_PEAK_GTX580, PAPER_PLAN_GTX580, PAPER_PLAN_HD5870, PAPER_TABLE2, PAPER_XEON_GFLOPS,
    PAPER_XEON_US,
};
use super::plan::Variant;
use super::prism::MAX_DEGREE;
use super::spec::{Method, STAGES};
use crate::hardware::unit_peak;
use crate::report::{fmt_num, frame, physics, Figure, ReportCtx, ReportError, Series, Table};
use crate::Precision;

/// The same four sizes from this module's basis and quadrature (4 numbers per point: a value
/// and three derivatives, or three coordinates and a weight).
pub(crate) fn table2_sizes(p: usize) -> Result<[u64; 4], String> {
    let nq = super::prism::quadrature(p)?.len() as u64;
    let nsh = super::prism::shape_functions(p) as u64;
    Ok([4 * nq, 4 * nsh, 4 * nsh * nq, nsh * nsh])
}

/// Table 2: what the element sizes imply for memory, computed here, with the paper's row under
/// each (static: it depends on p only, not on the run).
pub(crate) fn sizes_table(id: &str) -> Table {
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

/// The columns the Banaś reports read.
pub(crate) struct Rows {
    pub(crate) backend: Vec<String>,
    pub(crate) device: Vec<String>,
    pub(crate) precision: Vec<String>,
    pub(crate) method: Vec<String>,
    pub(crate) metric: Vec<String>,
    pub(crate) degree: Vec<i64>,
    pub(crate) status: Vec<String>,
    pub(crate) mode: Vec<String>,
    pub(crate) time: Vec<f64>,
    /// The row's error against the f64 reference (its verification).
    pub(crate) error: Vec<f64>,
    /// The median's confidence interval (NaN where the row has none).
    pub(crate) lo: Vec<f64>,
    pub(crate) hi: Vec<f64>,
    /// GFLOP/s by the executed count, and by the paper's count.
    pub(crate) gflops: Vec<f64>,
    pub(crate) paper_gflops: Vec<f64>,
    pub(crate) extras: BTreeMap<&'static str, Vec<f64>>,
    /// Peak GFLOP/s of each row's device and precision, where known.
    pub(crate) peak: Vec<f64>,
    /// (backend, device, precision, cache mode) with verified GPU rows, in the rows' order.
    groups: Vec<(String, String, String, String)>,
    /// The degrees present, ascending.
    degrees: Vec<i64>,
}

pub(crate) const EXTRA_COLUMNS: [&str; 12] = [
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
    "host_written_back",
];

impl Rows {
    pub(crate) fn read(df: &DataFrame, ctx: &ReportCtx) -> Result<Self, ReportError> {
        let opt = |c: &str| frame::nums(df, c).unwrap_or_else(|_| vec![f64::NAN; df.height()]);
        let backend = frame::strs(df, "backend")?;
        let device = frame::strs(df, "device")?;
        let precision = frame::strs(df, "precision")?;
        // The peak of the unit each row's flops ran on (the TF32 or FP64 tensor cores where the
        // row says so, else the FP32 or FP64 lanes). mma-nojac's f64 rows of runs made before
        // rows said so ran on the FP64 tensor cores: the variant has no other path.
        let (tf32, fp64_tensor, method) = (opt(physics::TF32_COLUMN), opt(physics::FP64_TENSOR_COLUMN), frame::strs(df, "method")?);
        let peak = (0..df.height())
            .map(|i| {
                let info =
                    ctx.meta.devices.iter().find(|d| d.name == device[i] && d.backend.map(|b| b.as_str()) == Some(backend[i].as_str()));
                let dmma = match fp64_tensor[i] {
                    t if t.is_nan() => f64::from(u8::from(method[i] == Variant::MmaNojac.as_str())),
                    t => t,
                };
                unit_peak(info, &precision[i], tf32[i], dmma).1
            })
            .collect();
        // Which GPU groups and degrees the tables and figures have: polars lazy queries.
        let keys = ["backend", "device", "precision", "mode"];
        let modes = if df.column("mode").is_ok() { df.clone().lazy() } else { df.clone().lazy().with_columns([lit("").alias("mode")]) };
        let gpu =
            col("backend").neq(lit("cpu")).and(col("status").eq(lit("ok"))).and(col("time_median_s").cast(DataType::Float64).is_finite());
        let found = frame::collect(modes.filter(gpu).select(keys.map(col)).unique_stable(None, UniqueKeepStrategy::First))?;
        let [b, d, p, m] = keys.map(|k| frame::strs(&found, k));
        let (b, d, p, m) = (b?, d?, p?, m?);
        let groups = (0..found.height()).map(|i| (b[i].clone(), d[i].clone(), p[i].clone(), m[i].clone())).collect();
        let degrees = frame::collect(
            df.clone()
                .lazy()
                .select([col("degree").cast(DataType::Int64)])
                .unique(None, UniqueKeepStrategy::First)
                .sort(["degree"], Default::default()),
        )?;
        let degrees = frame::nums(&degrees, "degree")?.into_iter().map(|v| v as i64).collect();
        Ok(Rows {
            groups,
            degrees,
            method: frame::strs(df, "method")?,
            metric: frame::strs(df, "metric")?,
            degree: frame::nums(df, "degree")?.into_iter().map(|v| v as i64).collect(),
            status: frame::strs(df, "status")?,
            mode: frame::strs(df, "mode").unwrap_or_else(|_| vec![String::new(); df.height()]),
            time: frame::nums(df, "time_median_s")?,
            error: opt("error"),
            lo: opt("time_ci_low_s"),
            hi: opt("time_ci_high_s"),
            gflops: opt("gflops"),
            paper_gflops: opt("paper_gflops"),
            extras: EXTRA_COLUMNS.iter().map(|&c| (c, opt(c))).collect(),
            backend,
            device,
            precision,
            peak,
        })
    }
    pub(crate) fn extra(&self, name: &str, i: usize) -> f64 {
        self.extras.get(name).map_or(f64::NAN, |v| v[i])
    }
    pub(crate) fn ok(&self, i: usize) -> bool {
        self.status[i] == "ok" && self.time[i].is_finite()
    }
    /// The row's median with its interval.
    pub(crate) fn timed(&self, i: usize) -> crate::report::claims::Timed {
        crate::report::claims::Timed::new(self.time[i], self.lo[i], self.hi[i])
    }
    /// Microseconds per element.
    pub(crate) fn us(&self, i: usize) -> f64 {
        self.time[i] / self.extra("elements", i) * 1e6
    }
    /// (backend, device, precision, cache mode) groups with measured GPU rows, in order (a
    /// backend whose cases were all skipped gets no table or figure).
    pub(crate) fn gpu_groups(&self) -> Vec<(String, String, String, String)> {
        self.groups.clone()
    }
    pub(crate) fn degrees(&self) -> Vec<i64> {
        self.degrees.clone()
    }
    pub(crate) fn find(&self, group: &(String, String, String, String), method: &str, metric: &str, degree: i64) -> Option<usize> {
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
    pub(crate) fn cpu(&self, degree: i64) -> Option<usize> {
        (0..self.method.len()).find(|&i| self.method[i] == Method::CPU_REFERENCE.as_str() && self.degree[i] == degree && self.ok(i))
    }
}

pub(crate) fn cell(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite()).map(fmt_num).unwrap_or_else(|| "-".into())
}

pub(crate) fn plan_tables(id: &str, r: &Rows) -> Vec<Table> {
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

/// Tables 3 and 4: our planner on the paper's two GPUs' limits (f32, as the paper ran), beside
/// the plans the paper published for them. Computed from the limits, not measured.
pub(crate) fn paper_devices_plan(id: &str) -> Table {
    use super::plan::{paper_devices, Plan};
    let degrees: Vec<i64> = (2..=7).collect();
    let mut rows = Vec::new();
    for ((name, dev, tuning), paper) in paper_devices().into_iter().zip([PAPER_PLAN_GTX580, PAPER_PLAN_HD5870]) {
        let plan = |v: Variant, d: i64| {
            let nsh = super::prism::shape_functions(d as usize);
            let nq = super::prism::quadrature(d as usize).ok()?.len();
            Plan::new(v, nsh, nq, Precision::F32, &dev, &tuning).ok()
        };
        let ours: [(&str, &dyn Fn(i64) -> Option<f64>); 8] = [
            ("parts of A^e, REG", &|d| plan(Variant::RegJac, d).map(|p| p.parts as f64)),
            ("parts of A^e, SHM", &|d| plan(Variant::ShmJac, d).map(|p| p.parts as f64)),
            ("blocks per thread, SHM", &|d| plan(Variant::ShmJac, d).map(|p| p.blocks_per_thread as f64)),
            ("elements per launch", &|d| plan(Variant::RegJac, d).map(|p| p.elements as f64)),
            // Ours give a work-group one part of one element.
            ("elements per work-group", &|d| plan(Variant::RegJac, d).map(|p| 1.0 / p.parts as f64)),
            ("input MB, JAC", &|d| plan(Variant::RegJac, d).map(|p| p.input_bytes(true) as f64 / 1e6)),
            ("input MB, NOJAC", &|d| plan(Variant::RegNojac, d).map(|p| p.input_bytes(false) as f64 / 1e6)),
            ("output MB", &|d| plan(Variant::RegJac, d).map(|p| (p.elements * p.output_bytes_per_element()) as f64 / 1e6)),
        ];
        // Counts as whole numbers, sizes as they come.
        let value = |v: Option<f64>| match v {
            Some(v) if v.is_finite() && v.fract() == 0.0 => format!("{v:.0}"),
            v => cell(v),
        };
        for (label, f) in ours {
            let mut row = vec![format!("ours on {name}'s limits: {label}")];
            row.extend(degrees.iter().map(|&d| value(f(d))));
            rows.push(row);
            if let Some((_, values)) = paper.iter().find(|p| p.0 == label) {
                let mut row = vec![format!("paper {name}: {label}")];
                row.extend(degrees.iter().map(|&d| value(paper_at(values, d))));
                rows.push(row);
            }
        }
    }
    let mut header = vec!["f32".to_string()];
    header.extend(degrees.iter().map(|d| format!("p={d}")));
    Table {
        name: format!("{id}-plan-paper-devices"),
        title: "Tables 3 and 4: the plan from the GTX580's and the HD5870's limits, beside the paper's".into(),
        header,
        rows,
        notes: vec![
            "Our planner (plan.rs) given each GPU's shared memory, work-group limit, memory and register file, with 320 MiB of output a launch, capped by the largest allocation the paper names (Sec. 5.3: 384 MB on the GTX580, 128 MB on the HD5870); the paper's rows are its Tables 3 (GTX580) and 4 (HD5870). The SHM parts follow the shared memory (48 against 32 KiB) as the paper's do; our REG parts are register tiles of a different shape from the paper's, so their counts differ. The paper's work-groups each integrate several whole elements; ours each integrate one part of one element, so our elements per work-group is 1 / parts.".into(),
        ],
    }
}

pub(crate) fn stage_tables(id: &str, r: &Rows) -> Vec<Table> {
    let degrees = r.degrees();
    let mut tables = Vec::new();
    for g in r.gpu_groups() {
        // Whether this group's uploads read memory written back from the CPU caches (rows made
        // before that was done have no such column).
        let written_back = (0..r.metric.len()).any(|i| {
            r.metric[i] == "upload"
                && (&r.backend[i], &r.device[i], &r.precision[i], &r.mode[i]) == (&g.0, &g.1, &g.2, &g.3)
                && r.extra("host_written_back", i) == 1.0
        });
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
                if written_back {
                    "upload and download from page-locked (pinned) host memory, allocated once outside the timers; the inputs are written back from the CPU caches before the upload, outside the timers (DMA from lines dirty in the writing cores' caches ran 38-48 GB/s, differently in each process, against 50-54 GB/s from memory).".into()
                } else {
                    "upload and download from page-locked (pinned) host memory, allocated once outside the timers.".into()
                },
                format!("allocate: {}", if g.0 == "cuda" {
                    "cuMemAllocAsync from a memory pool trimmed to zero before every pass (the memory comes from the driver each time), stream synchronised"
                } else {
                    "clCreateBuffer and a one-byte blocking write to each buffer (drivers allocate at first use)"
                }),
                "GFLOP/s by the paper's count (63 flops per 3x3 block update, 20 per shape function per point) to compare with the paper, and by the flops the kernel executes (44 per block update, 15 per shape function, plus padding and per-part work; banas/plan.rs), from which % of peak is computed. Beyond the paper, gram-nojac and mma-nojac sum 9 products per block update (18 flops) and finish each block once per element; mma-nojac runs on the FP64 tensor cores in f64 (their peak: twice the FP64 lanes') and on the TF32 tensor cores in f32 (3xTF32; their peak: 8 times the FP32 lanes' on sm_80 and sm_90), and its % of peak is of that unit's. Their GFLOP/s by the paper's count is an equivalent rate: the paper's work over our time.".into(),
            ],
        });
    }
    tables
}

/// The peers whose output meets the variants' own accuracy (f32's or f64's): the strongest of
/// them is the one a variant is judged against.
pub(crate) const SAME_ACCURACY_PEERS: [Method; 5] =
    [Method::CUBLAS_GEMM, Method::CUBLAS_GEMM_3XTF32, Method::TORCH_BMM, Method::TORCH_COMPILE, Method::CUPY_MATMUL];

/// Our variants at the accuracy of the CUDA-core kernels in `precision`: all of them, but
/// mma-nojac in f32 (3xTF32, about ten times their error).
pub(crate) fn full_accuracy(precision: &str) -> Vec<Variant> {
    Variant::ALL.into_iter().filter(|v| !(v.mma() && precision == "f32")).collect()
}

/// The best variant's row of group `g` at degree `d` (None where no variant verified there).
fn best_row(r: &Rows, g: &(String, String, String, String), d: i64) -> Option<Vec<String>> {
    let best = full_accuracy(&g.2)
        .iter()
        .filter_map(|v| r.find(g, v.as_str(), "kernel", d).filter(|&i| r.ok(i)).map(|i| (v.as_str(), i)))
        .min_by(|a, b| r.time[a.1].total_cmp(&r.time[b.1]));
    let (v, k) = best?;
    let total = r.find(g, v, "total", d).filter(|&i| r.ok(i)).map(|i| r.us(i));
    let cpu = r.cpu(d).map(|i| r.us(i));
    // The same run's peers on the same device, precision and cache mode.
    let peer_of = |method: Method, metric: &str| r.find(g, method.as_str(), metric, d).filter(|&i| r.ok(i));
    let peer = |metric: &str| peer_of(Method::CUBLAS_GEMM, metric);
    let (gemm, b_gemm, tf32) = (peer("gemm"), peer("kernel"), peer_of(Method::CUBLAS_GEMM_TF32, "kernel"));
    let strongest = SAME_ACCURACY_PEERS
        .iter()
        .filter_map(|&m| peer_of(m, "kernel").map(|i| (m.as_str(), i)))
        .min_by(|a, b| r.time[a.1].total_cmp(&r.time[b.1]));
    let paper_best = PAPER_GTX580.iter().filter_map(|(pv, _, _, gf)| paper_at(gf, d).map(|x| (*pv, x))).max_by(|a, b| a.1.total_cmp(&b.1));
    Some(vec![
        g.0.clone(),
        g.1.clone(),
        format!("{} ({})", g.2, g.3),
        d.to_string(),
        v.to_string(),
        fmt_num(r.paper_gflops[k]),
        fmt_num(r.gflops[k]),
        cell(Some(100.0 * r.gflops[k] / r.peak[k])),
        fmt_num(r.us(k)),
        strongest.map_or("-".into(), |(name, i)| format!("{:.2}x {name}", r.time[i] / r.time[k])),
        cell(total),
        cell(cpu),
        cell(cpu.map(|c| c / r.us(k))),
        cell(cpu.zip(total).map(|(c, t)| c / t)),
        cell(gemm.map(|i| r.paper_gflops[i])),
        cell(gemm.map(|i| r.time[i] / r.time[k])),
        cell(b_gemm.map(|i| r.time[i] / r.time[k])),
        cell(tf32.map(|i| r.time[i] / r.time[k])),
        [Method::TORCH_BMM, Method::TORCH_COMPILE, Method::CUPY_MATMUL]
            .map(|m| cell(peer_of(m, "kernel").map(|i| r.time[i] / r.time[k])))
            .join(" / "),
        [Some(k), peer_of(Method::CUBLAS_GEMM_3XTF32, "kernel"), tf32]
            .map(|i| i.map_or("-".to_string(), |i| format!("{:.1e}", r.error[i])))
            .join(" / "),
        paper_best.map(|(pv, x)| format!("{pv} {x:.0} ({:.0}%)", 100.0 * x / PAPER_PEAK_GTX580)).unwrap_or_else(|| "-".into()),
    ])
}

/// The best-variant table's columns.
const BEST_HEADER: [&str; 21] = [
    "backend",
    "device",
    "precision (cache)",
    "p",
    "best variant",
    "kernel GFLOP/s (paper's count)",
    "kernel GFLOP/s (executed)",
    "% of peak (executed)",
    "kernel us/element",
    "best vs strongest peer (B + GEMM, same accuracy)",
    "total us/element",
    "cpu us/element",
    "kernel vs cpu",
    "total vs cpu",
    "cublas-gemm GFLOP/s (GEMM only, paper's count)",
    "best vs cublas-gemm (GEMM only)",
    "best vs cublas-gemm (B + GEMM)",
    "best vs cublas-gemm-tf32 (B + GEMM, TF32 accuracy)",
    "best vs torch-bmm / torch-compile / cupy-matmul (einsum + GEMM)",
    "error vs f64: best / cublas-gemm-3xtf32 / cublas-gemm-tf32",
    "paper GTX580 best (% of 1581)",
];

pub(crate) fn best_table(id: &str, r: &Rows) -> Table {
    let mut rows = Vec::new();
    for g in r.gpu_groups() {
        for d in r.degrees() {
            rows.extend(best_row(r, &g, d));
        }
    }
    Table {
        name: format!("{id}-best"),
        title: "The best variant per degree: kernel GFLOP/s, fraction of peak, per-element times against the CPU reference".into(),
        header: BEST_HEADER
        .map(String::from)
        .to_vec(),
        rows,
        notes: vec![
            "Best: the shortest kernel time of our variants at the CUDA-core kernels' accuracy (the paper's four, gram-nojac, and mma-nojac in f64; mma-nojac's 3xTF32 in f32 is in the stage tables). Peak: that of the unit the row's flops ran on: the FP32 or FP64 lanes (compute units x lanes per SM x 2 x the driver's maximum clock), the FP64 tensor cores for mma-nojac in f64 (twice the FP64 lanes'); the share of peak is from the executed flops, the paper's count is shown to compare with the paper's GFLOP/s.".into(),
            "kernel vs cpu: the GPU kernel alone (f32 or f64, as the row) against the f64 CPU reference, rayon-parallel over elements on every core of the host the run was on, its output allocated once outside the timer; total vs cpu: every stage of the GPU pass (prepare, allocate, upload, kernel, download).".into(),
            "The peers (beyond the paper, CUDA only, same run and GPU): A^e = B^T (w D B) as one cuBLAS strided-batched GEMM over the same elements, B and w D B from our kernel. cublas-gemm: cuBLAS' default math (FP32 without TF32; f64 on the FP64 tensor cores where the GPU has them); cublas-gemm-3xtf32 (f32): B and w D B split into TF32 high and low parts, three TF32 GEMMs, about f32's accuracy; cublas-gemm-tf32 (f32): one TF32 GEMM, TF32's accuracy (its rows are checked to 1e-2, the others to the variants' bounds). 'vs' columns are a peer's time over the best variant's kernel time (above 1: the variant is faster); the strongest peer is the fastest of those at the row's own accuracy, named. torch-bmm and cupy-matmul (CUDA, run from Python by the harness on the same GPU and elements): the same matrices as a PyTorch or CuPy user writes them, B and w D B by the library's einsum, then torch.bmm or cupy.matmul (the libraries' default math: FP32 without TF32); torch-compile: the PyTorch function under torch.compile (Inductor, compiled in the checked pass); all checked like the others and counted among the same-accuracy peers.".into(),
        ],
    }
}

pub(crate) fn stage_figures(id: &str, r: &Rows) -> Vec<Figure> {
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

pub(crate) fn gflops_figures(id: &str, r: &Rows) -> Vec<Figure> {
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
        let peers = [
            (Method::CUBLAS_GEMM, "gemm", "(GEMM only)"),
            (Method::CUBLAS_GEMM, "kernel", "(B + GEMM)"),
            (Method::CUBLAS_GEMM_3XTF32, "kernel", "(B + GEMM)"),
            (Method::CUBLAS_GEMM_TF32, "kernel", "(B + GEMM, TF32 accuracy)"),
            (Method::TORCH_BMM, "kernel", "(einsum + bmm)"),
            (Method::TORCH_COMPILE, "kernel", "(einsum + bmm, torch.compile)"),
            (Method::CUPY_MATMUL, "kernel", "(einsum + matmul)"),
        ];
        for (method, metric, label) in peers {
            let pts: Vec<(f64, f64)> = r
                .degrees()
                .into_iter()
                .filter_map(|d| r.find(&g, method.as_str(), metric, d).filter(|&i| r.ok(i)).map(|i| (d as f64, r.paper_gflops[i])))
                .collect();
            if !pts.is_empty() {
                series.push(Series { label: format!("{} {label}", method.as_str()), points: pts, reference: false });
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
    pub(crate) fn array_sizes_from_our_basis_and_quadrature_are_the_papers_table_2() {
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
