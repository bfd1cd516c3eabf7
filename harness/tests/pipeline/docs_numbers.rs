//! The papers' notes quote the H200 reference run: each findings table of docs/papers/*.md that
//! reads that run is computed here from its rows (or, for Banaś, from its report's stage table)
//! and looked up in the notes. A figure that drifts from the run fails with what the run gives.

use crate::common;
use crate::readme_numbers::{sig, t};

pub(crate) fn notes(paper: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../docs/papers/{paper}.md"));
    std::fs::read_to_string(path).unwrap()
}

pub(crate) fn missing<'a>(text: &str, lines: &'a [String]) -> Vec<&'a String> {
    lines.iter().filter(|l| !text.contains(l.as_str())).collect()
}

/// docs/papers/cecka.md's table: each method's f32 and f64 ms at 2.4M nodes, P1, and its f32
/// speed-up over the serial f64 CPU.
#[test]
fn the_cecka_findings_table_is_the_h200_runs() {
    let case = |m: &str, prec: &str, backend: &str| format!("{backend}/{prec}/method={m},level=7,order=1,min_colors=0");
    let ms = |m: &str, prec: &str| t("h200", "cecka-sizes", &case(m, prec, "cuda"), m) * 1e3;
    let cpu = t("h200", "cecka-sizes", &case("cpu-serial", "f64", "cpu"), "cpu-serial") * 1e3;
    let mut lines = vec![format!("| method | f32 ms | f64 ms | f32 over the serial f64 CPU ({cpu:.0} ms) |")];
    for (name, m) in [
        ("ElemColor", "elem-color"),
        ("GlobalNZ", "global-nz"),
        ("SharedNZ", "shared-nz"),
        ("LocalNZ", "local-nz"),
        ("ElemAtomic", "elem-atomic"),
        ("SharedAtomic", "shared-atomic"),
    ] {
        let (a, b) = (ms(m, "f32"), ms(m, "f64"));
        let cells = if m == "shared-atomic" { format!("**{a:.3}** | **{b:.3}**") } else { format!("{a:.3} | {b:.3}") };
        lines.push(format!("| {name} | {cells} | {:.0}x |", cpu / a));
    }
    let (a, b) = (ms("coo-cusparse", "f32"), ms("coo-cusparse", "f64"));
    lines.push(format!("| coo-cusparse (peer) | {a:.1} | {b:.1} | {:.0}x |", cpu / a));
    let lib = |m: &str| format!("{} and {}", sig(ms(m, "f32"), 3), sig(ms(m, "f64"), 3));
    let text = notes("cecka").split_whitespace().collect::<Vec<_>>().join(" ");
    lines.push(format!("JAX's `jax-segment-sum` {} ms", lib("jax-segment-sum")));
    lines.push(format!("`torch.compile` {} ms", lib("torch-compile")));
    lines.push(format!("NVIDIA Warp's `warp-fem` {} ms", lib("warp-fem")));
    let gone = missing(&notes("cecka"), &lines[..8]).into_iter().chain(missing(&text, &lines[8..])).collect::<Vec<_>>();
    assert!(gone.is_empty(), "docs/papers/cecka.md lacks the run's {gone:#?}");
}

/// docs/papers/pogo.md's table: each model and method's µs a step in f64 (and f32), at the
/// models' full size, and its speed-up over cuSPARSE's sliced ELL.
#[test]
fn the_pogo_findings_table_is_the_h200_runs() {
    let us = |model: &str, m: &str, prec: &str| {
        t("h200", &format!("pogo-{model}"), &format!("cuda/{prec}/method={m},model={model},coarsen=1"), "step") * 1e6
    };
    let mut lines = Vec::new();
    for (model, methods) in [
        ("weld", &["sell-kf32", "sell", "pogo-aligned", "sell-cusparse", "csr-cusparse"][..]),
        ("geophysical", &["sell-kf32", "pogo-aligned"][..]),
        ("gear", &["sell-kf32", "pogo-aligned"][..]),
    ] {
        let vendor = us(model, "sell-cusparse", "f64");
        for &m in methods {
            let f64_us = us(model, m, "f64");
            let shown = if m == "sell-kf32" && model == "weld" { format!("**{f64_us:.2}**") } else { format!("{f64_us:.2}") };
            let f32_us = if m == "sell-kf32" { "-".to_string() } else { format!("{:.2}", us(model, m, "f32")) };
            lines.push((format!("| {model} | {m} | {shown} |"), format!("| {:.2}x | {f32_us} |", vendor / f64_us)));
        }
    }
    let text = notes("pogo");
    let gone: Vec<String> = lines
        .iter()
        .filter(|(head, tail)| !text.lines().any(|l| l.starts_with(head.as_str()) && l.ends_with(tail.as_str())))
        .map(|(h, t)| format!("{h} .. {t}"))
        .collect();
    assert!(gone.is_empty(), "docs/papers/pogo.md lacks the run's {gone:#?}");
}

