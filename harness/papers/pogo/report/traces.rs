//! The full runs' reports, from stored rows only: Table 2's explicit stepping time for the
//! paper's full number of increments (f64, with f32 in brackets) beside the paper's, and the
//! receivers' traces (Figs 8 and 13) with their discrepancy (Figs 9, 11(c)): the device's f64
//! against the CPU f64 reference over the window the CPU ran, and f32 (and K' in f32) against
//! f64 over the whole run.

use polars::prelude::*;

use crate::pogo::paper;
use crate::pogo::spec::Method;
use crate::report::{fmt_num, frame, Figure, ReportError, Series, Table};

/// What names a row (device, backend, precision, method, model and size), with its median
/// time: the part every Pogo report reads.
#[derive(Default)]
pub(crate) struct Ident {
    pub device: Vec<String>,
    pub backend: Vec<String>,
    pub precision: Vec<String>,
    pub method: Vec<String>,
    pub model: Vec<String>,
    pub dofs: Vec<f64>,
    pub time: Vec<f64>,
}

impl Ident {
    pub(crate) fn read(ok: &DataFrame) -> Result<Self, ReportError> {
        Ok(Ident {
            device: frame::strs(ok, "device")?,
            backend: frame::strs(ok, "backend")?,
            precision: frame::strs(ok, "precision")?,
            method: frame::strs(ok, "method")?,
            model: frame::strs(ok, "model")?,
            dofs: frame::nums(ok, "dofs")?,
            time: frame::nums(ok, "time_median_s")?,
        })
    }
    /// The row of `[device, backend, precision, method, model]` at `dofs`.
    pub(crate) fn find(&self, key: [&str; 5], dofs: f64) -> Option<usize> {
        (0..self.time.len()).find(|&i| {
            [&self.device[i], &self.backend[i], &self.precision[i], &self.method[i], &self.model[i]] == key && self.dofs[i] == dofs
        })
    }
}

/// Numeric columns by name.
pub(crate) fn numbers(ok: &DataFrame, names: &[&'static str]) -> Result<std::collections::HashMap<&'static str, Vec<f64>>, ReportError> {
    names.iter().map(|&c| Ok((c, frame::nums(ok, c)?))).collect()
}

#[derive(Default)]
pub(crate) struct Full {
    id: Ident,
    num: std::collections::HashMap<&'static str, Vec<f64>>,
    trace: Vec<Vec<f64>>,
    reference: Vec<Vec<f64>>,
}

const NUMS: [&str; 9] =
    ["timed_steps", "increments", "window_steps", "window_cpu_s", "error", "trace_error", "trace_stride", "receivers", "dt"];

pub(crate) fn read(df: &DataFrame) -> Result<Full, ReportError> {
    if df.column("trace").is_err() {
        return Ok(Full::default());
    }
    let ok = frame::collect(
        frame::with_optional(df, &NUMS, crate::pogo::spec::COLUMNS)?
            .filter(col("status").eq(lit("ok")).and(col("metric").eq(lit("full-run")))),
    )?;
    Ok(Full {
        id: Ident::read(&ok)?,
        num: numbers(&ok, &NUMS)?,
        trace: frame::lists(&ok, "trace")?,
        reference: frame::lists(&ok, "reference_trace")?,
    })
}

impl Full {
    fn n(&self, c: &str, i: usize) -> f64 {
        self.num.get(c).map_or(f64::NAN, |v| v[i])
    }
    /// Each (device, backend, model, dofs) with full runs, in order.
    fn groups(&self) -> Vec<(String, String, String, f64)> {
        let id = &self.id;
        let mut v: Vec<_> =
            (0..id.time.len()).map(|i| (id.device[i].clone(), id.backend[i].clone(), id.model[i].clone(), id.dofs[i])).collect();
        v.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)).then(a.3.total_cmp(&b.3)));
        v.dedup();
        v
    }
    /// A figure name's size suffix where a model has full runs at several sizes (the arrival
    /// check beside the paper-size run): "-120k" for 120,000 DOFs; none where it has one.
    fn size_tag(&self, g: &(String, String, String, f64)) -> String {
        let sizes = self.groups().iter().filter(|o| (&o.0, &o.1, &o.2) == (&g.0, &g.1, &g.2)).count();
        if sizes > 1 {
            format!("-{:.0}k", g.3 / 1e3)
        } else {
            String::new()
        }
    }
    fn find(&self, g: &(String, String, String, f64), method: &str, precision: &str) -> Option<usize> {
        self.id.find([&g.0, &g.1, precision, method, &g.2], g.3)
    }
}

