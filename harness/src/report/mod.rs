//! Reporting: stored rows in, tables (terminal and Markdown, via tabled) and figures (SVG and PNG,
//! via plotters) out. Reporting never measures; each benchmark module decides what its tables and
//! figures hold, and this module only renders them.

pub mod figure;
pub mod frame;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use tabled::builder::Builder;
use tabled::settings::Style;

use crate::results::{ResultsError, RunDir, RunMeta};

/// A table as a benchmark builds it: title, header, string cells, and notes under it.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// File-name stem, e.g. `device-bandwidth-attainable`.
    pub name: String,
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub notes: Vec<String>,
}

impl Table {
    fn build(&self) -> tabled::Table {
        let mut b = Builder::default();
        b.push_record(self.header.clone());
        for r in &self.rows {
            b.push_record(r.clone());
        }
        b.build()
    }

    pub fn to_terminal(&self) -> String {
        let mut t = self.build();
        t.with(Style::rounded());
        let mut s = format!("{}\n{t}\n", self.title);
        for n in &self.notes {
            let _ = writeln!(s, "  {n}");
        }
        s
    }

    pub fn to_markdown(&self) -> String {
        let mut t = self.build();
        t.with(Style::markdown());
        let mut s = format!("### {}\n\n{t}\n", self.title);
        if !self.notes.is_empty() {
            s.push('\n');
            for n in &self.notes {
                let _ = writeln!(s, "- {n}");
            }
        }
        s
    }
}

/// One line of a figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Drawn dashed-looking (points only), e.g. a paper's published values.
    pub reference: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub name: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub log_y: bool,
    pub series: Vec<Series>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ReportItem {
    Table(Table),
    Figure(Figure),
}

/// What a benchmark's report function may read besides its rows.
pub struct ReportCtx {
    pub meta: RunMeta,
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error("results table lacks column `{column}`: {detail}")]
    Column { column: String, detail: String },
    #[error("drawing {path}: {detail}")]
    Draw { path: PathBuf, detail: String },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{0}")]
    Experiment(String),
}

/// What `harness report` wrote.
#[derive(Debug, Default)]
pub struct ReportOutput {
    pub terminal: String,
    pub markdown_path: Option<PathBuf>,
    pub figure_paths: Vec<PathBuf>,
    /// Experiments whose report failed, with the reason; the others are still written.
    pub not_reported: Vec<(String, String)>,
}

/// Builds every table and figure of a run folder: Markdown to `<run>/report.md`, figures to
/// `<plots>/<run-id>/`.
pub fn report_run(run_path: &Path, plots_root: &Path) -> Result<ReportOutput, ReportError> {
    let run = RunDir::open(run_path)?;
    let meta = run.read_meta()?;
    let ctx = ReportCtx { meta: meta.clone() };
    let plots_dir = plots_root.join(&meta.run_id);
    let mut out = ReportOutput::default();
    let mut md = format!(
        "# fembench report: run {}\n\nharness {} (commit {}), host {} ({}), started {}{}.\n\n",
        meta.run_id,
        meta.harness_version,
        meta.git_commit,
        meta.host,
        meta.cpu_model,
        meta.started,
        if meta.quick { ", quick mode" } else { "" }
    );
    if !meta.devices.is_empty() {
        md.push_str("Devices:\n\n");
        for d in &meta.devices {
            let _ = writeln!(
                md,
                "- {} #{}: {} ({}; driver {}; {}; {:.1} GiB)",
                d.backend.map(|b| b.as_str()).unwrap_or("?"),
                d.index,
                d.name,
                d.platform,
                d.driver_version,
                d.runtime_version,
                d.memory_bytes as f64 / (1u64 << 30) as f64
            );
        }
        md.push('\n');
    }
    for (backend, reason) in &meta.unavailable {
        let _ = writeln!(md, "- {backend}: not run ({reason})");
    }
    for file in run.experiment_files()? {
        let id = file.file_stem().and_then(|s| s.to_str()).unwrap_or("?").to_string();
        match report_experiment(&run, &file, &ctx, run_path, &plots_dir, &mut out, &mut md) {
            Ok(()) => {}
            Err(e) => {
                let _ = writeln!(md, "\n## {id}\n\nNot reported: {e}\n");
                out.not_reported.push((id, e.to_string()));
            }
        }
    }
    let md_path = run_path.join("report.md");
    std::fs::write(&md_path, md).map_err(|source| ReportError::Io { path: md_path.clone(), source })?;
    out.markdown_path = Some(md_path);
    Ok(out)
}

