//! Banaś et al.'s observations (Sec. 5), judged on a run's rows: the `claims` table of the
//! Banaś experiment, per GPU group (backend, device, precision, cache mode) over the degrees
//! run. Each claim quotes the observation; the rules are in the functions below.

use super::paper::{paper_at, PAPER_GTX580};
use super::plan::Variant;
use super::report::{best_table, gflops_figures, plan_tables, sizes_table, stage_figures, stage_tables};
use super::report::{full_accuracy, Rows, SAME_ACCURACY_PEERS};
use super::spec::{FigureName, TableName};
use crate::benchmark::{Report, Spec};
use crate::report::claims::{self, span, Claim, Need, Order, Quote, Timed, Verdict};
use crate::report::Table;
use crate::report::{ReportCtx, ReportError, ReportItem};
use polars::prelude::DataFrame;

type Group = (String, String, String, String);

/// One GPU group's view of the rows.
struct On<'a> {
    id: &'a str,
    r: &'a Rows,
    g: Group,
    on: String,
    degrees: Vec<i64>,
}

impl On<'_> {
    fn timed(&self, v: &str, metric: &str, d: i64) -> Option<Timed> {
        self.r.find(&self.g, v, metric, d).filter(|&i| self.r.ok(i)).map(|i| self.r.timed(i))
    }

    fn time(&self, v: Variant, metric: &str, d: i64) -> Option<f64> {
        self.timed(v.as_str(), metric, d).map(|t| t.median)
    }

    fn rests(&self, what: &str, n: usize) -> String {
        format!("{}: {what}, p = {} ({n} rows)", self.id, span(&self.degrees))
    }

    /// (degree, a's kernel, b's kernel) over the degrees where both ran.
    fn pairs(&self, a: Variant, b: Variant) -> Vec<(i64, Timed, Timed)> {
        self.degrees.iter().filter_map(|&d| Some((d, self.timed(a.as_str(), "kernel", d)?, self.timed(b.as_str(), "kernel", d)?))).collect()
    }

    /// The fastest of the paper's four variants' kernels per degree.
    fn fastest(&self) -> Vec<(i64, Variant)> {
        self.fastest_of(&Variant::PAPER)
    }

    /// The fastest of `variants`' kernels per degree.
    fn fastest_of(&self, variants: &[Variant]) -> Vec<(i64, Variant)> {
        let mut out = Vec::new();
        for &d in &self.degrees {
            let best = variants.iter().filter_map(|&v| self.time(v, "kernel", d).map(|t| (v, t))).min_by(|a, b| a.1.total_cmp(&b.1));
            if let Some((v, _)) = best {
                out.push((d, v));
            }
        }
        out
    }
}

fn ratio_list(v: &[(i64, f64)]) -> String {
    v.iter().map(|(d, x)| format!("p{d} {x:.2}")).collect::<Vec<_>>().join(", ")
}

/// The median of the finite values (NaN where there are none).
fn median(v: Vec<f64>) -> f64 {
    let finite: Vec<f64> = v.into_iter().filter(|x| x.is_finite()).collect();
    crate::stats::median(&finite)
}

pub(crate) fn claims_table(id: &str, r: &Rows) -> Table {
    let mut out = Vec::new();
    for g in r.gpu_groups() {
        let on = On { id, r, on: format!("{} {} {} ({})", g.1, g.0, g.2, g.3), g, degrees: r.degrees() };
        out.push(shm_slower(&on));
        out.push(reg_nojac_fastest(&on));
        out.push(nojac_more_efficient(&on));
        out.extend(input_transfer_short(&on));
        out.extend(overheads(&on));
        out.extend(against_cublas(&on));
        out.extend(against_cpu(&on));
    }
    claims::table(
        id,
        out,
        vec![
            "Kernel times are medians per launch; a pass is prepare + allocate + upload + kernel + download (Tables 5-7). The CPU reference is f64 and rayon-parallel on every core of the host the run was on; the paper's was one Xeon E5-2670.".into(),
        ],
    )
}

