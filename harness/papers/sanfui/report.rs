//! Tables and figures of the Sanfui-Sharma experiments, from stored rows only: Eq. 6 and
//! Table 1 beside our counts, every combination at the largest box, the paper's findings
//! checked, and Figs 7, 8, 10-15.
//!
//! "Assembly" is the symbolic + numeric stages (the paper's two kernels); "total" adds the
//! element matrices (Algorithm 1). The CPU's `addto` computes K^e inside its loop, so speed-ups
//! over the CPU compare totals. SharedNZ computes K^e inside its numeric kernel, so comparisons
//! with it (the claim, Fig. 12) take the other methods' elements + symbolic + numeric.

use polars::prelude::*;

use super::formats::Format;
use super::formats::{eq6, storage_bytes_of_box, storage_bytes_per_dof, table1_bytes};
use super::spec::{FigureName, Method, Outputs, TableName};
use crate::report::{fmt_num, frame, Figure, ReportCtx, ReportError, ReportItem, Series, Table};

/// The verified warm rows, one vector per column the reports read.
pub(crate) struct Rows {
    pub(crate) key: Vec<String>,
    /// (device, backend, precision) of each row, to find the run's copy bandwidth.
    pub(crate) target: Vec<[String; 3]>,
    pub(crate) method: Vec<String>,
    pub(crate) metric: Vec<String>,
    pub(crate) time: Vec<f64>,
    pub(crate) lo: Vec<f64>,
    pub(crate) hi: Vec<f64>,
    pub(crate) nodes: Vec<f64>,
    pub(crate) box_: Vec<[usize; 3]>,
    pub(crate) gbs: Vec<f64>,
    pub(crate) gflops: Vec<f64>,
    pub(crate) storage: Vec<f64>,
}

pub(crate) fn read(df: &DataFrame) -> Result<Rows, ReportError> {
    let ok = frame::collect(
        frame::with_optional(
            df,
            &["bandwidth_gbs", "gflops", "storage_bytes", "nodes", "time_ci_low_s", "time_ci_high_s"],
            super::spec::COLUMNS,
        )?
        .filter(col("status").eq(lit("ok")).and(col("mode").eq(lit("warm")))),
    )?;
    let (backend, device, precision) = (frame::strs(&ok, "backend")?, frame::strs(&ok, "device")?, frame::strs(&ok, "precision")?);
    let (nx, ny, nz) = (frame::nums(&ok, "nx")?, frame::nums(&ok, "ny")?, frame::nums(&ok, "nz")?);
    Ok(Rows {
        key: (0..ok.height())
            .map(
                |i| {
                    if backend[i] == "cpu" {
                        format!("{} cpu", device[i])
                    } else {
                        format!("{} {} {}", device[i], backend[i], precision[i])
                    }
                },
            )
            .collect(),
        target: (0..ok.height()).map(|i| [device[i].clone(), backend[i].clone(), precision[i].clone()]).collect(),
        method: frame::strs(&ok, "method")?,
        metric: frame::strs(&ok, "metric")?,
        time: frame::nums(&ok, "time_median_s")?,
        lo: frame::nums(&ok, "time_ci_low_s")?,
        hi: frame::nums(&ok, "time_ci_high_s")?,
        nodes: frame::nums(&ok, "nodes")?,
        box_: (0..ok.height()).map(|i| [nx[i] as usize, ny[i] as usize, nz[i] as usize]).collect(),
        gbs: frame::nums(&ok, "bandwidth_gbs")?,
        gflops: frame::nums(&ok, "gflops")?,
        storage: frame::nums(&ok, "storage_bytes")?,
    })
}

