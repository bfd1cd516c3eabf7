//! The papers' notes in prose, beyond their tables: each figure computed here from the published
//! runs (rows, or a report's table where the notes quote it) and looked up in the notes
//! (whitespace as printed does not matter). A figure that drifts fails with what the runs give.

use crate::docs_numbers::{missing, notes};
use crate::readme_numbers::{best_rows, row, sig, t};

fn check(paper: &str, lines: &[String]) {
    let text = notes(paper).split_whitespace().collect::<Vec<_>>().join(" ");
    let gone = missing(&text, lines);
    assert!(gone.is_empty(), "docs/papers/{paper}.md lacks the runs' {gone:#?}");
}

/// `lo-hi` of `values`, each printed by `f`.
pub(crate) fn range(values: &[f64], f: impl Fn(f64) -> String) -> String {
    let lo = values.iter().copied().fold(f64::MAX, f64::min);
    let hi = values.iter().copied().fold(f64::MIN, f64::max);
    format!("{}-{}", f(lo), f(hi))
}

/// Banaś' notes on the variants beyond the paper, on transfers and on Obs. 7 (its ledger), all
/// from the H200 reference run.
#[test]
fn the_banas_prose_is_the_runs() {
    let rows = best_rows("h200");
    let cell = |prec: &str, p: i64, col: usize| -> f64 {
        let r = rows.iter().find(|r| r.0 == prec && r.1 == p).unwrap_or_else(|| panic!("no {prec} p = {p}"));
        r.2[col].split([' ', 'x']).next().unwrap().parse().unwrap()
    };
    let vs_cublas: Vec<f64> = (3..=7).map(|p| cell("f64", p, 10)).collect();
    let vs_gemm: Vec<f64> = (3..=7).map(|p| cell("f64", p, 16)).collect();
    let python: Vec<f64> = rows
        .iter()
        .flat_map(|r| {
            r.2[19].split(" / ").enumerate().filter(|(k, _)| *k != 1).filter_map(|(_, v)| v.parse::<f64>().ok()).collect::<Vec<_>>()
        })
        .collect();
    let g = "h200";
    let per = |prec: &str, m: &str, p: i64| {
        let case = format!("cuda/{prec}/method={m},degree={p}");
        let elements = row(g, "banas-integration", &case, "kernel", "elements");
        let at = |c: &str| row(g, "banas-integration", &case, "kernel", c) / elements * 1e6;
        (at("time_median_s"), at("time_ci_low_s"), at("time_ci_high_s"))
    };
    let (gram, cublas) = (per("f64", "gram-nojac", 7), per("f64", "cublas-gemm", 7));
    assert!(gram.1 > cublas.2, "gram-nojac f64 at p = 7 is no longer slower than cuBLAS outside both intervals");
    let beats: Vec<i64> = (1..=7).filter(|&p| per("f64", "gram-nojac", p).2 < per("f64", "cublas-gemm", p).1).collect();
    assert_eq!(beats, (1..=6).collect::<Vec<_>>(), "the degrees where gram-nojac f64 beats cuBLAS");
    let mma32 = per("f32", "mma-nojac", 7).0;
    let tf32 = per("f32", "cublas-gemm-tf32", 7).0;
    let error = |prec: &str, m: &str| {
        format!("{:.1e}", row(g, "banas-integration", &format!("cuda/{prec}/method={m},degree=7"), "kernel", "error"))
    };
    let gram32: Vec<f64> = (5..=7).map(|p| cell("f32", p, 7) / 1e3).collect();
    let gram32_share: Vec<f64> = (5..=7).map(|p| cell("f32", p, 8)).collect();
    let ledger = |gpu: &str, prec: &str| -> f64 {
        let report = std::fs::read_to_string(crate::common::published(gpu).join("report.md")).unwrap();
        let line = report
            .lines()
            .find(|l| l.contains(&format!("cuda {prec} (warm)")) && l.contains("(Sec. 5, Obs. 7)") && l.contains("more efficient"))
            .unwrap();
        line.rsplit("median JAC/NOJAC ").next().unwrap().split(' ').next().unwrap().parse().unwrap()
    };
    let obs7 = |prec: &str| format!("{:.2}", ledger("h200", prec));
    let obs7_f64 = obs7("f64");
    let transfers = |p: i64| {
        let case = format!("cuda/f32/method=reg-nojac,degree={p}");
        let (k, total) = (t("h200", "banas-integration", &case, "kernel"), t("h200", "banas-integration", &case, "total"));
        (total - k) / k
    };
    let lines = [
        format!("is {} cuBLAS on the FP64 tensor cores from p = 3", range(&vs_cublas, |v| format!("{v:.1}")) + "x"),
        format!("and {} cuBLAS's GEMM alone", range(&vs_gemm, |v| format!("{v:.1}")) + "x"),
        format!(
            "p = 7, where it is {:.1}% slower ({:.1} against {:.1} µs, outside both intervals)",
            (gram.0 / cublas.0 - 1.0) * 100.0,
            gram.0,
            cublas.0
        ),
        format!("is faster from p = 6 ({:.2}x at p = 7)", cell("f32", 7, 18)),
        format!("{:.2}x the plain TF32 GEMM at p = 7, with {} of error", tf32 / mma32, error("f32", "mma-nojac")),
        format!("f32's ({} for `gram-nojac`)", error("f32", "gram-nojac")),
        format!("below cuBLAS 3xTF32's {}", error("f32", "cublas-gemm-3xtf32")),
        format!("run {}x slower than our best", range(&python, |v| sig(v, 2))),
        format!("reaches {:.1} TFLOP/s at p = 7, {:.0}% of the FP64 tensor cores' peak", cell("f64", 7, 7) / 1e3, cell("f64", 7, 8)),
        format!(
            "`gram-nojac` f32 {} TFLOP/s at p = 5-7, {}% of the FP32 lanes'",
            range(&gram32, |v| format!("{v:.1}")),
            range(&gram32_share, |v| format!("{v:.0}"))
        ),
        format!("take {:.0}x the kernel at p = 1 and {:.2}x at p = 7 (f32)", transfers(1), transfers(7)),
        format!("ratio is {} in f32 and {obs7_f64} in f64", obs7("f32")),
    ];
    check("banas", &lines);
}

