//! Cecka et al.'s claims, judged on a run's rows (the `claims` table of each Cecka experiment;
//! each experiment judges the claims its rows can answer).
//! - Sec. 4.3 and Fig. 13: SharedNZ is the fastest of the four methods up to order 3, GlobalNZ
//!   from order 4; SharedNZ fails at order 5 (no partition fits the shared memory).
//! - Figs. 13/14: at low order the dummy element kernel takes about as long as the full one
//!   (the methods are memory-bound there).
//! - Fig. 3: doubling the number of colors costs ElemColor less than 10%.
//! - Abstract and Sec. 6: the f32 GPU assembly is 30 or more times faster than the serial f64
//!   CPU code.
//! - Table VI: the f32 error grows with the inverse mesh size, h ~ nodes^(-1/2).
//! - Beyond the paper: the paper's best method against the COO route a user of a vendor library
//!   takes (coo-cusparse), same run, same GPU and stream, at every order of the largest level.

use polars::prelude::*;

use crate::report::claims::{self, span, Claim, Need, Verdict};
use crate::report::{fmt_num, frame, ReportError, Table};

const PAPER_METHODS: [&str; 4] = ["elem-color", "global-nz", "shared-nz", "local-nz"];

/// The rows the rules read, one vector per column, every status.
struct Obs {
    experiment: String,
    on: Vec<String>,
    backend: Vec<String>,
    method: Vec<String>,
    status: Vec<String>,
    reason: Vec<String>,
    warm: Vec<bool>,
    level: Vec<i64>,
    order: Vec<i64>,
    time: Vec<f64>,
    colors: Vec<f64>,
    nodes: Vec<f64>,
    error: Vec<f64>,
}

impl Obs {
    fn read(id: &str, rows: &LazyFrame) -> Result<Obs, ReportError> {
        let df = frame::collect(rows.clone())?;
        let s = |c: &str| frame::strs(&df, c);
        let opt_s = |c: &str| frame::strs(&df, c).unwrap_or_else(|_| vec![String::new(); df.height()]);
        let n = |c: &str| frame::nums(&df, c);
        let (device, backend, precision) = (s("device")?, s("backend")?, s("precision")?);
        Ok(Obs {
            experiment: id.to_string(),
            on: (0..df.height()).map(|i| format!("{} {} {}", device[i], backend[i], precision[i])).collect(),
            backend,
            method: s("method")?,
            status: s("status")?,
            reason: opt_s("reason"),
            warm: opt_s("mode").iter().map(|m| m != "cold").collect(),
            level: n("level")?.into_iter().map(|v| v as i64).collect(),
            order: n("order")?.into_iter().map(|v| v as i64).collect(),
            time: n("time_median_s")?,
            colors: n("colors_used")?,
            nodes: n("nodes")?,
            error: n("table6_error")?,
        })
    }

    fn ok(&self, i: usize) -> bool {
        self.status[i] == "ok" && self.warm[i] && self.time[i].is_finite()
    }

    /// The (device backend precision) groups with GPU rows, sorted.
    fn gpu_groups(&self) -> Vec<String> {
        let mut g: Vec<String> = (0..self.on.len()).filter(|&i| self.backend[i] != "cpu").map(|i| self.on[i].clone()).collect();
        g.sort();
        g.dedup();
        g
    }

    /// Rows of a group (and, where given, a method, level and order).
    fn select(&self, on: &str, method: Option<&str>, level: Option<i64>, order: Option<i64>) -> Vec<usize> {
        (0..self.on.len())
            .filter(|&i| {
                self.on[i] == on
                    && method.is_none_or(|m| self.method[i] == m)
                    && level.is_none_or(|l| self.level[i] == l)
                    && order.is_none_or(|o| self.order[i] == o)
            })
            .collect()
    }

    fn time_of(&self, on: &str, method: &str, level: i64, order: i64) -> Option<f64> {
        self.select(on, Some(method), Some(level), Some(order)).into_iter().filter(|&i| self.ok(i)).map(|i| self.time[i]).last()
    }

    /// The largest level a group's GPU rows reach.
    fn top_level(&self, on: &str) -> Option<i64> {
        self.select(on, None, None, None).into_iter().map(|i| self.level[i]).max()
    }

