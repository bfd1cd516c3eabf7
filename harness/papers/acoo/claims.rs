//! The a-COO paper's claims (Sec. V, Figs. 8-10) and fembench's goals against the same run's
//! vendor-library CG, judged at the largest mesh of each device, backend and precision. Each
//! claim quotes the paper; the rules are in the functions below.

use super::report::{find, per_iteration, Rows};
use super::spec::Method;
use super::spec::TableName;
use crate::benchmark::{Report, Spec};
use crate::report::claims::{self, loglog_slope, Claim, Order, Quote, Timed, Verdict};
use crate::report::{fmt_num, Table};
use crate::report::{ReportCtx, ReportError, ReportItem};
use polars::prelude::DataFrame;

const PAPER_METHODS: [Method; 3] = [Method::A_FEM, Method::EBE_V1, Method::EBE_V2];

/// The paper's memory per element (Sec. V, Fig. 10), bytes.
const PAPER_BYTES: [(Method, f64); 3] = [(Method::EBE_V2, 79.0), (Method::EBE_V1, 151.0), (Method::A_FEM, 192.0)];

/// One device, backend and precision at its largest mesh.
struct At<'a> {
    r: &'a Rows,
    key: &'a str,
    top: f64,
}

impl At<'_> {
    fn row(&self, m: Method, metric: &str) -> Option<usize> {
        find(self.r, self.key, m.as_str(), metric, self.top)
    }

    fn total(&self, m: Method) -> Option<Timed> {
        self.row(m, "total").map(|i| Timed::new(self.r.time[i], self.r.lo[i], self.r.hi[i]))
    }

    fn claim(&self, quote: Quote, rule: &str, verdict: Verdict, measured: String, rests: &str) -> Claim {
        Claim {
            on: self.key.to_string(),
            quote,
            rule: rule.into(),
            verdict,
            measured,
            rests_on: format!("{rests}, {} triangles", fmt_num(self.top)),
        }
    }
}

pub(crate) fn claims(id: &str, r: &Rows, keys: &[String]) -> Table {
    let mut out = Vec::new();
    for key in keys.iter().filter(|k| (0..r.key.len()).any(|i| &r.key[i] == *k && PAPER_METHODS.iter().any(|m| r.method[i] == m.as_str())))
    {
        let top = (0..r.key.len()).filter(|&i| &r.key[i] == key).map(|i| r.triangles[i]).fold(f64::NAN, f64::max);
        let at = At { r, key, top };
        out.extend(memory_order(&at));
        out.extend(afem_close_to_ebe_v2(&at));
        out.extend(coloring_counted(&at));
        out.extend(peer_goals(&at));
        out.extend(assembly_goal(&at));
        out.extend(growth(&at));
    }
    claims::table(
        id,
        out,
        vec![
            "Judged at the largest size of each device, backend and precision; totals are assembly + solve (the paper's processing time, pre-processing excluded), coloring apart.".into(),
            "Goals: against the same run's strongest vendor-library CG (the fastest of cusparse-cg-graph, cusparse-cg-device and cusparse-cg), and A-FEM's assembly (elements + bc + consolidate + convert stages) against the colored assembly of the same matrix (csr-color's elements stage: one launch per color, coloring not counted).".into(),
        ],
    )
}

/// Fig. 10: EbE-v2 < EbE-v1 < A-FEM in memory per element, the paper's bytes beside ours.
fn memory_order(at: &At) -> Option<Claim> {
    let bpe = |m: Method| at.row(m, "total").map(|i| at.r.bytes_per_element[i]);
    let (a, b, c) = (bpe(Method::EBE_V2)?, bpe(Method::EBE_V1)?, bpe(Method::A_FEM)?);
    let paper = PAPER_BYTES.map(|p| fmt_num(p.1)).join(" < ");
    Some(at.claim(
        Quote::paper(
            "However, each method has its average memory demand per element, with EbE-v2 being 79 bytes, EbE-v1 being 151 bytes, and A-FEM being 192 bytes.",
            "Sec. V, Fig. 10",
        ),
        "the order EbE-v2 < EbE-v1 < A-FEM in measured device bytes per element (the sizes differ with the precision and the buffers each method keeps)",
        Verdict::of_bool(a < b && b < c),
        format!("{} < {} < {} bytes/element (paper: {paper})", fmt_num(a), fmt_num(b), fmt_num(c)),
        "a-fem, ebe-v1, ebe-v2 totals",
    ))
}

