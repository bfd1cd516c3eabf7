//! The README's numbers are the published rows': each figure of "Results at a glance" is
//! computed here from the runs it names, printed as the README prints it, and looked up in the
//! README; the claim counts are counted from the H200 report's ledgers. A README number that
//! drifts from its rows fails with what the rows give.

use fembench::results::RunDir;
use polars::prelude::*;

use crate::common;

/// The median of one row (`column`: `time_median_s` or `bandwidth_gbs`) of a published run.
pub(crate) fn row(gpu: &str, experiment: &str, case: &str, metric: &str, column: &str) -> f64 {
    let run = RunDir::open(&common::published(gpu)).unwrap();
    let df = run.read_experiment(experiment).unwrap().unwrap_or_else(|| panic!("{gpu}: no {experiment} rows"));
    let pick = df
        .lazy()
        .filter(col("case_id").eq(lit(case)).and(col("metric").eq(lit(metric))))
        .select([col(column).cast(DataType::Float64)])
        .collect()
        .unwrap();
    let v = pick.column(column).unwrap().f64().unwrap().get(0);
    v.unwrap_or_else(|| panic!("{gpu}: no {experiment} row {case} / {metric}"))
}

pub(crate) fn t(gpu: &str, experiment: &str, case: &str, metric: &str) -> f64 {
    row(gpu, experiment, case, metric, "time_median_s")
}

/// `v` to `n` significant digits, as the README prints it (no exponent).
pub(crate) fn sig(v: f64, n: i32) -> String {
    let digits = (n - 1 - v.abs().log10().floor() as i32).max(0) as usize;
    format!("{v:.digits$}")
}

fn readme() -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap()
}

