//! The papers' notes on the peers, in prose: each figure computed here from the published H200
//! reference run and looked up in the notes (whitespace as printed does not matter).

use crate::docs_numbers::{missing, notes};
use crate::readme_numbers::{row, sig, t};

fn joined(paper: &str) -> String {
    notes(paper).split_whitespace().collect::<Vec<_>>().join(" ")
}

fn check(paper: &str, lines: &[String]) {
    let text = joined(paper);
    let gone = missing(&text, lines);
    assert!(gone.is_empty(), "docs/papers/{paper}.md lacks the runs' {gone:#?}");
}

/// Pogo: cuSPARSE's sliced ELL against its CSR step and ours against it, per model.
#[test]
fn the_pogo_vendor_steps_are_the_runs() {
    let us = |g: &str, model: &str, m: &str| {
        t(g, &format!("pogo-{model}"), &format!("cuda/f64/method={m},model={model},coarsen=1"), "step") * 1e6
    };
    let models = ["weld", "geophysical", "gear"];
    let g = "h200";
    let pairs: Vec<String> =
        models.iter().map(|m| format!("{m} {:.1} / {:.1}", us(g, m, "sell-cusparse"), us(g, m, "csr-cusparse"))).collect();
    let mut lines = vec![pairs.join(", ")];
    for ours in ["sell-kf32", "sell"] {
        let x: Vec<String> = models.iter().map(|m| format!("{:.2}x", us(g, m, "sell-cusparse") / us(g, m, ours))).collect();
        lines.push(format!("{}, {} and {}", x[0], x[1], x[2]));
    }
    check("pogo", &lines);
}

/// Cecka: our own peers at 2.4M nodes, P1, and SharedAtomic against the slot-map route.
#[test]
fn the_cecka_peers_are_the_run() {
    let ms = |m: &str, p: &str| t("h200", "cecka-sizes", &format!("cuda/{p}/method={m},level=7,order=1,min_colors=0"), m) * 1e3;
    let pair = |m: &str, digits: usize| format!("{:.digits$} and {:.digits$} ms", ms(m, "f32"), ms(m, "f64"));
    let lines = [
        format!("`slot-scatter` {}, `coo-radix` {}", pair("slot-scatter", 3), pair("coo-radix", 2)),
        format!("`coo-cusparse` {:.1} and {:.1} ms", ms("coo-cusparse", "f32"), ms("coo-cusparse", "f64")),
        format!(
            "SharedAtomic {} and {} ms, so {:.1}x and {:.1}x the slot-map route",
            sig(ms("shared-atomic", "f32"), 3),
            sig(ms("shared-atomic", "f64"), 3),
            ms("slot-scatter", "f32") / ms("shared-atomic", "f32"),
            ms("slot-scatter", "f64") / ms("shared-atomic", "f64")
        ),
    ];
    check("cecka", &lines);
}

/// a-COO: a CG iteration of ours and of the three vendor CGs, f64 and f32; A-FEM's total against
/// EbE-v2's.
#[test]
fn the_acoo_peer_iterations_are_the_runs() {
    let case = |m: &str, p: &str| format!("cuda/{p}/method={m},level=3");
    let it = |g: &str, m: &str, p: &str| {
        t(g, "acoo-capacitor", &case(m, p), "solve") / row(g, "acoo-capacitor", &case(m, p), "solve", "iterations") * 1e6
    };
    let total = |g: &str, m: &str| t(g, "acoo-capacitor", &case(m, "f64"), "total") * 1e3;
    let peers = ["cusparse-cg-graph", "cusparse-cg-device", "cusparse-cg"];
    let f32s = |g: &str| {
        let p: Vec<String> = peers.iter().map(|m| sig(it(g, m, "f32"), 3)).collect();
        format!("in f32 {} µs against {}, {} and {}", sig(it(g, "csr-atomic", "f32"), 3), p[0], p[1], p[2])
    };
    let x = |g: &str, m: &str| it(g, m, "f64") / it(g, "csr-atomic", "f64");
    let lines = [
        format!(
            "csr-atomic takes {} µs against {} µs for the graph peer, {} µs for the device-pointer peer and {} µs for the textbook one ({:.2}x, {:.2}x and {:.1}x)",
            sig(it("h200", "csr-atomic", "f64"), 3),
            sig(it("h200", peers[0], "f64"), 3),
            sig(it("h200", peers[1], "f64"), 3),
            sig(it("h200", peers[2], "f64"), 3),
            x("h200", peers[0]),
            x("h200", peers[1]),
            x("h200", peers[2])
        ),
        f32s("h200") + " µs",
        format!("({} against {:.0} ms, f64)", sig(total("h200", "a-fem"), 3), total("h200", "ebe-v2")),
    ];
    check("acoo", &lines);
}