/// Pogo's 3D box on four H200s: the one-GPU step's GB/s against the copy and dot kernels of the
/// same run, its bytes a node and a DOF against the weld's, and the exchange's share of an
/// increment on two and four GPUs.
#[test]
fn the_pogo_3d_bandwidth_prose_is_the_h200_run() {
    let (g, e) = ("h200-x4", "pogo-multigpu-3d");
    let case = |m: &str, gpus: u32| format!("cuda/f64/method={m},study=strong-3d,gpus={gpus}");
    let at = |m: &str, gpus: u32, c: &str| row(g, e, &case(m, gpus), "increment", c);
    let stream = |k: &str| row(g, "device-bandwidth", &format!("cuda/f64/kernel={k},array_mib=512"), k, "bandwidth_gbs");
    let (sell, copy, dot) = (at("sell", 1, "bandwidth_gbs"), stream("copy"), stream("dot"));
    let bytes = at("sell", 1, "bytes");
    let weld = row("h200", "pogo-weld", "cuda/f64/method=sell,model=weld,coarsen=1", "step", "bytes")
        / row("h200", "pogo-weld", "cuda/f64/method=sell,model=weld,coarsen=1", "step", "dofs");
    let mut shares = Vec::new();
    let mut four = Vec::new();
    for m in ["sell", "sell-kf32"] {
        for gpus in [2, 4] {
            shares.push(100.0 * at(m, gpus, "exchange_s") / at(m, gpus, "time_median_s"));
        }
        four.push((at(m, 4, "time_median_s") * 1e3, at(m, 4, "exchange_s") * 1e6));
    }
    let exchange = four.iter().map(|f| f.1).fold(0.0, f64::max);
    let lines = [
        format!("`sell` reads {sell:.0} GB/s by our count"),
        format!(
            "{:.1}% of the copy kernel's {copy:.0} GB/s and {:.0}% of the read-only dot kernel's {dot:.0} GB/s",
            100.0 * sell / copy,
            100.0 * sell / dot
        ),
        format!("about {:.1} KB a node", bytes / at("sell", 1, "nodes") / 1e3),
        format!("{:.2} KB a DOF against the weld's {:.2}", bytes / at("sell", 1, "dofs") / 1e3, weld / 1e3),
        format!(
            "still takes {} ms an increment against {:.0} µs of exchange: the exchange is {} of an increment",
            range(&four.iter().map(|f| f.0).collect::<Vec<_>>(), |v| format!("{v:.1}")),
            (exchange / 10.0).round() * 10.0,
            range(&shares, |v| format!("{v:.0}")) + "%"
        ),
    ];
    check("pogo", &lines);
}

