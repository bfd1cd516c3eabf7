//! Tables and figures of the Cecka et al. experiments, from stored rows only. Polars lazy queries
//! select, join and group the rows; this file formats what they return.

use polars::prelude::*;

use super::method::Role;
use super::paper::{paper_winner, PAPER_TABLE6};
use super::spec::Method;
use super::spec::{FigureName, TableName};
use crate::benchmark::{Report, Spec};
use crate::report::{fmt_num, frame, Figure, ReportError, Series, Table};
use crate::report::{ReportCtx, ReportItem};

const REQUIRED: [&str; 10] =
    ["backend", "device", "precision", "method", "level", "order", "status", "mode", "time_median_s", "bandwidth_gbs"];
const OPTIONAL: [&str; 8] = ["table6_error", "elements", "nodes", "colors_used", "setup_s", "threads", "time_ci_low_s", "time_ci_high_s"];

/// The rows the Cecka reports read: every stored row, the optional columns present (NaN where a
/// method did not write them), level and order as integers, times and bandwidths as f64.
pub(crate) fn rows(df: &DataFrame) -> Result<LazyFrame, ReportError> {
    frame::require(df, &REQUIRED)?;
    Ok(frame::with_optional(df, &OPTIONAL, super::spec::COLUMNS)?.with_columns([
        col("level").cast(DataType::Int64),
        col("order").cast(DataType::Int64),
        col("time_median_s").cast(DataType::Float64).fill_null(lit(f64::NAN)),
        col("bandwidth_gbs").cast(DataType::Float64).fill_null(lit(f64::NAN)),
    ]))
}

/// A verified row with a time, cold or warm.
fn ok_any_mode() -> Expr {
    col("status").eq(lit("ok")).and(col("time_median_s").is_finite())
}

/// A verified warm row (figures and winners compare warm caches).
fn ok_warm() -> Expr {
    ok_any_mode().and(col("mode").neq(lit("cold")))
}

fn labels(df: &DataFrame, suffix: impl Fn(&str) -> String) -> Result<Vec<String>, ReportError> {
    let (m, b) = (frame::strs(df, "method")?, frame::strs(df, "backend")?);
    Ok(m.iter().zip(&b).map(|(m, b)| format!("{m}{}", suffix(b))).collect())
}

pub(crate) fn table6(id: &str, rows: &LazyFrame) -> Result<Table, ReportError> {
    // f32 rows of order 1 with an error, one column per method (backend), one row per level.
    let f32_order1 = col("status")
        .eq(lit("ok"))
        .and(col("precision").eq(lit("f32")))
        .and(col("order").eq(lit(1i64)))
        .and(col("table6_error").is_finite());
    let df = frame::collect(rows.clone().filter(f32_order1))?;
    let label = labels(&df, |b| format!(" ({b})"))?;
    let mut methods: Vec<String> = Vec::new();
    for l in &label {
        if !methods.contains(l) {
            methods.push(l.clone());
        }
    }
    let df = frame::with_strs(df, "label", label)?;
    let mut header = vec!["level".to_string(), "nodes, elements".into()];
    header.extend(methods.iter().cloned());
    header.push("paper (all methods)".into());
    header.push("paper mesh".into());
    let mut rows = Vec::new();
    for g in frame::groups(&df, &["level"])? {
        let level = frame::first_num(&g, "level")? as i64;
        let (label, err) = (frame::strs(&g, "label")?, frame::nums(&g, "table6_error")?);
        let (n, e) = (frame::nums(&g, "nodes")?, frame::nums(&g, "elements")?);
        let last = g.height() - 1;
        let mut row = vec![level.to_string(), format!("{}, {}", fmt_count(n[last]), fmt_count(e[last]))];
        row.extend(
            methods.iter().map(|m| label.iter().rposition(|l| l == m).map(|i| format!("{:.1e}", err[i])).unwrap_or_else(|| "-".into())),
        );
        let paper = PAPER_TABLE6.get(level as usize);
        row.push(paper.map(|p| format!("{:.1e}", p.1)).unwrap_or_else(|| "-".into()));
        row.push(paper.map(|p| p.0.to_string()).unwrap_or_else(|| "-".into()));
        rows.push(row);
    }
    Ok(Table {
        name: format!("{id}-table6"),
        title: "Table VI: average relative error of the f32 device system against the f64 host system (order 1)".into(),
        header,
        rows,
        notes: vec!["Entries whose f64 value is zero to round-off (|A| <= 1e-12 max|A|) are left out of the average.".into()],
    })
}