/// Sec. V: A-FEM's processing time "appears to be worst" and "very close to the EbE-v2": A-FEM
/// the slowest of the three and within 0.8-1.25x of EbE-v2.
fn afem_close_to_ebe_v2(at: &At) -> Option<Claim> {
    let (a, v1, v2) = (at.total(Method::A_FEM)?, at.total(Method::EBE_V1)?, at.total(Method::EBE_V2)?);
    let worst = Order::of(a, v1) != Order::Faster && Order::of(a, v2) != Order::Faster;
    let close = (0.8..=1.25).contains(&(a.median / v2.median));
    let verdict = match (worst, close) {
        (true, true) => Verdict::Holds,
        (false, false) => Verdict::Fails,
        _ => Verdict::Partly,
    };
    Some(at.claim(
        Quote::paper(
            "Although the processing time (excluding the pre-processing steps) of the A-FEM appears to be worst, it still presents linear growth and is very close to the EbE-v2, which is a reference in the GPU FEM approach.",
            "Sec. V, Fig. 8",
        ),
        "A-FEM's total not faster than either EbE's (ties allowed) and within 0.8-1.25x of EbE-v2's: holds if both, partly if one, fails if neither (A-FEM clearly the fastest contradicts the paper's ordering)",
        verdict,
        format!(
            "totals: a-fem {} ms, ebe-v1 {} ms, ebe-v2 {} ms; A-FEM / EbE-v2 {}",
            fmt_num(a.median * 1e3),
            fmt_num(v1.median * 1e3),
            fmt_num(v2.median * 1e3),
            fmt_num(a.median / v2.median)
        ),
        "a-fem, ebe-v1, ebe-v2 totals",
    ))
}

/// Fig. 9: with the coloring counted, A-FEM (no coloring) becomes more appealing: at least as
/// fast as the best EbE plus its coloring.
fn coloring_counted(at: &At) -> Option<Claim> {
    let a = at.total(Method::A_FEM)?;
    let ebe = [Method::EBE_V1, Method::EBE_V2]
        .iter()
        .filter_map(|&m| at.row(m, "total").map(|i| at.r.time[i] + at.r.coloring[i].max(0.0)))
        .fold(f64::NAN, f64::min);
    ebe.is_finite().then(|| {
        at.claim(
            Quote::paper(
                "However, if mesh coloring is considered in the total processing time, the proposed approach becomes more appealing (see Fig. 9).",
                "Sec. V, Fig. 9",
            ),
            "A-FEM's total at most the best EbE total plus its coloring",
            Verdict::of_bool(a.median <= ebe),
            format!("A-FEM {} ms, best EbE + coloring {} ms", fmt_num(a.median * 1e3), fmt_num(ebe * 1e3)),
            "a-fem, ebe-v1, ebe-v2 totals and colorings",
        )
    })
}

/// Goals against the same run's strongest vendor-library CG (the fastest of the peers, by
/// iteration and by total): an iteration within 10%, and the total.
fn peer_goals(at: &At) -> Vec<Claim> {
    let ours = [Method::A_FEM, Method::EBE_V1, Method::EBE_V2, Method::CSR_ATOMIC, Method::CSR_COLOR];
    let fastest = |methods: &[Method], y: &dyn Fn(usize) -> Option<f64>| {
        methods.iter().filter_map(|&m| at.row(m, "total").and_then(y).map(|v| (v, m.as_str()))).min_by(|a, b| a.0.total_cmp(&b.0))
    };
    let it_of = |i: usize| per_iteration(at.r, at.key, &at.r.method[i], at.top);
    let total_of = |i: usize| Some(at.r.time[i]);
    let mut out = Vec::new();
    if let (Some((b, name)), Some((p, peer))) = (fastest(&ours, &it_of), fastest(&Method::PEERS, &it_of)) {
        out.push(at.claim(
            Quote::goal("the best CG iteration within 10% of the strongest cuSPARSE/cuBLAS CG's, or faster"),
            "best of our methods' solve / iterations at most 1.1x the fastest peer's",
            Verdict::of_bool(b <= 1.1 * p),
            format!("{name} {} µs, {peer} {} µs per iteration", fmt_num(b * 1e6), fmt_num(p * 1e6)),
            "every method's solve and total",
        ));
    }
    if let (Some((b, name)), Some((p, peer))) = (fastest(&ours, &total_of), fastest(&Method::PEERS, &total_of)) {
        out.push(at.claim(
            Quote::goal("the best total (assembly + solve) beats the strongest cuSPARSE/cuBLAS path"),
            "best of our methods' total below the fastest peer's",
            Verdict::of_bool(b < p),
            format!("{name} {} ms, {peer} {} ms", fmt_num(b * 1e3), fmt_num(p * 1e3)),
            "every method's total",
        ));
    }
    out
}