/// One full run's check against the CPU f64 window.
pub(crate) struct Checked {
    pub device: String,
    pub backend: String,
    pub precision: String,
    pub method: String,
    pub model: String,
    pub dofs: f64,
    /// max |dU| at the receivers over the window, over the largest CPU displacement there.
    pub trace_error: f64,
    pub window_steps: f64,
    /// Increments the run went through (the model's, or fewer where the experiment caps it).
    pub steps_run: f64,
    pub increments: f64,
    pub dt: f64,
}

impl Full {
    /// Every full run's check.
    pub(crate) fn checks(&self) -> Vec<Checked> {
        let id = &self.id;
        (0..id.time.len())
            .map(|i| Checked {
                device: id.device[i].clone(),
                backend: id.backend[i].clone(),
                precision: id.precision[i].clone(),
                method: id.method[i].clone(),
                model: id.model[i].clone(),
                dofs: id.dofs[i],
                trace_error: self.n("trace_error", i),
                window_steps: self.n("window_steps", i),
                steps_run: self.n("timed_steps", i),
                increments: self.n("increments", i),
                dt: self.n("dt", i),
            })
            .collect()
    }
}

/// Table 2 as measured: the full runs' stepping times beside the paper's.
pub(crate) fn table(id: &str, f: &Full) -> Table {
    // A run of fewer steps than the model's increments is extrapolated linearly to them (*).
    let scale = |i: usize| (f.n("increments", i) / f.n("timed_steps", i)).max(1.0);
    let full_time = |i: usize| f.id.time[i] * scale(i);
    let secs = |i: Option<usize>| i.map_or("-".to_string(), |i| format!("{:.2}{}", full_time(i), if scale(i) > 1.0 { "*" } else { "" }));
    let rows = f
        .groups()
        .iter()
        .map(|g| {
            let (d64, d32, kf) = (
                f.find(g, Method::SELL.as_str(), "f64"),
                f.find(g, Method::SELL.as_str(), "f32"),
                f.find(g, Method::SELL_KF32.as_str(), "f64"),
            );
            let (a64, a32) = (f.find(g, Method::POGO_ALIGNED.as_str(), "f64"), f.find(g, Method::POGO_ALIGNED.as_str(), "f32"));
            let any = d64.or(d32).or(kf).or(a64).or(a32).expect("a group has a row");
            let p = paper::model(&g.2);
            let paper_pair = |t: Option<(f64, f64)>| t.map_or("-".to_string(), |(a, b)| format!("{a} ({b})"));
            vec![
                format!("{} {}", g.0, g.1),
                g.2.clone(),
                format!("{:.3}", g.3 / 1e6),
                if scale(any) > 1.0 {
                    format!("{} of {}*", fmt_num(f.n("timed_steps", any)), fmt_num(f.n("increments", any)))
                } else {
                    fmt_num(f.n("timed_steps", any))
                },
                format!("{} ({})", secs(d64), secs(d32)),
                secs(kf),
                format!("{} ({})", secs(a64), secs(a32)),
                paper_pair(p.map(|p| p.step_aligned_s)),
                match (p, a64) {
                    (Some(p), Some(i)) => format!("{:.1}", p.step_aligned_s.0 / full_time(i)),
                    _ => "-".into(),
                },
                paper_pair(p.map(|p| p.step_greedy_s)),
                match (p, d64) {
                    (Some(p), Some(i)) => format!("{:.1}", p.step_greedy_s.0 / full_time(i)),
                    _ => "-".into(),
                },
                format!("{} in {:.1} s", fmt_num(f.n("window_steps", any)), f.n("window_cpu_s", any)),
                d64.map_or("-".into(), |i| format!("{:.1e}", f.n("error", i))),
                d64.map_or("-".into(), |i| format!("{:.1e}", f.n("trace_error", i))),
                d32.map_or("-".into(), |i| format!("{:.1e}", f.n("trace_error", i))),
            ]
        })
        .collect();
    Table {
        name: format!("{id}-full-runs"),
        title: "The full runs (Table 2): explicit stepping time for the paper's number of increments, measured".into(),
        header: [
            "device",
            "model",
            "DOFs (M)",
            "increments",
            "sell f64 (f32) s",
            "sell-kf32 s",
            "pogo-aligned f64 (f32) s",
            "paper aligned f64 (f32) s",
            "paper aligned f64 / pogo-aligned",
            "paper greedy f64 (f32) s",
            "paper greedy f64 / ours",
            "CPU window (steps)",
            "f64: U error at window end",
            "f64: trace discrepancy",
            "f32: trace discrepancy",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        notes: vec![
            "Every increment from rest at t = 0, one device-event region around the launches before the CPU window's end and one after it (the gate open: the host queues the launches while the GPU runs); the receivers are recorded at every step. Paper: Pogo on a GTX580 (Table 2), not the same GPU.".into(),
            "pogo-aligned: the paper's kernel on our aligned partition after section 3.2's arrangement; the paper's aligned column is the same method on its meshes and a GTX580.".into(),
            "*: the run stopped after the stated increments (the experiment's `full_run.steps`), and its time is extrapolated linearly to the model's increments; the checks cover the steps run.".into(),
            "CPU window: the CPU f64 reference (Eq. (4) on K', rayon) over the first steps; U error: ||U - U_cpu|| / ||U_cpu|| at its end, the row's check (bound: u rho N^2 with the precision's u, at most 0.1). Trace discrepancy: the paper's max sqrt(dux^2 + duy^2) at the receivers over the window, over the largest CPU displacement there.".into(),
        ],
    }
}

/// Time of stored sample j of row i, in the unit [`time_unit`] picks.
fn time_of(f: &Full, i: usize, j: usize) -> f64 {
    j as f64 * f.n("trace_stride", i) * f.n("dt", i) * time_unit(f, i).0
}

/// Microseconds for the weld's 40 us, seconds for the geophysical 5 s: the factor and label.
fn time_unit(f: &Full, i: usize) -> (f64, &'static str) {
    if f.n("timed_steps", i) * f.n("dt", i) < 1e-3 {
        (1e6, "t (us)")
    } else {
        (1.0, "t (s)")
    }
}

/// The largest |value| of a trace (1 where it is all zero).
fn peak(v: &[f64]) -> f64 {
    let p = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    if p > 0.0 {
        p
    } else {
        1.0
    }
}

/// Figs 8 and 13: each receiver's x and y displacement from the device's f64 full run, with the
/// CPU reference over its window.
pub(crate) fn trace_figures(id: &str, f: &Full) -> Vec<Figure> {
    let mut out = Vec::new();
    for g in f.groups() {
        let Some(i) = f.find(&g, Method::SELL.as_str(), "f64").or_else(|| f.find(&g, Method::SELL.as_str(), "f32")) else { continue };
        let width = 2 * f.n("receivers", i) as usize;
        // Displacements in units of a power of ten near the peak, so the axis reads.
        let scale = 10f64.powi(peak(&f.trace[i]).log10().floor() as i32);
        let mut series = Vec::new();
        for r in 0..width {
            let axis = if r % 2 == 0 { "x" } else { "y" };
            let points = |v: &[f64]| v.chunks(width.max(1)).enumerate().map(|(j, c)| (time_of(f, i, j), c[r] / scale)).collect::<Vec<_>>();
            series.push(Series {
                label: format!("receiver {} u{axis}, {} {}", r / 2 + 1, f.id.method[i], f.id.precision[i]),
                points: points(&f.trace[i]),
                reference: false,
            });
            // The CPU values as crosses, at most about 300 of them: over a whole run (the
            // arrival check) every step's cross would bury the traces.
            let reference = points(&f.reference[i]);
            let every = reference.len().div_ceil(300).max(1);
            series.push(Series {
                label: format!("receiver {} u{axis}, CPU f64 (every {every} steps)", r / 2 + 1),
                points: reference.into_iter().step_by(every).collect(),
                reference: true,
            });
        }
        out.push(Figure {
            name: format!("{id}-traces-{}-{}{}", g.2, g.1, f.size_tag(&g)),
            title: format!("{} model: displacement at the receivers ({} {}, {:.2}M DOFs)", g.2, g.0, g.1, g.3 / 1e6),
            x_label: time_unit(f, i).1.into(),
            y_label: format!("displacement (x {scale:.0e} m, for a force of unit amplitude)"),
            log_x: false,
            log_y: false,
            series,
        });
    }
    out
}

/// Figs 9 and 11(c): the discrepancy sqrt(dux^2 + duy^2) at each receiver, the device's f64
/// against the CPU over the window, and f32 storage against f64 over the whole run.
pub(crate) fn discrepancy_figures(id: &str, f: &Full) -> Vec<Figure> {
    // Before the wave arrives the traces differ by 1e-30 and less: drawn at a floor, so that the
    // log axis spans the range that matters (f64 round-off and up).
    const FLOOR: f64 = 1e-16;
    let mut out = Vec::new();
    for g in f.groups() {
        let Some(i) = f.find(&g, Method::SELL.as_str(), "f64") else { continue };
        let width = 2 * f.n("receivers", i) as usize;
        let top = peak(&f.trace[i]);
        let diff = |a: &[f64], b: &[f64], r: usize| -> Vec<(f64, f64)> {
            a.chunks(width.max(1))
                .zip(b.chunks(width.max(1)))
                .enumerate()
                .map(|(j, (p, q))| (time_of(f, i, j), ((p[2 * r] - q[2 * r]).hypot(p[2 * r + 1] - q[2 * r + 1]) / top).max(FLOOR)))
                .collect()
        };
        let mut series = Vec::new();
        for r in 0..width / 2 {
            series.push(Series {
                label: format!("receiver {}: sell f64 - CPU f64", r + 1),
                points: diff(&f.trace[i], &f.reference[i], r),
                reference: false,
            });
            for (m, p) in [(Method::SELL.as_str(), "f32"), (Method::SELL_KF32.as_str(), "f64")] {
                if let Some(k) = f.find(&g, m, p) {
                    let label =
                        if m == Method::SELL.as_str() { "sell f32 - sell f64".to_string() } else { "sell-kf32 - sell f64".to_string() };
                    series.push(Series {
                        label: format!("receiver {}: {label}", r + 1),
                        points: diff(&f.trace[k], &f.trace[i], r),
                        reference: false,
                    });
                }
            }
        }
        out.push(Figure {
            name: format!("{id}-discrepancy-{}-{}{}", g.2, g.1, f.size_tag(&g)),
            title: format!("{} model: discrepancy sqrt(dux^2 + duy^2) at the receivers ({} {})", g.2, g.0, g.1),
            x_label: time_unit(f, i).1.into(),
            y_label: "discrepancy / largest |u| of the f64 trace (floor 1e-16)".into(),
            log_x: false,
            log_y: true,
            series,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of fewer steps than the model's increments is extrapolated and marked; a complete
    /// run is shown as measured.
    #[test]
    fn a_shortened_full_run_is_extrapolated_and_marked() {
        let mut f = Full::default();
        for (model, time, steps, increments) in [("gear", 2.0, 25_000.0, 500_000.0), ("weld", 3.0, 40_000.0, 40_000.0)] {
            for (k, v) in [("device", "H200"), ("backend", "cuda"), ("precision", "f64"), ("method", "sell"), ("model", model)] {
                let col = match k {
                    "device" => &mut f.id.device,
                    "backend" => &mut f.id.backend,
                    "precision" => &mut f.id.precision,
                    "method" => &mut f.id.method,
                    _ => &mut f.id.model,
                };
                col.push(v.into());
            }
            f.id.dofs.push(1e6);
            f.id.time.push(time);
            for c in NUMS {
                let v = match c {
                    "timed_steps" => steps,
                    "increments" => increments,
                    _ => 1.0,
                };
                f.num.entry(c).or_default().push(v);
            }
            f.trace.push(Vec::new());
            f.reference.push(Vec::new());
        }
        let t = table("pogo", &f);
        let gear = t.rows.iter().find(|r| r[1] == "gear").unwrap();
        assert_eq!(gear[4], "40.00* (-)", "{gear:?}");
        assert!(gear[3].contains("of") && gear[3].ends_with('*'), "{gear:?}");
        // The paper's greedy f64 time over ours, extrapolated: 1588 / 40.
        assert_eq!(gear[10], "39.7");
        let weld = t.rows.iter().find(|r| r[1] == "weld").unwrap();
        assert_eq!(weld[4], "3.00 (-)", "{weld:?}");
        assert!(!weld[3].contains('*'));
    }
}