/// docs/papers/banas.md's REG_NOJAC table (f32): GFLOP/s by the paper's count, share of peak and
/// kernel µs/element, from the report's stage table of the H200 run.
#[test]
fn the_banas_findings_table_is_the_h200_reports() {
    let report = std::fs::read_to_string(common::published("h200").join("report.md")).unwrap();
    let table = report.split("### Tables 5-7: per-element time of each stage and kernel GFLOP/s (cuda on NVIDIA H200, f32").nth(1).unwrap();
    let cells = |metric: &str| -> Vec<String> {
        let line = table.lines().find(|l| l.starts_with("| reg-nojac") && l.contains(metric)).unwrap();
        line.split('|').map(|c| c.trim().to_string()).skip(3).take(7).collect()
    };
    let (gflops, peak, kernel) = (cells("kernel GFLOP/s (paper's count)"), cells("% of peak (executed)"), cells("kernel [us]"));
    let text = notes("banas");
    let gone: Vec<String> = (3..=7usize)
        .map(|p| {
            let k: f64 = kernel[p - 1].parse().unwrap();
            let pk: f64 = peak[p - 1].parse().unwrap();
            format!("| {p} | REG_NOJAC | {} | {pk:.1} | {} |", gflops[p - 1], sig(k, 3))
        })
        .filter(|l| !text.contains(l.as_str()))
        .collect();
    assert!(gone.is_empty(), "docs/papers/banas.md lacks the run's {gone:#?}");
}

/// docs/papers/acoo.md's CG iterations on the H200: csr-atomic against the three vendor CGs, f64
/// then f32, at 484K triangles.
#[test]
fn the_acoo_iterations_are_the_h200_runs() {
    let it = |m: &str, prec: &str| {
        let case = format!("cuda/{prec}/method={m},level=3");
        t("h200", "acoo-capacitor", &case, "solve") / crate::readme_numbers::row("h200", "acoo-capacitor", &case, "solve", "iterations")
            * 1e6
    };
    let peers = ["cusparse-cg-graph", "cusparse-cg-device", "cusparse-cg"];
    let ours = it("csr-atomic", "f64");
    let [g, d, h] = peers.map(|m| it(m, "f64"));
    let [g32, d32, h32] = peers.map(|m| it(m, "f32"));
    let want = format!(
        "csr-atomic takes {ours:.1} µs against {g:.1} µs for the graph peer, {d:.1} µs for the device-pointer peer and {h:.1} µs for the textbook one ({}x, {}x and {}x); in f32 {:.1} µs against {g32:.1}, {d32:.1} and {h32:.1} µs.",
        sig(g / ours, 3),
        sig(d / ours, 3),
        sig(h / ours, 2),
        it("csr-atomic", "f32")
    );
    let text = notes("acoo").split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(text.contains(&want), "docs/papers/acoo.md lacks the run's `{want}`");
}