pub(crate) fn fmt_count(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.0}K", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

pub(crate) fn timings_table(id: &str, rows: &LazyFrame) -> Result<Table, ReportError> {
    let df = timings_frame(rows)?;
    let num = |c: &str| frame::nums(&df, c);
    let (time, serial, setup, elements) = (num("time_median_s")?, num("serial_s")?, num("setup_s")?, num("elements")?);
    let (threads, nodes, colors, order) = (num("threads")?, num("nodes")?, num("colors_used")?, num("order")?);
    let (ci_low, ci_high, gbs, peer) = (num("time_ci_low_s")?, num("time_ci_high_s")?, num("bandwidth_gbs")?, num("peer_s")?);
    let str = |c: &str| frame::strs(&df, c);
    let peer_method = str("peer_method")?;
    let (library, library_method) = (num("library_s")?, str("library_method")?);
    let (backend, device, precision, method, mode) = (str("backend")?, str("device")?, str("precision")?, str("method")?, str("mode")?);
    let mut rows = Vec::new();
    let ours: Vec<&str> = [Role::Paper, Role::Beyond].into_iter().flat_map(Method::of_role).map(|m| m.as_str()).collect();
    // Each case's fastest method of ours and its fastest library route, where the case has both.
    let mut cases: Vec<(String, f64, String, f64, String)> = Vec::new();
    for i in 0..df.height() {
        if ours.contains(&method[i].as_str()) && library[i].is_finite() {
            let case =
                format!("{} {} {}, {} nodes, order {}, {}", device[i], backend[i], precision[i], fmt_count(nodes[i]), order[i], mode[i]);
            match cases.iter_mut().find(|c| c.0 == case) {
                Some(c) if time[i] < c.1 => (c.1, c.2) = (time[i], method[i].clone()),
                Some(_) => {}
                None => cases.push((case, time[i], method[i].clone(), library[i], library_method[i].clone())),
            }
        }
        let base = Some(serial[i]).filter(|s| s.is_finite());
        let speedup = base.map(|s| format!("{:.1}x", s / time[i])).unwrap_or_else(|| "-".into());
        let with_setup = match (base, setup[i].is_finite()) {
            (Some(s), true) => format!("{:.1}x", s / (time[i] + setup[i])),
            _ => "-".into(),
        };
        rows.push(vec![
            backend[i].clone(),
            device[i].clone(),
            precision[i].clone(),
            method[i].clone(),
            mode[i].clone(),
            if backend[i] == "cpu" { format!("{:.0}", threads[i]) } else { "-".into() },
            format!("{}", order[i] as i64),
            format!("{}, {}", fmt_count(nodes[i]), fmt_count(elements[i])),
            if colors[i] > 0.0 { format!("{}", colors[i]) } else { "-".into() },
            format!("{:.4}", time[i] * 1e3),
            if ci_high[i].is_finite() { format!("{:.1}", 50.0 * (ci_high[i] - ci_low[i]) / time[i]) } else { "-".into() },
            fmt_num(time[i] / elements[i] * 1e9),
            fmt_num(gbs[i]),
            if setup[i].is_finite() { format!("{:.1}", setup[i] * 1e3) } else { "-".into() },
            if peer[i].is_finite() { format!("{}x {}", fmt_num(peer[i] / time[i]), peer_method[i]) } else { "-".into() },
            if library[i].is_finite() { format!("{}x {}", fmt_num(library[i] / time[i]), library_method[i]) } else { "-".into() },
            speedup,
            with_setup,
        ]);
    }
    let wins: Vec<String> = cases
        .iter()
        .filter(|c| c.3 < c.1)
        .map(|(case, t, m, tl, lib)| format!("{lib} ({:.4} ms) beats {m} ({:.4} ms) on {case}", tl * 1e3, t * 1e3))
        .collect();
    let mut notes = timings_notes();
    if !wins.is_empty() {
        notes.insert(0, format!("A FEM library's route beats our fastest method: {}.", wins.join("; ")));
    }
    Ok(Table {
        name: format!("{id}-timings"),
        title: "Assembly time (element kernels + accumulation into CSR; the Elem* and CPU methods also zero the outputs inside the timed region)".into(),
        header: timings_header(),
        rows,
        notes,
    })
}

