//! A run's report: every stored experiment's tables and figures, rendered, with the run's
//! devices and its failed cases. Reads rows, never measures.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use polars::prelude::*;
use rayon::prelude::*;

use crate::benchmark::Checks;
use crate::registry::Registry;
use crate::report::{figure, frame, ReportCtx, ReportError, ReportItem, Table};
use crate::results::RunDir;

/// What `harness report` wrote.
#[derive(Debug, Default)]
pub struct ReportOutput {
    pub terminal: String,
    pub markdown_path: Option<PathBuf>,
    pub figure_paths: Vec<PathBuf>,
    /// Experiments whose report failed, with the reason; the others are still written.
    pub not_reported: Vec<(String, String)>,
}

/// The folder, inside a report's folder, that holds its figures (SVG and PNG).
pub const FIGURES: &str = "figures";

/// Builds every table and figure of a run folder into the run folder itself: `report.md`, with
/// its figures in `figures/` beside it.
pub fn report_run(registry: &Registry, run_path: &Path) -> Result<ReportOutput, ReportError> {
    report_run_with(registry, run_path, None, None)
}

/// [`report_run`], into `out` instead of the run folder (a read-only run, a second copy of a
/// report) where given; and where `outputs_from` (a folder of experiment files) is given, each
/// experiment takes the `outputs:` block (which tables and figures) of its namesake there: a
/// stored run then gets tables added since it was measured. Everything else, and every row,
/// stays the run's own. Links in the report are relative: the report's folder can move.
pub fn report_run_with(
    registry: &Registry,
    run_path: &Path,
    out: Option<&Path>,
    outputs_from: Option<&Path>,
) -> Result<ReportOutput, ReportError> {
    let run = RunDir::open(run_path)?;
    let meta = run.read_meta()?;
    let files = run.experiment_files()?;
    if files.iter().all(|f| f.file_stem().and_then(|s| s.to_str()).map_or(true, |id| !run.has_rows(id))) {
        return Err(ReportError::Experiment(format!("{}: the run has no rows to report", run_path.display())));
    }
    let ctx = ReportCtx { meta: meta.clone(), copy_gbs: copy_ceilings(run.read_experiment("device-bandwidth")?.as_ref()) };
    let report_dir = out.unwrap_or(run_path);
    let figures_dir = report_dir.join(FIGURES);
    let mut md = header(&meta);
    // Experiments are reported side by side (drawing figures is most of the time), then
    // written in order.
    let parts: Vec<(String, Result<(ReportOutput, String), ReportError>)> = files
        .par_iter()
        .map(|file| {
            let id = file.file_stem().and_then(|s| s.to_str()).unwrap_or("?").to_string();
            (id, report_experiment(registry, &run, file, outputs_from, &ctx, &figures_dir))
        })
        .collect();
    let mut report = ReportOutput::default();
    for (id, r) in parts {
        match r {
            Ok((part, text)) => {
                md.push_str(&text);
                report.terminal.push_str(&part.terminal);
                report.figure_paths.extend(part.figure_paths);
            }
            Err(e) => {
                let _ = writeln!(md, "\n## {id}\n\nNot reported: {e}\n");
                report.not_reported.push((id, e.to_string()));
            }
        }
    }
    let md_path = report_dir.join("report.md");
    crate::results::write_file_atomic(&md_path, md.as_bytes())?;
    report.markdown_path = Some(md_path);
    Ok(report)
}

/// The report's first lines: the run, its commit and host, and its devices.
fn header(meta: &crate::results::RunMeta) -> String {
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
    if let Some(commit) = meta.git_commit.strip_suffix("-dirty") {
        let _ = writeln!(
            md,
            "**Provenance:** the binary was built from commit {commit} with uncommitted changes in the tree; its rows cannot be tied to a committed source.\n"
        );
    }
    if !meta.devices.is_empty() {
        md.push_str("Devices:\n\n");
        for d in &meta.devices {
            let _ = writeln!(
                md,
                "- {} #{}: {} ({}; driver {}; {}; {:.1} GiB{})",
                d.backend.map(|b| b.as_str()).unwrap_or("?"),
                d.index,
                d.name,
                d.platform,
                d.driver_version,
                d.runtime_version,
                d.memory_bytes as f64 / (1u64 << 30) as f64,
                d.uuid.as_deref().map(|u| format!("; {u}")).unwrap_or_default()
            );
        }
        md.push('\n');
    }
    for (backend, reason) in &meta.unavailable {
        let _ = writeln!(md, "- {backend}: not run ({reason})");
    }
    md
}