/// Obs. 8: SHM slower than REG, usually (JAC and NOJAC pairs, every degree; ties are no
/// difference).
fn shm_slower(on: &On) -> Claim {
    let pairs: Vec<(i64, Timed, Timed)> =
        [(Variant::ShmJac, Variant::RegJac), (Variant::ShmNojac, Variant::RegNojac)].iter().flat_map(|&(a, b)| on.pairs(a, b)).collect();
    let slower = pairs.iter().filter(|p| Order::of(p.1, p.2) == Order::Slower).count();
    let ratios = |a, b| on.pairs(a, b).iter().map(|p| (p.0, p.1.median / p.2.median)).collect::<Vec<_>>();
    Claim {
        on: on.on.clone(),
        quote: Quote::paper("SHM variants are usually slower than REG versions", "Sec. 5, Obs. 8"),
        rule: format!("per degree and JAC/NOJAC pair, SHM's kernel slower than REG's outside both intervals; {}", Need::Most.words()),
        verdict: Verdict::of_cases(slower, pairs.len(), Need::Most),
        measured: format!(
            "SHM slower in {slower} of {}; kernel SHM/REG JAC: {}; NOJAC: {}",
            pairs.len(),
            ratio_list(&ratios(Variant::ShmJac, Variant::RegJac)),
            ratio_list(&ratios(Variant::ShmNojac, Variant::RegNojac))
        ),
        rests_on: on.rests("kernel stage of the four variants", 2 * pairs.len()),
    }
}

/// Obs. 6: REG_NOJAC the fastest in most cases; a tie with the fastest counts for it.
fn reg_nojac_fastest(on: &On) -> Claim {
    let fastest = on.fastest();
    let agrees = |d: i64, v: Variant| {
        v == Variant::RegNojac
            || match (on.timed(Variant::RegNojac.as_str(), "kernel", d), on.timed(v.as_str(), "kernel", d)) {
                (Some(a), Some(b)) => Order::of(a, b) == Order::Tie,
                _ => false,
            }
    };
    let held = fastest.iter().filter(|f| agrees(f.0, f.1)).count();
    Claim {
        on: on.on.clone(),
        quote: Quote::paper(
            "There is no single kernel being the best for all situations (different orders of approximation, different hardware), although the REG_NOJAC variant is the fastest in most of cases.",
            "Sec. 5, Obs. 6",
        ),
        rule: format!("per degree, REG_NOJAC's kernel is the fastest or ties with the fastest; {}", Need::Most.words()),
        verdict: Verdict::of_cases(held, fastest.len(), Need::Most),
        measured: fastest
            .iter()
            .map(|&(d, v)| format!("p{d}: {}{}", v.as_str(), if v != Variant::RegNojac && agrees(d, v) { " (tie with reg-nojac)" } else { "" }))
            .collect::<Vec<_>>()
            .join(", "),
        rests_on: on.rests("kernel stage of the four variants", 4 * fastest.len()),
    }
}

/// The paper's JAC/NOJAC kernel-time ratio on the GTX580 (Table 6), per degree, REG and SHM.
fn paper_gap() -> Vec<f64> {
    let row = |v: &str| PAPER_GTX580.iter().find(|r| r.0 == v).map(|r| r.1);
    let mut out = Vec::new();
    for (jac, nojac) in [("reg-jac", "reg-nojac"), ("shm-jac", "shm-nojac")] {
        if let (Some(a), Some(b)) = (row(jac), row(nojac)) {
            out.extend((2..=7).filter_map(|d| Some(paper_at(&a, d)? / paper_at(&b, d)?)));
        }
    }
    out
}

