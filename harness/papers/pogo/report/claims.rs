//! Huthwaite's claims (Secs. 4-6, Tables 2 and 4, Figs. 9, 11, 13), judged per GPU and model at
//! the largest size the run holds. Each claim quotes the paper; the rules are in the functions
//! below. Every Pogo report carries this ledger.

use super::traces::Full;
use super::Rows;
use crate::benchmark::{Report, Spec};
use crate::pogo::paper;
use crate::pogo::spec::Method;
use crate::report::claims::{self, Claim, Need, Order, Quote, Timed, Verdict};
use crate::report::{fmt_num, ReportCtx, Table};
use crate::report::{ReportError, ReportItem};
use polars::prelude::DataFrame;

/// One GPU (device, backend) and model at its largest size.
struct At<'a> {
    r: &'a Rows,
    device: String,
    backend: String,
    model: String,
    dofs: f64,
}

impl At<'_> {
    fn row(&self, method: &str, precision: &str) -> Option<usize> {
        self.r.id.find([&self.device, &self.backend, precision, method, &self.model], self.dofs)
    }

    fn timed(&self, method: &str, precision: &str) -> Option<Timed> {
        self.row(method, precision).map(|i| Timed::new(self.r.id.time[i], self.r.lo[i], self.r.hi[i]))
    }

    fn claim(&self, quote: Quote, rule: String, verdict: Verdict, measured: String, rests: &str) -> Claim {
        Claim {
            on: format!("{} {}", self.device, self.backend),
            quote,
            rule,
            verdict,
            measured,
            rests_on: format!("{} model, {:.3}M DOFs: {rests}", self.model, self.dofs / 1e6),
        }
    }
}

pub(crate) fn claims(id: &str, r: &Rows, full: &Full, ctx: &ReportCtx) -> Table {
    let mut out = Vec::new();
    for (device, backend, model, dofs) in r.largest_on_gpus() {
        let at = At { r, device, backend, model, dofs };
        out.extend(precision_halves(&at));
        out.extend(aligned_steps_faster(&at));
        out.extend(greedy_blocker_faster(&at));
        out.extend(efficiencies(&at));
        out.extend(bandwidth_bound(&at, ctx));
        out.extend(against_cpu(&at, ctx));
        out.push(abaqus(&at));
        out.extend(discrepancy(&at, full));
    }
    claims::table(
        id,
        out,
        vec!["Judged at the largest size of each model the run holds; step times are device-event medians of 100 steps. Blocker times are host-clocked (one thread).".into()],
    )
}

/// Sec. 4.4: f32 about half the f64 time (bandwidth-bound): f32/f64 within 0.4-0.65 per method.
fn precision_halves(at: &At) -> Option<Claim> {
    let ratios: Vec<(&str, f64)> = [Method::SELL.as_str(), Method::POGO_ALIGNED.as_str(), Method::POGO_GREEDY.as_str()]
        .into_iter()
        .filter_map(|m| Some((m, at.timed(m, "f32")?.median / at.timed(m, "f64")?.median)))
        .collect();
    if ratios.is_empty() {
        return None;
    }
    let p = paper::model(&at.model);
    let paper_ratio = p.map_or(String::new(), |p| format!("; paper (Table 2, aligned) {:.2}", p.step_aligned_s.1 / p.step_aligned_s.0));
    let held = ratios.iter().filter(|r| (0.4..=0.65).contains(&r.1)).count();
    Some(at.claim(
        Quote::paper(
            "It would therefore appear surprising that the run-times reported in Table 2 approximately halve when using single rather than double precision; the run-times would be expected to reduce far more.",
            "Sec. 4.4, Table 2",
        ),
        format!("per method, the f32 step over the f64 step within 0.4-0.65 ('approximately halve'); {}", Need::All.words()),
        Verdict::of_cases(held, ratios.len(), Need::All),
        format!("f32 / f64: {}{paper_ratio}", ratios.iter().map(|(m, x)| format!("{m} {x:.2}")).collect::<Vec<_>>().join(", ")),
        "sell, pogo-aligned, pogo-greedy steps in f32 and f64",
    ))
}