/// Each verified row, joined with the serial CPU time of its (level, order) for speed-ups, and
/// with the strongest peer's time (the fastest of the peers) on the same device, backend,
/// precision, mesh and cache mode: the same run's.
fn timings_frame(rows: &LazyFrame) -> Result<DataFrame, ReportError> {
    let serial = rows
        .clone()
        .filter(ok_warm().and(col("method").eq(lit(Method::CPU_SERIAL.as_str()))))
        .group_by_stable([col("level"), col("order")])
        .agg([col("time_median_s").last().alias("serial_s")]);
    let mut args = JoinArgs::new(JoinType::Left);
    args.maintain_order = MaintainOrderJoin::Left;
    let keys = [col("level"), col("order")];
    let peer_keys = ["device", "backend", "precision", "level", "order", "mode"].map(col);
    let libraries = Method::libraries();
    let others: Vec<Method> = Method::peers().into_iter().filter(|m| !libraries.contains(m)).collect();
    let one_of = |ms: &[Method]| ms.iter().map(|m| col("method").eq(lit(m.as_str()))).reduce(|a, b| a.or(b)).unwrap_or(lit(false));
    let fastest = |ms: &[Method], s: &str, m: &str| {
        let time = [col("time_median_s").min().alias(s), col("method").get(col("time_median_s").arg_min(), true).alias(m)];
        rows.clone().filter(ok_any_mode().and(one_of(ms))).group_by_stable(peer_keys.clone()).agg(time)
    };
    let with_serial = rows.clone().filter(ok_any_mode()).join(serial, keys.clone(), keys, args.clone());
    let with_peer = with_serial.join(fastest(&others, "peer_s", "peer_method"), peer_keys.clone(), peer_keys.clone(), args.clone());
    frame::collect(with_peer.join(fastest(&libraries, "library_s", "library_method"), peer_keys.clone(), peer_keys, args))
}

/// The timings table's columns.
fn timings_header() -> Vec<String> {
    [
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
        "vs strongest peer (same run, same precision)",
        "vs fastest FEM library (JAX, Warp, torch.compile)",
        "vs serial CPU (f64, 1 thread)",
        "vs serial CPU, set-up included",
    ]
    .map(String::from)
    .to_vec()
}