#[test]
fn the_results_at_a_glance_are_the_published_rows() {
    let text = readme();
    let glance = &text[text.find("## Results at a glance").unwrap()..text.find("## Install").unwrap()];
    let cecka = |m: &str| format!("cuda/f32/method={m},level=7,order=1,min_colors=0");
    let sa = |g: &str| t(g, "cecka-sizes", &cecka("shared-atomic"), "shared-atomic");
    let over_sa = |m: &'static str, n: i32| move |g: &str| sig(t(g, "cecka-sizes", &cecka(m), m) / sa(g), n) + "x";
    let acoo = |g: &str, m: &str| {
        let case = format!("cuda/f64/method={m},level=3");
        t(g, "acoo-capacitor", &case, "solve") / row(g, "acoo-capacitor", &case, "solve", "iterations")
    };
    let sanfui = |g: &str, m: &str, stages: &[&str]| {
        let case = format!("cuda/f64/method={m},nx=200,ny=50,nz=50");
        stages.iter().map(|s| t(g, "sanfui-formats", &case, s)).sum::<f64>()
    };
    let ellm = |g: &str| sanfui(g, "ellm-gather", &["symbolic", "numeric"]);
    let pogo = |g: &str, m: &str| t(g, "pogo-weld", &format!("cuda/f64/method={m},model=weld,coarsen=1"), "step");
    let banas = |g: &str, m: &str| t(g, "banas-integration", &format!("cuda/f32/method={m},degree=7"), "kernel");
    let g = "h200";
    let figures = [
        format!("{:.0} GB/s", row(g, "device-bandwidth", "cuda/f64/kernel=copy,array_mib=512", "copy", "bandwidth_gbs")),
        sig(sa(g) * 1e3, 3) + " ms",
        over_sa("slot-scatter", 2)(g) + " the slot-map route",
        over_sa("coo-radix", 2)(g) + " the COO route",
        format!("{:.1}x", t(g, "cecka-sizes", &cecka("torch-index-add"), "torch-index-add") / sa(g)) + " PyTorch's own route",
        over_sa("cupy-tocsr", 2)(g) + " CuPy's `tocsr` route",
        {
            // The FEM libraries, on the H200 only: f32, then f64.
            let lib = |m: &str, prec: &str| {
                let case = |m: &str| format!("cuda/{prec}/method={m},level=7,order=1,min_colors=0");
                t("h200", "cecka-sizes", &case(m), m) / t("h200", "cecka-sizes", &case("shared-atomic"), "shared-atomic")
            };
            let x = |v: f64| if v >= 10.0 { format!("{v:.0}x") } else { format!("{v:.1}x") };
            format!(
                "the FEM libraries on the H200: {} JAX's jitted `segment_sum` route, {} PyTorch's route under `torch.compile` and {} NVIDIA Warp's `warp.fem` assembly (in f64: {}, {} and {})",
                x(lib("jax-segment-sum", "f32")),
                x(lib("torch-compile", "f32")),
                x(lib("warp-fem", "f32")),
                x(lib("jax-segment-sum", "f64")),
                x(lib("torch-compile", "f64")),
                x(lib("warp-fem", "f64"))
            )
        },
        format!("{} µs/element", sig(banas("h200", "reg-nojac") / 89.0 * 1e6, 3)),
        sig(banas(g, "cublas-gemm-3xtf32") / banas(g, "reg-nojac"), 2) + "x cuBLAS 3xTF32",
        sig(acoo(g, "csr-atomic") * 1e6, 3) + " µs (csr-atomic)",
        sig(acoo(g, "cusparse-cg-graph") / acoo(g, "csr-atomic"), 3) + "x a cuSPARSE + cuBLAS CG",
        sig(acoo(g, "cusparse-cg-device") / acoo(g, "csr-atomic"), 3) + "x the same without the graph",
        sig(acoo(g, "cusparse-cg") / acoo(g, "csr-atomic"), 2) + "x with scalars on the host",
        format!("{} ms (total {} ms)", sig(ellm(g) * 1e3, 3), sig(sanfui(g, "ellm-gather", &["total"]) * 1e3, 3)),
        sig(sanfui(g, "elem-atomic", &["total"]) / sanfui(g, "ellm-gather", &["total"]), 2) + "x on total time",
        sig(sanfui(g, "elem-atomic", &["numeric"]) / ellm(g), 2) + "x the slot-map route (elem-atomic)",
        sig(sanfui(g, "coo-radix", &["triplets", "sort", "sum"]) / ellm(g), 2) + "x the COO route",
        sig(sanfui(g, "coo-cusparse", &["triplets", "sort", "sum"]) / ellm(g), 3) + "x cuSPARSE's COO sort",
        sig(pogo(g, "sell-kf32") * 1e6, 3) + " µs",
        sig(pogo(g, "sell-cusparse") / pogo(g, "sell-kf32"), 3) + "x cuSPARSE's sliced-ELL step",
        sig(pogo(g, "csr-cusparse") / pogo(g, "sell-kf32"), 3) + "x a cuSPARSE CSR step",
    ];
    let ms = |g: &str, m: &str| sig(t(g, "cecka-sizes", &cecka(m), m) * 1e3, if m == "slot-scatter" { 2 } else { 3 });
    let host = |m: &str| sig(t("h200", "cecka-sizes", &format!("cpu/f64/method={m},level=7,order=1,min_colors=0"), m), 3);
    let python = [
        format!("takes {} ms", ms("h200", "cupy-tocsr")),
        format!("`index_add_` through a slot map) {} ms, against {} ms for our", ms("h200", "torch-index-add"), ms("h200", "slot-scatter")),
        format!("slot-map route and {} ms for SharedAtomic", ms("h200", "shared-atomic")),
        format!("takes {} s, against {} s for the serial Rust reference", host("scipy-tocsr"), host("cpu-serial")),
    ];
    let missing: Vec<&String> = figures.iter().chain(&python).filter(|f| !glance.replace('\n', " ").contains(f.as_str())).collect();
    assert!(missing.is_empty(), "the README's results table differs from the published rows, which give:\n{missing:#?}");
}