/// Sec. 4.4: the stepping on the aligned partition always faster than on the greedy one.
fn aligned_steps_faster(at: &At) -> Option<Claim> {
    let cases: Vec<(&str, Order, f64)> = ["f64", "f32"]
        .into_iter()
        .filter_map(|p| {
            let (a, g) = (at.timed(Method::POGO_ALIGNED.as_str(), p)?, at.timed(Method::POGO_GREEDY.as_str(), p)?);
            Some((p, Order::of(a, g), g.median / a.median))
        })
        .collect();
    if cases.is_empty() {
        return None;
    }
    let held = cases.iter().filter(|c| c.1 == Order::Faster).count();
    Some(at.claim(
        Quote::paper(
            "the actual solution stage is always faster using the more efficient aligned partitioning blocker.",
            "Sec. 4.4, Table 2",
        ),
        format!(
            "per precision, pogo-aligned's step faster than pogo-greedy's outside both intervals (a tie is not faster); {}",
            Need::All.words()
        ),
        Verdict::of_cases(held, cases.len(), Need::All),
        format!(
            "greedy / aligned step: {}",
            cases.iter().map(|c| format!("{} {:.3} ({})", c.0, c.2, c.1.as_str())).collect::<Vec<_>>().join(", ")
        ),
        "pogo-aligned and pogo-greedy steps",
    ))
}

/// Sec. 4.4: the greedy blocker around 10x faster than the aligned one (host-clocked).
fn greedy_blocker_faster(at: &At) -> Option<Claim> {
    let i = at.row(Method::POGO_ALIGNED.as_str(), "f64").or_else(|| at.row(Method::SELL.as_str(), "f64"))?;
    let (aligned, greedy) = (at.r.n("aligned_s", i), at.r.n("greedy_s", i));
    if !(aligned.is_finite() && greedy.is_finite() && greedy > 0.0) {
        return None;
    }
    let x = aligned / greedy;
    let block_s = |blocker: &str| paper::TABLE2.iter().find(|t| t.0 == at.model && t.1 == blocker).map(|t| t.2);
    let paper = match (block_s("aligned"), block_s("greedy")) {
        (Some(a), Some(g)) => format!(" (paper, Table 2: {a} s / {g} s = {:.1}x)", a / g),
        _ => String::new(),
    };
    Some(at.claim(
        Quote::paper(
            "It is clear that the greedy blocker is significantly faster than the aligned blocker, typically by a factor of around 10.",
            "Sec. 4.4, Table 2",
        ),
        "aligned blocker time over greedy blocker time: holds at 5x or more ('around 10'), partly above 1x, fails at 1x or less".into(),
        if x >= 5.0 {
            Verdict::Holds
        } else if x > 1.0 {
            Verdict::Partly
        } else {
            Verdict::Fails
        },
        format!("aligned {} s, greedy {} s: {}x{paper}", fmt_num(aligned), fmt_num(greedy), fmt_num(x)),
        "the blockers' times of the model as built (one host thread each)",
    ))
}

/// The sentence says the greedy blocker's efficiency is likely lower than the aligned one's: judged
/// on that order alone in the model as built (the efficiencies are counts, with no spread);
/// Table 2's values are printed beside ours, labelled, and are not part of the rule.
fn efficiencies(at: &At) -> Option<Claim> {
    let p = paper::model(&at.model)?;
    let i = at.row(Method::POGO_ALIGNED.as_str(), "f64").or_else(|| at.row(Method::SELL.as_str(), "f64"))?;
    let (a, g) = (100.0 * at.r.n("aligned_eta", i), 100.0 * at.r.n("greedy_eta", i));
    if !(a.is_finite() && g.is_finite()) {
        return None;
    }
    Some(at.claim(
        Quote::paper(
            "It is expected that a higher proportion of blocks produced with the greedy blocker will be poorly formed compared to the aligned partitioner, and therefore efficiency associated with the greedy partitioner is likely to be lower.",
            "Sec. 3.2; Table 2's efficiencies",
        ),
        "the greedy blocker's efficiency eta below the aligned blocker's".to_string(),
        if g < a { Verdict::Holds } else { Verdict::Fails },
        format!("aligned {a:.1}%, greedy {g:.1}% (paper's Table 2: aligned {:.1}%, greedy {:.1}%)", p.eta_aligned, p.eta_greedy),
        "the blockers' partitions of the model as built",
    ))
}