/// Sanfui: the peers at 500K nodes (f64) against ellm-gather.
#[test]
fn the_sanfui_peers_are_the_run() {
    let ms = |m: &str, stages: &[&str]| {
        stages.iter().map(|s| t("h200", "sanfui-formats", &format!("cuda/f64/method={m},nx=200,ny=50,nz=50"), s)).sum::<f64>() * 1e3
    };
    let ours = ms("ellm-gather", &["symbolic", "numeric"]);
    let radix = ms("coo-radix", &["triplets", "sort", "sum"]);
    let slot = ms("elem-atomic", &["numeric"]);
    let lines = [format!(
        "its assembly takes {:.0} ms, the radix-sort route {} ms and the slot-map route {} ms, against {} ms for `ellm-gather` ({:.1}x the strongest peer)",
        ms("coo-cusparse", &["triplets", "sort", "sum"]),
        sig(radix, 3),
        sig(slot, 4),
        sig(ours, 3),
        slot.min(radix) / ours
    )];
    check("sanfui", &lines);
}

/// Pogo on the H200: the whole runs (sell, f64) beside the paper's, the blockers' efficiency
/// after arrangement beside the paper's, and the paper's kernel's share of copy.
#[test]
fn the_pogo_whole_runs_and_blockers_are_the_h200_runs() {
    let g = "h200";
    let case = |model: &str, m: &str| format!("cuda/f64/method={m},model={model},coarsen=1");
    let value = |model: &str, m: &str, metric: &str, c: &str| row(g, &format!("pogo-{model}"), &case(model, m), metric, c);
    let paper = |model: &str| fembench::pogo::paper::model(model).unwrap();
    let models = ["weld", "geophysical", "gear"];
    let whole = |model: &str| {
        let steps = value(model, "sell", "full-run", "timed_steps");
        let s = value(model, "sell", "full-run", "time_median_s");
        let grouped = format!("{}", steps as u64)
            .as_bytes()
            .rchunks(3)
            .rev()
            .map(|c| String::from_utf8_lossy(c).to_string())
            .collect::<Vec<_>>()
            .join(",");
        format!("{model} {grouped} {} in {} s", if model == "weld" { "increments" } else { "" }, sig(s, 3)).replace("  ", " ")
    };
    let eta = |m: &str| -> Vec<String> {
        models.iter().map(|model| format!("{:.1}%", 100.0 * value(model, m, "step", "arranged_eta"))).collect()
    };
    let copy = row(g, "device-bandwidth", "cuda/f64/kernel=copy,array_mib=512", "copy", "bandwidth_gbs");
    let shares: Vec<f64> = models.iter().map(|model| 100.0 * value(model, "pogo-aligned", "step", "bandwidth_gbs") / copy).collect();
    let (a, gr) = (eta("pogo-aligned"), eta("pogo-greedy"));
    let p = |model: &str| paper(model);
    let lines = [
        format!("{} (the paper's GTX 580: {} s)", whole("weld"), p("weld").step_greedy_s.0),
        format!("{} ({} s), {} ({} s)", whole("geophysical"), p("geophysical").step_greedy_s.0, whole("gear"), p("gear").step_greedy_s.0),
        format!(
            "aligned {} ({:.1}), {} ({:.1}), {} ({:.1}); greedy {} ({:.1}), {} ({:.1}), {} ({:.1})",
            a[0],
            p("weld").eta_aligned,
            a[1],
            p("geophysical").eta_aligned,
            a[2],
            p("gear").eta_aligned,
            gr[0],
            p("weld").eta_greedy,
            gr[1],
            p("geophysical").eta_greedy,
            gr[2],
            p("gear").eta_greedy
        ),
        format!(
            "moves {:.0}-{:.0}% of the copy kernel's bandwidth by its own byte count",
            shares.iter().copied().fold(f64::MAX, f64::min),
            shares.iter().copied().fold(0.0, f64::max)
        ),
    ];
    check("pogo", &lines);
}