/// The verdicts of every ledger in a report, per paper: [holds, partly, fails, not measured].
fn verdicts(report: &str) -> std::collections::BTreeMap<&'static str, [usize; 4]> {
    let mut out = std::collections::BTreeMap::new();
    for section in report.split("\n## ").skip(1) {
        let Some((_, ledger)) = section.split_once("### The paper's claims on this run") else { continue };
        let paper = match section.split('-').next().unwrap().trim() {
            "acoo" => "a-COO",
            "banas" => "Banaś",
            "cecka" => "Cecka",
            "pogo" => "Pogo",
            "sanfui" => "Sanfui",
            other => panic!("a ledger in an unknown experiment: {other}"),
        };
        let cells = |l: &str| -> Vec<String> {
            let inner = l.trim().trim_start_matches('|').trim_end_matches('|').replace("\\|", "\u{1}");
            inner.split('|').map(|c| c.trim().to_string()).collect()
        };
        let lines: Vec<&str> = ledger.split("\n#").next().unwrap().lines().filter(|l| l.starts_with('|')).collect();
        let at = cells(lines[0]).iter().position(|c| c == "verdict").unwrap();
        for l in &lines[2..] {
            let v = cells(l)[at].clone();
            let k = ["holds", "partly", "fails", "not measured"].iter().position(|w| *w == v).unwrap_or_else(|| panic!("verdict `{v}`"));
            out.entry(paper).or_insert([0; 4])[k] += 1;
        }
    }
    out
}

#[test]
fn the_readmes_claim_counts_are_the_h200_ledgers() {
    let report = std::fs::read_to_string(common::published("h200").join("report.md")).unwrap();
    let text = readme();
    let counts = verdicts(&report);
    assert_eq!(counts.len(), 5, "{counts:?}");
    for (paper, [h, p, f, n]) in counts {
        let line = format!("| {paper} | {h} | {p} | {f} | {n} |");
        assert!(text.contains(&line), "the README's claims table lacks `{line}` (the H200 report's ledgers)");
    }
}

/// The range of a report's "best vs strongest peer" column (Banaś' best variant against the
/// strongest same-accuracy cuBLAS route, every degree and precision), as the report prints it.
fn best_vs_peer_range(gpu: &str) -> String {
    let mut values: Vec<(f64, String)> = best_rows(gpu)
        .into_iter()
        .map(|r| {
            let v = r.2[10].split('x').next().unwrap().to_string();
            (v.parse().unwrap(), v)
        })
        .collect();
    values.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert!(values.len() >= 14, "{gpu}: {values:?}");
    format!("{}-{}x", values[0].1, values[values.len() - 1].1)
}

#[test]
fn the_readmes_banas_ranges_are_the_reports() {
    let text = readme();
    let range = best_vs_peer_range("h200");
    assert!(text.contains(&format!("({range}, [run](results/published/h200/")), "the README's H200 range is not {range}");
}

/// The README's sentence on the Python peers of Banaś reads the H200 report's best variant table:
/// its column of our best against torch-bmm / torch-compile / cupy-matmul.
#[test]
fn the_readmes_banas_python_peers_are_the_h200_reports() {
    let rows = best_rows("h200");
    let peers = |prec: &str, p: i64| -> Vec<String> {
        let row = rows.iter().find(|r| r.0 == prec && r.1 == p).unwrap();
        row.2[19].split(" / ").map(|v| sig(v.parse().unwrap(), 2) + "x").collect()
    };
    let (a1, a7, d1, d7) = (peers("f32", 1), peers("f32", 7), peers("f64", 1), peers("f64", 7));
    let want = format!(
        "is {} / {} slower than our best f32 kernel at p = 1 and {} / {} at p = 7 on the H200 (in f64: {} / {} and {} / {}); under `torch.compile` PyTorch's route is {} slower at p = 1 and {} at p = 7 in f32",
        a1[0], a1[2], a7[0], a7[2], d1[0], d1[2], d7[0], d7[2], a1[1], a7[1]
    );
    let text = readme().split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(text.contains(&want), "the README lacks `{want}`");
}