    fn orders(&self, on: &str, level: i64) -> Vec<i64> {
        let mut o: Vec<i64> = self.select(on, None, Some(level), None).into_iter().map(|i| self.order[i]).collect();
        o.sort();
        o.dedup();
        o
    }

    fn rests(&self, what: &str, n: usize) -> String {
        format!("{}: {what} ({n} rows)", self.experiment)
    }
}

/// The claims this experiment's rows can judge, as the `claims` table.
pub(crate) fn claims_table(id: &str, rows: &LazyFrame) -> Result<Table, ReportError> {
    let o = Obs::read(id, rows)?;
    let mut out = Vec::new();
    for on in o.gpu_groups() {
        let Some(level) = o.top_level(&on) else { continue };
        let orders = o.orders(&on, level);
        out.extend(winners(&o, &on, level, &orders));
        out.extend(shared_nz_order_5(&o, &on, level));
        out.extend(dummy_at_order_1(&o, &on, level));
        out.extend(colors(&o, &on, level));
        out.extend(speedup(&o, &on, level));
        out.extend(against_peer(&o, &on, level, &orders));
        out.extend(table6_growth(&o, &on));
    }
    Ok(claims::table(
        id,
        out,
        vec!["Times are warm medians of verified rows at the experiment's largest mesh level; a failed row counts only where the claim is about failing.".into()],
    ))
}

/// SharedNZ fastest of the paper's four methods up to order 3, GlobalNZ from order 4.
fn winners(o: &Obs, on: &str, level: i64, orders: &[i64]) -> Option<Claim> {
    let mut judged = Vec::new();
    let mut rows = 0;
    for &order in orders {
        let times: Vec<(&str, f64)> = PAPER_METHODS.iter().filter_map(|m| o.time_of(on, m, level, order).map(|t| (*m, t))).collect();
        if times.len() < 2 {
            continue;
        }
        rows += times.len();
        let best = times.iter().min_by(|a, b| a.1.total_cmp(&b.1))?.0;
        let expected = if order <= 3 { "shared-nz" } else { "global-nz" };
        judged.push((order, best, best == expected));
    }
    let held = judged.iter().filter(|j| j.2).count();
    (!judged.is_empty()).then(|| Claim {
        on: on.into(),
        claim: "SharedNZ is the fastest of the four methods up to order 3, GlobalNZ from order 4 (Sec. 4.3, Fig. 13)".into(),
        verdict: Verdict::of_cases(held, judged.len(), Need::All),
        measured: judged.iter().map(|(k, m, _)| format!("p{k}: {m}")).collect::<Vec<_>>().join(", "),
        rests_on: o.rests(&format!("the four methods' full kernels, level {level}, orders {}", span(orders)), rows),
    })
}

/// SharedNZ fails at order 5: no partition fits the shared memory.
fn shared_nz_order_5(o: &Obs, on: &str, level: i64) -> Option<Claim> {
    let rows = o.select(on, Some("shared-nz"), Some(level), None);
    let fits = |i: usize| !(o.status[i] == "failed" && o.reason[i].contains("no partition fits"));
    let high: Vec<usize> = rows.iter().copied().filter(|&i| o.order[i] >= 5).collect();
    let low: Vec<usize> = rows.iter().copied().filter(|&i| o.order[i] < 5).collect();
    if high.is_empty() {
        return None;
    }
    let held = high.iter().filter(|&&i| !fits(i)).count() + low.iter().filter(|&&i| fits(i)).count();
    let state = |i: usize| format!("p{}: {}", o.order[i], if fits(i) { "runs" } else { "does not fit" });
    Some(Claim {
        on: on.into(),
        claim: "SharedNZ cannot run from order 5: no partition fits the shared memory (16 KiB in the paper; Sec. 6, Fig. 13)".into(),
        verdict: Verdict::of_cases(held, rows.len(), Need::All),
        measured: rows.iter().map(|&i| state(i)).collect::<Vec<_>>().join(", "),
        rests_on: o.rests(&format!("shared-nz, level {level}, every order, failed rows included"), rows.len()),
    })
}