impl Rows {
    pub(crate) fn find(&self, key: &str, method: &str, metric: &str, nodes: f64) -> Option<usize> {
        (0..self.key.len()).find(|&i| self.key[i] == key && self.method[i] == method && self.metric[i] == metric && self.nodes[i] == nodes)
    }
    pub(crate) fn time(&self, key: &str, method: &str, metric: &str, nodes: f64) -> f64 {
        self.find(key, method, metric, nodes).map_or(f64::NAN, |i| self.time[i])
    }
    /// Symbolic + numeric (the baseline: numeric; the CPU: symbolic + addto).
    pub(crate) fn assembly(&self, key: &str, method: &str, nodes: f64) -> f64 {
        assembly_stages(method).iter().map(|st| self.time(key, method, st, nodes)).sum()
    }
    /// Element matrices + assembly: what SharedNZ's two stages do (it computes K^e inside its
    /// numeric kernel), for the comparisons with it.
    pub(crate) fn with_elements(&self, key: &str, method: &str, nodes: f64) -> f64 {
        let asm = self.assembly(key, method, nodes);
        if method == Method::SHARED_NZ.as_str() {
            asm
        } else {
            self.time(key, method, "elements", nodes) + asm
        }
    }
    /// The serial CPU's total at `nodes`, from any CPU key of the run.
    fn cpu_serial(&self, nodes: f64) -> f64 {
        (0..self.key.len())
            .find(|&i| self.method[i] == Method::CPU_SERIAL.as_str() && self.metric[i] == "total" && self.nodes[i] == nodes)
            .map_or(f64::NAN, |i| self.time[i])
    }
    pub(crate) fn device_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = (0..self.key.len())
            .filter(|&i| Method::named(&self.method[i]).is_some_and(|m| !m.on_cpu()))
            .map(|i| self.key[i].clone())
            .collect();
        keys.sort();
        keys.dedup();
        keys
    }
    pub(crate) fn sizes(&self, key: &str) -> Vec<f64> {
        let mut n: Vec<f64> = (0..self.key.len()).filter(|&i| self.key[i] == key).map(|i| self.nodes[i]).collect();
        n.sort_by(f64::total_cmp);
        n.dedup();
        n
    }
}

/// The stages a method's assembly time adds up: symbolic + numeric; the ElemAtomic baseline's
/// numeric alone (its CSR slots are host pre-processing); the cuSPARSE route's triplets, sort
/// and sum; the CPU's total.
pub(crate) fn assembly_stages(method: &str) -> &'static [&'static str] {
    match Method::named(method) {
        Some(Method::ELEM_ATOMIC) => &["numeric"],
        Some(Method::COO_CUSPARSE | Method::COO_RADIX) => &["triplets", "sort", "sum"],
        Some(Method::CPU_SERIAL | Method::CPU_PARALLEL) => &["total"],
        // A library's one call: its element matrices included.
        Some(m) if m.library() => &["assembly"],
        _ => &["symbolic", "numeric"],
    }
}

pub(crate) fn report(id: &str, outputs: &Outputs, df: &DataFrame, ctx: &ReportCtx) -> Result<Vec<ReportItem>, ReportError> {
    let r = read(df)?;
    let keys = r.device_keys();
    let mut out = Vec::new();
    for t in &outputs.tables {
        out.push(ReportItem::Table(match t {
            TableName::Counts => counts(id, &r),
            TableName::Largest => largest(id, &r, &keys, ctx),
            // The ledger is the benchmark's to add (claims.rs reads these rows).
            TableName::Claims => continue,
            TableName::MemoryLimit => super::limits::memory_limit(id, df, ctx)?,
        }));
    }
    for &f in &outputs.figures {
        if f == FigureName::Storage {
            out.push(ReportItem::Figure(storage(id, &r)));
            continue;
        }
        if f == FigureName::StorageDof {
            out.extend(storage_dof(id, &r).map(ReportItem::Figure));
            continue;
        }
        for key in &keys {
            out.push(ReportItem::Figure(figure(id, &r, key, f)));
        }
    }
    Ok(out)
}

fn boxes(r: &Rows) -> Vec<[usize; 3]> {
    let mut b = r.box_.clone();
    b.sort_by_key(|n| (n.iter().product::<usize>(), *n));
    b.dedup();
    b
}

fn counts(id: &str, r: &Rows) -> Table {
    let rows = boxes(r)
        .into_iter()
        .map(|n| {
            let blocks: usize = n.iter().map(|&v| 3 * v - 2).product();
            let mut row =
                vec![format!("{}x{}x{}", n[0], n[1], n[2]), fmt_num(n.iter().product::<usize>() as f64), fmt_num(9.0 * blocks as f64)];
            row.push(fmt_num(eq6(n) as f64));
            for f in Format::PAPER {
                row.push(format!("{} / {}", fmt_num(storage_bytes_of_box(f, n, 4) / 1e6), fmt_num(table1_bytes(f, n) / 1e6)));
            }
            row
        })
        .collect();
    let mut header: Vec<String> = ["box (nodes)", "nodes", "nnz counted", "nnz Eq. 6"].map(String::from).to_vec();
    header.extend(Format::PAPER.iter().map(|f| format!("{} MB ours / Table 1", f.as_str())));
    Table {
        name: format!("{id}-counts"),
        title: "Eq. 6 and Table 1 beside our counts (4-byte values and indices, as the paper's table)".into(),
        header,
        rows,
        notes: vec![
            "nnz counted: 9 prod(3 n_i - 2), the blocks of the neighbour lists; a test checks it against the elements' couplings and Eq. 6 on several boxes.".into(),
            "Table 1 agrees with our counts for COO, ELL and ELLM; its CSR has 4 bytes less (3N offsets, not 3N + 1); its COOM is 16/3 nnz + 4N bytes, one column index per three values, where Algorithm 5 and ours keep one per 3x3 block (4 nnz + 4 nnz/9 + 4 (N + 1)). Its coefficients 1956 (CSR) and 1300 (COOM) are 1944 and 1296 plus the 12 and 4 bytes per node of the row side.".into(),
        ],
    }
}