/// Goal: A-FEM's assembly (elements, boundary conditions, consolidation, conversion) within 2x
/// of the colored assembly into CSR (coloring not counted); the atomic one beside.
fn assembly_goal(at: &At) -> Option<Claim> {
    let stage = |m: Method, st: &str| at.row(m, st).map(|i| at.r.time[i]);
    let a: f64 = ["elements", "bc", "consolidate", "convert"].iter().map(|st| stage(Method::A_FEM, st)).sum::<Option<f64>>()?;
    let col = stage(Method::CSR_COLOR, "elements")?;
    let atomic = stage(Method::CSR_ATOMIC, "elements").map_or(String::new(), |t| format!(", csr-atomic {:.3} ms ({:.2}x)", t * 1e3, a / t));
    Some(at.claim(
        Quote::goal("A-FEM's assembly + CSR conversion within 2x of the colored CSR assembly"),
        "A-FEM's elements + bc + consolidate + convert at most 2x csr-color's elements stage",
        Verdict::of_bool(a <= 2.0 * col),
        format!("A-FEM {:.3} ms, csr-color {:.3} ms ({:.2}x){atomic}", a * 1e3, col * 1e3, a / col),
        "a-fem's assembly stages, csr-color's and csr-atomic's elements stage",
    ))
}

/// Sec. V and Fig. 10: time grows linearly with the triangles where the GPU is full, judged on
/// the last decade of sizes (a GPU not yet full gives a smaller exponent, which says nothing about
/// the sentence: not measured there); memory linearly over every size.
fn growth(at: &At) -> Vec<Claim> {
    let r = at.r;
    let mut out = Vec::new();
    for m in PAPER_METHODS {
        let pts = |y: &dyn Fn(usize) -> f64| -> Vec<(f64, f64)> {
            (0..r.key.len())
                .filter(|&i| r.key[i] == at.key && r.method[i] == m.as_str() && r.metric[i] == "total")
                .map(|i| (r.triangles[i], y(i)))
                .collect()
        };
        let n = pts(&|i| r.time[i]).len();
        let (t, b) = (loglog_slope(&last_decade(pts(&|i| r.time[i]))), loglog_slope(&pts(&|i| r.bytes_per_element[i] * r.triangles[i])));
        if !t.is_finite() {
            continue;
        }
        let on = |claim: Claim| Claim { rests_on: format!("{}: {n} sizes", m.as_str()), ..claim };
        if m == Method::A_FEM {
            let (verdict, measured) = match t {
                _ if t > 1.15 => (Verdict::Fails, format!("time ~ triangles^{} over the last decade of sizes", fmt_num(t))),
                _ if t >= 0.85 => (Verdict::Holds, format!("time ~ triangles^{} over the last decade of sizes", fmt_num(t))),
                _ => (
                    Verdict::NotMeasured,
                    format!(
                        "time ~ triangles^{} over the last decade: the GPU is not full at these sizes (experiments/large/acoo-capacitor-large.yaml runs 1.9M and 7.7M triangles)",
                        fmt_num(t)
                    ),
                ),
            };
            out.push(on(at.claim(
                Quote::paper("it still presents linear growth", "Sec. V, Fig. 8"),
                "least-squares exponent of A-FEM's total time against triangles over the last decade of sizes: holds within 0.85-1.15, fails above; below 0.85 the GPU is not full and the sentence is not tested",
                verdict,
                measured,
                "",
            )));
        }
        out.push(on(at.claim(
            Quote::paper(
                "In all methods, the memory footprint is linearly proportional to the number of triangles in the mesh (see Fig. 10).",
                "Sec. V, Fig. 10",
            ),
            &format!("{}: least-squares exponent of device bytes against triangles within 0.85-1.15", m.as_str()),
            Verdict::of_bool((0.85..=1.15).contains(&b)),
            format!("{}: memory ~ triangles^{}", m.as_str(), fmt_num(b)),
            "",
        )));
    }
    out
}

/// The points whose size is within a decade of the largest (at least the two largest).
fn last_decade(mut pts: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let top = pts.last().map_or(0.0, |p| p.0);
    let within = pts.iter().filter(|p| p.0 >= top / 10.0).count().max(2).min(pts.len());
    pts.split_off(pts.len() - within)
}

/// The report side: tables and figures from a run's rows, never a device.
impl Report for super::benchmark::AcooCapacitor {
    fn report(spec: &Spec<Self>, rows: &DataFrame, ctx: &ReportCtx) -> Result<Vec<ReportItem>, ReportError> {
        let mut items = super::report::report(&spec.id, &spec.outputs, rows, ctx)?;
        if spec.outputs.tables.contains(&TableName::Claims) {
            let r = super::report::read(rows)?;
            items.push(ReportItem::Table(super::claims::claims(&spec.id, &r, &super::report::keys(&r))));
        }
        Ok(items)
    }
}