/// Cecka: the Python peers at 2.4M nodes, and the paper's 30x as the ledger judges it (the fastest
/// of the paper's methods, f32, over the serial f64 CPU, order 1).
#[test]
fn the_cecka_python_peers_and_cpu_ratios_are_the_runs() {
    let case = |m: &str, p: &str, level: u32, backend: &str| format!("{backend}/{p}/method={m},level={level},order=1,min_colors=0");
    let ms = |g: &str, exp: &str, m: &str, p: &str, level: u32| t(g, exp, &case(m, p, level, "cuda"), m) * 1e3;
    let cpu = |g: &str, exp: &str, m: &str, level: u32| t(g, exp, &case(m, "f64", level, "cpu"), m) * 1e3;
    let sizes = |g: &str, m: &str, p: &str| ms(g, "cecka-sizes", m, p, 7);
    let sa = sizes("h200", "shared-atomic", "f32");
    let fastest = |g: &str, exp: &str, level: u32| {
        let best =
            ["elem-color", "global-nz", "shared-nz", "local-nz"].map(|m| ms(g, exp, m, "f32", level)).into_iter().fold(f64::MAX, f64::min);
        cpu(g, exp, "cpu-serial", level) / best
    };
    let lines = [
        format!(
            "| {} | {} | {:.1}x faster |",
            sig(sizes("h200", "torch-index-add", "f32"), 3),
            sig(sizes("h200", "torch-index-add", "f64"), 3),
            sizes("h200", "torch-index-add", "f32") / sa
        ),
        format!(
            "| {} | {} | {:.0}x faster |",
            sig(sizes("h200", "cupy-tocsr", "f32"), 3),
            sig(sizes("h200", "cupy-tocsr", "f64"), 3),
            sizes("h200", "cupy-tocsr", "f32") / sa
        ),
        format!(
            "| - | {:.0} | the CPU rows' peer: serial Rust ({:.0} ms) is {:.1}x faster |",
            cpu("h200", "cecka-sizes", "scipy-tocsr", 7),
            cpu("h200", "cecka-sizes", "cpu-serial", 7),
            cpu("h200", "cecka-sizes", "scipy-tocsr", 7) / cpu("h200", "cecka-sizes", "cpu-serial", 7)
        ),
        format!("is {:.1}x PyTorch's own", sizes("h200", "torch-index-add", "f32") / sizes("h200", "slot-scatter", "f32")),
        format!("`coo-radix` {:.2}x CuPy's", sizes("h200", "cupy-tocsr", "f32") / sizes("h200", "coo-radix", "f32")),
        format!(
            "{:.1}x at 2.4M nodes (cecka-sizes) and {:.1}x on the 74K-element mesh (cecka-orders)",
            fastest("h200", "cecka-sizes", 7),
            fastest("h200", "cecka-orders", 4)
        ),
    ];
    check("cecka", &lines);
}

/// Pogo across GPUs: the notes' tables of µs an increment (and efficiency) on 1, 2 and 4 GPUs,
/// the weld on four H100s and the 3D box on four H200s, from the runs' tables.
#[test]
fn the_pogo_multi_gpu_tables_are_the_runs() {
    use crate::readme_numbers::multigpu_table;
    let mut lines = Vec::new();
    for (gpu, studies) in [("h100-x4", &["strong", "weak"][..]), ("h200-x4", &["strong-3d"][..])] {
        let t = multigpu_table(gpu);
        for study in studies {
            for m in ["sell", "sell-kf32", "pogo-aligned"] {
                let at = |g: u32| t.iter().find(|r| r.0 == m && r.1 == *study && r.2 == g).cloned();
                let (Some(one), Some(two), Some(four)) = (at(1), at(2), at(4)) else { continue };
                let plain = |e: &str| e.split(' ').next().unwrap().to_string();
                // The 4-GPU strong cells keep their interval; the 2-GPU and the weak ones do not.
                let e4 = if study.starts_with("strong") { four.4.clone() } else { plain(&four.4) };
                let e2 = if gpu == "h200-x4" { two.4.clone() } else { plain(&two.4) };
                let us = |v: f64| if v >= 1000.0 { format!("{v:.0}") } else { format!("{v:.1}") };
                lines.push(format!("| {} | {} ({e2}) | {} ({e4}", us(one.3), us(two.3), us(four.3)));
            }
        }
    }
    check("pogo", &lines);
}