/// The fastest peer's assembly at box `n` (the peers: [`Method::PEERS`]), with its name.
pub(crate) fn strongest_peer(r: &Rows, key: &str, n: f64) -> Option<(&'static str, f64)> {
    Method::PEERS
        .iter()
        .map(|m| (m.as_str(), r.assembly(key, m.as_str(), n)))
        .filter(|p| p.1.is_finite())
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// The paper's ten combinations, by name.
pub(crate) fn paper() -> Vec<&'static str> {
    Method::all().iter().filter(|m| m.is_paper()).map(|m| m.as_str()).collect()
}

/// The fastest of `methods` by total at box `n`, with its name.
fn fastest_total(r: &Rows, key: &str, n: f64, methods: &[&'static str]) -> Option<(&'static str, f64)> {
    methods.iter().map(|&m| (m, r.time(key, m, "total", n))).filter(|p| p.1.is_finite()).min_by(|a, b| a.1.total_cmp(&b.1))
}

fn largest(id: &str, r: &Rows, keys: &[String], ctx: &ReportCtx) -> Table {
    let (mut rows, mut wins) = (Vec::new(), Vec::new());
    let libraries: Vec<&'static str> = Method::libraries().iter().map(|m| m.as_str()).collect();
    for key in keys {
        let Some(&top) = r.sizes(key).last() else { continue };
        let base = r.assembly(key, Method::ELEM_ATOMIC.as_str(), top);
        let peer = r.assembly(key, Method::COO_CUSPARSE.as_str(), top);
        let strongest = strongest_peer(r, key, top);
        let library = fastest_total(r, key, top, &libraries);
        if let (Some((lib, tl)), Some((best, to))) = (library, fastest_total(r, key, top, &ours())) {
            if tl < to {
                wins.push(format!(
                    "{lib} ({} ms) beats our fastest method, {best} ({} ms), on {key} at {} nodes (totals)",
                    fmt_num(tl * 1e3),
                    fmt_num(to * 1e3),
                    fmt_num(top)
                ));
            }
        }
        let cpu = r.cpu_serial(top);
        for m in Method::all().iter().filter(|m| !m.on_cpu()) {
            let name = m.as_str();
            let Some(total) = r.find(key, name, "total", top) else { continue };
            let ms = |metric: &str| fmt_num(r.time(key, name, metric, top) * 1e3);
            let numeric = r.find(key, name, "numeric", top);
            let asm = r.assembly(key, name, top);
            rows.push(vec![
                key.clone(),
                name.to_string(),
                fmt_num(top),
                ms("elements"),
                ms("symbolic"),
                ms("numeric"),
                fmt_num(asm * 1e3),
                strongest.map_or("-".into(), |(p, t)| format!("{} {p}", fmt_num(t / asm))),
                ms("convert"),
                numeric.map_or("-".into(), |i| fmt_num(r.gbs[i])),
                numeric
                    .and_then(|i| {
                        let [d, b, p] = &r.target[i];
                        ctx.copy_gbs(d, b, p).map(|c| format!("{:.0}%", 100.0 * r.gbs[i] / c))
                    })
                    .unwrap_or_else(|| "-".into()),
                fmt_num(r.storage[total] / 1e6),
                ms("spmv"),
                ms("spmv-vendor"),
                fmt_num(base / asm),
                fmt_num(peer / asm),
                library.map_or("-".into(), |(l, t)| format!("{} {l}", fmt_num(t / r.time[total]))),
                fmt_num(cpu / r.time[total]),
            ]);
        }
    }
    let mut notes = largest_notes();
    if !wins.is_empty() {
        notes.insert(0, format!("A library route beats ours: {}.", wins.join("; ")));
    }
    Table {
        name: format!("{id}-largest"),
        title: "Every combination at the largest box: median stage times, numeric GB/s, storage, ratios".into(),
        header: largest_header(),
        rows,
        notes,
    }
}

fn largest_header() -> Vec<String> {
    [
        "device",
        "method",
        "nodes",
        "elements ms",
        "symbolic ms",
        "numeric ms",
        "assembly ms",
        "x strongest peer (assembly, same run)",
        "to CSR ms",
        "numeric GB/s",
        "% of copy",
        "storage MB",
        "SpMV ms",
        "cuSPARSE SpMV ms",
        "x elem-atomic (assembly)",
        "x coo-cusparse (assembly)",
        "x fastest library (total, same run)",
        "x cpu-serial (total)",
    ]
    .map(String::from)
    .to_vec()
}

fn largest_notes() -> Vec<String> {
    vec![
            "Device stages by device events; assembly = symbolic + numeric (the baseline: numeric, its CSR slots being host pre-processing); to CSR: COOM and ELLM converted to CSR on the device (beyond the paper; in their total).".into(),
            "numeric GB/s: compulsory bytes (K^e, connectivity, the searched index arrays once, every value written once) over the numeric stage's median (cost.rs); % of copy: of the copy kernel's GB/s at its largest array, same device, backend and precision, in the same run (device-bandwidth; '-' where the run has none).".into(),
            "The peers, what a GPU-library user runs instead: coo-radix, the COO route of a CuPy user (triplets + sort by a device radix sort, CUB's algorithm as CuPy's tocsr runs it + sum: our head flags, scan and segmented sum; device events); elem-atomic, the slot-map route of PyTorch's index_add_ (K^e added atomically through CSR slots built once); coo-cusparse (CUDA only), the COO route with cuSPARSE's legacy sort (coosortByRow, coo2csr, csrsort; timed with its host waits). x strongest peer: the fastest peer's assembly over the method's, that peer named; x elem-atomic and x coo-cusparse: theirs, same run.".into(),
            "SpMV: y = A x on the method's own matrix by our kernel of its format (timed apart from the assembly); cuSPARSE SpMV: cusparseSpMV on the same matrix where cuSPARSE has the format (CSR; COOM as BSR with 3x3 row-major blocks; ELLM through its CSR conversion), same process and stream. Both checked against the f64 reference matrix times x.".into(),
            "shared-nz (the paper's GPU baseline, Cecka et al.'s SharedNZ for hex8): K^e is computed inside its numeric kernel, in shared memory (no elements stage); its symbolic stage is CSR's. Its plan (bricks, lists) is host pre-processing.".into(),
            "x cpu-serial: the serial f64 CPU's total (symbolic + addto with K^e inside, one host thread) over the method's total (elements + symbolic + numeric), same run.".into(),
        "x fastest library: the faster total of the routes of a user of a GPU FEM library, same run: jax-segment-sum (JAX: every K^e by array operations at the 2x2x2 Gauss points, jax.ops.segment_sum of all 576 entries of each into the CSR values through the slot map, one jitted function; host clock and block_until_ready) and warp-fem (NVIDIA Warp: fem.integrate of the elasticity form on a fem.Hexmesh of our nodes with a vector trilinear space, into the same BSR matrix every pass through Warp's entry-to-block map; Warp's events); their one stage, 'assembly', includes the element matrices, so their ratio compares totals. jax-cpu and warp-cpu are the same on the libraries' CPU devices.".into(),
    ]
}

/// Our device assembly methods: the paper's ten and those beyond the paper (ellm-gather).
pub(crate) fn ours() -> Vec<&'static str> {
    Method::all().iter().filter(|m| m.ours()).map(|m| m.as_str()).collect()
}

