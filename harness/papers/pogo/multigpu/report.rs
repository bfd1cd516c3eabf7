//! The multi-GPU study's tables and figures, from stored rows only: time per increment against
//! GPUs with speed-up and parallel efficiency against the same run's one-GPU row, the halo and
//! the exchange's share; the arrival checks; the goals judged with the tie rule.

use polars::prelude::*;

use super::spec::{FigureName, Outputs, TableName};
use crate::benchmark::{Report, Spec};
use crate::report::claims::{self, Claim, Quote, Verdict};
use crate::report::{fmt_num, frame, Figure, ReportCtx, ReportError, ReportItem, Series, Table};

const NUMS: [&str; 16] = [
    "gpus",
    "check_steps",
    "dofs",
    "dofs_per_gpu",
    "time_median_s",
    "time_ci_low_s",
    "time_ci_high_s",
    "halo_bytes",
    "exchange_s",
    "compute_s",
    "host_s",
    "vs_one_gpu",
    "error",
    "trace_error",
    "increments",
    "bandwidth_gbs",
];

/// The study's verified rows: identity strings and numbers by column.
struct Rows {
    key: Vec<String>,
    study: Vec<String>,
    num: std::collections::HashMap<&'static str, Vec<f64>>,
}

impl Rows {
    fn n(&self, c: &str, i: usize) -> f64 {
        self.num.get(c).map_or(f64::NAN, |v| v[i])
    }
    fn len(&self) -> usize {
        self.key.len()
    }
    /// The row of `key` and `study` on `gpus`.
    fn find(&self, key: &str, study: &str, gpus: f64) -> Option<usize> {
        (0..self.len()).find(|&i| self.key[i] == key && self.study[i] == study && self.n("gpus", i) == gpus)
    }
    /// Each (key, study) with its rows by GPU count, ascending.
    fn groups(&self, study: &str) -> Vec<(String, Vec<usize>)> {
        let mut keys: Vec<String> = (0..self.len()).filter(|&i| self.study[i] == study).map(|i| self.key[i].clone()).collect();
        keys.sort();
        keys.dedup();
        keys.into_iter()
            .map(|k| {
                let mut v: Vec<usize> = (0..self.len()).filter(|&i| self.key[i] == k && self.study[i] == study).collect();
                v.sort_by(|&a, &b| self.n("gpus", a).total_cmp(&self.n("gpus", b)));
                (k, v)
            })
            .collect()
    }
}

fn read(df: &DataFrame, metric: &str) -> Result<Rows, ReportError> {
    let ok = frame::collect(
        frame::with_optional(df, &NUMS, super::spec::COLUMNS)?.filter(col("status").eq(lit("ok")).and(col("metric").eq(lit(metric)))),
    )?;
    let (device, backend, precision, method) =
        (frame::strs(&ok, "device")?, frame::strs(&ok, "backend")?, frame::strs(&ok, "precision")?, frame::strs(&ok, "method")?);
    let key = (0..ok.height()).map(|i| format!("{} {} {} {}", device[i], backend[i], method[i], precision[i])).collect();
    let mut num = std::collections::HashMap::new();
    for c in NUMS {
        num.insert(c, frame::nums(&ok, c)?);
    }
    Ok(Rows { key, study: frame::strs(&ok, "study")?, num })
}

pub fn report(id: &str, outputs: &Outputs, df: &DataFrame, _ctx: &ReportCtx) -> Result<Vec<ReportItem>, ReportError> {
    let steps = read(df, "increment")?;
    let arrival = read(df, "arrival")?;
    let mut out = Vec::new();
    for t in &outputs.tables {
        out.push(ReportItem::Table(match t {
            TableName::Scaling => scaling_table(id, &steps),
            TableName::Arrival => arrival_table(id, &arrival),
        }));
    }
    for f in &outputs.figures {
        out.push(ReportItem::Figure(match f {
            FigureName::Time => time_figure(id, &steps),
            FigureName::Efficiency => efficiency_figure(id, &steps),
        }));
    }
    out.push(ReportItem::Table(goals(id, &steps, &arrival)));
    Ok(out)
}

/// Speed-up and efficiency of row i against the one-GPU row of its group, with their
/// intervals from the two rows' (speed-up lo = T1 lo / TP hi). Strong: speed-up T1/TP,
/// efficiency T1/(P TP); weak: efficiency T1/TP (the work grows with P).
fn efficiency(r: &Rows, i: usize, one: usize, weak: bool) -> (f64, [f64; 3]) {
    let p = r.n("gpus", i);
    let t = |j: usize| claims::Timed::new(r.n("time_median_s", j), r.n("time_ci_low_s", j), r.n("time_ci_high_s", j));
    let (a, b) = (t(one), t(i));
    let speed = [a.median / b.median, a.lo / b.hi, a.hi / b.lo];
    let scale = if weak { 1.0 } else { p };
    (speed[0], speed.map(|s| s / scale))
}

