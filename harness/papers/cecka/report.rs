//! Tables and figures of the Cecka et al. experiments, from stored rows only.

use std::collections::BTreeMap;

use polars::prelude::DataFrame;

use super::paper::*;
use crate::report::{fmt_num, frame, Figure, ReportError, Series, Table};

/// The columns the Cecka reports read.
pub(crate) struct Rows {
    pub(crate) backend: Vec<String>,
    pub(crate) device: Vec<String>,
    pub(crate) precision: Vec<String>,
    pub(crate) method: Vec<String>,
    pub(crate) level: Vec<f64>,
    pub(crate) order: Vec<f64>,
    pub(crate) status: Vec<String>,
    pub(crate) mode: Vec<String>,
    pub(crate) time: Vec<f64>,
    pub(crate) gbs: Vec<f64>,
    pub(crate) table6: Vec<f64>,
    pub(crate) elements: Vec<f64>,
    pub(crate) nodes: Vec<f64>,
    pub(crate) colors_used: Vec<f64>,
    pub(crate) setup: Vec<f64>,
    pub(crate) threads: Vec<f64>,
    pub(crate) ci_low: Vec<f64>,
    pub(crate) ci_high: Vec<f64>,
}

impl Rows {
    pub(crate) fn read(df: &DataFrame) -> Result<Self, ReportError> {
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
    pub(crate) fn ok(&self, i: usize) -> bool {
        self.ok_any_mode(i) && self.mode[i] != "cold"
    }
    pub(crate) fn ok_any_mode(&self, i: usize) -> bool {
        self.status[i] == "ok" && self.time[i].is_finite()
    }
}

pub(crate) fn table6(id: &str, r: &Rows) -> Table {
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

pub(crate) fn fmt_count(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.0}K", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

pub(crate) fn timings_table(id: &str, r: &Rows) -> Table {
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

pub(crate) fn dummy_speedup(id: &str, r: &Rows) -> Vec<Figure> {
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

pub(crate) fn winners_table(id: &str, r: &Rows) -> Table {
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
pub(crate) fn figure_by(id: &str, r: &Rows, what: &str, x: impl Fn(usize) -> f64, x_label: &str, log_x: bool) -> Vec<Figure> {
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