/// The cells of a report's "best variant per degree" table: (precision, p) -> the cells of its row.
pub(crate) fn best_rows(gpu: &str) -> Vec<(String, i64, Vec<String>)> {
    let report = std::fs::read_to_string(common::published(gpu).join("report.md")).unwrap();
    let table = report.split("### The best variant per degree").nth(1).unwrap().split("\n\n").nth(1).unwrap();
    table
        .lines()
        .filter(|l| l.starts_with("| cuda"))
        .map(|l| {
            let cells: Vec<String> = l.split('|').map(|c| c.trim().to_string()).collect();
            (cells[3].split(' ').next().unwrap().to_string(), cells[4].parse().unwrap(), cells)
        })
        .collect()
}

/// docs/papers/banas.md's paragraph on cuBLAS, from the H200 reference run's rows: the fastest of
/// the paper's four variants against the strongest peer at the same accuracy (B + GEMM), and
/// against plain TF32.
#[test]
fn the_banas_notes_cublas_figures_are_the_h200_rows() {
    let kernel = |prec: &str, m: &str, p: u32| t("h200", "banas-integration", &format!("cuda/{prec}/method={m},degree={p}"), "kernel");
    let paper = |prec: &str, p: u32| {
        ["reg-jac", "reg-nojac", "shm-jac", "shm-nojac"].map(|m| kernel(prec, m, p)).into_iter().fold(f64::MAX, f64::min)
    };
    let peer = |prec: &str, p: u32| {
        let peers: &[&str] = if prec == "f32" { &["cublas-gemm", "cublas-gemm-3xtf32"] } else { &["cublas-gemm"] };
        peers.iter().map(|m| kernel(prec, m, p)).fold(f64::MAX, f64::min)
    };
    let vs_peer = |prec: &str, p: u32| format!("{:.2}x", peer(prec, p) / paper(prec, p));
    let notes = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/papers/banas.md")).unwrap();
    let notes = notes.split_whitespace().collect::<Vec<_>>().join(" ");
    for want in [
        format!("is {} the strongest peer at f32 accuracy at p = 1", vs_peer("f32", 1)),
        format!("{} at p = 6 and {} at p = 7", vs_peer("f32", 6), vs_peer("f32", 7)),
        format!("a plain TF32 GEMM is {}x faster than us at p = 7", sig(paper("f32", 7) / kernel("f32", "cublas-gemm-tf32", 7), 2)),
        format!("({}, {}, {} at p = 5, 6, 7)", vs_peer("f64", 5), vs_peer("f64", 6), vs_peer("f64", 7)),
    ] {
        assert!(notes.contains(&want), "docs/papers/banas.md lacks `{want}` (the H200 rows' figure)");
    }
}