/// What the timings table's columns mean, and the paper's figures beside them.
fn timings_notes() -> Vec<String> {
    vec![
        "Speed-ups divide the serial f64 CPU assembly (1 thread; zeroing + element loop + accumulation, the system allocated once outside the timer) by the row's time: the GPU row's precision is its own (f32 or f64), so an f32 speed-up compares precisions too.".into(),
        "Set-up: the method's host preprocessing for this mesh (coloring, METIS partitions and LPT packing, as long as they took when first made) plus the allocation and upload of its arrays; 'set-up included' adds it to one assembly.".into(),
        "cache: warm (inputs may be in the L2 from the previous repetition) or cold (the L2 flushed before every repetition).".into(),
        "ms: median of the repetitions; +-%: half the width of its 95% bootstrap interval, relative to it.".into(),
        "The paper: SharedNZ about 35x (8800 GTX) and 65x (Tesla C1060) faster than the serial f64 CPU code at orders 1-2.".into(),
        "The peers (beyond the paper), what a GPU-library user runs instead: coo-radix, the COO route of a CuPy user (element triplets, sorted into CSR order by a device radix sort, CUB's algorithm as CuPy's tocsr runs it, then our sum of the duplicates; device events); slot-scatter, PyTorch's index_add_ route (a plain kernel writes the element matrices, then each entry is added atomically into its CSR slot through a map built once, outside the timer); coo-cusparse (CUDA only), the COO route with cuSPARSE's legacy sort (coosortByRow, coo2csr, csrsort), one region timed with the host's waits inside; and the external peers, the same assembly as a Python user writes it (peers/cecka_assembly.py: element matrices vectorized from the coordinates every repetition, then CuPy's coo_matrix(...).tocsr() as cupy-tocsr, PyTorch's index_add_ into CSR slots as torch-index-add, and the same function under torch.compile as torch-compile (Inductor, compiled in the checked pass), all timed by CUDA events in the script with its host work inside, warm only; SciPy's tocsr on the host, f64, as scipy-tocsr, the CPU rows' peer); the FEM libraries: JAX as JAX-FEM assembles (element terms and segment_sum into the CSR slots in one jitted function, jax-segment-sum on the GPU and jax-cpu, host clock to block_until_ready) and NVIDIA Warp's warp.fem (fem.integrate of the Laplace form on a Trimesh2D Lagrange space into its BSR matrix, reassembled through Warp's entry-to-block map with atomic adds, then the load and bsr_mv for the prescribed values; warp-fem on the GPU by Warp's events, warp-cpu on Warp's CPU device), checked with the rounding of quadrature (a structurally zero entry comes out as rounding). 'vs strongest peer': the fastest peer's time over the row's, that peer named, same device, backend, precision, mesh and cache mode; 'vs fastest FEM library' the same against the fastest of the FEM libraries' routes (JAX, Warp, torch.compile), which the first column leaves out.".into(),
        "Dummy rows use the paper's dummy element kernel (same data in and out, almost no arithmetic), checked against the dummy system.".into(),
        "Figures: crosses are the paper's stated values, in the colour of their method: against order, where the method would lie with the paper's speed-up over our serial f64 CPU row (Figs. 13a, 14); against colors, Fig. 3's bound (+10% a doubling) from our fewest-colors time; full/dummy, Fig. 13c's 1.2 and 1.6. The paper's text gives no values of Fig. 12, so the size figures mark none.".into(),
    ]
}