fn storage(id: &str, r: &Rows) -> Figure {
    let b = boxes(r);
    let mut series = Vec::new();
    for f in Format::PAPER {
        let pts = |g: &dyn Fn([usize; 3]) -> f64| b.iter().map(|&n| (n.iter().product::<usize>() as f64, g(n) / 1e6)).collect::<Vec<_>>();
        series.push(Series { label: f.as_str().into(), points: pts(&|n| storage_bytes_of_box(f, n, 4)), reference: false });
        series.push(Series { label: format!("{} (paper, Table 1)", f.as_str()), points: pts(&|n| table1_bytes(f, n)), reference: true });
    }
    Figure {
        name: format!("{id}-storage"),
        title: "Storage against nodes, 4-byte values (Fig. 7)".into(),
        x_label: "nodes".into(),
        y_label: "MB".into(),
        log_x: true,
        log_y: true,
        series,
    }
}

/// Fig. 8: storage against DOFs per node at the run's largest box (our counts; Table 1 is for
/// 3 DOFs a node only).
fn storage_dof(id: &str, r: &Rows) -> Option<Figure> {
    let n = *boxes(r).last()?;
    let series = super::registry::formats()
        .into_iter()
        .map(|f| Series {
            label: f.as_str().into(),
            points: (1..=6).map(|nd| (nd as f64, storage_bytes_per_dof(f, n, 4, nd) / 1e6)).collect(),
            reference: false,
        })
        .collect();
    Some(Figure {
        name: format!("{id}-storage-dof"),
        title: format!("Storage against DOFs per node, {}x{}x{} nodes, 4-byte values (Fig. 8)", n[0], n[1], n[2]),
        x_label: "DOFs per node".into(),
        y_label: "MB".into(),
        log_x: false,
        log_y: true,
        series,
    })
}