/// The papers' paragraphs on the GPU libraries quote the H200 reference run: the README's figures
/// of each paper (`readme_numbers::library_figures`), and the notes' own comparisons.
#[test]
fn the_library_paragraphs_are_the_library_run() {
    let (g, graphs) = ("h200", "h200");
    let figures = crate::readme_numbers::library_figures();
    let pogo = |m: &str, prec: &str| t(graphs, "pogo-weld", &format!("cuda/{prec}/method={m},model=weld,coarsen=1"), "step");
    let more = |m: &str, prec: &str| format!("{:.0}%", 100.0 * (pogo(m, prec) / pogo("sell-cusparse", prec) - 1.0));
    let cecka = |m: &str, prec: &str| t(g, "cecka-sizes", &format!("cuda/{prec}/method={m},level=7,order=1,min_colors=0"), m) * 1e3;
    let pair = |m: &str| format!("{} and {} ms", sig(cecka(m, "f32"), 3), sig(cecka(m, "f64"), 3));
    let own: [(&str, Vec<String>); 4] = [
        ("sanfui", figures[0..3].to_vec()),
        ("acoo", [&figures[3..6], &figures[10..11]].concat()),
        (
            "pogo",
            figures[6..9]
                .iter()
                .chain(&figures[11..12])
                .cloned()
                .chain([
                    format!(
                        "Warp's step takes {} more time than cuSPARSE's sliced ELL in f64 and {} more in f32",
                        more("warp-bsr", "f64"),
                        more("warp-bsr", "f32")
                    ),
                    format!(
                        "JAX's takes {}x as long as cuSPARSE's CSR step",
                        sig(pogo("jax-bcsr", "f64") / pogo("csr-cusparse", "f64"), 2)
                    ),
                ])
                .collect(),
        ),
        (
            "cecka",
            vec![
                figures[9].clone(),
                format!("`torch.compile`'s route took {} and our slot map {}", pair("torch-compile"), pair("slot-scatter")),
            ],
        ),
    ];
    for (paper, lines) in own {
        let text = notes(paper).split_whitespace().collect::<Vec<_>>().join(" ");
        let gone = missing(&text, &lines);
        assert!(gone.is_empty(), "docs/papers/{paper}.md lacks the library run's {gone:#?}");
    }
}

/// docs/papers/acoo.md's findings, at 484K triangles in f64: A-FEM's assembly and conversion
/// against the colored CSR assembly, the CG iteration against the textbook peer's, the device
/// bytes per element and A-FEM's total against the best EbE's with their colorings, from the
/// H200 reference run.
#[test]
fn the_acoo_findings_are_the_published_runs() {
    let case = |m: &str| format!("cuda/f64/method={m},level=3");
    let ms = |g: &str, m: &str, stage: &str| t(g, "acoo-capacitor", &case(m), stage) * 1e3;
    let column = |g: &str, m: &str, c: &str| crate::readme_numbers::row(g, "acoo-capacitor", &case(m), "total", c);
    let afem = |g: &str| ["elements", "bc", "consolidate", "convert"].iter().map(|s| ms(g, "a-fem", s)).sum::<f64>();
    let iteration = |g: &str, m: &str| ms(g, m, "solve") / column(g, m, "iterations") * 1e3;
    // A-FEM needs no coloring; the EbE methods' is host pre-processing, added.
    let with_colors = |m: &str| ms("h200", m, "total") + if m == "a-fem" { 0.0 } else { column("h200", m, "coloring_s") * 1e3 };
    let lines = [
        format!(
            "take {:.3} ms on the H200, {:.2}x the colored CSR assembly ({:.3} ms;",
            afem("h200"),
            afem("h200") / ms("h200", "csr-color", "elements"),
            ms("h200", "csr-color", "elements")
        ),
        format!("the goal of at most 2x holds). CSR atomics take {:.3} ms.", ms("h200", "csr-atomic", "elements")),
        format!(
            "A CG iteration takes {} µs (csr-color) and {} µs (a-fem), against {} µs for the textbook peer",
            sig(iteration("h200", "csr-color"), 3),
            sig(iteration("h200", "a-fem"), 3),
            sig(iteration("h200", "cusparse-cg"), 3)
        ),
        format!(
            "A-FEM {:.0} bytes (the paper: 192), EbE-v1 {:.0} (151), EbE-v2 {:.0} (79)",
            column("h200", "a-fem", "bytes_per_element"),
            column("h200", "ebe-v1", "bytes_per_element"),
            column("h200", "ebe-v2", "bytes_per_element")
        ),
        format!(
            "{} ms against {:.0} ms for the best EbE with its coloring (H200)",
            sig(with_colors("a-fem"), 3),
            with_colors("ebe-v1").min(with_colors("ebe-v2"))
        ),
    ];
    let text = notes("acoo").split_whitespace().collect::<Vec<_>>().join(" ");
    let gone = missing(&text, &lines);
    assert!(gone.is_empty(), "docs/papers/acoo.md lacks the runs' {gone:#?}");
}