/// The figures of the README's paragraph on the FEM libraries (also in the papers' notes: Sanfui's
/// are [0..3], a-COO's [3..6] and [10], Pogo's [6..9] and [11], Cecka's [9]), each from the rows of
/// the H200 reference run, ours and the libraries' in the same run.
pub(crate) fn library_figures() -> Vec<String> {
    let (g, graphs, acoo_run) = ("h200", "h200", "h200");
    let sanfui = |m: &str| t(g, "sanfui-formats", &format!("cuda/f64/method={m},nx=200,ny=50,nz=50"), "total");
    let sanfui_lib = |m: &str| t(g, "sanfui-formats", &format!("cuda/f64/method={m},nx=200,ny=50,nz=50"), "assembly");
    let acoo = |m: &str| {
        let case = format!("cuda/f64/method={m},level=3");
        t(acoo_run, "acoo-capacitor", &case, "solve") / row(acoo_run, "acoo-capacitor", &case, "solve", "iterations")
    };
    let acoo_total = |m: &str, prec: &str| t(acoo_run, "acoo-capacitor", &format!("cuda/{prec}/method={m},level=3"), "total");
    let step = |m: &str, prec: &str| t(graphs, "pogo-weld", &format!("cuda/{prec}/method={m},model=weld,coarsen=1"), "step");
    let pogo = |m: &str| step(m, "f64");
    let cecka = |m: &str, prec: &str| t(g, "cecka-sizes", &format!("cuda/{prec}/method={m},level=7,order=1,min_colors=0"), m);
    let x = |v: f64| if v >= 10.0 { format!("{v:.0}x") } else { format!("{}x", sig(v, 3)) };
    let ours = sanfui("ellm-gather");
    // "<word> <theirs> <unit> <route> (<theirs over ours>)": a library's time and its ratio to ours.
    let (ms, us) = (("ms", 1e3), ("µs", 1e6));
    let against = |word: &str, theirs: f64, ours: f64, (unit, scale): (&str, f64), route: &str| {
        format!("{word} {} {unit} {route} ({})", sig(theirs * scale, 3), x(theirs / ours))
    };
    // "<who> takes <f32> ms in f32 and <f64> ms in f64, <ratio f32> and <ratio f64> <whose>".
    let in_both = |who: &str, ms: &dyn Fn(&str) -> f64, ratio: &dyn Fn(&str) -> f64, whose: &str| {
        let (t, r) = (|p| sig(ms(p) * 1e3, 3), |p| x(ratio(p)));
        format!("{who} takes {} ms in f32 and {} ms in f64, {} and {} {whose}", t("f32"), t("f64"), r("f32"), r("f64"))
    };
    vec![
        format!("ELLM by gathering takes {} ms in total", sig(ours * 1e3, 3)),
        against("against", sanfui_lib("jax-segment-sum"), ours, ms, "for JAX's jitted `segment_sum` route"),
        against("and", sanfui_lib("warp-fem"), ours, ms, "for NVIDIA Warp's `fem.integrate`"),
        format!("a CG iteration of csr-atomic takes {} µs", sig(acoo("csr-atomic") * 1e6, 3)),
        against("against", acoo("warp-cg"), acoo("csr-atomic"), us, "with Warp's `warp.optim.linear.cg`"),
        against("and", acoo("jax-cg"), acoo("csr-atomic"), us, "with JAX's `jax.scipy.sparse.linalg.cg`"),
        format!("sell-kf32's step takes {} µs", sig(pogo("sell-kf32") * 1e6, 3)),
        against("against", pogo("warp-bsr"), pogo("sell-kf32"), us, "for Warp's BSR product and update, one CUDA graph a step"),
        against("and", pogo("jax-bcsr"), pogo("sell-kf32"), us, "for JAX's BCSR product in a jitted loop"),
        in_both(
            "Warp's `warp.fem` with its pool of temporaries",
            &|p| cecka("warp-fem", p),
            &|p| cecka("warp-fem", p) / cecka("shared-atomic", p),
            "SharedAtomic's time",
        ),
        in_both(
            "a-COO's whole solve (assembly and CG) by csr-atomic",
            &|p| acoo_total("csr-atomic", p),
            &|p| acoo_total("warp-cg", p) / acoo_total("csr-atomic", p),
            "Warp's",
        ),
        format!(
            "Pogo's f32 step by sell takes {} µs, {} Warp's ({} µs)",
            sig(step("sell", "f32") * 1e6, 3),
            x(step("warp-bsr", "f32") / step("sell", "f32")),
            sig(step("warp-bsr", "f32") * 1e6, 3)
        ),
    ]
}