pub(crate) fn dummy_speedup(id: &str, rows: &LazyFrame) -> Result<Vec<Figure>, ReportError> {
    // Each warm GPU kernel's time joined with its dummy's, per (precision, method, backend, order).
    let gpu = rows.clone().filter(ok_warm().and(col("backend").neq(lit("cpu")))).with_columns([
        col("method").str().strip_suffix(lit("-dummy")).alias("base"),
        col("method").str().ends_with(lit("-dummy")).alias("dummy"),
    ]);
    let keys = [col("precision"), col("backend"), col("base"), col("order")];
    let timed = |dummy: bool, name: &str| {
        let which = if dummy { col("dummy") } else { col("dummy").not() };
        gpu.clone().filter(which).group_by_stable(keys.clone()).agg([col("time_median_s").last().alias(name)])
    };
    let joined = timed(false, "full_s").join(timed(true, "dummy_s"), keys.clone(), keys.clone(), JoinArgs::new(JoinType::Inner));
    let df = frame::collect(joined.filter(col("full_s").is_finite().and(col("dummy_s").is_finite())).sort(["order"], Default::default()))?;
    let (base, backend) = (frame::strs(&df, "base")?, frame::strs(&df, "backend")?);
    let df = frame::with_strs(df, "label", base.iter().zip(&backend).map(|(m, b)| format!("{m} ({b})")).collect())?;
    let mut figures = Vec::new();
    for by_prec in frame::groups(&df, &["precision"])? {
        let prec = frame::first_str(&by_prec, "precision")?;
        let mut series = Vec::new();
        for s in frame::groups(&by_prec, &["label"])? {
            let (order, full, dummy) = (frame::nums(&s, "order")?, frame::nums(&s, "full_s")?, frame::nums(&s, "dummy_s")?);
            let points: Vec<(f64, f64)> = (0..s.height()).map(|i| (order[i], full[i] / dummy[i])).collect();
            if points.len() > 1 {
                series.push(Series { label: frame::first_str(&s, "label")?, points, reference: false });
            }
        }
        let marks = super::paper::dummy_marks(&series);
        series.extend(marks);
        if !series.is_empty() {
            figures.push(Figure {
                name: format!("{id}-dummy-speedup-{prec}"),
                title: format!("Full over dummy element kernel time against order ({prec}); 1 = memory-bound"),
                x_label: "element order".into(),
                y_label: "time full / time dummy".into(),
                log_x: false,
                log_y: false,
                series,
            });
        }
    }
    Ok(figures)
}

pub(crate) fn winners_table(id: &str, rows: &LazyFrame) -> Result<Table, ReportError> {
    // The fastest full-kernel GPU method per (backend, device, precision, level, order), of the
    // paper's four and of all.
    let paper = frame::one_of("method", &Method::paper_names());
    let fastest = || SortMultipleOptions::default().with_maintain_order(true);
    let keys = ["backend", "device", "precision", "level", "order"];
    let df = frame::collect(
        rows.clone()
            .filter(ok_warm().and(col("backend").neq(lit("cpu"))).and(col("method").str().ends_with(lit("dummy")).not()))
            .group_by(keys.map(col))
            .agg([
                col("method")
                    .filter(paper.clone())
                    .sort_by([col("time_median_s").filter(paper.clone())], fastest())
                    .first()
                    .alias("paper_m"),
                col("time_median_s").filter(paper).min().alias("paper_s"),
                col("method").sort_by([col("time_median_s")], fastest()).first().alias("best_m"),
                col("time_median_s").min().alias("best_s"),
            ])
            .sort(keys, Default::default()),
    )?;
    let str = |c: &str| frame::strs(&df, c);
    let num = |c: &str| frame::nums(&df, c);
    let (backend, device, precision, level, order) = (str("backend")?, str("device")?, str("precision")?, num("level")?, num("order")?);
    let (paper_m, paper_s, best_m, best_s) = (str("paper_m")?, num("paper_s")?, str("best_m")?, num("best_s")?);
    let cell = |m: &str, t: f64| if t.is_finite() { format!("{m} ({:.4} ms)", t * 1e3) } else { "-".into() };
    let rows = (0..df.height())
        .map(|i| {
            vec![
                backend[i].clone(),
                device[i].clone(),
                precision[i].clone(),
                (level[i] as i64).to_string(),
                (order[i] as i64).to_string(),
                cell(&paper_m[i], paper_s[i]),
                paper_winner(order[i] as i64).to_string(),
                cell(&best_m[i], best_s[i]),
            ]
        })
        .collect();
    Ok(Table {
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
    })
}