/// The difference from the one-GPU run: "-" on one GPU (the run the others are compared with)
/// and where none could be made.
fn vs_one_gpu_cell(r: &Rows, i: usize) -> String {
    let v = r.n("vs_one_gpu", i);
    if r.n("gpus", i) > 1.0 && v.is_finite() {
        format!("{v:.1e}")
    } else {
        "-".into()
    }
}

fn gpus_cell(g: f64) -> String {
    format!("{}", g as usize)
}

fn scaling_table(id: &str, r: &Rows) -> Table {
    let mut rows = Vec::new();
    for study in STEP_STUDIES {
        for (key, idx) in r.groups(study) {
            let one = r.find(&key, study, 1.0);
            for &i in &idx {
                let (speed, eff) = one.map_or((f64::NAN, [f64::NAN; 3]), |o| efficiency(r, i, o, study == "weak"));
                let time = r.n("time_median_s", i);
                let exch = r.n("exchange_s", i);
                rows.push(vec![
                    key.clone(),
                    study.into(),
                    gpus_cell(r.n("gpus", i)),
                    fmt_num(r.n("dofs", i)),
                    fmt_num(r.n("dofs_per_gpu", i)),
                    format!(
                        "{} [{}, {}]",
                        fmt_num(time * 1e6),
                        fmt_num(r.n("time_ci_low_s", i) * 1e6),
                        fmt_num(r.n("time_ci_high_s", i) * 1e6)
                    ),
                    if study != "weak" { format!("{speed:.2}x") } else { "-".into() },
                    format!("{:.0}% [{:.0}, {:.0}]", eff[0] * 100.0, eff[1] * 100.0, eff[2] * 100.0),
                    fmt_num(r.n("halo_bytes", i) / 1e3),
                    fmt_num(exch * 1e6),
                    fmt_num(r.n("compute_s", i) * 1e6),
                    fmt_num(r.n("host_s", i) * 1e6),
                    if exch.is_finite() { format!("{:.0}%", 100.0 * exch / time) } else { "-".into() },
                    fmt_num(r.n("bandwidth_gbs", i)),
                    vs_one_gpu_cell(r, i),
                ]);
            }
        }
    }
    Table {
        name: format!("{id}-scaling"),
        title: "Time per increment on 1, 2 and 4 GPUs: speed-up and efficiency against the same run's one GPU".into(),
        header: [
            "device backend method precision",
            "study",
            "GPUs",
            "DOFs",
            "DOFs per GPU",
            "us per increment [CI]",
            "speed-up",
            "efficiency [CI]",
            "halo kB / increment",
            "exchange alone (us)",
            "steps alone (us)",
            "host enqueue (us)",
            "exchange / increment",
            "GB/s per GPU (busiest)",
            "vs one GPU",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        notes: [
            "Models: strong and weak, the weld (2 DOFs a node); strong-3d, a steel cube of eight-node hexahedra beyond the paper (3 DOFs a node, 27 node links, lumped mass, bottom face held), on the sliced ELL only (the paper's kernel is 2D).",
            "Each GPU steps its part of the model (METIS k-way on the node graph) with our sliced-ELL kernel (sell, sell-kf32) or with the paper's kernel on the part's aligned blocks, arranged as section 3.2 does, its halo in blocks that are loaded and never stepped (pogo-aligned). On several GPUs an increment forks: the rows or blocks a GPU sends, their packing and the NCCL exchange of their U (and, for the paper's kernel, the unpacking of the halo into its two planes) go on a second stream of the device's highest priority, while the interior rows or blocks run on the GPU's own stream; the next increment waits for both. One process drives every GPU (ncclCommInitAll, grouped sends and receives); NVLink multicast is off (NCCL_NVLS_ENABLE=0).",
            "Times: the slowest GPU's device events around `timed_steps` increments (an open region: the host enqueues while the GPUs run), medians of the repetitions with their 95% CI, per increment. Speed-up T1/TP; efficiency T1/(P TP) (strong, strong-3d: one model) or T1/TP (weak: the same DOFs per GPU); their intervals take the two rows' CI ends.",
            "Exchange alone and steps alone: the same increments with only the NCCL exchange, or only the steps, each in its own open region (median of 3; open regions spread 5-25% between runs, so steps alone can read above the whole increment); their sum over the increment's time is what the overlap hides. Host enqueue: the host's time to enqueue an increment on every GPU (one thread; median of the repetitions): where it nears the time per increment, the host sets the pace. Halo: the values that cross between GPUs per increment.",
            "vs one GPU: the largest difference of U after the checked increments from the one-GPU run of the same model, over its largest value (0: equal to the bit; the row fails above 1e-12). Every row is also checked against the CPU f64 reference (column 'error' in the rows).",
            "GB/s per GPU: the busiest part's bytes (its K' links without padding, U counted once a node, C') over the time, held by the physics check to 105% of one GPU's copy bandwidth. The step reads nearly all of its bytes and writes U only, so it can pass the copy kernel (which writes half of its bytes); device-bandwidth's read-only dot kernel is its nearer ceiling.",
        ]
        .map(String::from)
        .to_vec(),
    }
}

fn arrival_table(id: &str, r: &Rows) -> Table {
    let mut rows = Vec::new();
    for (key, idx) in r.groups("arrival") {
        for &i in &idx {
            rows.push(vec![
                key.clone(),
                gpus_cell(r.n("gpus", i)),
                fmt_num(r.n("dofs", i)),
                fmt_num(r.n("check_steps", i)),
                format!("{:.2e}", r.n("error", i)),
                format!("{:.2e}", r.n("trace_error", i)),
                vs_one_gpu_cell(r, i),
                fmt_num(r.n("time_median_s", i) * 1e6),
            ]);
        }
    }
    Table {
        name: format!("{id}-arrival"),
        title: "Every increment from rest on 1, 2 and 4 GPUs: the receivers over the main arrival".into(),
        header: ["device backend method precision", "GPUs", "DOFs", "increments", "U vs CPU", "traces vs CPU", "vs one GPU", "us per increment"]
            .map(String::from)
            .to_vec(),
        rows,
        notes: vec![
            "U vs CPU: relative L2 error of U after the last increment against Eq. (4) stepped on the host in f64; traces vs CPU: the paper's discrepancy (Fig. 9) over every increment at every receiver; vs one GPU: the largest difference of U and of the traces from the one-GPU run, over its largest value.".into(),
        ],
    }
}

/// What a figure of `studies` shows, by the studies that have rows: "strong: one weld",
/// "strong-3d: one 3D box", "weak: the same DOFs per GPU".
fn models_of(r: &Rows, studies: &[&str]) -> String {
    let said: Vec<&str> = studies
        .iter()
        .filter(|s| !r.groups(s).is_empty())
        .map(|&s| match s {
            "strong" => "strong: one weld",
            "strong-3d" => "strong-3d: one 3D hexahedral box",
            _ => "weak: the same DOFs per GPU",
        })
        .collect();
    said.join("; ")
}

/// The studies of the timed increments, in the tables' order.
const STEP_STUDIES: [&str; 3] = ["strong", "strong-3d", "weak"];

fn time_figure(id: &str, r: &Rows) -> Figure {
    let mut series = Vec::new();
    for study in ["strong", "strong-3d"] {
        for (key, idx) in r.groups(study) {
            let points: Vec<(f64, f64)> = idx.iter().map(|&i| (r.n("gpus", i), r.n("time_median_s", i) * 1e6)).collect();
            if let Some(&(_, t1)) = points.iter().find(|p| p.0 == 1.0) {
                let ideal = points.iter().map(|&(p, _)| (p, t1 / p)).collect();
                series.push(Series { label: format!("{key} {study} ideal (T1/P)"), points: ideal, reference: true });
            }
            series.push(Series { label: format!("{key} {study}"), points, reference: false });
        }
    }
    Figure {
        name: format!("{id}-time"),
        title: format!("Strong scaling: time per increment against GPUs ({})", models_of(r, &["strong", "strong-3d"])),
        x_label: "GPUs".into(),
        y_label: "us per increment".into(),
        log_x: true,
        log_y: true,
        series,
    }
}

fn efficiency_figure(id: &str, r: &Rows) -> Figure {
    let mut series = Vec::new();
    let mut gpus: Vec<f64> = Vec::new();
    for study in STEP_STUDIES {
        for (key, idx) in r.groups(study) {
            let Some(one) = r.find(&key, study, 1.0) else { continue };
            let points: Vec<(f64, f64)> =
                idx.iter().map(|&i| (r.n("gpus", i), 100.0 * efficiency(r, i, one, study == "weak").1[0])).collect();
            gpus.extend(points.iter().map(|p| p.0));
            series.push(Series { label: format!("{key} {study}"), points, reference: false });
        }
    }
    gpus.sort_by(f64::total_cmp);
    gpus.dedup();
    if !gpus.is_empty() {
        series.push(Series { label: "ideal (100%)".into(), points: gpus.iter().map(|&g| (g, 100.0)).collect(), reference: true });
    }
    Figure {
        name: format!("{id}-efficiency"),
        title: format!("Parallel efficiency against GPUs ({})", models_of(r, &STEP_STUDIES)),
        x_label: "GPUs".into(),
        y_label: "efficiency (%)".into(),
        log_x: false,
        log_y: false,
        series,
    }
}

const STRONG_GOAL: f64 = 0.80;
const WEAK_GOAL: f64 = 0.90;

/// A goal on the largest GPU count a group ran: holds where the efficiency's interval lies at
/// or above the goal, fails where it lies below, a tie (partly) where it straddles it. A goal
/// stated at `at` GPUs is not measured by a run of fewer (its figure is still shown).
fn efficiency_claims(r: &Rows, study: &str, goal: f64, at: Option<f64>, quote: Quote) -> Vec<Claim> {
    let mut out = Vec::new();
    for (key, idx) in r.groups(study) {
        let on = at.map_or("at the most GPUs run".to_string(), |a| format!("on {} GPUs (not measured on fewer)", gpus_cell(a)));
        let rule = format!(
            "efficiency {on}, with its interval: holds if the interval lies at or above {:.0}%, fails if below, partly (a tie) if it straddles",
            goal * 100.0
        );
        let (Some(one), Some(&last)) = (r.find(&key, study, 1.0), idx.last()) else { continue };
        if r.n("gpus", last) <= 1.0 {
            let measured = "no verified row on more than one GPU (skipped or failed: see the rows' reasons)".into();
            let rests_on = format!("{study} rows on 1 GPU");
            out.push(Claim { on: key, quote, rule, verdict: Verdict::NotMeasured, measured, rests_on });
            continue;
        }
        let eff = efficiency(r, last, one, study == "weak").1;
        let short = at.filter(|&a| r.n("gpus", last) < a);
        let verdict = if short.is_some() {
            Verdict::NotMeasured
        } else if eff[1] >= goal {
            Verdict::Holds
        } else if eff[2] < goal {
            Verdict::Fails
        } else {
            Verdict::Partly
        };
        out.push(Claim {
            on: key,
            quote,
            rule,
            verdict,
            measured: format!(
                "{:.0}% [{:.0}, {:.0}] on {} GPUs{}",
                eff[0] * 100.0,
                eff[1] * 100.0,
                eff[2] * 100.0,
                gpus_cell(r.n("gpus", last)),
                short.map_or(String::new(), |a| format!(" (no row on {} GPUs)", gpus_cell(a)))
            ),
            rests_on: format!("{study} rows on 1 and {} GPUs", gpus_cell(r.n("gpus", last))),
        });
    }
    out
}

fn goals(id: &str, steps: &Rows, arrival: &Rows) -> Table {
    let mut c = efficiency_claims(
        steps,
        "strong",
        STRONG_GOAL,
        Some(4.0),
        Quote::goal("strong-scaling efficiency of at least 80% at 4 GPUs on the scaled weld"),
    );
    c.extend(efficiency_claims(
        steps,
        "strong-3d",
        STRONG_GOAL,
        Some(4.0),
        Quote::goal("strong-scaling efficiency of at least 80% at 4 GPUs (the weld's goal, held to the 3D box of 20M+ DOFs as well)"),
    ));
    c.extend(efficiency_claims(steps, "weak", WEAK_GOAL, None, Quote::goal("weak-scaling efficiency of at least 90%")));
    for (key, idx) in arrival.groups("arrival") {
        let multi: Vec<usize> = idx.iter().copied().filter(|&i| arrival.n("gpus", i) > 1.0).collect();
        if multi.is_empty() {
            continue;
        }
        // A row without a one-GPU run to compare with makes the whole claim unmeasured (NaN
        // propagates; f64::max would drop it).
        let worst =
            multi
                .iter()
                .map(|&i| arrival.n("vs_one_gpu", i))
                .fold(0.0f64, |m, v| if m.is_nan() || v.is_nan() { f64::NAN } else { m.max(v) });
        c.push(Claim {
            on: key,
            quote: Quote::goal("the P-GPU run's U and receiver traces equal the one-GPU run's to f64 rounding, over the main arrival"),
            rule: format!("every P-GPU arrival row within {:.0e} of the one-GPU run's largest value", super::rows::ONE_GPU_TOLERANCE),
            verdict: if worst.is_nan() { Verdict::NotMeasured } else { Verdict::of_bool(worst <= super::rows::ONE_GPU_TOLERANCE) },
            measured: format!("largest difference {worst:.1e}"),
            rests_on: format!(
                "{} arrival rows on {} GPUs",
                multi.len(),
                multi.iter().map(|&i| gpus_cell(arrival.n("gpus", i))).collect::<Vec<_>>().join(", ")
            ),
        });
    }
    let mut t = claims::table(id, c, vec![]);
    t.title = "The study's goals on this run".into();
    t
}

/// The report side: tables and figures from a run's rows, never a device.
impl Report for super::PogoScaling {
    fn report(spec: &Spec<Self>, rows: &DataFrame, ctx: &ReportCtx) -> Result<Vec<ReportItem>, ReportError> {
        super::report::report(&spec.id, &spec.outputs, rows, ctx)
    }
}
