//! `harness report RUN RUN ...`: several runs (an H200 run, an H100 run, a host run with PoCL)
//! as one hardware comparison, from stored rows only.
//!
//! A *target* is one device of one run (its rows of one backend on one device). Rows of two
//! targets meet on the case without its backend (precision and parameters) and the metric, so
//! the same case on CUDA on two GPUs, or on CUDA and OpenCL, sits side by side. Per experiment,
//! each (method, precision, metric) shows its headline case: the one with the most bytes moved
//! (else the longest time) among the cases that most targets ran. Each cell gives the median
//! time, the GB/s, and the share of that target's own copy bandwidth, measured by
//! `device-bandwidth` in the same run: the ceiling a memory-bound method is judged by.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use crate::meta::RunMeta;
use crate::publish::copy_ceilings;
use crate::report::physics::{FP64_TENSOR_COLUMN, TF32_COLUMN};
use crate::report::{fmt_num, frame, Bars, Figure, ReportError, Series, Table};
use crate::results::RunDir;
use fembench_core::Precision;

/// One device of one run.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Target {
    pub run: usize,
    pub run_id: String,
    pub backend: String,
    pub device: String,
}

impl Target {
    pub fn label(&self) -> String {
        format!("{} {} ({})", self.device, self.backend, self.run_id)
    }
}

/// One measured value of a target.
#[derive(Debug, Clone, Copy)]
struct Cell {
    time: f64,
    gbs: f64,
    share: f64,
    /// GFLOP/s (executed count) and its share of the nominal peak of the unit the row ran on
    /// (`unit`), for rows with flops and no byte count (compute-bound kernels).
    gflops: f64,
    peak_share: f64,
    unit: &'static str,
    bytes: f64,
    size: f64,
}

/// The rows of one experiment: (case without its backend, metric) -> target -> cell, with each
/// case's method and precision.
#[derive(Default)]
struct Joined {
    cells: BTreeMap<(String, String), BTreeMap<Target, Cell>>,
    method: BTreeMap<String, (String, String)>,
}

/// What the comparison holds: tables, line figures and grouped bars.
#[derive(Debug, Default)]
pub struct HardwareReport {
    pub targets: Vec<Target>,
    pub tables: Vec<Table>,
    pub figures: Vec<Figure>,
    pub bars: Vec<Bars>,
}

/// The columns that give a case's size, whichever benchmark wrote it (each is declared by a
/// registered benchmark: a test in `tests/pipeline` says so).
pub const SIZE_COLUMNS: [&str; 3] = ["nodes", "dofs", "unknowns"];

fn read(
    run: usize,
    run_id: &str,
    df: &DataFrame,
    ceilings: &[(String, String, String, f64)],
    meta: &RunMeta,
    into: &mut Joined,
) -> Result<(), ReportError> {
    let mut optional = vec!["bandwidth_gbs", "bytes", "gflops", TF32_COLUMN, FP64_TENSOR_COLUMN];
    optional.extend(SIZE_COLUMNS);
    let mut numeric = vec![TF32_COLUMN, FP64_TENSOR_COLUMN];
    numeric.extend(SIZE_COLUMNS);
    let ok = frame::collect(
        frame::with_optional(df, &optional, &numeric)?.filter(col("status").eq(lit("ok")).and(col("time_median_s").is_not_null())),
    )?;
    let (tf32, fp64_tensor) = (frame::nums(&ok, TF32_COLUMN)?, frame::nums(&ok, FP64_TENSOR_COLUMN)?);
    let (case, backend, device, precision, metric) = (
        frame::strs(&ok, "case_id")?,
        frame::strs(&ok, "backend")?,
        frame::strs(&ok, "device")?,
        frame::strs(&ok, "precision")?,
        frame::strs(&ok, "metric")?,
    );
    let method = if ok.column("method").is_ok() { frame::strs(&ok, "method")? } else { vec![String::new(); ok.height()] };
    let (time, gbs, bytes) = (frame::nums(&ok, "time_median_s")?, frame::nums(&ok, "bandwidth_gbs")?, frame::nums(&ok, "bytes")?);
    let gflops = frame::nums(&ok, "gflops")?;
    let sizes: Vec<Vec<f64>> = SIZE_COLUMNS.iter().map(|c| frame::nums(&ok, c)).collect::<Result<_, _>>()?;
    for i in 0..ok.height() {
        let key = case[i].split_once('/').map_or(case[i].clone(), |(_, rest)| rest.to_string());
        let ceiling = ceilings.iter().find(|c| c.0 == device[i] && c.1 == backend[i] && c.2 == precision[i]).map(|c| c.3);
        let size = sizes.iter().map(|s| s[i]).find(|v| v.is_finite()).unwrap_or(f64::NAN);
        let target = Target { run, run_id: run_id.to_string(), backend: backend[i].clone(), device: device[i].clone() };
        // Transfers between host and device cross PCIe, not device memory: no share of copy.
        let host_link = matches!(metric[i].as_str(), "upload" | "download");
        let share = if host_link { f64::NAN } else { ceiling.map_or(f64::NAN, |c| gbs[i] / c) };
        let compute = gflops[i].is_finite() && !gbs[i].is_finite();
        let info = meta.devices.iter().find(|d| d.name == device[i] && d.backend.map(|b| b.as_str()) == Some(backend[i].as_str()));
        let (unit, peak) = unit_peak(info, &precision[i], tf32[i], fp64_tensor[i]);
        let (gf, peak_share) = if compute { (gflops[i], gflops[i] / peak) } else { (f64::NAN, f64::NAN) };
        let cell = Cell { time: time[i], gbs: gbs[i], share, gflops: gf, peak_share, unit, bytes: bytes[i], size };
        into.cells.entry((key.clone(), metric[i].clone())).or_default().insert(target, cell);
        let m = if method[i].is_empty() { metric[i].clone() } else { method[i].clone() };
        into.method.insert(key, (m, precision[i].clone()));
    }
    Ok(())
}