/// a-COO's growth over the whole range of sizes: the least-squares exponent of the totals of the
/// paper's three methods against triangles on the H200, both precisions; and A-FEM's memory
/// exponent as the H200 ledger judges it.
#[test]
fn the_acoo_whole_range_exponents_are_the_h200_run() {
    let mut exponents = Vec::new();
    for m in ["a-fem", "ebe-v1", "ebe-v2"] {
        for p in ["f32", "f64"] {
            let points: Vec<(f64, f64)> = (0..4)
                .map(|level| {
                    let case = format!("cuda/{p}/method={m},level={level}");
                    let n = row("h200", "acoo-capacitor", &case, "total", "triangles");
                    (n.ln(), t("h200", "acoo-capacitor", &case, "total").ln())
                })
                .collect();
            let (mx, my) = (points.iter().map(|p| p.0).sum::<f64>() / 4.0, points.iter().map(|p| p.1).sum::<f64>() / 4.0);
            let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
            let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
            exponents.push(sxy / sxx);
        }
    }
    let report = std::fs::read_to_string(crate::common::published("h200").join("report.md")).unwrap();
    let memory: Vec<String> = report
        .lines()
        .filter(|l| l.contains("the memory footprint is linearly proportional") && l.contains("a-fem: memory ~ triangles^"))
        .map(|l| l.split("a-fem: memory ~ triangles^").nth(1).unwrap().split(' ').next().unwrap().to_string())
        .collect();
    assert_eq!(memory.len(), 2, "the H200 ledger's A-FEM memory rows (f32, f64)");
    assert_eq!(memory[0], memory[1], "A-FEM's memory exponent differs between f32 and f64");
    let lines = [
        format!("grow with exponents of {} on the H200", range(&exponents, |v| format!("{v:.2}"))),
        format!("linearly (A-FEM's exponent {})", memory[0]),
    ];
    check("acoo", &lines);
}

/// docs/measurement.md's settings are the code's: the host warm-up and sample length, the
/// repetition policy's defaults, the physics margin, and a-COO's f64 check.
#[test]
fn the_measurement_settings_are_the_codes() {
    use fembench::measure::{MeasurePolicy, HOST_WARMUP_S, MIN_HOST_SAMPLE_S};
    let policy = MeasurePolicy::default();
    let acoo = fembench::acoo::spec::Problem_::default();
    let page = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/measurement.md")).unwrap();
    let page = page.split_whitespace().collect::<Vec<_>>().join(" ");
    let lines = [
        format!("after a warm-up of at least {:.0} ms", HOST_WARMUP_S * 1e3),
        format!("each sample of host work under {:.0} ms", MIN_HOST_SAMPLE_S * 1e3),
        format!("within `target_rel_ci` (default ±{:.0}%)", policy.target_rel_ci * 100.0),
        format!("`max_time_s` seconds of timed repetitions (default {:.0} s)", policy.max_time_s),
        format!("above {:.0}% of the copy bandwidth", fembench::report::physics::COPY_MARGIN * 100.0),
        format!("| {:.0e} and {}% in f64", acoo.max_error, acoo.iteration_slack * 100.0),
    ];
    let gone = missing(&page, &lines);
    assert!(gone.is_empty(), "docs/measurement.md lacks the code's {gone:#?}");
}

