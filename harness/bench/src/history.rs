//! `harness history RUN...`: one static HTML page of how an experiment's headline rows moved
//! over a series of runs (in the order they started), with inline SVG charts, the changes that
//! `compare` would call marked, and a link to each run's report. No server, no script, no
//! network: the page is one file to open or publish beside the runs.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::compare::{self, CompareOptions, Verdict};
use crate::results::{RunDir, RunMeta};

/// Rows drawn per experiment: the longest device-event kernels of the newest run.
pub const HEADLINE_ROWS: usize = 6;

/// One run on the page.
struct Run {
    dir: PathBuf,
    meta: RunMeta,
}

/// One row's medians and intervals over the runs (None where a run lacks it), and the verdict
/// of each run against the one before it.
struct Line {
    name: String,
    points: Vec<Option<(f64, f64, f64)>>,
    verdicts: Vec<Option<Verdict>>,
}

/// Writes the page for `runs` to `out`; returns how many charts it drew.
pub fn write_history(runs: &[PathBuf], out: &Path) -> Result<usize, compare::CompareError> {
    let mut list: Vec<Run> = runs
        .iter()
        .map(|d| Ok(Run { dir: d.clone(), meta: RunDir::open(d)?.read_meta()? }))
        .collect::<Result<_, compare::CompareError>>()?;
    list.sort_by(|a, b| a.meta.started.cmp(&b.meta.started));
    let experiments = shared_experiments(&list);
    let mut html = page_head(&list, out);
    let mut charts = 0;
    for exp in &experiments {
        let lines = lines_of(&list, exp)?;
        if lines.is_empty() {
            continue;
        }
        let _ = writeln!(html, "<h2>{}</h2>", escape(exp));
        for line in &lines {
            html.push_str(&chart(line, &list));
            charts += 1;
        }
    }
    html.push_str("</body>\n</html>\n");
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| crate::results::ResultsError::Io { path: dir.to_path_buf(), source })?;
    }
    crate::results::write_file_atomic(out, html.as_bytes())?;
    Ok(charts)
}

/// The experiments every run holds, in order.
fn shared_experiments(runs: &[Run]) -> Vec<String> {
    let Some(first) = runs.first() else { return Vec::new() };
    first
        .meta
        .experiments
        .iter()
        .map(|e| e.id.clone())
        .filter(|id| runs.iter().all(|r| r.meta.experiments.iter().any(|e| &e.id == id)))
        .collect()
}

/// The headline rows of an experiment over the runs, with each step's verdict by the rule of
/// `compare` (each run against the one before it, the earlier runs as its history).
fn lines_of(runs: &[Run], experiment: &str) -> Result<Vec<Line>, compare::CompareError> {
    let mut steps: Vec<BTreeMap<String, compare::Entry>> = Vec::new();
    for i in 1..runs.len() {
        let opts = CompareOptions {
            experiments: vec![experiment.to_string()],
            force: true,
            history: runs[..i].iter().map(|r| r.dir.clone()).collect(),
            ..Default::default()
        };
        let c = compare::compare_runs(&runs[i - 1].dir, &runs[i].dir, &opts)?;
        steps.push(c.entries.into_iter().map(|e| (e.name(), e)).collect());
    }
    let newest = match steps.last() {
        Some(s) => s.values().filter_map(|e| e.new.as_ref().and_then(|n| n.median_s).map(|m| (e, m))).collect::<Vec<_>>(),
        None => return Ok(Vec::new()),
    };
    let mut heads: Vec<(&compare::Entry, f64)> =
        newest.into_iter().filter(|(e, _)| e.class == compare::noise::NoiseClass::Kernel).collect();
    heads.sort_by(|a, b| b.1.total_cmp(&a.1));
    let names: Vec<String> = heads.iter().take(HEADLINE_ROWS).map(|(e, _)| e.name()).collect();
    Ok(names
        .into_iter()
        .map(|name| {
            let side_point = |s: &compare::Side| s.median_s.map(|m| (m, s.ci_low_s.unwrap_or(m), s.ci_high_s.unwrap_or(m)));
            let mut points = vec![steps[0].get(&name).and_then(|e| e.base.as_ref()).and_then(side_point)];
            let mut verdicts = vec![None];
            for s in &steps {
                let e = s.get(&name);
                points.push(e.and_then(|e| e.new.as_ref()).and_then(side_point));
                verdicts.push(e.map(|e| e.verdict));
            }
            Line { name, points, verdicts }
        })
        .collect())
}

