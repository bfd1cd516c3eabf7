//! Tables and figures of the a-COO experiments, from stored rows only: the table at the largest
//! mesh (stages, iterations, time per iteration, the product's GB/s and share of the run's copy
//! bandwidth, memory per element beside the paper's), Fig. 8
//! (stage times against size), Fig. 9 (totals with and without coloring) and Fig. 10 (memory).

use polars::prelude::*;

use super::spec::{FigureName, Method, Outputs, TableName};
use crate::report::{fmt_num, frame, Figure, ReportCtx, ReportError, ReportItem, Series, Table};

/// The verified warm rows, one vector per column the reports read.
pub(crate) struct Rows {
    pub(crate) key: Vec<String>,
    /// Device, backend and precision of each row (the copy bandwidth's key).
    pub(crate) ident: Vec<[String; 3]>,
    pub(crate) method: Vec<String>,
    pub(crate) metric: Vec<String>,
    pub(crate) time: Vec<f64>,
    pub(crate) lo: Vec<f64>,
    pub(crate) hi: Vec<f64>,
    pub(crate) triangles: Vec<f64>,
    pub(crate) iterations: Vec<f64>,
    pub(crate) bytes_per_element: Vec<f64>,
    pub(crate) gbs: Vec<f64>,
    pub(crate) coloring: Vec<f64>,
    pub(crate) preprocessing: [Vec<f64>; 3],
}

pub(crate) fn read(df: &DataFrame) -> Result<Rows, ReportError> {
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
        lo: opt("time_ci_low_s"),
        hi: opt("time_ci_high_s"),
        triangles: opt("triangles"),
        iterations: opt("iterations"),
        bytes_per_element: opt("bytes_per_element"),
        gbs: opt("bandwidth_gbs"),
        coloring: opt("coloring_s"),
        preprocessing: [opt("mesh_s"), opt("adjacency_s"), opt("preprocess_coloring_s")],
    })
}

pub(crate) fn find(r: &Rows, key: &str, method: &str, metric: &str, triangles: f64) -> Option<usize> {
    (0..r.key.len()).find(|&i| r.key[i] == key && r.method[i] == method && r.metric[i] == metric && r.triangles[i] == triangles)
}

/// Seconds per CG iteration of `method` at `triangles`: its solve stage over its iterations.
pub(crate) fn per_iteration(r: &Rows, key: &str, method: &str, triangles: f64) -> Option<f64> {
    let (solve, total) = (find(r, key, method, "solve", triangles)?, find(r, key, method, "total", triangles)?);
    Some(r.time[solve] / r.iterations[total])
}

/// Each device, backend and precision of the rows, sorted.
pub(crate) fn keys(r: &Rows) -> Vec<String> {
    let mut keys: Vec<String> = r.key.clone();
    keys.sort();
    keys.dedup();
    keys
}