/// One experiment's tables and figures, appended to the Markdown and the terminal text. The
/// stored copy of the experiment is read with schema checks only: files it names (meshes) are
/// not opened again, wherever the report runs.
fn report_experiment(
    run: &RunDir,
    file: &Path,
    ctx: &ReportCtx,
    run_path: &Path,
    plots_dir: &Path,
    out: &mut ReportOutput,
    md: &mut String,
) -> Result<(), ReportError> {
    let exp =
        crate::benchmark::load_with(file, crate::benchmark::Checks::SchemaOnly).map_err(|e| ReportError::Experiment(e.to_string()))?;
    let Some(rows) = run.read_experiment(exp.id())? else { return Ok(()) };
    let items = exp.report(&rows, ctx)?;
    for item in &items {
        if let ReportItem::Table(t) = item {
            if let Some(r) = t.rows.iter().find(|r| r.len() != t.header.len()) {
                return Err(ReportError::Experiment(format!(
                    "table {}: a row has {} cells for {} columns",
                    t.name,
                    r.len(),
                    t.header.len()
                )));
            }
        }
    }
    let _ = writeln!(md, "\n## {}\n", exp.id());
    for item in items {
        match item {
            ReportItem::Table(t) => {
                out.terminal.push_str(&t.to_terminal());
                out.terminal.push('\n');
                md.push_str(&t.to_markdown());
                md.push('\n');
            }
            ReportItem::Figure(f) => {
                std::fs::create_dir_all(plots_dir).map_err(|source| ReportError::Io { path: plots_dir.to_path_buf(), source })?;
                let paths = figure::draw(&f, plots_dir)?;
                if let Some(svg) = paths.first() {
                    let rel = pathdiff(svg, run_path);
                    let _ = writeln!(md, "![{}]({})\n", f.title, rel);
                }
                out.figure_paths.extend(paths);
            }
        }
    }
    if let Some(t) = failures_table(exp.id(), &rows)? {
        out.terminal.push_str(&t.to_terminal());
        out.terminal.push('\n');
        md.push_str(&t.to_markdown());
        md.push('\n');
    }
    Ok(())
}

/// Every failed case of an experiment with its reason: a wrong answer or a method that cannot
/// run is a result too.
fn failures_table(id: &str, rows: &polars::prelude::DataFrame) -> Result<Option<Table>, ReportError> {
    let status = frame::strs(rows, "status")?;
    let (case, backend, device, precision, reason) = (
        frame::strs(rows, "case_id")?,
        frame::strs(rows, "backend")?,
        frame::strs(rows, "device")?,
        frame::strs(rows, "precision")?,
        frame::strs(rows, "reason")?,
    );
    let failed: Vec<Vec<String>> = (0..rows.height())
        .filter(|&i| status[i] == "failed")
        .map(|i| vec![case[i].clone(), backend[i].clone(), device[i].clone(), precision[i].clone(), reason[i].clone()])
        .collect();
    if failed.is_empty() {
        return Ok(None);
    }
    Ok(Some(Table {
        name: format!("{id}-failures"),
        title: format!("Failed cases of {id} ({})", failed.len()),
        header: ["case", "backend", "device", "precision", "reason"].map(String::from).to_vec(),
        rows: failed,
        notes: vec![],
    }))
}

/// A path relative to `base` when both are relative to the same root, else the path as given.
fn pathdiff(path: &Path, base: &Path) -> String {
    let (Ok(p), Ok(b)) = (path.canonicalize(), base.canonicalize()) else {
        return path.display().to_string();
    };
    let pc: Vec<_> = p.components().collect();
    let bc: Vec<_> = b.components().collect();
    let common = pc.iter().zip(&bc).take_while(|(a, b)| a == b).count();
    let mut rel = PathBuf::new();
    for _ in common..bc.len() {
        rel.push("..");
    }
    for c in &pc[common..] {
        rel.push(c);
    }
    rel.display().to_string()
}

/// Formats a number with a sensible number of significant digits for tables.
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a == 0.0 {
        "0".into()
    } else {
        format!("{v:.3e}")
    }
}