/// Table 4: close to the GPU's peak bandwidth: pogo-aligned's GB/s by its own bytes at least 80%
/// of the same run's copy; the paper's count beside, labelled.
fn bandwidth_bound(at: &At, ctx: &ReportCtx) -> Option<Claim> {
    let i = at.row(Method::POGO_ALIGNED.as_str(), "f64")?;
    let copy = ctx.copy_gbs(&at.device, &at.backend, "f64")?;
    let own = at.r.gbs[i];
    let paper_count = at.r.n("paper_bytes", i) / at.r.id.time[i] / 1e9;
    Some(at.claim(
        Quote::paper(
            "None the less these uncertainties are relatively small and it is clear that the algorithm is close to extracting the peak performance of the GPU.",
            "Sec. 4.4, Table 4 (184-197 GB/s on a GTX580 of 192.4 GB/s)",
        ),
        "pogo-aligned f64: GB/s by its own compulsory bytes at least 80% of the same run's copy GB/s (the paper's Appendix A count is shown, not judged)".into(),
        Verdict::of_bool(own >= 0.8 * copy),
        format!(
            "own bytes {} GB/s = {:.0}% of copy {} GB/s; paper's count {} GB/s ({:.0}%)",
            fmt_num(own),
            100.0 * own / copy,
            fmt_num(copy),
            fmt_num(paper_count),
            100.0 * paper_count / copy
        ),
        "pogo-aligned f64 step and the run's device-bandwidth copy",
    ))
}

/// Sec. 4.4: an optimised, bandwidth-bound CPU code would be only "around 16" times slower: the
/// ratio of the two bandwidths. Here: our GPU step over our rayon CPU step, against the ratio of
/// the two copy bandwidths of the same run.
fn against_cpu(at: &At, ctx: &ReportCtx) -> Option<Claim> {
    let gpu = at.timed(Method::POGO_ALIGNED.as_str(), "f64")?;
    let (cpu_device, cpu) = (0..at.r.id.time.len())
        .find(|&i| {
            at.r.id.method[i] == Method::CPU_PARALLEL.as_str()
                && at.r.id.precision[i] == "f64"
                && at.r.id.model[i] == at.model
                && at.r.id.dofs[i] == at.dofs
        })
        .map(|i| (at.r.id.device[i].clone(), at.r.id.time[i]))?;
    let (gpu_copy, cpu_copy) = (ctx.copy_gbs(&at.device, &at.backend, "f64")?, ctx.copy_gbs(&cpu_device, "cpu", "f64")?);
    let (x, ratio) = (cpu / gpu.median, gpu_copy / cpu_copy);
    Some(at.claim(
        Quote::paper(
            "The Nehalem-based 5500 Xeon processor should be able to achieve a bandwidth of 12 GB/s; if this was fully utilised by the CPU version then the GPU would enable a speedup of around 16, rather than the 100–200 achieved compared to Abaqus.",
            "Sec. 4.4",
        ),
        "the GPU f64 step's speed-up over the rayon f64 CPU step within 0.5-2x of the two devices' copy-bandwidth ratio (the paper's argument: both bandwidth-bound)".into(),
        Verdict::of_bool((0.5..=2.0).contains(&(x / ratio))),
        format!(
            "cpu-parallel {} us / pogo-aligned {} us = {}x; copy {} / {} GB/s = {}x (paper: 192.4 / 12 = 16x)",
            fmt_num(cpu * 1e6),
            fmt_num(gpu.median * 1e6),
            fmt_num(x),
            fmt_num(gpu_copy),
            fmt_num(cpu_copy),
            fmt_num(ratio)
        ),
        "pogo-aligned and cpu-parallel f64 steps, both devices' copy",
    ))
}

