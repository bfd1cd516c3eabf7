//! Tables and figures of the a-COO experiments, from stored rows only: the table at the largest
//! mesh (stages, iterations, time per iteration, the product's GB/s and share of the run's copy
//! bandwidth, memory per element beside the paper's), Fig. 8
//! (stage times against size), Fig. 9 (totals with and without coloring) and Fig. 10 (memory).

use polars::prelude::*;

use super::spec::*;
use crate::report::{fmt_num, frame, Figure, ReportCtx, ReportError, ReportItem, Series, Table};

/// The verified warm rows, one vector per column the reports read.
struct Rows {
    key: Vec<String>,
    /// Device, backend and precision of each row (the copy bandwidth's key).
    ident: Vec<[String; 3]>,
    method: Vec<String>,
    metric: Vec<String>,
    time: Vec<f64>,
    triangles: Vec<f64>,
    iterations: Vec<f64>,
    bytes_per_element: Vec<f64>,
    gbs: Vec<f64>,
    coloring: Vec<f64>,
    preprocessing: [Vec<f64>; 3],
}

fn read(df: &DataFrame) -> Result<Rows, ReportError> {
    let ok = df
        .clone()
        .lazy()
        .filter(col("status").eq(lit("ok")).and(col("mode").eq(lit("warm"))))
        .collect()
        .map_err(|e| ReportError::Column { column: "status".into(), detail: e.to_string() })?;
    let opt = |c: &str| frame::nums(&ok, c).unwrap_or_else(|_| vec![f64::NAN; ok.height()]);
    let (backend, device, precision) = (frame::strs(&ok, "backend")?, frame::strs(&ok, "device")?, frame::strs(&ok, "precision")?);
    Ok(Rows {
        key: (0..ok.height()).map(|i| format!("{} {} {}", device[i], backend[i], precision[i])).collect(),
        ident: (0..ok.height()).map(|i| [device[i].clone(), backend[i].clone(), precision[i].clone()]).collect(),
        method: frame::strs(&ok, "method")?,
        metric: frame::strs(&ok, "metric")?,
        time: frame::nums(&ok, "time_median_s")?,
        triangles: opt("triangles"),
        iterations: opt("iterations"),
        bytes_per_element: opt("bytes_per_element"),
        gbs: opt("bandwidth_gbs"),
        coloring: opt("coloring_s"),
        preprocessing: [opt("mesh_s"), opt("adjacency_s"), opt("preprocess_coloring_s")],
    })
}

fn find(r: &Rows, key: &str, method: &str, metric: &str, triangles: f64) -> Option<usize> {
    (0..r.key.len()).find(|&i| r.key[i] == key && r.method[i] == method && r.metric[i] == metric && r.triangles[i] == triangles)
}

/// Seconds per CG iteration of `method` at `triangles`: its solve stage over its iterations.
fn per_iteration(r: &Rows, key: &str, method: &str, triangles: f64) -> Option<f64> {
    let (solve, total) = (find(r, key, method, "solve", triangles)?, find(r, key, method, "total", triangles)?);
    Some(r.time[solve] / r.iterations[total])
}

pub(crate) fn report(id: &str, outputs: &Outputs, df: &DataFrame, ctx: &ReportCtx) -> Result<Vec<ReportItem>, ReportError> {
    let r = read(df)?;
    let mut keys: Vec<String> = r.key.clone();
    keys.sort();
    keys.dedup();
    let mut out = Vec::new();
    if outputs.tables.contains(&TableName::Largest) {
        out.push(ReportItem::Table(largest(id, &r, &keys, ctx)));
    }
    if outputs.tables.contains(&TableName::Claims) {
        out.push(ReportItem::Table(claims(id, &r, &keys)));
    }
    for f in &outputs.figures {
        for key in &keys {
            // A figure with nothing to draw (device memory of the CPU backend) is left out.
            let fig = figure(id, &r, key, *f);
            if fig.series.iter().any(|s| s.points.iter().any(|p| p.1.is_finite() && p.1 > 0.0)) {
                out.push(ReportItem::Figure(fig));
            }
        }
    }
    Ok(out)
}