fn figure(id: &str, r: &Rows, key: &str, which: FigureName) -> Figure {
    let slug: String = key.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    let sizes = r.sizes(key);
    let line = |y: &dyn Fn(f64) -> f64| -> Vec<(f64, f64)> { sizes.iter().map(|&n| (n, y(n))).filter(|p| p.1.is_finite()).collect() };
    let paper = paper();
    let mut series = Vec::new();
    let mut add = |label: String, pts: Vec<(f64, f64)>| {
        if !pts.is_empty() {
            series.push(Series { label, points: pts, reference: false });
        }
    };
    let (name, title, y_label, log_y) = match which {
        FigureName::TimeColoring | FigureName::TimeAtomics => {
            let race = if which == FigureName::TimeColoring { "color" } else { "atomic" };
            for m in paper.iter().filter(|m| m.ends_with(race)) {
                add(m.to_string(), line(&|n| r.assembly(key, m, n) * 1e3));
            }
            add("elem-atomic (baseline)".into(), line(&|n| r.assembly(key, Method::ELEM_ATOMIC.as_str(), n) * 1e3));
            add("shared-nz (the paper's baseline; K^e inside)".into(), line(&|n| r.assembly(key, Method::SHARED_NZ.as_str(), n) * 1e3));
            add("ellm-gather (no race; beyond the paper)".into(), line(&|n| r.assembly(key, Method::ELLM_GATHER.as_str(), n) * 1e3));
            if race == "color" {
                ("time-coloring", "Assembly time against nodes, coloring (Fig. 10)", "ms", true)
            } else {
                ("time-atomics", "Assembly time against nodes, atomics (Fig. 11)", "ms", true)
            }
        }
        FigureName::SpeedupSharedNz => {
            for m in paper.iter().chain(&[Method::ELEM_ATOMIC.as_str(), Method::ELLM_GATHER.as_str()]) {
                add(m.to_string(), line(&|n| r.with_elements(key, Method::SHARED_NZ.as_str(), n) / r.with_elements(key, m, n)));
            }
            ("speedup-shared-nz", "Speed-up over SharedNZ, elements + symbolic + numeric (Fig. 12)", "x", true)
        }
        FigureName::SpeedupCpu => {
            for m in paper.iter().chain(&[Method::ELEM_ATOMIC.as_str(), Method::ELLM_GATHER.as_str()]) {
                add(m.to_string(), line(&|n| r.cpu_serial(n) / r.time(key, m, "total", n)));
            }
            ("speedup-cpu", "Speed-up of the total over the serial f64 CPU (Fig. 13)", "x", true)
        }
        FigureName::Gflops => {
            for m in paper.iter().chain(&[Method::ELEM_ATOMIC.as_str(), Method::ELLM_GATHER.as_str()]) {
                add(m.to_string(), line(&|n| r.find(key, m, "numeric", n).map_or(f64::NAN, |i| r.gflops[i])));
            }
            ("gflops", "Numeric kernel GFLOP/s, 576 additions per element (Fig. 14)", "GFLOP/s", true)
        }
        FigureName::Shares => {
            for m in &paper {
                add(m.to_string(), line(&|n| 100.0 * r.time(key, m, "symbolic", n) / r.assembly(key, m, n)));
            }
            ("shares", "Symbolic kernel's share of the assembly time (Fig. 15)", "% of symbolic + numeric", false)
        }
        FigureName::Storage | FigureName::StorageDof => unreachable!("drawn once per run"),
    };
    Figure {
        name: format!("{id}-{name}-{slug}"),
        title: format!("{title}: {key}"),
        x_label: "nodes".into(),
        y_label: y_label.into(),
        log_x: true,
        log_y,
        series,
    }
}