/// The tables and figures but the ledger (claims.rs; the benchmark adds it).
pub(crate) fn report(id: &str, outputs: &Outputs, df: &DataFrame, ctx: &ReportCtx) -> Result<Vec<ReportItem>, ReportError> {
    let r = read(df)?;
    let keys = keys(&r);
    let mut out = Vec::new();
    if outputs.tables.contains(&TableName::Largest) {
        out.push(ReportItem::Table(largest(id, &r, &keys, ctx, df.column("cg_graph").is_ok())));
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

const STAGES: [&str; 6] = ["elements", "bc", "consolidate", "convert", "solve", "total"];

/// A peer's figures at one size: its time per CG iteration and its total, where it has rows.
type PeerTimes = (Option<f64>, Option<f64>);

/// `launches`: the rows say how each device CG ran (`cg_graph`, `cg_fused`).
fn largest(id: &str, r: &Rows, keys: &[String], ctx: &ReportCtx, launches: bool) -> Table {
    let (mut rows, mut wins) = (Vec::new(), Vec::new());
    for key in keys {
        let top = (0..r.key.len()).filter(|&i| &r.key[i] == key).map(|i| r.triangles[i]).fold(f64::NAN, f64::max);
        let times = |m: Method| (per_iteration(r, key, m.as_str(), top), find(r, key, m.as_str(), "total", top).map(|i| r.time[i]));
        // Speed-ups over the vendor-library CGs of the same device, backend and precision, the
        // strongest (the graph of device-scalar calls) first, then over the fastest library route.
        let mut peers: Vec<PeerTimes> = Method::PEERS.iter().map(|&p| times(p)).collect();
        let library = Method::libraries().into_iter().filter_map(|m| times(m).1.map(|t| (m, t))).min_by(|a, b| a.1.total_cmp(&b.1));
        peers.push(library.map_or((None, None), |(m, _)| times(m)));
        let ours = Method::of_role(crate::methods::Role::Paper)
            .into_iter()
            .chain(Method::of_role(crate::methods::Role::Beyond))
            .filter_map(|m| times(m).1.map(|t| (m, t)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        if let (Some((lib, tl)), Some((best, to))) = (library, ours) {
            if tl < to {
                wins.push(format!(
                    "{} ({} ms) beats our fastest method, {} ({} ms), on {key} at {} triangles",
                    lib.as_str(),
                    fmt_num(tl * 1e3),
                    best.as_str(),
                    fmt_num(to * 1e3),
                    fmt_num(top)
                ));
            }
        }
        for m in Method::all() {
            if let Some(total) = find(r, key, m.as_str(), "total", top) {
                rows.push(largest_row(r, ctx, (key, top), m, total, &peers));
            }
        }
    }
    let mut notes = largest_notes(launches);
    if !wins.is_empty() {
        notes.insert(0, format!("A library route beats ours (total per pass): {}.", wins.join("; ")));
    }
    Table {
        name: format!("{id}-largest"),
        title: "a-COO at the largest mesh: median stage times, CG, device memory".into(),
        header: largest_header(),
        rows,
        notes,
    }
}

/// One method's line of the largest-mesh table (`at`: device key and triangles; `total`: its
/// total row); `peers`: each vendor peer's times, then the fastest library route's.
fn largest_row(r: &Rows, ctx: &ReportCtx, at: (&String, f64), m: Method, total: usize, peers: &[PeerTimes]) -> Vec<String> {
    let (key, top) = at;
    let ms = |metric: &str| find(r, key, m.as_str(), metric, top).map(|i| fmt_num(r.time[i] * 1e3)).unwrap_or_else(|| "-".into());
    let solve = find(r, key, m.as_str(), "solve", top).map(|i| r.time[i]).unwrap_or(f64::NAN);
    let it = r.iterations[total];
    let over_peer = |ours: Option<f64>, theirs: Option<f64>| match (ours, theirs) {
        (Some(a), Some(b)) => format!("{:.2}x", b / a),
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
    ]);
    for &(peer_iteration, peer_total) in peers {
        row.push(over_peer(per_iteration(r, key, m.as_str(), top), peer_iteration));
        row.push(over_peer(Some(r.time[total]), peer_total));
    }
    row
}

fn largest_header() -> Vec<String> {
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
        ]
        .map(String::from),
    );
    for p in Method::PEERS.iter().map(|p| p.as_str()).chain(["fastest library"]) {
        header.extend(["iteration", "total"].map(|what| format!("{what} vs {p}")));
    }
    header
}

fn largest_notes(launches: bool) -> Vec<String> {
    let cg = if launches {
        "CG runs in batches of 16 iterations between host checks; 'CG iterations' is where ||r|| <= tol ||b|| was first reached. Our CG (a-fem, ebe-v1, ebe-v2, csr-atomic, csr-color) and cusparse-cg-graph replay each full batch as one CUDA graph on CUDA (recorded once a solve, untimed; the rows' cg_graph is 1), and enqueue it launch by launch on OpenCL. Our CSR CG (a-fem, csr-atomic, csr-color) runs in the form its rows name: cg_single 1, Chronopoulos and Gear's single-reduction CG, two launches an iteration (the vector updates with the product, then the reduction of its two dot products); else cg_fused 1, the direction p = r + beta p formed inside the product, four launches (product, alpha, x and r, beta). EbE's CG has the direction update as a fifth launch."
    } else {
        "CG runs in batches of 16 iterations between host checks; 'CG iterations' is where ||r|| <= tol ||b|| was first reached."
    };
    vec![
            "Device stages are timed by device events; the CPU rows by the host clock (assembly as 'elements'). The coloring (EbE) is host pre-processing, added in 'total + coloring'.".into(),
            "bytes / element: peak device bytes of the method's buffers (mesh, lists or element matrices, CSR, CG vectors) over triangles; the paper's Fig. 10 values beside (its GPU and code, not ours).".into(),
            cg.into(),
            "product: the method's matrix-vector product on its own (not in the total; the cusparse-cg peers: cuSPARSE's CSR SpMV; EbE: every color's element products and the mask), timed by device events and checked on a probe vector against the f64 reference matrix. GB/s by its compulsory bytes (CSR: offsets, columns and values once, p read and q written once; EbE: element list, triangles, element matrices (v1) or coordinates (v2), p, q and the dof numbers once); 'of copy': over the copy bandwidth this run measured (device-bandwidth) on the same device, backend and precision, '-' where the run has none.".into(),
            "The peers, both the csr-atomic assembly then CG with cuSPARSE's CSR SpMV and cuBLAS' dot/axpy/scal (CUDA only), strongest first: cusparse-cg-graph, what an expert writes (NVIDIA's CUDA-graph CG sample: cuBLAS in device pointer mode, alpha and beta formed by one-thread kernels, a batch of 16 iterations recorded once as a CUDA graph and replayed by one launch, convergence tested between batches as in our CG; device events); cusparse-cg-device, the same without the graph (each batch's calls enqueued one by one, no host wait inside a batch); cusparse-cg, NVIDIA's plain CG sample (scalars on the host: two waits per iteration, convergence tested every iteration; timed as one region by device events with the host's waits inside). 'vs <peer>': its time over the method's (above 1: the method is faster), same GPU, backend and precision, same run; 'iteration' compares the solve stage per CG iteration, 'total' the whole pass (assembly and boundary conditions included, coloring not).".into(),
        "vs fastest library: the faster (by total) of the routes of a user of a GPU library, same GPU, backend and precision, same run: warp-cg (NVIDIA Warp: one Warp kernel adds every element matrix into a warp.sparse matrix on our CSR pattern through the slot map; warp.optim.linear.cg with its buffers allocated once, convergence tested on the device every iteration, Warp records its loop as a conditional CUDA graph and launches it at every solve; Warp's events around each stage) and jax-cg (JAX: the element stage one jitted function with jax.ops.segment_sum into the slots; jax.scipy.sparse.linalg.cg inside jit on BCSR, whose SpMV is cuSPARSE's; host clock and block_until_ready around each stage; its iteration count from one more untimed solve: where its library column says 'iterations counted by the same CG', by the same conjugate gradients with JAX's stopping rule in a lax.while_loop that keeps its count (on a GPU it can differ from the timed solve's by an iteration or two, as the reductions round); elsewhere by JAX's CG with a host callback that counts its products). warp-cpu and jax-cpu are the same on the libraries' CPU devices.".into(),
    ]
}

fn figure(id: &str, r: &Rows, key: &str, which: FigureName) -> Figure {
    let slug: String = key.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    let (name, title, y_label, series) = match which {
        FigureName::Stages => ("stages", "Stage times against mesh size (Fig. 8)", "ms", stage_series(r, key)),
        FigureName::Totals => ("totals", "Totals with and without the coloring (Fig. 9)", "ms", total_series(r, key)),
        FigureName::Memory => ("memory", "Device memory against triangles (Fig. 10)", "MB", memory_series(r, key)),
        FigureName::Preprocessing => {
            ("preprocessing", "Host pre-processing against mesh size (Fig. 5)", "ms", preprocessing_series(r, key))
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

/// `method`'s whole-solve rows of `key`: (triangles, y(row)), finite only, by triangles.
fn totals_of(r: &Rows, key: &str, method: &str, y: &dyn Fn(usize) -> f64) -> Vec<(f64, f64)> {
    let mut pts: Vec<(f64, f64)> = (0..r.key.len())
        .filter(|&i| r.key[i] == key && r.method[i] == method && r.metric[i] == "total")
        .map(|i| (r.triangles[i], y(i)))
        .filter(|p| p.1.is_finite())
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    pts
}

/// Fig. 8: each method's stage times (ms) against triangles.
fn stage_series(r: &Rows, key: &str) -> Vec<Series> {
    let mut series = Vec::new();
    for m in Method::all() {
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
    series
}

/// Fig. 9: each method's total (ms), and the total with its coloring where it has one.
fn total_series(r: &Rows, key: &str) -> Vec<Series> {
    let mut series = Vec::new();
    for m in Method::all() {
        let pts = totals_of(r, key, m.as_str(), &|i| r.time[i] * 1e3);
        if !pts.is_empty() {
            series.push(Series { label: m.as_str().into(), points: pts, reference: false });
        }
        let colored =
            totals_of(r, key, m.as_str(), &|i| if r.coloring[i].is_finite() { (r.time[i] + r.coloring[i]) * 1e3 } else { f64::NAN });
        if !colored.is_empty() {
            series.push(Series { label: format!("{} + coloring", m.as_str()), points: colored, reference: false });
        }
    }
    series
}

/// Fig. 10: each method's device memory (MB), and the paper's bytes per element where it gives them.
fn memory_series(r: &Rows, key: &str) -> Vec<Series> {
    let mut series = Vec::new();
    for m in Method::all() {
        let mut pts = totals_of(r, key, m.as_str(), &|i| r.bytes_per_element[i] * r.triangles[i] / 1e6);
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
    series
}

/// Fig. 5: the host's pre-processing stages (ms), once per mesh size.
fn preprocessing_series(r: &Rows, key: &str) -> Vec<Series> {
    let mut series = Vec::new();
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
    series
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Warm rows at one size: (method, metric, seconds), 100 CG iterations each.
    pub(crate) fn rows(rows: &[(&str, &str, f64)]) -> Rows {
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

    /// a-fem and csr-atomic (1.0 ms a solve, 10 us an iteration, 1.2 ms in all) against the
    /// peer's solve and total.
    pub(crate) fn with_peer(solve: f64, total: f64) -> Rows {
        rows(&[
            ("a-fem", "solve", 1.1e-3),
            ("a-fem", "total", 1.4e-3),
            ("csr-atomic", "solve", 1.0e-3),
            ("csr-atomic", "total", 1.2e-3),
            ("csr-atomic", "spmv", 4.0e-6),
            ("cusparse-cg", "solve", solve),
            ("cusparse-cg", "total", total),
        ])
    }

    /// The fastest library route's columns, and the note said first where it beats our fastest.
    #[test]
    fn a_library_that_beats_ours_is_said_first() {
        let keys = ["GPU cuda f64".to_string()];
        let mut list = vec![
            ("csr-atomic", "solve", 1.0e-3),
            ("csr-atomic", "total", 1.2e-3),
            ("warp-cg", "solve", 1.6e-3),
            ("warp-cg", "total", 2.4e-3),
        ];
        let t = largest("x", &rows(&list), &keys, &ReportCtx { meta: Default::default(), copy_gbs: vec![] }, true);
        let at = |name: &str| t.header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"));
        let ours = t.rows.iter().find(|row| row[1] == "csr-atomic").unwrap();
        assert_eq!(ours[at("total vs fastest library")], "2.00x");
        assert!(!t.notes[0].starts_with("A library"));
        list.extend([("jax-cg", "solve", 0.5e-3), ("jax-cg", "total", 0.9e-3)]);
        let t = largest("x", &rows(&list), &keys, &ReportCtx { meta: Default::default(), copy_gbs: vec![] }, true);
        let ours = t.rows.iter().find(|row| row[1] == "csr-atomic").unwrap();
        assert_eq!(ours[at("total vs fastest library")], "0.75x");
        assert!(t.notes[0].starts_with("A library route beats ours") && t.notes[0].contains("jax-cg"), "{}", t.notes[0]);
    }

    #[test]
    fn the_peer_ratios_follow_the_rows() {
        let keys = ["GPU cuda f64".to_string()];
        let r = with_peer(1.5e-3, 1.6e-3);
        // The run's copy bandwidth on that device, backend and precision: 4000 GB/s.
        let ctx = ReportCtx { meta: Default::default(), copy_gbs: vec![("GPU".into(), "cuda".into(), "f64".into(), 4000.0)] };
        let t = largest("x", &r, &keys, &ctx, true);
        let ours = t.rows.iter().find(|row| row[1] == "csr-atomic").unwrap();
        let at = |name: &str| t.header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"));
        assert_eq!([&ours[at("iteration vs cusparse-cg")], &ours[at("total vs cusparse-cg")]], ["1.50x", "1.33x"]);
        assert_eq!(ours[at("total vs fastest library")], "-", "no library rows here");
        assert!(!t.notes[0].starts_with("A library"), "{}", t.notes[0]);
        assert_eq!((ours[at("product µs")].as_str(), ours[at("product GB/s")].as_str()), ("4.00", "3000"));
        assert_eq!(ours[at("product of copy")], "75%");
        // No product row, or no copy figure in the run: '-'.
        let afem = t.rows.iter().find(|row| row[1] == "a-fem").unwrap();
        assert_eq!(afem[at("product of copy")], "-");
        let bare = largest("x", &r, &keys, &ReportCtx { meta: Default::default(), copy_gbs: vec![] }, true);
        let ours = bare.rows.iter().find(|row| row[1] == "csr-atomic").unwrap();
        assert_eq!((ours[at("product GB/s")].as_str(), ours[at("product of copy")].as_str()), ("3000", "-"));
        // Every peer's columns, the strongest first; a peer against itself is 1.
        let peer = t.rows.iter().find(|row| row[1] == "cusparse-cg").unwrap();
        assert_eq!([&peer[at("iteration vs cusparse-cg")], &peer[at("total vs cusparse-cg")]], ["1.00x", "1.00x"]);
        assert!(at("iteration vs cusparse-cg-device") < at("iteration vs cusparse-cg"));
        assert_eq!(ours[at("total vs cusparse-cg-device")], "-", "no rows of that peer here");
        // The CG's launches are described only where the rows say how it ran.
        let graph = |t: &Table| t.notes.iter().any(|n| n.contains("one CUDA graph") && n.contains("cg_single 1"));
        assert!(graph(&t));
        assert!(!graph(&largest("x", &r, &keys, &ctx, false)));
    }
}