fn largest(id: &str, r: &Rows, keys: &[String], ctx: &ReportCtx) -> Table {
    const STAGES: [&str; 6] = ["elements", "bc", "consolidate", "convert", "solve", "total"];
    let mut rows = Vec::new();
    for key in keys {
        let top = (0..r.key.len()).filter(|&i| &r.key[i] == key).map(|i| r.triangles[i]).fold(f64::NAN, f64::max);
        // Speed-ups over the vendor-library CG of the same device, backend and precision.
        let peer = Method::CusparseCg.as_str();
        let (peer_iteration, peer_total) = (per_iteration(r, key, peer, top), find(r, key, peer, "total", top).map(|i| r.time[i]));
        for m in Method::ALL {
            let Some(total) = find(r, key, m.as_str(), "total", top) else { continue };
            let ms = |metric: &str| find(r, key, m.as_str(), metric, top).map(|i| fmt_num(r.time[i] * 1e3)).unwrap_or_else(|| "-".into());
            let solve = find(r, key, m.as_str(), "solve", top).map(|i| r.time[i]).unwrap_or(f64::NAN);
            let it = r.iterations[total];
            let over_peer = |ours: Option<f64>, theirs: Option<f64>| match (ours, theirs) {
                (Some(a), Some(b)) if m != Method::CusparseCg => format!("{:.2}x", b / a),
                _ => "-".into(),
            };
            let with_coloring = r.time[total] + if r.coloring[total].is_finite() { r.coloring[total] } else { 0.0 };
            // The product on its own: time, GB/s by its compulsory bytes, share of the run's copy.
            let product = find(r, key, m.as_str(), "spmv", top);
            let [device, backend, precision] = &r.ident[total];
            let copy = ctx.copy_gbs(device, backend, precision);
            let share = match (product, copy) {
                (Some(i), Some(c)) if r.gbs[i].is_finite() => format!("{:.0}%", 100.0 * r.gbs[i] / c),
                _ => "-".into(),
            };
            let mut row = vec![key.clone(), m.as_str().to_string(), fmt_num(top)];
            row.extend(STAGES.iter().map(|s| ms(s)));
            row.extend([
                fmt_num(with_coloring * 1e3),
                fmt_num(it),
                fmt_num(solve / it * 1e6),
                product.map(|i| fmt_num(r.time[i] * 1e6)).unwrap_or_else(|| "-".into()),
                product.map(|i| fmt_num(r.gbs[i])).unwrap_or_else(|| "-".into()),
                share,
                fmt_num(r.bytes_per_element[total]),
                m.paper_bytes_per_element().map(fmt_num).unwrap_or_else(|| "-".into()),
                over_peer(per_iteration(r, key, m.as_str(), top), peer_iteration),
                over_peer(Some(r.time[total]), peer_total),
            ]);
            rows.push(row);
        }
    }
    let mut header: Vec<String> = ["device", "method", "triangles"].map(String::from).to_vec();
    header.extend(STAGES.iter().map(|s| format!("{s} ms")));
    header.extend(
        [
            "total + coloring ms",
            "CG iterations",
            "µs / iteration",
            "product µs",
            "product GB/s",
            "product of copy",
            "bytes / element",
            "paper bytes / element",
            "iteration vs cusparse-cg",
            "total vs cusparse-cg",
        ]
        .map(String::from),
    );
    Table {
        name: format!("{id}-largest"),
        title: "a-COO at the largest mesh: median stage times, CG, device memory".into(),
        header,
        rows,
        notes: vec![
            "Device stages are timed by device events; the CPU rows by the host clock (assembly as 'elements'). The coloring (EbE) is host pre-processing, added in 'total + coloring'.".into(),
            "bytes / element: peak device bytes of the method's buffers (mesh, lists or element matrices, CSR, CG vectors) over triangles; the paper's Fig. 10 values beside (its GPU and code, not ours).".into(),
            "CG runs in batches of 16 iterations between host checks; 'CG iterations' is where ||r|| <= tol ||b|| was first reached.".into(),
            "product: the method's matrix-vector product on its own (not in the total; cusparse-cg: cuSPARSE's CSR SpMV; EbE: every color's element products and the mask), timed by device events and checked on a probe vector against the f64 reference matrix. GB/s by its compulsory bytes (CSR: offsets, columns and values once, p read and q written once; EbE: element list, triangles, element matrices (v1) or coordinates (v2), p, q and the dof numbers once); 'of copy': over the copy bandwidth this run measured (device-bandwidth) on the same device, backend and precision, '-' where the run has none.".into(),
            "cusparse-cg is the peer a user would write: the csr-atomic assembly, then CG with cuSPARSE's CSR SpMV and cuBLAS' dot/axpy/scal, scalars on the host (two waits per iteration, convergence tested every iteration), timed as one region by device events. 'vs cusparse-cg': its time over the method's (above 1: the method is faster), same GPU, backend and precision, same run; 'iteration' compares the solve stage per CG iteration, 'total' the whole pass (assembly and boundary conditions included, coloring not).".into(),
        ],
    }
}