/// The README's paragraph on the FEM libraries is the reference run's.
#[test]
fn the_readmes_library_figures_are_the_library_run() {
    let (g, figures) = ("h200", library_figures());
    let text = readme().replace('\n', " ");
    // The table's rows name the same ratios: each figure's "(ratio)".
    let ratio = |k: usize| figures[k].rsplit_once('(').map(|(_, r)| r.trim_end_matches(')').to_string()).unwrap();
    let rows = [
        format!("H200): {} Warp's CG, {} JAX's |", ratio(4), ratio(5)),
        format!("H200, total time): {} JAX's `segment_sum` route, {} Warp's `fem.integrate` |", ratio(1), ratio(2)),
        format!("H200): {} Warp's BSR step, {} JAX's |", ratio(7), ratio(8)),
    ];
    let absent: Vec<&String> = rows.iter().filter(|r| !text.contains(r.as_str())).collect();
    assert!(absent.is_empty(), "the README's table differs from the library run, which gives:\n{absent:#?}");
    let missing: Vec<&String> = figures.iter().filter(|f| !text.contains(f.as_str())).collect();
    assert!(missing.is_empty(), "the README's library figures differ from the library run, which gives:\n{missing:#?}");
    // "JAX's Sanfui route is faster, in total, than the paper's colored COO, CSR and COOM
    // combinations and its SharedNZ baseline in both precisions, and than its atomic COO and CSR
    // in f32", and than no other method of ours.
    let total = |m: &str, prec: &str| t(g, "sanfui-formats", &format!("cuda/{prec}/method={m},nx=200,ny=50,nz=50"), "total");
    for prec in ["f32", "f64"] {
        let jax = t(g, "sanfui-formats", &format!("cuda/{prec}/method=jax-segment-sum,nx=200,ny=50,nz=50"), "assembly");
        let slower: Vec<&str> =
            ["coo-color", "coo-atomic", "csr-color", "csr-atomic", "ell-color", "ell-atomic", "coom-color", "coom-atomic"]
                .into_iter()
                .chain(["ellm-color", "ellm-atomic", "ellm-gather", "shared-nz"])
                .filter(|m| total(m, prec) > jax)
                .collect();
        let said: &[&str] = if prec == "f32" {
            &["coo-color", "coo-atomic", "csr-color", "csr-atomic", "coom-color", "shared-nz"]
        } else {
            &["coo-color", "csr-color", "coom-color", "shared-nz"]
        };
        assert_eq!(slower, said, "{prec}: the methods JAX's route beats");
    }
}

/// docs/papers/banas.md's table of our best variant against the strongest same-accuracy peer:
/// each row's variant, µs/element, error and ratio from the H200 reference run's best-variant
/// table.
#[test]
fn the_banas_best_variant_table_is_the_runs() {
    let h200 = best_rows("h200");
    let cell = |rows: &[(String, i64, Vec<String>)], prec: &str, p: i64, col: usize| {
        rows.iter().find(|r| r.0 == prec && r.1 == p).unwrap_or_else(|| panic!("no {prec} p = {p}")).2[col].clone()
    };
    let notes = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/papers/banas.md")).unwrap();
    let mut missing = Vec::new();
    for prec in ["f32", "f64"] {
        for p in [1, 3, 5, 6, 7] {
            let us: f64 = cell(&h200, prec, p, 9).parse().unwrap();
            let error = cell(&h200, prec, p, 20).split(' ').next().unwrap().to_string();
            let head = format!("| {prec} | {p} | {} {} ({error}) |", cell(&h200, prec, p, 5), sig(us, 3));
            let tail = format!("| {} |", cell(&h200, prec, p, 10).split(' ').next().unwrap());
            if !notes.lines().any(|l| l.starts_with(&head) && l.contains(&tail)) {
                missing.push(format!("{head} .. {tail}"));
            }
        }
    }
    assert!(missing.is_empty(), "docs/papers/banas.md's best-variant table differs from the runs, which give:\n{missing:#?}");
}