/// At order 1 the dummy kernel takes about as long as the full one: full/dummy at most 1.25.
fn dummy_at_order_1(o: &Obs, on: &str, level: i64) -> Option<Claim> {
    let pairs: Vec<(&str, f64)> = PAPER_METHODS
        .iter()
        .filter_map(|m| {
            let full = o.time_of(on, m, level, 1)?;
            let dummy = o.time_of(on, &format!("{m}-dummy"), level, 1)?;
            Some((*m, full / dummy))
        })
        .collect();
    let held = pairs.iter().filter(|p| p.1 <= 1.25).count();
    (!pairs.is_empty()).then(|| Claim {
        on: on.into(),
        claim: "At order 1 the dummy element kernel takes about as long as the full one: memory-bound (Figs. 13c/14c)".into(),
        verdict: Verdict::of_cases(held, pairs.len(), Need::All),
        measured: format!("full / dummy: {}", pairs.iter().map(|(m, r)| format!("{m} {}", fmt_num(*r))).collect::<Vec<_>>().join(", ")),
        rests_on: o.rests(&format!("the four methods and their dummies, level {level}, order 1"), 2 * pairs.len()),
    })
}

/// Doubling ElemColor's colors costs less than 10%: every pair of runs on one mesh (order 1,
/// the largest level) whose color counts differ by a factor 1.8-2.2.
fn colors(o: &Obs, on: &str, level: i64) -> Option<Claim> {
    // One time per color count (the last row: asking for no minimum and for the natural count
    // both give the natural coloring).
    let mut runs: Vec<(f64, f64)> = Vec::new();
    for i in o.select(on, Some("elem-color"), Some(level), Some(1)).into_iter().filter(|&i| o.ok(i) && o.colors[i].is_finite()) {
        runs.retain(|r| r.0 != o.colors[i]);
        runs.push((o.colors[i], o.time[i]));
    }
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut distinct: Vec<f64> = runs.iter().map(|r| r.0).collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    if distinct.len() < 3 {
        return None;
    }
    let mut pairs = Vec::new();
    for a in &runs {
        for b in &runs {
            let k = b.0 / a.0;
            if (1.8..=2.2).contains(&k) {
                pairs.push((a.0, b.0, b.1 / a.1));
            }
        }
    }
    let held = pairs.iter().filter(|p| p.2 < 1.10).count();
    let worst = pairs.iter().map(|p| p.2).fold(f64::NAN, f64::max);
    Some(Claim {
        on: on.into(),
        claim: "Doubling the number of colors costs ElemColor less than 10% (Fig. 3)".into(),
        verdict: Verdict::of_cases(held, pairs.len(), Need::All),
        measured: format!(
            "{} doublings: {}; worst {}",
            pairs.len(),
            pairs.iter().map(|p| format!("{:.0}->{:.0} colors x{}", p.0, p.1, fmt_num(p.2))).collect::<Vec<_>>().join(", "),
            fmt_num(worst)
        ),
        rests_on: o.rests(
            &format!(
                "elem-color, level {level}, order 1, colors {}",
                distinct.iter().map(|c| format!("{c:.0}")).collect::<Vec<_>>().join("/")
            ),
            runs.len(),
        ),
    })
}

/// The f32 GPU assembly is at least 30x the serial f64 CPU code (order 1, the largest mesh).
fn speedup(o: &Obs, on: &str, level: i64) -> Option<Claim> {
    let cpu = (0..o.on.len()).filter(|&i| o.method[i] == "cpu-serial" && o.level[i] == level && o.order[i] == 1 && o.ok(i)).last()?;
    if !on.ends_with("f32") {
        return None;
    }
    let (m, t) = PAPER_METHODS.iter().filter_map(|m| o.time_of(on, m, level, 1).map(|t| (*m, t))).min_by(|a, b| a.1.total_cmp(&b.1))?;
    let x = o.time[cpu] / t;
    Some(Claim {
        on: on.into(),
        claim: "The f32 GPU assembly is 30 or more times faster than the serial f64 CPU code (abstract, Sec. 6)".into(),
        verdict: if x >= 30.0 { Verdict::Holds } else { Verdict::Fails },
        measured: format!("{m} {} ms against cpu-serial {} ms: {}x", fmt_num(t * 1e3), fmt_num(o.time[cpu] * 1e3), fmt_num(x)),
        rests_on: o.rests(&format!("the four methods and cpu-serial, level {level}, order 1"), 5),
    })
}