/// The unit a row's flops ran on and its nominal peak (GFLOP/s; NaN where unknown): the TF32
/// tensor cores where the row says so (`tensor_tf32`), the FP64 tensor cores where it says so
/// (`tensor_fp64`), else the FP32 or FP64 lanes. An f64 row of a run whose rows do not say
/// (NaN) is held to the FP64 peak with the tensor cores, the ceiling no f64 count can pass.
pub fn unit_peak(info: Option<&fembench_device::DeviceInfo>, precision: &str, tf32: f64, fp64_tensor: f64) -> (&'static str, f64) {
    let (unit, peak) = match (precision, tf32 == 1.0, fp64_tensor) {
        (_, true, _) => ("TF32 tensor", info.and_then(|d| d.tf32_ceiling_gflops())),
        ("f64", _, t) if t == 1.0 => ("FP64 tensor", info.and_then(|d| d.ceiling_gflops(Precision::F64))),
        ("f64", _, t) if t == 0.0 => ("FP64", info.and_then(|d| d.peak_gflops(Precision::F64))),
        ("f64", _, _) => ("FP64 incl. tensor", info.and_then(|d| d.ceiling_gflops(Precision::F64))),
        _ => ("FP32", info.and_then(|d| d.peak_gflops(Precision::F32))),
    };
    (unit, peak.unwrap_or(f64::NAN))
}

/// Builds the comparison of `runs`.
pub fn compare_hardware(runs: &[PathBuf]) -> Result<HardwareReport, ReportError> {
    let mut experiments: BTreeMap<String, Joined> = BTreeMap::new();
    let mut targets = std::collections::BTreeSet::new();
    for (r, path) in runs.iter().enumerate() {
        let run = RunDir::open(path)?;
        let meta = run.read_meta()?;
        let ceilings = copy_ceilings(run.read_experiment("device-bandwidth")?.as_ref());
        for file in run.experiment_files()? {
            let Some(id) = file.file_stem().and_then(|s| s.to_str()) else { continue };
            let Some(df) = run.read_experiment(id)? else { continue };
            read(r, &meta.run_id, &df, &ceilings, &meta, experiments.entry(id.to_string()).or_default())?;
        }
    }
    for j in experiments.values() {
        for per in j.cells.values() {
            targets.extend(per.keys().cloned());
        }
    }
    // GPUs first (in the order the runs were given), the hosts after: speed-ups are over the
    // first GPU.
    let mut targets: Vec<Target> = targets.into_iter().collect();
    targets.sort_by_key(|t| (t.backend == "cpu", t.run, t.backend.clone(), t.device.clone()));
    let mut out = HardwareReport { targets: targets.clone(), ..Default::default() };
    for (id, j) in &experiments {
        let heads = headlines(j);
        if heads.is_empty() {
            continue;
        }
        out.tables.push(table(id, j, &heads, &targets));
        if let Some(b) = bars(id, j, &heads, &targets) {
            out.bars.push(b);
        }
        out.figures.extend(share_vs_size(id, j, &targets));
    }
    Ok(out)
}