fn abaqus(at: &At) -> Claim {
    at.claim(
        Quote::paper(
            "a set of three of typical problems from non-destructive testing, engineering and geophysics were shown to run 100–200 times faster than that of a commercial CPU equivalent, Abaqus.",
            "Sec. 5, Table 2",
        ),
        "not judged: Abaqus is commercial and not part of fembench; the bandwidth-bound CPU claim is the comparison we can make".into(),
        Verdict::NotMeasured,
        paper::model(&at.model).map_or("-".into(), |p| format!("paper: Abaqus {} s against Pogo {} s stepping", fmt_num(p.abaqus_s), fmt_num(p.step_aligned_s.0))),
        "no rows",
    )
}

/// A simulated time span in a readable unit: "5 us", "0.48 s".
fn span_of(s: f64) -> String {
    if s < 1e-3 {
        format!("{} us", fmt_num(s * 1e6))
    } else {
        format!("{} s", fmt_num(s))
    }
}

/// The paper's discrepancy against Abaqus, relative to the signal, per model (Figs. 9, 11, 13).
fn paper_discrepancy(model: &str) -> Option<(Quote, f64)> {
    match model {
        "weld" => Some((
            Quote::paper(
                "Fig. 9 calculates the error in displacement between Pogo and Abaqus for the two measurement locations, illustrating that this is around five orders of magnitude below the actual values.",
                "Sec. 4.1, Fig. 9",
            ),
            1e-5,
        )),
        "gear" => Some((
            Quote::paper("This is fairly high, up to 4×10^{-13} , compared to the signals themselves which are around 2×10^{-11}", "Sec. 4.2, Fig. 11"),
            2e-2,
        )),
        "geophysical" => Some((
            Quote::paper(
                "In this example the traces are shown to match well, and the discrepancy between the time traces for the two models is around three orders of magnitude less than the displacements.",
                "Sec. 4.3, Fig. 13",
            ),
            1e-3,
        )),
        _ => None,
    }
}

/// Figs. 9, 11, 13: the f64 full runs' discrepancy at the receivers (the methods in f64
/// throughout: K' stored in f32 is a different operator), relative to the largest
/// CPU displacement there, at most the paper's level. The window the CPU reference covers is
/// part of the verdict: judged on the runs it covers whole (the arrival check) where there are
/// any; over the start of a run only, at most partly.
fn discrepancy(at: &At, full: &Full) -> Option<Claim> {
    let (quote, level) = paper_discrepancy(&at.model)?;
    let mut checks: Vec<_> = full
        .checks()
        .into_iter()
        .filter(|c| {
            c.device == at.device
                && c.backend == at.backend
                && c.model == at.model
                && c.precision == "f64"
                && !c.method.ends_with("kf32")
                && c.trace_error.is_finite()
        })
        .collect();
    if checks.is_empty() {
        return None;
    }
    checks.sort_by(|a, b| a.dofs.total_cmp(&b.dofs).then(a.method.cmp(&b.method)));
    let whole = |c: &&super::traces::Checked| c.window_steps >= c.steps_run;
    let judged: Vec<_> = if checks.iter().any(|c| whole(&c)) { checks.iter().filter(whole).collect() } else { checks.iter().collect() };
    let below = judged.iter().all(|c| c.trace_error <= level);
    let verdict = match (below, judged.iter().all(whole)) {
        (true, true) => Verdict::Holds,
        (true, false) => Verdict::Partly,
        (false, _) => Verdict::Fails,
    };
    let line = |c: &super::traces::Checked| {
        let model = if c.steps_run < c.increments { format!(" (the model has {})", fmt_num(c.increments)) } else { String::new() };
        format!(
            "{} at {:.3}M DOFs: {:.1e} over {} of {} increments run{model} ({} of {})",
            c.method,
            c.dofs / 1e6,
            c.trace_error,
            fmt_num(c.window_steps),
            fmt_num(c.steps_run),
            span_of(c.window_steps * c.dt),
            span_of(c.steps_run * c.dt)
        )
    };
    Some(Claim {
        rests_on: format!("{} model: the f64 full runs' receivers against the CPU f64 reference ({} runs)", at.model, checks.len()),
        ..at.claim(
            quote,
            format!("max |dU| at the receivers over the largest CPU displacement there, at most the paper's level ({level:.0e}, against Abaqus; ours is against our f64 CPU reference), judged on the runs the CPU checks over every increment where there are any: holds if all are below; partly if only the start of a run is checked"),
            verdict,
            checks.iter().map(line).collect::<Vec<_>>().join("; "),
            "",
        )
    })
}