#[cfg(test)]
mod tests {
    use super::super::report::tests::{rows, with_peer};
    use super::*;

    fn verdict(t: &Table, needle: &str) -> String {
        t.rows.iter().find(|r| r[1].contains(needle) || r[2].contains(needle)).unwrap_or_else(|| panic!("{needle}: {:?}", t.rows))[3]
            .clone()
    }

    #[test]
    fn the_peer_goals_follow_the_rows() {
        let keys = ["GPU cuda f64".to_string()];
        let t = claims("x", &with_peer(1.5e-3, 1.6e-3), &keys);
        assert_eq!((verdict(&t, "best CG iteration"), verdict(&t, "best total")), ("holds".into(), "holds".into()));
        // A peer faster by more than 10% an iteration and in total: both goals fail.
        let t = claims("x", &with_peer(0.8e-3, 0.9e-3), &keys);
        assert_eq!((verdict(&t, "best CG iteration"), verdict(&t, "best total")), ("fails".into(), "fails".into()));
    }

    #[test]
    fn the_assembly_goal_compares_the_afem_stages_with_the_colored_assembly() {
        let keys = ["GPU cuda f64".to_string()];
        let with = |colored: f64| {
            rows(&[
                ("a-fem", "elements", 0.5e-3),
                ("a-fem", "bc", 0.2e-3),
                ("a-fem", "consolidate", 1.0e-3),
                ("a-fem", "convert", 0.3e-3),
                ("a-fem", "total", 3.0e-3),
                ("csr-color", "elements", colored),
                ("csr-color", "total", 1.0e-3 + colored),
                ("csr-atomic", "elements", 0.25e-3),
                ("csr-atomic", "total", 1.25e-3),
            ])
        };
        let t = claims("x", &with(1.0e-3), &keys);
        let row = t.rows.iter().find(|r| r[1].contains("A-FEM's assembly")).unwrap();
        assert_eq!(row[3], "holds");
        assert_eq!(row[4], "A-FEM 2.000 ms, csr-color 1.000 ms (2.00x), csr-atomic 0.250 ms (8.00x)");
        assert_eq!(verdict(&claims("x", &with(0.9e-3), &keys), "A-FEM's assembly"), "fails");
    }

    #[test]
    fn afem_clearly_fastest_contradicts_the_papers_ordering() {
        let keys = ["GPU cuda f64".to_string()];
        let t =
            |afem: f64| claims("x", &rows(&[("a-fem", "total", afem), ("ebe-v1", "total", 4.0e-3), ("ebe-v2", "total", 3.9e-3)]), &keys);
        assert_eq!(verdict(&t(4.4e-3), "appears to be worst"), "holds");
        assert_eq!(verdict(&t(6.0e-3), "appears to be worst"), "partly");
        assert_eq!(verdict(&t(1.0e-3), "appears to be worst"), "fails");
    }

    #[test]
    fn time_growth_is_judged_where_the_gpu_is_full() {
        use crate::report::frame;
        // a-fem at 1e5..1e7 triangles, time ~ triangles^e over the last decade, flat below 1e6
        // where `flat` (a GPU not yet full).
        let grow_from = |e: f64, flat: bool| {
            let tri = [1e5, 3e5, 1e6, 3e6, 1e7];
            let n = tri.len();
            let strs = vec![
                ("device", vec!["GPU".into(); n]),
                ("backend", vec!["cuda".into(); n]),
                ("precision", vec!["f64".into(); n]),
                ("status", vec!["ok".into(); n]),
                ("mode", vec!["warm".into(); n]),
                ("method", vec!["a-fem".into(); n]),
                ("metric", vec!["total".into(); n]),
            ];
            let nums = vec![
                ("time_median_s", tri.iter().map(|t: &f64| 1e-9 * if flat { t.max(1e6) } else { *t }.powf(e)).collect()),
                ("triangles", tri.to_vec()),
                ("bytes_per_element", vec![200.0; n]),
            ];
            let r = super::super::report::read(&frame::of_columns(n, strs, nums).unwrap()).unwrap();
            claims("x", &r, &["GPU cuda f64".to_string()])
        };
        let grow = |e: f64| grow_from(e, false);
        assert_eq!(verdict(&grow(0.62), "linear growth"), "not measured", "a GPU not yet full tests nothing");
        assert_eq!(verdict(&grow(1.0), "linear growth"), "holds");
        assert_eq!(verdict(&grow(1.4), "linear growth"), "fails");
        assert_eq!(verdict(&grow_from(1.0, true), "linear growth"), "holds", "flat small sizes, linear at the top");
        assert_eq!(verdict(&grow(1.0), "memory footprint"), "holds");
    }
}