fn figure(id: &str, r: &Rows, key: &str, which: FigureName) -> Figure {
    let slug: String = key.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    let series_of = |method: &str, y: &dyn Fn(usize) -> f64| {
        let mut pts: Vec<(f64, f64)> = (0..r.key.len())
            .filter(|&i| r.key[i] == key && r.method[i] == method && r.metric[i] == "total")
            .map(|i| (r.triangles[i], y(i)))
            .filter(|p| p.1.is_finite())
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        pts
    };
    let mut series = Vec::new();
    let (name, title, y_label) = match which {
        FigureName::Stages => {
            for m in Method::ALL {
                for stage in ["elements", "bc", "consolidate", "convert", "solve"] {
                    let mut pts: Vec<(f64, f64)> = (0..r.key.len())
                        .filter(|&i| r.key[i] == key && r.method[i] == m.as_str() && r.metric[i] == stage)
                        .map(|i| (r.triangles[i], r.time[i] * 1e3))
                        .collect();
                    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                    if !pts.is_empty() {
                        series.push(Series { label: format!("{} {stage}", m.as_str()), points: pts, reference: false });
                    }
                }
            }
            ("stages", "Stage times against mesh size (Fig. 8)", "ms")
        }
        FigureName::Totals => {
            for m in Method::ALL {
                let pts = series_of(m.as_str(), &|i| r.time[i] * 1e3);
                if !pts.is_empty() {
                    series.push(Series { label: m.as_str().into(), points: pts, reference: false });
                }
                let colored =
                    series_of(m.as_str(), &|i| if r.coloring[i].is_finite() { (r.time[i] + r.coloring[i]) * 1e3 } else { f64::NAN });
                if !colored.is_empty() {
                    series.push(Series { label: format!("{} + coloring", m.as_str()), points: colored, reference: false });
                }
            }
            ("totals", "Totals with and without the coloring (Fig. 9)", "ms")
        }
        FigureName::Memory => {
            for m in Method::ALL {
                let mut pts = series_of(m.as_str(), &|i| r.bytes_per_element[i] * r.triangles[i] / 1e6);
                pts.retain(|p| p.1.is_finite() && p.1 > 0.0);
                if !pts.is_empty() {
                    series.push(Series { label: m.as_str().into(), points: pts.clone(), reference: false });
                }
                if let Some(b) = m.paper_bytes_per_element() {
                    let paper: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, b * p.0 / 1e6)).collect();
                    if !paper.is_empty() {
                        series.push(Series { label: format!("{} (paper, {b} B/el.)", m.as_str()), points: paper, reference: true });
                    }
                }
            }
            ("memory", "Device memory against triangles (Fig. 10)", "MB")
        }
        FigureName::Preprocessing => {
            for (k, label) in ["mesh generation", "adjacency (numbering, CSR pattern, slots)", "coloring"].iter().enumerate() {
                let mut pts: Vec<(f64, f64)> = (0..r.key.len())
                    .filter(|&i| r.key[i] == key && r.metric[i] == "total" && r.preprocessing[k][i].is_finite())
                    .map(|i| (r.triangles[i], r.preprocessing[k][i] * 1e3))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                pts.dedup_by(|a, b| a.0 == b.0);
                if !pts.is_empty() {
                    series.push(Series { label: label.to_string(), points: pts, reference: false });
                }
            }
            ("preprocessing", "Host pre-processing against mesh size (Fig. 5)", "ms")
        }
    };
    Figure {
        name: format!("{id}-{name}-{slug}"),
        title: format!("{title}: {key}"),
        x_label: "triangles".into(),
        y_label: y_label.into(),
        log_x: true,
        log_y: true,
        series,
    }
}