/// One experiment's tables and figures: its terminal text and figures, and its Markdown. The
/// stored copy of the experiment is read with schema checks only: files it names (meshes) are
/// not opened again, wherever the report runs.
fn report_experiment(
    registry: &Registry,
    run: &RunDir,
    file: &Path,
    outputs_from: Option<&Path>,
    ctx: &ReportCtx,
    figures_dir: &Path,
) -> Result<(ReportOutput, String), ReportError> {
    let (mut out, mut md) = (ReportOutput::default(), String::new());
    let bad = |e: String| ReportError::Experiment(e);
    let mut text = std::fs::read_to_string(file).map_err(|source| ReportError::Io { path: file.to_path_buf(), source })?;
    if let Some(current) = outputs_from.and_then(|d| file.file_name().map(|n| d.join(n))).filter(|p| p.is_file()) {
        let theirs = std::fs::read_to_string(&current).map_err(|source| ReportError::Io { path: current.clone(), source })?;
        text = with_outputs_of(&text, &theirs);
    }
    let exp = registry.load_text(file, text, Checks::SchemaOnly).map_err(|e| bad(e.to_string()))?;
    let Some(rows) = run.read_experiment(exp.id())? else { return Ok((out, md)) };
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
    if let Some(note) = shared_host_note(&rows) {
        let _ = writeln!(md, "{note}\n");
    }
    for item in items {
        match item {
            ReportItem::Table(t) => {
                out.terminal.push_str(&t.to_terminal());
                out.terminal.push('\n');
                md.push_str(&t.to_markdown());
                md.push('\n');
            }
            ReportItem::Figure(f) => {
                std::fs::create_dir_all(figures_dir).map_err(|source| ReportError::Io { path: figures_dir.to_path_buf(), source })?;
                let paths = figure::draw(&f, figures_dir)?;
                let _ = writeln!(md, "![{}]({FIGURES}/{}.svg)\n", f.title, f.name);
                out.figure_paths.extend(paths);
            }
        }
    }
    let above = crate::report::physics::breaches(&rows, ctx)?;
    for t in crate::report::physics::table(exp.id(), &above)
        .into_iter()
        .chain(status_table(exp.id(), &rows, "failed")?)
        .chain(status_table(exp.id(), &rows, "infeasible")?)
    {
        out.terminal.push_str(&t.to_terminal());
        out.terminal.push('\n');
        md.push_str(&t.to_markdown());
        md.push('\n');
    }
    Ok((out, md))
}

/// Where rows of an experiment were timed while other GPU workers shared the host (`harness run
/// --gpus`): how many, and what that means for reading them. None for a run of one worker.
fn shared_host_note(rows: &DataFrame) -> Option<String> {
    let workers = frame::nums(rows, "concurrent_workers").ok()?;
    // `concurrent_workers` counts the other workers beside the row's own.
    let most = workers.iter().copied().filter(|w| w.is_finite()).fold(0.0f64, f64::max);
    let shared = workers.iter().filter(|&&w| w > 0.0).count();
    (shared > 0).then(|| {
        format!(
            "{shared} rows of this experiment were measured while up to {most:.0} other GPU workers shared the host: their device-event kernels of 50 µs or more are undisturbed, but shorter kernels, library calls, host-clocked stages, transfers and open regions among them may read slower than on a host of their own (`compare` gives those no verdict against a run of another worker count)."
        )
    })
}

/// Every case of an experiment with `status` (`failed`: a wrong answer or a method that broke;
/// `infeasible`: a case that cannot run as the file asks), with its reason: a result too.
fn status_table(id: &str, rows: &DataFrame, status: &str) -> Result<Option<Table>, ReportError> {
    const COLUMNS: [&str; 5] = ["case_id", "backend", "device", "precision", "reason"];
    let failed = rows
        .clone()
        .lazy()
        .filter(col("status").eq(lit(status)))
        .select(COLUMNS.map(col))
        .collect()
        .map_err(|e| ReportError::Column { column: "status".into(), detail: e.to_string() })?;
    if failed.height() == 0 {
        return Ok(None);
    }
    let columns = COLUMNS.iter().map(|c| frame::strs(&failed, c)).collect::<Result<Vec<_>, _>>()?;
    let (name, title) = match status {
        "infeasible" => ("infeasible", format!("Cases of {id} that cannot run by construction ({})", failed.height())),
        _ => ("failures", format!("Failed cases of {id} ({})", failed.height())),
    };
    Ok(Some(Table {
        name: format!("{id}-{name}"),
        title,
        header: ["case", "backend", "device", "precision", "reason"].map(String::from).to_vec(),
        rows: (0..failed.height()).map(|i| columns.iter().map(|c| c[i].clone()).collect()).collect(),
        notes: vec![],
    }))
}