/// docs/papers/banas.md's table of our best kernel against the Python routes (torch-bmm /
/// torch-compile / cupy-matmul), from the H200 run's best-variant table.
#[test]
fn the_banas_python_peer_table_is_the_h200_run() {
    let rows = best_rows("h200");
    let notes = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/papers/banas.md")).unwrap();
    let ratios = |prec: &str, p: i64| {
        let row = rows.iter().find(|r| r.0 == prec && r.1 == p).unwrap();
        row.2[19].split(" / ").map(|v| format!("{:.1}x", v.parse::<f64>().unwrap())).collect::<Vec<_>>().join(" / ")
    };
    let lines: Vec<String> = [1, 3, 5, 6, 7].iter().map(|&p| format!("| {p} | {} | {} |", ratios("f32", p), ratios("f64", p))).collect();
    let missing: Vec<&String> = lines.iter().filter(|l| !notes.contains(l.as_str())).collect();
    assert!(missing.is_empty(), "docs/papers/banas.md's Python peers table differs from the H200 run, which gives:\n{missing:#?}");
}

/// A multi-GPU run's table of time per increment: (method, study, GPUs, µs, efficiency cell).
pub(crate) fn multigpu_table(gpu: &str) -> Vec<(String, String, u32, f64, String)> {
    let report = std::fs::read_to_string(common::published(gpu).join("report.md")).unwrap();
    let part = report.split("### Time per increment on 1, 2 and 4 GPUs").nth(1).unwrap().split("\n\n").nth(1).unwrap();
    part.lines()
        .skip(2)
        .map(|l| {
            let c: Vec<&str> = l.split('|').map(str::trim).collect();
            let method = c[1].split(' ').rev().nth(1).unwrap().to_string();
            let us = c[6].split(' ').next().unwrap().parse().unwrap();
            (method, c[2].to_string(), c[3].parse().unwrap(), us, c[8].to_string())
        })
        .collect()
}

/// The README's paragraph on Pogo across GPUs: each figure from the multi-GPU runs' tables of
/// time per increment (method, study, GPUs -> µs, efficiency).
#[test]
fn the_readmes_multi_gpu_figures_are_the_runs() {
    let (h100, h200) = (multigpu_table("h100-x4"), multigpu_table("h200-x4"));
    let at = |t: &[(String, String, u32, f64, String)], m: &str, study: &str, gpus: u32| {
        t.iter().find(|r| r.0 == m && r.1 == study && r.2 == gpus).cloned().unwrap_or_else(|| panic!("no {m} {study} {gpus}"))
    };
    let us = |t: &[(String, String, u32, f64, String)], m: &str, study: &str, g: u32| sig(at(t, m, study, g).3, 3);
    let eff = |t: &[(String, String, u32, f64, String)], m: &str, study: &str, g: u32| {
        at(t, m, study, g).4.split(' ').next().unwrap().to_string()
    };
    let weak: Vec<u32> =
        h100.iter().filter(|r| r.1 == "weak" && r.2 > 1).map(|r| r.4.split('%').next().unwrap().parse().unwrap()).collect();
    let figures = [
        format!(
            "steps in {} µs an increment against {} µs on one ({} strong-scaling efficiency, f64; {} with K' in f32)",
            us(&h100, "sell", "strong", 4),
            us(&h100, "sell", "strong", 1),
            eff(&h100, "sell", "strong", 4),
            eff(&h100, "sell-kf32", "strong", 4)
        ),
        format!(
            "in {} µs against {} µs ({})",
            us(&h100, "pogo-aligned", "strong", 4),
            us(&h100, "pogo-aligned", "strong", 1),
            eff(&h100, "pogo-aligned", "strong", 4)
        ),
        format!("weak-scaling efficiency is {}-{}%", weak.iter().min().unwrap(), weak.iter().max().unwrap()),
        format!(
            "{} µs an increment on four H200s against {} µs on one ({}, f64; {} with K' in f32)",
            us(&h200, "sell", "strong-3d", 4),
            us(&h200, "sell", "strong-3d", 1),
            eff(&h200, "sell", "strong-3d", 4),
            eff(&h200, "sell-kf32", "strong-3d", 4)
        ),
    ];
    let text = readme().replace('\n', " ");
    let missing: Vec<&String> = figures.iter().filter(|f| !text.contains(f.as_str())).collect();
    assert!(missing.is_empty(), "the README's multi-GPU figures differ from the runs, which give:\n{missing:#?}");
}