/// A table of a published run's report, by its heading: each data row's trimmed cells.
fn report_table(gpu: &str, heading: &str) -> Vec<Vec<String>> {
    let report = std::fs::read_to_string(crate::common::published(gpu).join("report.md")).unwrap();
    let part = report.split(heading).nth(1).unwrap_or_else(|| panic!("{gpu}: no {heading}")).split("\n\n").nth(1).unwrap();
    part.lines().skip(2).map(|l| l.split('|').map(|c| c.trim().to_string()).collect()).collect()
}

/// Pogo across four H100s, the notes' prose: halo, exchange alone and host enqueue by the time
/// table; the paper's kernel against sell; the 120K-DOF arrival study's times and traces.
#[test]
fn the_pogo_multi_gpu_prose_is_the_h100_run() {
    let rows = report_table("h100-x4", "### Time per increment on 1, 2 and 4 GPUs");
    let num = |r: &Vec<String>, c: usize| r[c].split(' ').next().unwrap().parse::<f64>().unwrap_or(f64::NAN);
    let of = |r: &Vec<String>, method: &str| r[1].contains(&format!(" {method} f64"));
    let range = |vals: Vec<f64>, digits: usize| {
        let (lo, hi) = vals.iter().fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        format!("{lo:.digits$}-{hi:.digits$}")
    };

    let column = |c: usize, keep: &dyn Fn(&&Vec<String>) -> bool| rows.iter().filter(|r| keep(r)).map(|r| num(r, c)).collect::<Vec<_>>();
    let strong = |m: &str, g: &str| num(rows.iter().find(|r| of(r, m) && r[2] == "strong" && r[3] == g).unwrap(), 6);
    let halo = |g: &str| num(rows.iter().find(|r| r[2] == "strong" && r[3] == g).unwrap(), 9);
    let sliced = |r: &&Vec<String>| r[3] != "1" && (of(r, "sell") || of(r, "sell-kf32"));
    let paper = |r: &&Vec<String>| r[3] != "1" && of(r, "pogo-aligned");
    let arrival = report_table("h100-x4", "### Every increment from rest on 1, 2 and 4 GPUs");
    let times = |g: &str| arrival.iter().filter(|r| r[2] == g).map(|r| num(r, 8)).collect::<Vec<_>>();
    let trace = |m: &str| arrival.iter().filter(|r| r[1].contains(&format!(" {m} f64"))).map(|r| num(r, 6)).fold(0.0, f64::max);
    let lines = [
        format!("The halo is {:.0} kB an increment on 2 GPUs and {:.0} kB on 4", halo("2"), halo("4")),
        format!(
            "The exchange alone takes {} µs for the sliced ELL and {} µs for the paper's kernel",
            range(column(10, &sliced), 0),
            range(column(10, &paper), 0)
        ),
        format!(
            "{:.2}x slower than `sell` on one GPU at this size ({:.0} against {:.0} µs) and {:.2}x at 4 GPUs ({:.0} against {:.0})",
            strong("pogo-aligned", "1") / strong("sell", "1"),
            strong("pogo-aligned", "1"),
            strong("sell", "1"),
            strong("pogo-aligned", "4") / strong("sell", "4"),
            strong("pogo-aligned", "4"),
            strong("sell", "4")
        ),
        format!(
            "{} µs an increment on 2 GPUs and {} µs on 4 (the report's \"host enqueue\" column), against {} µs on one",
            range(column(12, &|r: &&Vec<String>| r[3] == "2"), 0),
            range(column(12, &|r: &&Vec<String>| r[3] == "4"), 0),
            range(column(12, &|r: &&Vec<String>| r[3] == "1"), 1)
        ),
        format!("to {:.1e} (`sell`) and {:.1e} (`pogo-aligned`)", trace("sell"), trace("pogo-aligned")),
        format!("({} µs an increment on one, {} on two, {} on four)", range(times("1"), 1), range(times("2"), 0), range(times("4"), 0)),
    ];
    check("pogo", &lines);
}