/// Per (method, precision, metric): the case most targets ran, with the most bytes (else the
/// longest time) among those.
fn headlines(j: &Joined) -> Vec<(String, String)> {
    let mut best: BTreeMap<(String, String, String), ((usize, f64), (String, String))> = BTreeMap::new();
    for ((case, metric), per) in &j.cells {
        let (m, p) = j.method.get(case).cloned().unwrap_or_default();
        let weight = per.values().map(|c| if c.bytes.is_finite() && c.bytes > 0.0 { c.bytes } else { c.time }).fold(0.0, f64::max);
        let score = (per.len(), weight);
        let e = best.entry((m, p, metric.clone())).or_insert((score, (case.clone(), metric.clone())));
        if score.0 > e.0 .0 || (score.0 == e.0 .0 && score.1 > e.0 .1) {
            *e = (score, (case.clone(), metric.clone()));
        }
    }
    best.into_values().map(|(_, k)| k).collect()
}

fn fmt_time(t: f64) -> String {
    if t < 1e-3 {
        format!("{:.1} us", t * 1e6)
    } else if t < 1.0 {
        format!("{:.2} ms", t * 1e3)
    } else {
        format!("{t:.2} s")
    }
}

fn table(id: &str, j: &Joined, heads: &[(String, String)], targets: &[Target]) -> Table {
    let first = targets.first();
    let rows: Vec<Vec<String>> = heads
        .iter()
        .map(|k| {
            let per = &j.cells[k];
            let mut row = vec![k.0.clone(), k.1.clone()];
            for t in targets {
                row.push(per.get(t).map_or("-".into(), |c| {
                    let mut s = fmt_time(c.time);
                    if c.gbs.is_finite() {
                        let _ = write!(s, ", {} GB/s", fmt_num(c.gbs));
                    }
                    if c.share.is_finite() {
                        let _ = write!(s, ", {:.0}% of copy", 100.0 * c.share);
                    }
                    if c.gflops.is_finite() {
                        let _ = write!(s, ", {} GFLOP/s", fmt_num(c.gflops));
                    }
                    if c.peak_share.is_finite() {
                        let _ = write!(s, ", {:.0}% of {} peak", 100.0 * c.peak_share, c.unit);
                    }
                    s
                }));
            }
            for t in targets.iter().skip(1) {
                let r = first.and_then(|f| per.get(f)).zip(per.get(t)).map(|(a, b)| b.time / a.time);
                row.push(r.map_or("-".into(), |r| format!("{r:.2}x")));
            }
            row
        })
        .collect();
    let mut header = vec!["case (precision/parameters)".to_string(), "metric".to_string()];
    header.extend(targets.iter().enumerate().map(|(k, t)| format!("[{}] {}", k + 1, t.label())));
    header.extend((2..=targets.len()).map(|k| format!("speed-up [1] over [{k}]")));
    // Speed-up columns with no value (devices that ran no case in common with the first) go.
    let mut rows: Vec<Vec<String>> = rows;
    let empty: Vec<usize> = (2 + targets.len()..header.len()).filter(|&c| rows.iter().all(|r| r[c] == "-")).collect();
    for &c in empty.iter().rev() {
        header.remove(c);
        rows.iter_mut().for_each(|r| {
            r.remove(c);
        });
    }
    Table {
        name: format!("hardware-{id}"),
        title: format!("{id}: headline cases on each device"),
        header,
        rows,
        notes: vec![
            "Per method, precision and metric, the case that most devices ran with the most bytes moved. Each cell: the median time, the GB/s by the method's own byte count, and its share of the copy bandwidth that device-bandwidth measured on that device, backend and precision in the same run (absent where the run has no device-bandwidth rows, and for upload and download, which cross PCIe). Compute-bound rows (flops but no byte count) give GFLOP/s by the executed flop count and its share of the nominal peak of the unit the row ran on, named in the cell: the FP32 or FP64 lanes (compute units x lanes x 2 x the driver's maximum clock), the FP64 tensor cores (twice the FP64 lanes on sm_80 and sm_90) or the TF32 tensor cores (eight times the FP32 lanes there); not measured. \"FP64 incl. tensor\": an f64 row of a run whose rows do not say which unit it ran on, held to the FP64 tensor peak. Speed-up [1] over [k]: device k's median time over device 1's, on the same case.".into(),
        ],
    }
}