/// The paper's fastest method beats the vendor COO route at every order of the largest level.
fn against_peer(o: &Obs, on: &str, level: i64, orders: &[i64]) -> Option<Claim> {
    let mut judged = Vec::new();
    for &order in orders {
        let Some(peer) = o.time_of(on, "coo-cusparse", level, order) else { continue };
        let best = PAPER_METHODS.iter().filter_map(|m| o.time_of(on, m, level, order).map(|t| (*m, t))).min_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((m, t)) = best {
            judged.push((order, m, t, peer));
        }
    }
    let held = judged.iter().filter(|j| j.2 < j.3).count();
    (!judged.is_empty()).then(|| Claim {
        on: on.into(),
        claim:
            "Beyond the paper: its fastest method beats the COO route of a vendor-library user (triplets, cuSPARSE sort, duplicates summed)"
                .into(),
        verdict: Verdict::of_cases(held, judged.len(), Need::All),
        measured: judged
            .iter()
            .map(|(k, m, t, p)| format!("p{k}: {m} {} ms, coo-cusparse {} ms: {}x", fmt_num(t * 1e3), fmt_num(p * 1e3), fmt_num(p / t)))
            .collect::<Vec<_>>()
            .join("; "),
        rests_on: o.rests(&format!("the four methods and coo-cusparse, level {level}, orders {}", span(orders)), 5 * judged.len()),
    })
}