/// Obs. 7: NOJAC more efficient than JAC in most cases, as in the paper: NOJAC faster outside
/// the intervals in most pairs, and by a gap of at least a third of the paper's.
fn nojac_more_efficient(on: &On) -> Claim {
    let pairs: Vec<(i64, Timed, Timed)> =
        [(Variant::RegNojac, Variant::RegJac), (Variant::ShmNojac, Variant::ShmJac)].iter().flat_map(|&(a, b)| on.pairs(a, b)).collect();
    let faster = pairs.iter().filter(|p| Order::of(p.1, p.2) == Order::Faster).count();
    let ties = pairs.iter().filter(|p| Order::of(p.1, p.2) == Order::Tie).count();
    let ours = median(pairs.iter().map(|p| p.2.median / p.1.median).collect());
    let paper = median(paper_gap());
    let enough = ours - 1.0 >= (paper - 1.0) / 3.0;
    let verdict = match Verdict::of_cases(faster, pairs.len(), Need::Most) {
        Verdict::Holds if !enough => Verdict::Partly,
        v => v,
    };
    let ratios = |a, b| on.pairs(a, b).iter().map(|p| (p.0, p.2.median / p.1.median)).collect::<Vec<_>>();
    Claim {
        on: on.on.clone(),
        quote: Quote::paper(
            "The option of sending to GPUs, not only reference element shape functions, but also Jacobian terms for all real processed elements and all integration points (NOJAC versions) turned out to be more efficient in most cases than the option of calculating the values on GPUs (JAC variants).",
            "Sec. 5, Obs. 7",
        ),
        rule: format!(
            "holds if NOJAC's kernel is faster than JAC's outside both intervals in more than half the pairs and the median JAC/NOJAC is at least 1 + a third of the paper's gap (GTX580 median {:.2}, Table 6); partly if faster in most but by less, or in some",
            paper
        ),
        verdict,
        measured: format!(
            "NOJAC faster in {faster} of {} ({ties} ties); median JAC/NOJAC {ours:.2} (paper's GTX580 {paper:.2}); REG: {}; SHM: {}",
            pairs.len(),
            ratio_list(&ratios(Variant::RegNojac, Variant::RegJac)),
            ratio_list(&ratios(Variant::ShmNojac, Variant::ShmJac))
        ),
        rests_on: on.rests("kernel stage of the four variants", 2 * pairs.len()),
    }
}

/// Obs. 7, second sentence: the NOJAC input transfer stays much shorter (under half) than the
/// memory set-up and than the output transfer.
fn input_transfer_short(on: &On) -> Option<Claim> {
    let mut cases = Vec::new();
    for v in [Variant::RegNojac, Variant::ShmNojac] {
        for &d in &on.degrees {
            let (Some(up), Some(alloc), Some(down)) = (on.time(v, "upload", d), on.time(v, "allocate", d), on.time(v, "download", d))
            else {
                continue;
            };
            cases.push((d, v, up / alloc, up / down));
        }
    }
    if cases.is_empty() {
        return None;
    }
    let held = cases.iter().filter(|c| c.2 < 0.5 && c.3 < 0.5).count();
    Some(Claim {
        on: on.on.clone(),
        quote: Quote::paper(
            "Despite the fact that NOJAC versions require much longer times for transferring data to GPU memory than JAC variants, this time remains much shorter than GPU initialization time and time for transfer of output data.",
            "Sec. 5, Obs. 7",
        ),
        rule: format!("per NOJAC variant and degree, upload under half of allocate and under half of download; {}", Need::All.words()),
        verdict: Verdict::of_cases(held, cases.len(), Need::All),
        measured: format!(
            "upload / allocate, upload / download: {}",
            cases.iter().map(|c| format!("{} p{} {:.2}, {:.2}", c.1.as_str(), c.0, c.2, c.3)).collect::<Vec<_>>().join("; ")
        ),
        rests_on: on.rests("allocate, upload and download of the NOJAC variants", 3 * cases.len()),
    })
}