fn page_head(runs: &[Run], out: &Path) -> String {
    let mut h = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>fembench history</title>\n<style>\n\
         body { font-family: sans-serif; margin: 2em; color: #222; }\n\
         table { border-collapse: collapse; } td, th { padding: 2px 8px; border-bottom: 1px solid #ddd; text-align: left; }\n\
         svg { display: block; margin: 1em 0; }\n</style>\n</head>\n<body>\n<h1>fembench history</h1>\n",
    );
    h.push_str("<p>Each chart is one row's median over the runs, with its 95% interval; a red point is a run that <code>harness compare</code> calls slower than the run before it, a green one faster (the row's between-run envelope applied).</p>\n");
    h.push_str("<table>\n<tr><th>#</th><th>run</th><th>commit</th><th>started</th><th>device</th></tr>\n");
    let base = out.parent().unwrap_or(Path::new("."));
    for (i, r) in runs.iter().enumerate() {
        let report = r.dir.join("report.md");
        let name = escape(&r.meta.run_id);
        let cell = if report.is_file() { format!("<a href=\"{}\">{name}</a>", escape(&relative(&report, base))) } else { name };
        let device = r
            .meta
            .devices
            .iter()
            .find(|d| d.backend.map(|b| b.as_str()) != Some("cpu"))
            .or(r.meta.devices.first())
            .map(|d| d.name.clone())
            .unwrap_or_default();
        let _ = writeln!(
            h,
            "<tr><td>{i}</td><td>{cell}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&r.meta.git_commit),
            escape(&r.meta.started),
            escape(&device)
        );
    }
    h.push_str("</table>\n");
    h
}

/// One row's chart: median and interval per run, the changes marked.
fn chart(line: &Line, runs: &[Run]) -> String {
    const W: f64 = 720.0;
    const H: f64 = 220.0;
    const L: f64 = 70.0;
    const B: f64 = 30.0;
    let values: Vec<f64> = line.points.iter().flatten().flat_map(|&(m, lo, hi)| [m, lo, hi]).filter(|v| v.is_finite()).collect();
    let (lo, hi) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
    let pad = ((hi - lo) * 0.1).max(hi.abs() * 0.02).max(1e-12);
    let (lo, hi) = (lo - pad, hi + pad);
    let n = runs.len().max(2) as f64;
    let x = |i: usize| L + (W - L - 20.0) * i as f64 / (n - 1.0);
    let y = |v: f64| 10.0 + (H - B - 10.0) * (1.0 - (v - lo) / (hi - lo));
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" role=\"img\">\n<title>{}</title>\n",
        escape(&line.name)
    );
    let _ = writeln!(s, "<text x=\"{L}\" y=\"{}\" font-size=\"12\">{}</text>", H - 4.0, escape(&line.name));
    for frac in [0.0, 0.5, 1.0] {
        let v = lo + frac * (hi - lo);
        let _ = writeln!(
            s,
            "<line x1=\"{L}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{} µs</text>",
            W - 20.0,
            L - 6.0,
            y(v) + 4.0,
            crate::report::figure::tick_label(v * 1e6),
            y = y(v)
        );
    }
    let path: Vec<String> =
        line.points.iter().enumerate().filter_map(|(i, p)| p.map(|(m, _, _)| format!("{:.1},{:.1}", x(i), y(m)))).collect();
    let _ = writeln!(s, "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"{}\"/>", path.join(" "));
    for (i, p) in line.points.iter().enumerate() {
        let Some((m, a, b)) = p else { continue };
        let colour = match line.verdicts[i] {
            Some(Verdict::Slower | Verdict::Regression) => "#d62728",
            Some(Verdict::Faster) => "#2ca02c",
            _ => "#1f77b4",
        };
        let _ = writeln!(
            s,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{colour}\"/><circle cx=\"{x:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"{colour}\"><title>run {i}: {} µs</title></circle><text x=\"{x:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"middle\">{i}</text>",
            y(*a),
            y(*b),
            y(*m),
            crate::report::fmt_num(m * 1e6),
            H - B + 12.0,
            x = x(i)
        );
    }
    s.push_str("</svg>\n");
    s
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// `path` relative to `base` (both made absolute first), for a link that survives moving both.
fn relative(path: &Path, base: &Path) -> String {
    let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (p, b) = (abs(path), abs(base));
    let pc: Vec<_> = p.components().collect();
    let bc: Vec<_> = b.components().collect();
    let common = pc.iter().zip(&bc).take_while(|(x, y)| x == y).count();
    let mut rel = PathBuf::new();
    for _ in common..bc.len() {
        rel.push("..");
    }
    for c in &pc[common..] {
        rel.push(c);
    }
    rel.display().to_string()
}