/// The report side: tables and figures from a run's rows, never a device.
impl Report for crate::pogo::benchmark::PogoStepping {
    fn report(spec: &Spec<Self>, rows: &DataFrame, ctx: &ReportCtx) -> Result<Vec<ReportItem>, ReportError> {
        let mut items = super::report(&spec.id, &spec.outputs, rows, ctx)?;
        // Every report carries Tables 2 and 4 beside ours and the paper's ledger, whatever the
        // experiment's outputs list.
        let (r, full) = (super::read(rows)?, super::traces::read(rows)?);
        items.push(ReportItem::Table(super::paper_tables::beside_ours(&spec.id, &r, ctx)));
        items.push(ReportItem::Table(super::claims::claims(&spec.id, &r, &full, ctx)));
        Ok(items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::frame;

    /// Step rows of the weld at one size: (method, precision, microseconds a step), with the
    /// blockers' seconds and efficiencies.
    fn table(rows: &[(&str, &str, f64)], aligned_s: f64) -> Table {
        let n = rows.len();
        let strs = vec![
            ("status", vec!["ok".into(); n]),
            ("metric", vec!["step".into(); n]),
            ("device", vec!["GPU".into(); n]),
            ("backend", vec!["cuda".into(); n]),
            ("precision", rows.iter().map(|r| r.1.to_string()).collect()),
            ("method", rows.iter().map(|r| r.0.to_string()).collect()),
            ("model", vec!["weld".into(); n]),
        ];
        let nums = vec![
            ("dofs", vec![1.9e6; n]),
            ("time_median_s", rows.iter().map(|r| r.2 * 1e-6).collect()),
            ("aligned_s", vec![aligned_s; n]),
            ("greedy_s", vec![1.0; n]),
            ("aligned_eta", vec![0.96; n]),
            ("greedy_eta", vec![0.89; n]),
        ];
        let df = frame::of_columns(n, strs, nums).unwrap();
        let r = crate::pogo::report::read(&df).unwrap();
        claims("x", &r, &Full::default(), &ReportCtx { meta: Default::default(), copy_gbs: vec![] })
    }

    fn verdict(t: &Table, needle: &str) -> String {
        t.rows.iter().find(|r| r[1].contains(needle)).unwrap_or_else(|| panic!("{needle}: {:?}", t.rows))[3].clone()
    }

    #[test]
    fn the_ledger_follows_the_rows() {
        let rows = [
            ("sell", "f64", 80.0),
            ("sell", "f32", 44.0),
            ("pogo-aligned", "f64", 86.0),
            ("pogo-aligned", "f32", 54.0),
            ("pogo-greedy", "f64", 90.0),
            ("pogo-greedy", "f32", 58.0),
        ];
        let t = table(&rows, 12.0);
        // f32/f64: 0.55, 0.65, 0.64: approximately half.
        assert_eq!(verdict(&t, "approximately halve"), "holds");
        assert_eq!(verdict(&t, "always faster using the more efficient"), "holds");
        assert_eq!(verdict(&t, "factor of around 10"), "holds");
        assert_eq!(verdict(&t, "likely to be lower"), "holds");
        assert_eq!(verdict(&t, "Abaqus."), "not measured");
        // The greedy step as fast as the aligned one, f32 as slow as f64, and a greedy blocker
        // only 2x faster: those claims no longer hold.
        let rows = [("sell", "f64", 80.0), ("sell", "f32", 79.0), ("pogo-aligned", "f64", 86.0), ("pogo-greedy", "f64", 86.0)];
        let t = table(&rows, 2.0);
        assert_eq!(verdict(&t, "approximately halve"), "fails");
        assert_eq!(verdict(&t, "always faster using the more efficient"), "fails");
        assert_eq!(verdict(&t, "factor of around 10"), "partly");
    }
}