/// Obs. 3: memory set-up and transfers comparable to the kernel or larger (at least half of
/// it), several times larger (at least 2x) at the lowest degree.
fn overheads(on: &On) -> Option<Claim> {
    let mut overhead = Vec::new();
    for (d, v) in on.fastest() {
        let stages: Vec<(&str, f64)> = super::spec::STAGES.iter().filter_map(|&s| on.time(v, s, d).map(|t| (s, t))).collect();
        if stages.len() < super::spec::STAGES.len() {
            continue;
        }
        let kernel = stages.iter().find(|s| s.0 == "kernel").map_or(f64::NAN, |s| s.1);
        overhead.push((d, stages.iter().filter(|s| s.0 != "kernel" && s.0 != "prepare").map(|s| s.1).sum::<f64>() / kernel));
    }
    let low_several = overhead.first().is_some_and(|o| o.1 >= 2.0);
    let comparable = overhead.iter().filter(|o| o.1 >= 0.5).count();
    let verdict = match Verdict::of_cases(comparable, overhead.len(), Need::All) {
        Verdict::Holds if !low_several => Verdict::Partly,
        v => v,
    };
    (!overhead.is_empty()).then(|| Claim {
        on: on.on.clone(),
        quote: Quote::paper(
            "For GPUs, the times for global memory initialization and data transfers from the host memory are comparable to the time of kernel execution (for lower values of p being even several times larger).",
            "Sec. 5, Obs. 3",
        ),
        rule: "for each degree's fastest variant, (allocate + upload + download) / kernel at least 0.5 at every degree and at least 2 at the lowest; partly if only one of the two".into(),
        verdict,
        measured: format!("(allocate + upload + download) / kernel: {}", ratio_list(&overhead)),
        rests_on: on.rests("every stage of each degree's fastest variant", 5 * overhead.len()),
    })
}

/// Beyond the paper: our best variant's kernel (any of ours at the CUDA-core kernels'
/// accuracy) against the strongest peer at its own accuracy (B computed: cublas-gemm, 3xTF32 in
/// f32, the Python routes), with the GEMM alone and TF32 beside; same run, GPU, precision and
/// mode.
fn against_cublas(on: &On) -> Option<Claim> {
    let strongest = |d: i64| {
        SAME_ACCURACY_PEERS
            .iter()
            .filter_map(|m| on.timed(m.as_str(), "kernel", d).map(|t| (m.as_str(), t)))
            .min_by(|a, b| a.1.median.total_cmp(&b.1.median))
    };
    let peer: Vec<(i64, Timed, (&str, Timed))> = on
        .fastest_of(&full_accuracy(&on.g.2))
        .iter()
        .filter_map(|&(d, v)| Some((d, on.timed(v.as_str(), "kernel", d)?, strongest(d)?)))
        .collect();
    if peer.is_empty() {
        return None;
    }
    let beside = |method: &str, metric: &str| {
        let r: Vec<String> =
            peer.iter().filter_map(|p| on.timed(method, metric, p.0).map(|t| format!("p{} {:.2}", p.0, t.median / p.1.median))).collect();
        if r.is_empty() {
            "-".to_string()
        } else {
            r.join(", ")
        }
    };
    Some(Claim {
        on: on.on.clone(),
        quote: Quote::goal(
            "our best variant beats cuBLAS batched GEMM, B^T (w D B) with B computed, at every degree, at the accuracy of the non-tensor kernel",
        ),
        rule: format!(
            "per degree, the fastest of our variants at the CUDA-core kernels' accuracy (the paper's four, gram-nojac, mma-nojac in f64) faster than the fastest of {} (B + GEMM) outside both intervals; {}",
            SAME_ACCURACY_PEERS.map(|m| m.as_str()).join(", "),
            Need::All.words()
        ),
        verdict: Verdict::of_cases(peer.iter().filter(|p| Order::of(p.1, p.2 .1) == Order::Faster).count(), peer.len(), Need::All),
        measured: format!(
            "strongest peer / best kernel time, B + GEMM: {}; cublas-gemm GEMM alone: {}; cublas-gemm-tf32 (TF32 accuracy): {}",
            peer.iter().map(|p| format!("p{} {:.2} ({})", p.0, p.2 .1.median / p.1.median, p.2 .0)).collect::<Vec<_>>().join(", "),
            beside("cublas-gemm", "gemm"),
            beside("cublas-gemm-tf32", "kernel")
        ),
        rests_on: on.rests("the fastest variant's kernel and the cuBLAS peers (kernel and gemm)", 3 * peer.len()),
    })
}