/// One figure per (GPU backend, precision), as the paper's Figs. 12-14 have one per GPU: the
/// full kernels (their dummies are in the dummy speed-up figure) and the f64 CPU baselines.
pub(crate) fn figure_by(id: &str, rows: &LazyFrame, what: &str, x: &str, x_label: &str, log_x: bool) -> Result<Vec<Figure>, ReportError> {
    let usable = ok_warm().and(col("elements").is_finite()).and(col("method").str().ends_with(lit("-dummy")).not());
    let points = rows
        .clone()
        .filter(usable)
        .with_columns([col(x).alias("x"), (col("time_median_s") / col("elements") * lit(1e9)).alias("y")])
        .sort(["x"], SortMultipleOptions::default().with_maintain_order(true));
    let gpu = frame::collect(points.clone().filter(col("backend").neq(lit("cpu"))))?;
    let cpu = frame::collect(points.filter(col("backend").eq(lit("cpu"))))?;
    let gpu_labels = frame::strs(&gpu, "method")?;
    let gpu = frame::with_strs(gpu, "label", gpu_labels)?;
    let cpu_labels = labels(&cpu, |_| " (CPU, f64)".into())?;
    let cpu = frame::with_strs(cpu, "label", cpu_labels)?;
    let mut figures = Vec::new();
    for group in frame::groups(&gpu, &["backend", "precision"])? {
        let (backend, prec) = (frame::first_str(&group, "backend")?, frame::first_str(&group, "precision")?);
        // The CPU baselines join every GPU figure; stacking keeps the points in x order per series.
        let mut all = group.vstack(&cpu).map_err(|e| ReportError::Column { column: "(stack)".into(), detail: e.to_string() })?;
        all = frame::collect(all.lazy().sort(["x"], SortMultipleOptions::default().with_maintain_order(true)))?;
        let mut series = Vec::new();
        for s in frame::groups(&all, &["label"])? {
            let (xs, ys) = (frame::nums(&s, "x")?, frame::nums(&s, "y")?);
            series.push(Series { label: frame::first_str(&s, "label")?, points: xs.into_iter().zip(ys).collect(), reference: false });
        }
        let marks = super::paper::figure_marks(what, &series);
        series.extend(marks);
        if series.iter().any(|s| s.points.len() > 1) {
            figures.push(Figure {
                name: format!("{id}-time-vs-{what}-{backend}-{prec}"),
                title: format!("Assembly time per element vs {x_label} ({backend}, {prec}; CPU in f64)"),
                x_label: x_label.into(),
                y_label: "ns per element".into(),
                log_x,
                log_y: true,
                series,
            });
        }
    }
    Ok(figures)
}

/// The report side: tables and figures from a run's rows, never a device.
impl<L: super::registry::MethodList> Report for super::benchmark::Assembly<L> {
    fn report(spec: &Spec<Self>, rows: &DataFrame, _ctx: &ReportCtx) -> Result<Vec<ReportItem>, ReportError> {
        let r = super::report::rows(rows)?;
        let mut items = Vec::new();
        for t in &spec.outputs.tables {
            items.push(ReportItem::Table(match t {
                TableName::Table6 => table6(&spec.id, &r)?,
                TableName::Timings => {
                    let mut t = timings_table(&spec.id, &r)?;
                    t.notes.extend(frame::libraries_note(rows));
                    t
                }
                TableName::Winners => winners_table(&spec.id, &r)?,
                TableName::Claims => super::claims::claims_table(&spec.id, &r)?,
                TableName::Table4 => super::paper::table4(&spec.id),
            }));
        }
        for f in &spec.outputs.figures {
            items.extend(
                match f {
                    FigureName::TimeVsSize => figure_by(&spec.id, &r, "size", "elements", "elements", true)?,
                    FigureName::TimeVsOrder => figure_by(&spec.id, &r, "order", "order", "element order", false)?,
                    FigureName::TimeVsColors => figure_by(&spec.id, &r, "colors", "colors_used", "number of colors", false)?,
                    FigureName::DummySpeedup => dummy_speedup(&spec.id, &r)?,
                }
                .into_iter()
                .map(ReportItem::Figure),
            );
        }
        Ok(items)
    }
}
