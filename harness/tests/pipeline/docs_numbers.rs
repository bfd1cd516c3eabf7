//! The papers' notes quote the H200 reference run: each findings table of docs/papers/*.md that
//! reads that run is computed here from its rows (or, for Banaś, from its report's stage table)
//! and looked up in the notes. A figure that drifts from the run fails with what the run gives.

use crate::common;
use crate::readme_numbers::{sig, t};

fn notes(paper: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../docs/papers/{paper}.md"));
    std::fs::read_to_string(path).unwrap()
}

fn missing<'a>(text: &str, lines: &'a [String]) -> Vec<&'a String> {
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

/// The papers' paragraphs on the GPU libraries quote the H200 library run: the README's figures
/// of each paper (`readme_numbers::library_figures`), and the notes' own comparisons.
#[test]
fn the_library_paragraphs_are_the_library_run() {
    let g = "h200-libraries";
    let figures = crate::readme_numbers::library_figures();
    let pogo = |m: &str, prec: &str| t(g, "pogo-weld", &format!("cuda/{prec}/method={m},model=weld,coarsen=1"), "step");
    let more = |m: &str, prec: &str| format!("{:.0}%", 100.0 * (pogo(m, prec) / pogo("sell-cusparse", prec) - 1.0));
    let cecka = |m: &str, prec: &str| t(g, "cecka-sizes", &format!("cuda/{prec}/method={m},level=7,order=1,min_colors=0"), m) * 1e3;
    let pair = |m: &str| format!("{} and {} ms", sig(cecka(m, "f32"), 3), sig(cecka(m, "f64"), 3));
    let own: [(&str, Vec<String>); 4] = [
        ("sanfui", figures[0..3].to_vec()),
        ("acoo", figures[3..6].to_vec()),
        (
            "pogo",
            figures[6..9]
                .iter()
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