/// Banaś' Tables 3 and 4 in the notes: the plan on the GTX580's and the HD5870's limits beside
/// the paper's, from the H200 report's table.
#[test]
fn the_banas_plan_prose_is_the_report() {
    let report = std::fs::read_to_string(crate::common::published("h200").join("report.md")).unwrap();
    let table = report.split("### Tables 3 and 4: the plan from the GTX580's and the HD5870's limits").nth(1).unwrap();
    let row = |name: &str| -> Vec<String> {
        let line = table.lines().find(|l| l.starts_with(&format!("| {name} "))).unwrap_or_else(|| panic!("no row {name}"));
        line.trim_matches('|').split('|').skip(1).map(|c| c.trim().to_string()).collect()
    };
    let num = |s: &String| s.parse::<f64>().unwrap();
    let (ours_gtx, paper_gtx) = (row("ours on GTX580's limits: parts of A^e, SHM"), row("paper GTX580: parts of A^e, SHM"));
    assert_eq!(ours_gtx, paper_gtx, "the SHM parts on the GTX580's limits");
    let (ours_hd, paper_hd) = (row("ours on HD5870's limits: parts of A^e, SHM"), row("paper HD5870: parts of A^e, SHM"));
    assert_eq!(ours_hd[..3], paper_hd[..3], "the HD5870's SHM parts at p = 2-4");
    let (launch, paper_launch) = (row("ours on HD5870's limits: elements per launch"), row("paper HD5870: elements per launch"));
    let per_group = row("paper GTX580: elements per work-group");
    let (ours_first, ours_last) =
        (row("ours on GTX580's limits: elements per work-group"), row("ours on HD5870's limits: elements per work-group"));
    let lines = [
        format!("match the GTX580's exactly ({})", ours_gtx.join(", ")),
        format!("({} for p = 2-4, as the paper;", ours_hd[..3].join(", ")),
        format!("{} against {})", ours_hd[3], paper_hd[3]),
        format!("hold {}-{} elements against the paper's {}-{}", launch[0], launch[5], paper_launch[0], paper_launch[5]),
        format!(
            "hold {} to {} whole elements, ours hold 1/{:.0} to 1/{:.0} of one",
            per_group[0],
            per_group[5],
            1.0 / num(&ours_first[0]),
            1.0 / num(&ours_last[5])
        ),
    ];
    check("banas", &lines);
}

/// Cecka's peers on the H200, the notes' paragraph: each route's f32 and f64 ms at 2.4M nodes,
/// P1, and the ratios the paragraph draws, from the reference run.
#[test]
fn the_cecka_h200_peers_are_the_reference_run() {
    let case = |m: &str, p: &str, backend: &str| format!("{backend}/{p}/method={m},level=7,order=1,min_colors=0");
    let ms = |m: &str, p: &str| t("h200", "cecka-sizes", &case(m, p, "cuda"), m) * 1e3;
    let cpu = |m: &str| t("h200", "cecka-sizes", &case(m, "f64", "cpu"), m) * 1e3;
    let both = |m: &str| format!("{} and {} ms", sig(ms(m, "f32"), 3), sig(ms(m, "f64"), 3));
    let (sa, jax, slot) = (|p| ms("shared-atomic", p), |p| ms("jax-segment-sum", p), |p| ms("slot-scatter", p));
    let lead = |p| if jax(p) < slot(p) { "JAX's route" } else { "our slot map" };
    let lines = [
        format!(
            "`slot-scatter` {}, `coo-radix` {}, `torch-index-add` {}, `cupy-tocsr` {}.",
            both("slot-scatter"),
            both("coo-radix"),
            both("torch-index-add"),
            both("cupy-tocsr")
        ),
        format!(
            "it takes {:.2}x our slot map's time in f32 and {:.2}x in f64 ({} leads in f32, {} in f64)",
            jax("f32") / slot("f32"),
            jax("f64") / slot("f64"),
            lead("f32"),
            lead("f64")
        ),
        format!(
            "SharedAtomic is {:.1}x and {:.1}x JAX's route, {:.1}x PyTorch's eager route and {:.0}x CuPy's in f32",
            jax("f32") / sa("f32"),
            jax("f64") / sa("f64"),
            ms("torch-index-add", "f32") / sa("f32"),
            ms("cupy-tocsr", "f32") / sa("f32")
        ),
        format!(
            "makes PyTorch's route {:.1}x faster, still {:.2}x slower than our slot map",
            ms("torch-index-add", "f32") / ms("torch-compile", "f32"),
            ms("torch-compile", "f32") / slot("f32")
        ),
        format!("Our `coo-radix` is {:.2}x faster than CuPy's route in f32", ms("cupy-tocsr", "f32") / ms("coo-radix", "f32")),
        format!("SciPy on the host took {:.0} ms against {:.0} ms for the serial Rust reference", cpu("scipy-tocsr"), cpu("cpu-serial")),
    ];
    check("cecka", &lines);
}