/// Obs. 4: the kernel always faster than the CPU; the whole pass only at higher degrees.
fn against_cpu(on: &On) -> Vec<Claim> {
    let r = on.r;
    let (mut kernel_wins, mut total_wins) = (Vec::new(), Vec::new());
    for (d, v) in on.fastest() {
        let Some(cpu) = r.cpu(d) else { continue };
        let (Some(k), Some(t)) = (r.find(&on.g, v.as_str(), "kernel", d), r.find(&on.g, v.as_str(), "total", d)) else { continue };
        if r.ok(k) && r.ok(t) {
            kernel_wins.push((d, r.us(cpu) / r.us(k)));
            total_wins.push((d, r.us(cpu) / r.us(t)));
        }
    }
    if kernel_wins.is_empty() {
        return Vec::new();
    }
    // "Only at higher orders": the degrees where the whole pass wins form an upper range.
    let wins: Vec<i64> = total_wins.iter().filter(|t| t.1 > 1.0).map(|t| t.0).collect();
    let upper = wins.first().is_some_and(|&w| total_wins.iter().all(|t| (t.0 >= w) == (t.1 > 1.0)));
    let lowest_loses = total_wins.first().is_some_and(|t| t.1 <= 1.0);
    vec![
        Claim {
            on: on.on.clone(),
            quote: Quote::paper(
                "The times of kernel execution, i.e. the times for numerical integration calculations are always much lower for GPUs than for … the reference CPU",
                "Sec. 5, Obs. 4",
            ),
            rule: format!("per degree, the CPU's time per element over the fastest kernel's above 1; {}", Need::All.words()),
            verdict: Verdict::of_cases(kernel_wins.iter().filter(|k| k.1 > 1.0).count(), kernel_wins.len(), Need::All),
            measured: format!("CPU / GPU kernel time per element: {}", ratio_list(&kernel_wins)),
            rests_on: on.rests("the fastest variant's kernel and the f64 cpu-reference", 2 * kernel_wins.len()),
        },
        Claim {
            on: on.on.clone(),
            quote: Quote::paper(
                "the total execution times, including memory transfers are better for GPUs only in the case of higher orders of approximation.",
                "Sec. 5, Obs. 4",
            ),
            rule: "holds if the degrees where the whole pass beats the CPU are an upper range that leaves out the lowest; fails if the pass wins at every degree or none".into(),
            verdict: match (upper && lowest_loses, wins.is_empty()) {
                (true, _) => Verdict::Holds,
                (false, true) => Verdict::Fails,
                (false, false) if wins.len() == total_wins.len() => Verdict::Fails,
                _ => Verdict::Partly,
            },
            measured: format!("CPU / GPU pass time per element: {}", ratio_list(&total_wins)),
            rests_on: on.rests("the fastest variant's total and the f64 cpu-reference", 2 * total_wins.len()),
        },
    ]
}

/// The report side: tables and figures from a run's rows, never a device.
impl Report for super::benchmark::BanasIntegration {
    fn report(spec: &Spec<Self>, rows: &DataFrame, ctx: &ReportCtx) -> Result<Vec<ReportItem>, ReportError> {
        let r = Rows::read(rows, ctx)?;
        let mut items = Vec::new();
        for t in &spec.outputs.tables {
            items.extend(
                match t {
                    TableName::Sizes => vec![sizes_table(&spec.id)],
                    TableName::Plan => plan_tables(&spec.id, &r).into_iter().chain([super::report::paper_devices_plan(&spec.id)]).collect(),
                    TableName::Stages => stage_tables(&spec.id, &r),
                    TableName::Best => vec![best_table(&spec.id, &r)],
                    TableName::Claims => vec![super::claims::claims_table(&spec.id, &r)],
                }
                .into_iter()
                .map(ReportItem::Table),
            );
        }
        for f in &spec.outputs.figures {
            items.extend(
                match f {
                    FigureName::StageTimes => stage_figures(&spec.id, &r),
                    FigureName::GflopsVsDegree => gflops_figures(&spec.id, &r),
                }
                .into_iter()
                .map(ReportItem::Figure),
            );
        }
        Ok(items)
    }
}