/// Least-squares slope of log y against log x (the exponent of a power law); NaN with fewer
/// than two points.
fn loglog_slope(pts: &[(f64, f64)]) -> f64 {
    let p: Vec<(f64, f64)> = pts.iter().filter(|p| p.0 > 0.0 && p.1 > 0.0).map(|p| (p.0.ln(), p.1.ln())).collect();
    if p.len() < 2 {
        return f64::NAN;
    }
    let n = p.len() as f64;
    let (mx, my) = (p.iter().map(|q| q.0).sum::<f64>() / n, p.iter().map(|q| q.1).sum::<f64>() / n);
    let sxy: f64 = p.iter().map(|q| (q.0 - mx) * (q.1 - my)).sum();
    let sxx: f64 = p.iter().map(|q| (q.0 - mx).powi(2)).sum();
    sxy / sxx
}

/// The paper's claims, each judged on this run's rows.
fn claims(id: &str, r: &Rows, keys: &[String]) -> Table {
    let mut rows = Vec::new();
    let papers_methods = [Method::AFem, Method::EbeV1, Method::EbeV2].map(Method::as_str);
    for key in keys.iter().filter(|k| (0..r.key.len()).any(|i| &r.key[i] == *k && papers_methods.contains(&r.method[i].as_str()))) {
        let top = (0..r.key.len()).filter(|&i| &r.key[i] == key).map(|i| r.triangles[i]).fold(f64::NAN, f64::max);
        let at = |m: Method| find(r, key, m.as_str(), "total", top);
        let verdict = |b: Option<bool>| match b {
            Some(true) => "holds",
            Some(false) => "does not hold",
            None => "not measured",
        };
        // 1. Memory: EbE-v2 < EbE-v1 < A-FEM.
        let bpe = |m: Method| at(m).map(|i| r.bytes_per_element[i]);
        let mem = match (bpe(Method::EbeV2), bpe(Method::EbeV1), bpe(Method::AFem)) {
            (Some(a), Some(b), Some(c)) => {
                (Some(a < b && b < c), format!("{} < {} < {} bytes/element", fmt_num(a), fmt_num(b), fmt_num(c)))
            }
            _ => (None, "-".into()),
        };
        rows.push(vec![key.clone(), "memory: EbE-v2 < EbE-v1 < A-FEM".into(), verdict(mem.0).into(), mem.1]);
        // 2. A-FEM, without coloring, competitive with EbE once its coloring is counted.
        let afem = at(Method::AFem).map(|i| r.time[i]);
        let ebe = [Method::EbeV1, Method::EbeV2]
            .iter()
            .filter_map(|&m| at(m).map(|i| r.time[i] + r.coloring[i].max(0.0)))
            .fold(f64::NAN, f64::min);
        let comp = match afem {
            Some(a) if ebe.is_finite() => {
                (Some(a <= ebe), format!("A-FEM {} ms, best EbE + coloring {} ms", fmt_num(a * 1e3), fmt_num(ebe * 1e3)))
            }
            _ => (None, "-".into()),
        };
        rows.push(vec![key.clone(), "A-FEM (no coloring) competitive once coloring is counted".into(), verdict(comp.0).into(), comp.1]);
        // Goals (the issue's, not the paper's): against the vendor-library CG of the same run.
        if let Some(peer) = at(Method::CusparseCg) {
            let ours = [Method::AFem, Method::EbeV1, Method::EbeV2, Method::CsrAtomic, Method::CsrColor];
            let best = |y: &dyn Fn(usize) -> Option<f64>| {
                ours.iter().filter_map(|&m| at(m).and_then(y).map(|v| (v, m.as_str()))).min_by(|a, b| a.0.total_cmp(&b.0))
            };
            let it_of = |i: usize| per_iteration(r, key, &r.method[i], top);
            let peer_it = it_of(peer);
            if let (Some((b, name)), Some(p)) = (best(&it_of), peer_it) {
                rows.push(vec![
                    key.clone(),
                    "goal: the best CG iteration within 10% of the cuSPARSE/cuBLAS CG's, or faster".into(),
                    verdict(Some(b <= 1.1 * p)).into(),
                    format!("{name} {} µs, cusparse-cg {} µs per iteration", fmt_num(b * 1e6), fmt_num(p * 1e6)),
                ]);
            }
            if let Some((b, name)) = best(&|i| Some(r.time[i])) {
                let p = r.time[peer];
                rows.push(vec![
                    key.clone(),
                    "goal: the best total (assembly + solve) beats the cuSPARSE/cuBLAS path".into(),
                    verdict(Some(b < p)).into(),
                    format!("{name} {} ms, cusparse-cg {} ms", fmt_num(b * 1e3), fmt_num(p * 1e3)),
                ]);
            }
        }
        // Goal: A-FEM's assembly (elements, boundary conditions, consolidation, conversion)
        // within 2x of the colored assembly into CSR (coloring not counted); the atomic one beside.
        let stage = |m: &str, st: &str| find(r, key, m, st, top).map(|i| r.time[i]);
        let afem_asm: Option<f64> = ["elements", "bc", "consolidate", "convert"].iter().map(|st| stage("a-fem", st)).sum();
        if let (Some(a), Some(col)) = (afem_asm, stage(Method::CsrColor.as_str(), "elements")) {
            let atomic = stage(Method::CsrAtomic.as_str(), "elements")
                .map_or(String::new(), |t| format!(", csr-atomic {:.3} ms ({:.2}x)", t * 1e3, a / t));
            rows.push(vec![
                key.clone(),
                "goal: A-FEM's assembly + CSR conversion within 2x of the colored CSR assembly".into(),
                verdict(Some(a <= 2.0 * col)).into(),
                format!("A-FEM {:.3} ms, csr-color {:.3} ms ({:.2}x){atomic}", a * 1e3, col * 1e3, a / col),
            ]);
        }
        // 3. Linear growth with size: the exponent of total time and of memory in triangles.
        for m in [Method::AFem, Method::EbeV1, Method::EbeV2] {
            let pts = |y: &dyn Fn(usize) -> f64| -> Vec<(f64, f64)> {
                (0..r.key.len())
                    .filter(|&i| &r.key[i] == key && r.method[i] == m.as_str() && r.metric[i] == "total")
                    .map(|i| (r.triangles[i], y(i)))
                    .collect()
            };
            let (t, b) = (loglog_slope(&pts(&|i| r.time[i])), loglog_slope(&pts(&|i| r.bytes_per_element[i] * r.triangles[i])));
            let linear = |e: f64| (e.is_finite()).then_some((0.85..=1.15).contains(&e));
            rows.push(vec![
                key.clone(),
                format!("{}: linear growth of time and memory", m.as_str()),
                format!("time {}, memory {}", verdict(linear(t)), verdict(linear(b))),
                format!("time ~ triangles^{}, memory ~ triangles^{}", fmt_num(t), fmt_num(b)),
            ]);
        }
    }
    Table {
        name: format!("{id}-claims"),
        title: "The paper's claims on this run".into(),
        header: ["device", "claim", "verdict", "measured"].map(String::from).to_vec(),
        rows,
        notes: vec![
            "Rows marked 'goal' are fembench's targets, not the paper's claims: against the same-run vendor-library CG (cusparse-cg), and A-FEM's assembly (elements + bc + consolidate + convert stages) against the colored assembly of the same matrix (csr-color's elements stage: one launch per color, coloring not counted).".into(),
            "Judged at the largest size of each device; 'linear' means a least-squares exponent within 0.85-1.15 over the sizes run (CG iterations grow with the mesh, so the solve is expected to grow faster than linearly).".into(),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Warm rows at one size: (method, metric, seconds), 100 CG iterations each.
    fn rows(rows: &[(&str, &str, f64)]) -> Rows {
        let n = rows.len();
        let strs = vec![
            ("device", vec!["GPU".into(); n]),
            ("backend", vec!["cuda".into(); n]),
            ("precision", vec!["f64".into(); n]),
            ("status", vec!["ok".into(); n]),
            ("mode", vec!["warm".into(); n]),
            ("method", rows.iter().map(|r| r.0.to_string()).collect()),
            ("metric", rows.iter().map(|r| r.1.to_string()).collect()),
        ];
        // The products (metric "spmv") move 3000 GB/s.
        let gbs = rows.iter().map(|r| if r.1 == "spmv" { 3000.0 } else { f64::NAN }).collect();
        let nums = vec![
            ("time_median_s", rows.iter().map(|r| r.2).collect()),
            ("triangles", vec![1e6; n]),
            ("iterations", vec![100.0; n]),
            ("bandwidth_gbs", gbs),
        ];
        read(&frame::of_columns(n, strs, nums).unwrap()).unwrap()
    }

    #[test]
    fn the_peer_ratios_and_goals_follow_the_rows() {
        let keys = ["GPU cuda f64".to_string()];
        // a-fem and csr-atomic (1.0 ms a solve, 10 us an iteration, 1.2 ms in all) against the
        // peer's solve and total.
        let with_peer = |solve: f64, total: f64| {
            rows(&[
                ("a-fem", "solve", 1.1e-3),
                ("a-fem", "total", 1.4e-3),
                ("csr-atomic", "solve", 1.0e-3),
                ("csr-atomic", "total", 1.2e-3),
                ("csr-atomic", "spmv", 4.0e-6),
                ("cusparse-cg", "solve", solve),
                ("cusparse-cg", "total", total),
            ])
        };
        let r = with_peer(1.5e-3, 1.6e-3);
        // The run's copy bandwidth on that device, backend and precision: 4000 GB/s.
        let ctx = ReportCtx { meta: Default::default(), copy_gbs: vec![("GPU".into(), "cuda".into(), "f64".into(), 4000.0)] };
        let t = largest("x", &r, &keys, &ctx);
        let ours = t.rows.iter().find(|row| row[1] == "csr-atomic").unwrap();
        assert_eq!(ours[ours.len() - 2..], ["1.50x".to_string(), "1.33x".to_string()]);
        let at = |name: &str| t.header.iter().position(|h| h == name).unwrap();
        assert_eq!((ours[at("product µs")].as_str(), ours[at("product GB/s")].as_str()), ("4.00", "3000"));
        assert_eq!(ours[at("product of copy")], "75%");
        // No product row, or no copy figure in the run: '-'.
        let afem = t.rows.iter().find(|row| row[1] == "a-fem").unwrap();
        assert_eq!(afem[at("product of copy")], "-");
        let bare = largest("x", &r, &keys, &ReportCtx { meta: Default::default(), copy_gbs: vec![] });
        let ours = bare.rows.iter().find(|row| row[1] == "csr-atomic").unwrap();
        assert_eq!((ours[at("product GB/s")].as_str(), ours[at("product of copy")].as_str()), ("3000", "-"));
        let peer = t.rows.iter().find(|row| row[1] == "cusparse-cg").unwrap();
        assert_eq!(peer[peer.len() - 2..], ["-".to_string(), "-".to_string()]);
        let goals = |r: &Rows| -> Vec<String> {
            claims("x", r, &keys).rows.into_iter().filter(|row| row[1].starts_with("goal")).map(|row| row[2].clone()).collect()
        };
        assert_eq!(goals(&r), ["holds", "holds"]);
        // A peer faster by more than 10% an iteration and in total: both goals fail.
        let slow = with_peer(0.8e-3, 0.9e-3);
        assert_eq!(goals(&slow), ["does not hold", "does not hold"]);
    }

    #[test]
    fn the_assembly_goal_compares_the_afem_stages_with_the_colored_assembly() {
        let keys = ["GPU cuda f64".to_string()];
        // A-FEM's four assembly stages sum to 2.0 ms; csr-color assembles in `colored` seconds.
        let with = |colored: f64| {
            rows(&[
                ("a-fem", "elements", 0.5e-3),
                ("a-fem", "bc", 0.2e-3),
                ("a-fem", "consolidate", 1.0e-3),
                ("a-fem", "convert", 0.3e-3),
                ("a-fem", "solve", 1.0e-3),
                ("a-fem", "total", 3.0e-3),
                ("csr-color", "elements", colored),
                ("csr-color", "solve", 1.0e-3),
                ("csr-color", "total", 1.0e-3 + colored),
                ("csr-atomic", "elements", 0.25e-3),
                ("csr-atomic", "total", 1.25e-3),
            ])
        };
        let goal = |r: &Rows| -> Vec<String> {
            claims("x", r, &keys).rows.into_iter().find(|row| row[1].starts_with("goal: A-FEM's assembly")).unwrap()
        };
        let holds = goal(&with(1.0e-3));
        assert_eq!(holds[2], "holds");
        assert_eq!(holds[3], "A-FEM 2.000 ms, csr-color 1.000 ms (2.00x), csr-atomic 0.250 ms (8.00x)");
        assert_eq!(goal(&with(0.9e-3))[2], "does not hold");
    }

    #[test]
    fn loglog_slope_recovers_a_power_law() {
        let pts: Vec<(f64, f64)> = [1e3, 4e3, 1.6e4, 6.4e4].iter().map(|&x: &f64| (x, 3.0 * x.powf(1.5))).collect();
        assert!((loglog_slope(&pts) - 1.5).abs() < 1e-12);
        assert!(loglog_slope(&pts[..1]).is_nan());
    }
}