/// Pogo's 3D box on four H200s, the notes' prose: halo and exchange by the time table, the
/// host's enqueue against the increments at 4 GPUs.
#[test]
fn the_pogo_3d_prose_is_the_h200_run() {
    let rows = report_table("h200-x4", "### Time per increment on 1, 2 and 4 GPUs");
    let num = |r: &Vec<String>, c: usize| r[c].split(' ').next().unwrap().parse::<f64>().unwrap_or(f64::NAN);
    let at = |m: &str, g: &str| rows.iter().find(|r| r[1].contains(&format!(" {m} f64")) && r[3] == g).unwrap();
    let pair = |m: &str, c: usize, f: &dyn Fn(f64) -> String| format!("{} / {}", f(num(at(m, "2"), c)), f(num(at(m, "4"), c)));
    let mb = |v: f64| format!("{:.1}", v / 1e3);
    let us = |v: f64| format!("{v:.0}");
    let four: Vec<f64> = ["sell", "sell-kf32"].iter().map(|m| num(at(m, "4"), 6)).collect();
    let enqueue: Vec<f64> = ["sell", "sell-kf32"].iter().map(|m| num(at(m, "4"), 12)).collect();
    let lines = [
        format!("| {} MB | {} µs |", pair("sell", 9, &mb), pair("sell", 10, &us)),
        format!("| {} MB | {} µs |", pair("sell-kf32", 9, &mb), pair("sell-kf32", 10, &us)),
        format!(
            "{:.0}-{:.0} µs an increment at 4 GPUs for the box, under its {:.0}-{:.0} µs",
            enqueue.iter().copied().fold(f64::MAX, f64::min),
            enqueue.iter().copied().fold(0.0, f64::max),
            four.iter().copied().fold(f64::MAX, f64::min),
            four.iter().copied().fold(0.0, f64::max)
        ),
    ];
    check("pogo", &lines);
}

/// a-COO's growth as its ledger judges it: the least-squares exponent of A-FEM's total time
/// against triangles over the last decade of sizes (121K and 484K triangles).
#[test]
fn the_acoo_growth_exponents_are_the_runs() {
    let exponent = |g: &str, p: &str| {
        let at = |level: u32| {
            let case = format!("cuda/{p}/method=a-fem,level={level}");
            (row(g, "acoo-capacitor", &case, "total", "triangles"), t(g, "acoo-capacitor", &case, "total"))
        };
        let ((n2, t2), (n3, t3)) = (at(2), at(3));
        (t3 / t2).ln() / (n3 / n2).ln()
    };
    let lines = [format!("There the exponent is {:.3} in f64 and {:.3} in f32", exponent("h200", "f64"), exponent("h200", "f32"))];
    check("acoo", &lines);
}

/// Sanfui's symbolic kernel's share of the assembly (symbolic over symbolic + numeric) at 500K
/// nodes on the H200, per format family, f32 and f64.
#[test]
fn the_sanfui_symbolic_shares_are_the_h200_run() {
    let share = |m: &str, p: &str| {
        let case = format!("cuda/{p}/method={m},nx=200,ny=50,nz=50");
        let (s, n) = (t("h200", "sanfui-formats", &case, "symbolic"), t("h200", "sanfui-formats", &case, "numeric"));
        100.0 * s / (s + n)
    };
    let range = |formats: &[&str]| {
        let v: Vec<f64> = formats
            .iter()
            .flat_map(|f| ["color", "atomic"].map(|r| format!("{f}-{r}")))
            .flat_map(|m| ["f32", "f64"].map(|p| share(&m, p)))
            .collect();
        format!("{:.0}-{:.0}%", v.iter().copied().fold(f64::MAX, f64::min), v.iter().copied().fold(0.0, f64::max))
    };
    let lines = [
        format!("ours is {} of the assembly for COO and CSR", range(&["coo", "csr"])),
        format!(
            "{:.0}% for coo-atomic in f32), and {} for ELL, COOM and ELLM",
            share("coo-atomic", "f32"),
            range(&["ell", "coom", "ellm"])
        ),
    ];
    check("sanfui", &lines);
}