/// Table VI: the f32 error grows like h^-1 ~ nodes^(1/2): a least-squares exponent of 0.3-0.7.
fn table6_growth(o: &Obs, on: &str) -> Option<Claim> {
    if !on.ends_with("f32") {
        return None;
    }
    let pts: Vec<(f64, f64)> = (0..o.on.len())
        .filter(|&i| o.on[i] == on && o.method[i] == "shared-nz" && o.order[i] == 1 && o.ok(i) && o.error[i] > 0.0 && o.nodes[i] > 0.0)
        .map(|i| (o.nodes[i].ln(), o.error[i].ln()))
        .collect();
    if pts.len() < 3 {
        return None;
    }
    let (mx, my) = (pts.iter().map(|p| p.0).sum::<f64>() / pts.len() as f64, pts.iter().map(|p| p.1).sum::<f64>() / pts.len() as f64);
    let slope = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>() / pts.iter().map(|p| (p.0 - mx).powi(2)).sum::<f64>();
    Some(Claim {
        on: on.into(),
        claim: "The f32 error grows with the inverse mesh size, h ~ nodes^(-1/2) (Table VI)".into(),
        verdict: if (0.3..=0.7).contains(&slope) { Verdict::Holds } else { Verdict::Fails },
        measured: format!("error ~ nodes^{} (least squares over {} sizes)", fmt_num(slope), pts.len()),
        rests_on: o.rests("shared-nz, order 1, every level", pts.len()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of one GPU group: (method, order, status, time in ms).
    fn frame(rows: &[(&str, i64, &str, f64)]) -> LazyFrame {
        let n = rows.len();
        let reason = |r: &(&str, i64, &str, f64)| if r.2 == "ok" { String::new() } else { "no partition fits the shared memory".into() };
        let strs = vec![
            ("device", vec!["GPU".into(); n]),
            ("backend", vec!["cuda".into(); n]),
            ("precision", vec!["f32".into(); n]),
            ("method", rows.iter().map(|r| r.0.to_string()).collect()),
            ("status", rows.iter().map(|r| r.2.to_string()).collect()),
            ("reason", rows.iter().map(reason).collect()),
            ("mode", vec!["warm".into(); n]),
        ];
        let nums = vec![
            ("level", vec![4.0; n]),
            ("order", rows.iter().map(|r| r.1 as f64).collect()),
            ("time_median_s", rows.iter().map(|r| if r.2 == "ok" { r.3 * 1e-3 } else { f64::NAN }).collect()),
            ("bandwidth_gbs", vec![f64::NAN; n]),
        ];
        let df = crate::report::frame::of_columns(n, strs, nums).unwrap();
        crate::cecka::report::rows(&df).unwrap()
    }

    fn verdicts(t: &Table) -> Vec<(String, String)> {
        t.rows.iter().map(|r| (r[1].split(' ').next().unwrap().to_string(), r[2].clone())).collect()
    }

    #[test]
    fn the_winner_and_order_five_claims_follow_the_rows() {
        let paper_like = frame(&[
            ("shared-nz", 1, "ok", 1.0),
            ("global-nz", 1, "ok", 2.0),
            ("shared-nz", 4, "ok", 9.0),
            ("global-nz", 4, "ok", 3.0),
            ("shared-nz", 5, "failed", 0.0),
            ("global-nz", 5, "ok", 5.0),
        ]);
        let t = claims_table("x", &paper_like).unwrap();
        assert_eq!(verdicts(&t), [("SharedNZ".into(), "holds".into()), ("SharedNZ".into(), "holds".into())]);
        // GlobalNZ faster at order 1, and SharedNZ running at order 5: both claims now fail.
        let other = frame(&[
            ("shared-nz", 1, "ok", 3.0),
            ("global-nz", 1, "ok", 2.0),
            ("shared-nz", 4, "ok", 9.0),
            ("global-nz", 4, "ok", 3.0),
            ("shared-nz", 5, "ok", 4.0),
            ("global-nz", 5, "ok", 5.0),
        ]);
        let t = claims_table("x", &other).unwrap();
        assert_eq!(verdicts(&t), [("SharedNZ".into(), "partly".into()), ("SharedNZ".into(), "partly".into())]);
        assert!(t.rows[0][3].contains("p1: global-nz"), "{:?}", t.rows[0]);
    }

    #[test]
    fn a_dummy_much_faster_than_its_full_kernel_breaks_the_memory_bound_claim() {
        let t = claims_table("x", &frame(&[("elem-color", 1, "ok", 1.0), ("elem-color-dummy", 1, "ok", 0.5)])).unwrap();
        assert_eq!(t.rows.len(), 1);
        assert_eq!(t.rows[0][2], "fails");
        let t = claims_table("x", &frame(&[("elem-color", 1, "ok", 1.0), ("elem-color-dummy", 1, "ok", 0.95)])).unwrap();
        assert_eq!(t.rows[0][2], "holds");
    }

    #[test]
    fn the_peer_claim_fails_where_the_vendor_route_is_faster() {
        let t = claims_table("x", &frame(&[("shared-nz", 1, "ok", 1.0), ("global-nz", 1, "ok", 2.0), ("coo-cusparse", 1, "ok", 15.0)]))
            .unwrap();
        let row = t.rows.iter().find(|r| r[1].starts_with("Beyond the paper")).unwrap();
        assert_eq!(row[2], "holds");
        assert!(row[3].contains("shared-nz 1.00 ms, coo-cusparse 15.00 ms: 15.00x"), "{row:?}");
        let t = claims_table("x", &frame(&[("shared-nz", 1, "ok", 1.0), ("coo-cusparse", 1, "ok", 0.5)])).unwrap();
        assert_eq!(t.rows.iter().find(|r| r[1].starts_with("Beyond the paper")).unwrap()[2], "fails");
    }

    #[test]
    fn the_timings_table_gives_each_method_its_ratio_to_the_same_runs_peer() {
        let rows = frame(&[("shared-nz", 1, "ok", 1.0), ("coo-cusparse", 1, "ok", 15.0), ("global-nz", 2, "ok", 2.0)]);
        let t = crate::cecka::report::timings_table("x", &rows).unwrap();
        let at = t.header.iter().position(|h| h.starts_with("vs coo-cusparse")).unwrap();
        let ratios: Vec<&str> = t.rows.iter().map(|r| r[at].as_str()).collect();
        // The peer itself has no ratio, nor a method on a mesh (order 2) where the peer did not run.
        assert_eq!(ratios, ["15.0x", "-", "-"]);
    }
}