fn bars(id: &str, j: &Joined, heads: &[(String, String)], targets: &[Target]) -> Option<Bars> {
    let with_share: Vec<&(String, String)> = heads.iter().filter(|k| j.cells[*k].values().any(|c| c.share.is_finite())).collect();
    if with_share.is_empty() {
        return None;
    }
    let groups = with_share.iter().map(|k| format!("{} {}", k.0, k.1)).collect();
    let series = targets
        .iter()
        .map(|t| (t.label(), with_share.iter().map(|k| j.cells[*k].get(t).map_or(f64::NAN, |c| 100.0 * c.share)).collect()))
        .collect();
    Some(Bars {
        name: format!("hardware-{id}-share"),
        title: format!("{id}: share of each device's copy bandwidth, headline cases"),
        y_label: "% of the same run's copy GB/s".into(),
        groups,
        series,
    })
}

/// Share of copy against mesh size, one line per device and method (f64 only), per metric.
fn share_vs_size(id: &str, j: &Joined, targets: &[Target]) -> Vec<Figure> {
    let mut lines: BTreeMap<String, BTreeMap<(Target, String), Vec<(f64, f64)>>> = BTreeMap::new();
    for ((case, metric), per) in &j.cells {
        let (m, p) = j.method.get(case).cloned().unwrap_or_default();
        if p != "f64" {
            continue;
        }
        for (t, c) in per {
            if c.share.is_finite() && c.size.is_finite() {
                // Where the metric names the method (Cecka), one figure holds every method.
                let figure = if *metric == m { "methods".to_string() } else { metric.clone() };
                lines.entry(figure).or_default().entry((t.clone(), m.clone())).or_default().push((c.size, 100.0 * c.share));
            }
        }
    }
    lines
        .into_iter()
        .filter(|(_, l)| {
            l.values().any(|v| v.len() > 1)
                && l.keys().map(|(t, _)| t).collect::<std::collections::BTreeSet<_>>().len() > 1.min(targets.len())
        })
        .map(|(metric, l)| Figure {
            name: format!("hardware-{id}-{metric}-share-vs-size"),
            title: format!("{id} ({metric}, f64): share of each device's copy bandwidth against size"),
            x_label: "mesh size (nodes, dofs or unknowns)".into(),
            y_label: "% of the same run's copy GB/s".into(),
            log_x: true,
            log_y: false,
            series: l
                .into_iter()
                .map(|((t, m), mut pts)| {
                    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                    Series { label: format!("{m}, {}", t.device), points: pts, reference: false }
                })
                .collect(),
        })
        .collect()
}

/// Writes the comparison as Markdown with its figures into `dir`; returns the Markdown's path,
/// the terminal text and the figures' paths.
pub fn write_hardware_report(runs: &[PathBuf], dir: &Path) -> Result<(PathBuf, String, Vec<PathBuf>), ReportError> {
    let rep = compare_hardware(runs)?;
    std::fs::create_dir_all(dir).map_err(|source| ReportError::Io { path: dir.to_path_buf(), source })?;
    let mut md = String::from("# fembench hardware comparison\n\nRuns:\n\n");
    for p in runs {
        let _ = writeln!(md, "- `{}`", p.display());
    }
    md.push_str("\nDevices:\n\n");
    for t in &rep.targets {
        let _ = writeln!(md, "- {}", t.label());
    }
    md.push('\n');
    let mut terminal = String::new();
    let mut figures = Vec::new();
    for t in &rep.tables {
        md.push_str(&t.to_markdown());
        md.push('\n');
        terminal.push_str(&t.to_terminal());
        terminal.push('\n');
    }
    for b in &rep.bars {
        let path = dir.join(format!("{}.png", b.name));
        crate::report::bars::draw_bars(b, &path)?;
        let _ = writeln!(md, "![{}]({})\n", b.title, path.file_name().and_then(|f| f.to_str()).unwrap_or(""));
        figures.push(path);
    }
    for f in &rep.figures {
        let paths = crate::report::figure::draw(f, dir)?;
        let _ = writeln!(md, "![{}]({}.svg)\n", f.title, f.name);
        figures.extend(paths);
    }
    let md_path = dir.join("hardware.md");
    std::fs::write(&md_path, md).map_err(|source| ReportError::Io { path: md_path.clone(), source })?;
    Ok((md_path, terminal, figures))
}