/// Cecka's Table VI in the notes: our f32 error over the paper's at every level of the sizes
/// experiment, and its growth with the nodes, from the H200 report's ledger.
#[test]
fn the_cecka_table_vi_prose_is_the_h200_ledger() {
    let report = std::fs::read_to_string(crate::common::published("h200").join("report.md")).unwrap();
    let ratios: Vec<f64> = report
        .lines()
        .find(|l| l.contains("ours / paper's: level 0") && l.contains("level 7"))
        .expect("the sizes experiment's Table VI row")
        .split("ours / paper's: ")
        .nth(1)
        .unwrap()
        .split('|')
        .next()
        .unwrap()
        .split(", ")
        .map(|part| part.trim().rsplit(' ').next().unwrap().parse().unwrap())
        .collect();
    let exponent = report.split("error ~ nodes^").nth(1).unwrap().split(' ').next().unwrap().to_string();
    let (lo, hi) = ratios.iter().fold((f64::MAX, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
    let lines = [
        format!("Our f32 error is {lo:.1}-{hi:.1}x the paper's at every level while its growth matches (exponent {exponent})"),
        format!("Table VI's error grows like nodes^(1/2) (exponent {exponent})"),
    ];
    check("cecka", &lines);
}

/// Cecka's full-over-dummy prose in the notes, from the H200 report's ledger rows.
#[test]
fn the_cecka_dummy_prose_is_the_h200_ledger() {
    let report = std::fs::read_to_string(crate::common::published("h200").join("report.md")).unwrap();
    // Every "name pN value" of the ledger's dummy rows, with its precision.
    let mut values: Vec<(String, String, u32, f64)> = Vec::new();
    for line in report.lines().filter(|l| l.starts_with("| NVIDIA") && (l.contains("full / dummy:") || l.contains("(paper 1."))) {
        let precision = if line.contains(" f32 ") { "f32" } else { "f64" };
        let evidence = line.split("full / dummy: ").nth(1).unwrap_or(line).split("; p3").next().unwrap();
        for part in evidence.split(',') {
            let words: Vec<&str> = part.split_whitespace().collect();
            let Some(i) = words.iter().position(|w| w.starts_with('p') && w[1..].parse::<u32>().is_ok()) else { continue };
            if let (Some(name), Some(v)) = (i.checked_sub(1).map(|k| words[k]), words.get(i + 1).and_then(|v| v.parse::<f64>().ok())) {
                values.push((precision.into(), name.trim_start_matches('|').into(), words[i][1..].parse().unwrap(), v));
            }
        }
    }
    let pick = |keep: &dyn Fn(&(String, String, u32, f64)) -> bool| values.iter().filter(|v| keep(v)).map(|v| v.3).collect::<Vec<f64>>();
    let span =
        |v: Vec<f64>| format!("{}-{}", sig(v.iter().copied().fold(f64::MAX, f64::min), 3), sig(v.iter().copied().fold(0.0, f64::max), 3));
    let one = |p: &str, m: &str, order: u32| pick(&|v| v.0 == p && v.1 == m && v.2 == order)[0];
    let lines = [
        format!("at order 1 ours is {}", span(pick(&|v| v.2 == 1))),
        format!(
            "at order 2 SharedNZ reaches {} and LocalNZ up to {}",
            span(pick(&|v| v.1 == "shared-nz" && v.2 == 2)),
            sig(pick(&|v| v.1 == "local-nz" && v.2 == 2).into_iter().fold(0.0, f64::max), 3)
        ),
        format!(
            "SharedNZ's {} at order 4 in f32 holds and its {} in f64 fails",
            sig(one("f32", "shared-nz", 4), 3),
            sig(one("f64", "shared-nz", 4), 3)
        ),
        format!("at order 5 LocalNZ and GlobalNZ are {}, not 1.6", span(pick(&|v| v.2 == 5))),
    ];
    check("cecka", &lines);
}