/// docs/papers/sanfui.md's findings at 500K nodes on the H200: the modified formats against
/// the standard ones, coloring against atomics, ellm-gather's share of copy, the combinations
/// against SharedNZ, the storage counts and where the box stops fitting.
#[test]
fn the_sanfui_findings_are_the_h200_runs() {
    let g = "h200";
    let case = |m: &str, p: &str| format!("cuda/{p}/method={m},nx=200,ny=50,nz=50");
    let time = |m: &str, p: &str, stages: &[&str]| stages.iter().map(|s| t(g, "sanfui-formats", &case(m, p), s)).sum::<f64>();
    let asm = |m: &str, p: &str| time(m, p, &["symbolic", "numeric"]);
    let whole = |m: &str, p: &str| time(m, p, &["elements", "symbolic", "numeric"]);
    let over = |a: &str, b: &str, race: &str, p: &str| asm(&format!("{b}-{race}"), p) / asm(&format!("{a}-{race}"), p);
    let range = |a: &str, b: &str| {
        let (x, y) = (over(a, b, "atomic", "f32"), over(a, b, "atomic", "f64"));
        format!("{:.1}-{:.1}x", x.min(y), x.max(y))
    };
    let formats = ["coo", "csr", "ell", "coom", "ellm"];
    let colors_win = formats.iter().flat_map(|f| ["f32", "f64"].map(|p| asm(&format!("{f}-color"), p) < asm(&format!("{f}-atomic"), p)));
    let nz = |m: &str, p: &str| time("shared-nz", p, &["symbolic", "numeric"]) / whole(m, p);
    let column = |m: &str, c: &str| crate::readme_numbers::row(g, "sanfui-formats", &case(m, "f64"), "total", c);
    // Table 1 counts 4-byte values: the f32 rows' storage.
    let stored = |m: &str, c: &str| crate::readme_numbers::row(g, "sanfui-formats", &case(m, "f32"), "total", c) / 1e6;
    let share = |p: &str| {
        let gbs = crate::readme_numbers::row(g, "sanfui-formats", &case("ellm-gather", p), "numeric", "bandwidth_gbs");
        let copy =
            crate::readme_numbers::row(g, "device-bandwidth", &format!("cuda/{p}/kernel=copy,array_mib=512"), "copy", "bandwidth_gbs");
        format!("{:.0}%", 100.0 * gbs / copy)
    };
    let memory = 150_109_880_320.0_f64;
    let fill: Vec<f64> = formats
        .iter()
        .flat_map(|f| ["color", "atomic"].map(|r| memory / (column(&format!("{f}-{r}"), "device_bytes") / 500_000.0)))
        .collect();
    let (lo, hi) = fill.iter().fold((f64::MAX, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
    let lines = [
        format!("(COOM over COO {}, ELLM over ELL {})", range("coom", "coo"), range("ellm", "ell")),
        format!("with coloring ELLM beats ELL ({:.1}x)", over("ellm", "ell", "color", "f32")),
        format!(
            "COOM does not beat COO ({:.2}x in f32, {:.2}x in f64)",
            over("coom", "coo", "color", "f32"),
            over("coom", "coo", "color", "f64")
        ),
        format!("{} of 5 formats on CUDA, in f32 and f64", colors_win.filter(|&w| w).count()),
        format!("moves {} (f32) and {} (f64) of the copy kernel's bandwidth", share("f32"), share("f64")),
        format!("(COOM with coloring, {:.2}x) does not", nz("coom-color", "f32")),
        format!("COO and CSR beat it too ({:.2}x and {:.2}x in f32 on the H200)", nz("coo-atomic", "f32"), nz("csr-atomic", "f32")),
        format!(
            "our counts give COOM {:.1} MB and ELLM {:.1} MB",
            stored("coom-atomic", "storage_bytes"),
            stored("ellm-atomic", "storage_bytes")
        ),
        format!(
            "Table 1's own expressions give COOM {:.1} MB and ELLM {:.1} MB",
            stored("coom-atomic", "table1_bytes"),
            stored("ellm-atomic", "table1_bytes")
        ),
        format!(
            "stop all of them at {:.2}M nodes, where their device bytes per node at 500K nodes would fill the H200's memory at {:.1}-{:.1}M",
            fembench::sanfui::limits::index_limit_nodes() / 1e6,
            lo / 1e6,
            hi / 1e6
        ),
    ];
    let text = notes("sanfui").split_whitespace().collect::<Vec<_>>().join(" ");
    let gone = missing(&text, &lines);
    assert!(gone.is_empty(), "docs/papers/sanfui.md lacks the run's {gone:#?}");
    // "Every combination beats SharedNZ in f64; in f32 one of ten ... does not."
    let beaten =
        |p: &str| formats.iter().flat_map(|f| ["color", "atomic"].map(|r| nz(&format!("{f}-{r}"), p) > 1.0)).filter(|&b| b).count();
    assert_eq!((beaten("f64"), beaten("f32")), (10, 9));
}