/// The copy ceilings from a run's `device-bandwidth` rows: per (device, backend, precision), the
/// copy kernel's GB/s at its largest array (empty when the run has none).
pub fn copy_ceilings(rows: Option<&polars::prelude::DataFrame>) -> Vec<(String, String, String, f64)> {
    use polars::prelude::*;
    let Some(df) = rows else { return Vec::new() };
    let copy = df
        .clone()
        .lazy()
        .filter(col("status").eq(lit("ok")).and(col("kernel").eq(lit("copy"))))
        .sort(["array_mib"], SortMultipleOptions::default().with_order_descending(true))
        .group_by_stable([col("device"), col("backend"), col("precision")])
        .agg([col("bandwidth_gbs").first()])
        .collect();
    let Ok(copy) = copy else { return Vec::new() };
    let (Ok(d), Ok(b), Ok(p), Ok(g)) =
        (frame::strs(&copy, "device"), frame::strs(&copy, "backend"), frame::strs(&copy, "precision"), frame::nums(&copy, "bandwidth_gbs"))
    else {
        return Vec::new();
    };
    (0..copy.height()).map(|i| (d[i].clone(), b[i].clone(), p[i].clone(), g[i])).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_timed_beside_other_workers_get_a_note_and_a_run_of_one_worker_none() {
        let df = crate::report::frame::of_columns(3, vec![], vec![("concurrent_workers", vec![0.0, 3.0, f64::NAN])]).unwrap();
        let note = shared_host_note(&df).unwrap();
        assert!(note.starts_with("1 rows") && note.contains("up to 3 other GPU workers"), "{note}");
        let one = crate::report::frame::of_columns(2, vec![], vec![("concurrent_workers", vec![0.0, 0.0])]).unwrap();
        assert!(shared_host_note(&one).is_none());
        let none = crate::report::frame::of_columns(1, vec![("status", vec!["ok".into()])], vec![]).unwrap();
        assert!(shared_host_note(&none).is_none());
    }

    #[test]
    fn the_ceiling_is_the_copy_kernel_at_the_largest_array_per_device_backend_and_precision() {
        let df = df! {
            "device" => ["G", "G", "G", "G", "G", "G"],
            "backend" => ["cuda", "cuda", "cuda", "cuda", "opencl", "cuda"],
            "precision" => ["f64", "f64", "f64", "f64", "f64", "f32"],
            "kernel" => ["copy", "copy", "triad", "copy", "copy", "copy"],
            "array_mib" => [4i64, 512, 1024, 1024, 64, 16],
            "status" => ["ok", "ok", "ok", "failed", "ok", "ok"],
            "bandwidth_gbs" => [2000.0, 4100.0, 4300.0, 9999.0, 3500.0, 3000.0],
        }
        .unwrap();
        let mut c = copy_ceilings(Some(&df));
        c.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let s = |v: &str| v.to_string();
        assert_eq!(
            c,
            vec![(s("G"), s("cuda"), s("f32"), 3000.0), (s("G"), s("cuda"), s("f64"), 4100.0), (s("G"), s("opencl"), s("f64"), 3500.0)]
        );
        assert!(copy_ceilings(None).is_empty());
    }
}

/// The top-level `outputs:` block of a YAML text: from its line to the next top-level key.
fn outputs_block(text: &str) -> Option<(usize, usize)> {
    let mut start = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let top = line.chars().next().is_some_and(|c| !c.is_whitespace() && c != '#');
        match start {
            None if line.starts_with("outputs:") => start = Some(offset),
            Some(s) if top => return Some((s, offset)),
            _ => {}
        }
        offset += line.len();
    }
    start.map(|s| (s, text.len()))
}

/// `stored` with its `outputs:` block replaced by `current`'s (added if it had none).
pub fn with_outputs_of(stored: &str, current: &str) -> String {
    let Some((a, b)) = outputs_block(current) else { return stored.to_string() };
    let block = &current[a..b];
    match outputs_block(stored) {
        Some((s, e)) => format!("{}{}{}", &stored[..s], block, &stored[e..]),
        None => format!("{}{}{}", stored, if stored.ends_with('\n') { "" } else { "\n" }, block),
    }
}

#[cfg(test)]
mod outputs_tests {
    use super::with_outputs_of;

    #[test]
    fn only_the_outputs_block_is_taken_from_the_current_file() {
        let stored = "id: a\nsweep:\n  n: [1]\noutputs:\n  tables: [t]\nquick:\n  sweep:\n    n: [1]\n";
        let current = "id: a\nsweep:\n  n: [1, 2, 3]\noutputs:\n  tables: [t, claims]\n  figures: [f]\n";
        assert_eq!(
            with_outputs_of(stored, current),
            "id: a\nsweep:\n  n: [1]\noutputs:\n  tables: [t, claims]\n  figures: [f]\nquick:\n  sweep:\n    n: [1]\n"
        );
        assert_eq!(with_outputs_of("id: a\n", current), "id: a\noutputs:\n  tables: [t, claims]\n  figures: [f]\n");
        assert_eq!(with_outputs_of(stored, "id: a\n"), stored);
    }
}
