//! The house rules, checked on the sources: crates depend on each other one way (and polars
//! only where rows and reports are), no module imports one that imports it back, no source
//! file grows past 600 lines (nor a test file past 450), no function outside tests past 80
//! lines, none takes more than 7 parameters, no module imports every name of a sibling, no run's
//! state in a static (`statics`), no method name as a literal in a report; and what users read:
//! every link of every tracked Markdown file resolves, only published runs are tracked, and
//! project files describe the software.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::markdown_links;
use std::path::{Path, PathBuf};

/// The crates from the bottom up: each may depend only on crates before it.
const LAYERS: [(&str, &str); 6] = [
    ("fembench-core", "core"),
    ("fembench-device", "device"),
    ("fembench-measure", "measure"),
    ("fembench-fem", "fem"),
    ("fembench-bench", "bench"),
    ("harness", "."),
];

fn harness_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `[dependencies]` names of a Cargo.toml (dev-dependencies are not layering).
fn dependencies(manifest: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let mut section = String::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            section = l.to_string();
        } else if section == "[dependencies]" {
            if let Some((name, _)) = l.split_once(['=', '.']) {
                if !name.trim().is_empty() && !name.starts_with('#') {
                    out.push(name.trim().to_string());
                }
            }
        }
    }
    out
}

#[test]
fn crates_depend_one_way_and_polars_only_where_rows_are() {
    for (i, (name, dir)) in LAYERS.iter().enumerate() {
        let deps = dependencies(&harness_dir().join(dir).join("Cargo.toml"));
        for d in deps.iter().filter(|d| d.starts_with("fembench-")) {
            let layer = LAYERS.iter().position(|(n, _)| n == d).unwrap_or_else(|| panic!("{name} depends on unknown crate {d}"));
            assert!(layer < i, "{name} depends on {d}, which is not below it");
        }
        let rows_and_reports = matches!(*name, "fembench-bench" | "harness");
        assert_eq!(deps.iter().any(|d| d == "polars"), rows_and_reports, "{name}: polars only in bench and the papers");
    }
}

/// Every module of a crate: module path ("" for the root, "cecka::gpu") -> its source, tests
/// blocks and `*_tests.rs` files left out (a test module importing its parent is no cycle).
fn modules(root: &Path, lib: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if !name.ends_with(".rs") || name.ends_with("_tests.rs") || name == "main.rs" {
                continue;
            }
            let rel = p.strip_prefix(root).unwrap().with_extension("");
            let mut parts: Vec<String> = rel.iter().map(|s| s.to_string_lossy().to_string()).collect();
            if p == lib || parts.last().is_some_and(|l| l == "mod") {
                parts.pop();
            }
            let text = std::fs::read_to_string(&p).unwrap();
            // Code only: tests blocks and comments (doc links are not imports) left out.
            let code: String =
                text.split("#[cfg(test)]").next().unwrap().lines().map(|l| l.split("//").next().unwrap()).collect::<Vec<_>>().join("\n");
            out.insert(parts.join("::"), code);
        }
    }
    out
}

/// The local modules a module refers to (`crate::a::b`, `super::x`, `use child::..`).
fn references(module: &str, code: &str, all: &BTreeMap<String, String>) -> BTreeSet<String> {
    let parent = |m: &str| m.rsplit_once("::").map(|(p, _)| p.to_string()).unwrap_or_default();
    let join = |a: &str, b: &str| if a.is_empty() { b.to_string() } else { format!("{a}::{b}") };
    // The longest existing module along a path of identifiers from `base`.
    let resolve = |base: String, idents: &[&str]| -> Option<String> {
        let mut m = base.clone();
        let mut found = None;
        for id in idents {
            let next = join(&m, id);
            if all.contains_key(&next) {
                found = Some(next.clone());
                m = next;
            } else {
                break;
            }
        }
        found.or_else(|| (base != module && all.contains_key(&base)).then_some(base))
    };
    let mut out = BTreeSet::new();
    // `pub(super)` is a visibility, not a path to the parent.
    let code = code.replace("pub(super)", "pub");
    let tokens: Vec<&str> = code.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).filter(|t| !t.is_empty()).collect();
    for t in tokens {
        let idents: Vec<&str> = t.split("::").filter(|s| !s.is_empty()).collect();
        let Some(first) = idents.first() else { continue };
        let target = match *first {
            "crate" => resolve(String::new(), &idents[1..]).filter(|m| !m.is_empty()),
            "super" => {
                let mut base = parent(module);
                let mut rest = &idents[1..];
                while rest.first() == Some(&"super") {
                    base = parent(&base);
                    rest = &rest[1..];
                }
                resolve(base, rest)
            }
            "self" => resolve(module.to_string(), &idents[1..]),
            child if idents.len() > 1 && all.contains_key(&join(module, child)) => resolve(module.to_string(), &idents),
            _ => None,
        };
        if let Some(t) = target.filter(|t| t != module) {
            out.insert(t);
        }
    }
    out
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let mut cycles = Vec::new();
    for (_, dir) in LAYERS {
        let base = harness_dir().join(dir);
        let (root, lib) =
            if dir == "." { (base.join("papers"), base.join("papers/lib.rs")) } else { (base.join("src"), base.join("src/lib.rs")) };
        let all = modules(&root, &lib);
        let graph: BTreeMap<&String, BTreeSet<String>> = all.iter().map(|(m, code)| (m, references(m, code, &all))).collect();
        // Depth-first search for a path back to the start.
        for start in graph.keys() {
            let mut stack: Vec<(String, Vec<String>)> = vec![((*start).clone(), vec![(*start).clone()])];
            let mut seen = BTreeSet::new();
            while let Some((m, path)) = stack.pop() {
                for next in graph.get(&m).into_iter().flatten() {
                    if next == *start {
                        cycles.push(format!("{dir}: {} -> {start}", path.join(" -> ")));
                    } else if seen.insert(next.clone()) {
                        let mut p = path.clone();
                        p.push(next.clone());
                        stack.push((next.clone(), p));
                    }
                }
            }
        }
    }
    assert!(cycles.is_empty(), "module cycles:\n{}", cycles.join("\n"));
}

/// The `.rs` files under `dir` (every depth) with more than `limit` lines, with their counts.
fn rust_files_over(dir: PathBuf, limit: usize) -> Vec<String> {
    let mut long = Vec::new();
    let mut stack = vec![dir];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let n = std::fs::read_to_string(&p).unwrap().lines().count();
                if n > limit {
                    long.push(format!("{} ({n} lines)", p.display()));
                }
            }
        }
    }
    long
}

#[test]
fn no_source_file_is_over_600_lines() {
    let long = rust_files_over(harness_dir(), 600);
    assert!(long.is_empty(), "split these files:\n{}", long.join("\n"));
}

/// The files git tracks, relative to the repository root (a fresh clone, as in CI).
fn tracked_files() -> Vec<PathBuf> {
    let out = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(harness_dir().join(".."))
        .output()
        .expect("git runs (the link and layout rules read the tracked files)");
    assert!(out.status.success(), "git ls-files: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout.split(|&b| b == 0).filter(|p| !p.is_empty()).map(|p| PathBuf::from(String::from_utf8_lossy(p).to_string())).collect()
}

#[test]
fn every_link_in_tracked_markdown_resolves() {
    let root = harness_dir().join("..");
    let tracked: BTreeSet<PathBuf> = tracked_files().into_iter().collect();
    let mut broken = Vec::new();
    let mut checked = 0;
    for md in tracked.iter().filter(|p| p.extension().is_some_and(|e| e == "md")) {
        let text = std::fs::read_to_string(root.join(md)).unwrap();
        for link in markdown_links(&text) {
            checked += 1;
            let target = md.parent().unwrap_or(Path::new("")).join(&link);
            // Normalised by hand: a link to a folder or through `..` must still name a real place.
            let mut parts: Vec<std::ffi::OsString> = Vec::new();
            for c in target.components() {
                match c {
                    std::path::Component::ParentDir => {
                        parts.pop();
                    }
                    std::path::Component::CurDir => {}
                    c => parts.push(c.as_os_str().to_os_string()),
                }
            }
            let norm: PathBuf = parts.iter().collect();
            let is_tracked = tracked.contains(&norm) || tracked.iter().any(|t| t.starts_with(&norm));
            if !is_tracked {
                broken.push(format!("{} -> {link}", md.display()));
            }
        }
    }
    assert!(checked > 100, "only {checked} links found: the reader is wrong");
    assert!(broken.is_empty(), "{} broken links in tracked Markdown, e.g.:\n{}", broken.len(), broken[..broken.len().min(20)].join("\n"));
}

#[test]
fn link_reading_finds_relative_targets_only() {
    let text = "see [a](docs/a.md#x), ![f](figures/b.svg) and [web](https://example.org) [m](mailto:x@y)";
    assert_eq!(markdown_links(text), vec!["docs/a.md".to_string(), "figures/b.svg".to_string()]);
}

/// Project files describe the software, not how it was made: no tracked text speaks of the
/// sittings in which it was written (the word is built from parts, so this file passes too).
#[test]
fn tracked_files_describe_the_software() {
    let root = harness_dir().join("..");
    let word = ["ses", "sion"].concat();
    for f in tracked_files() {
        let Ok(text) = std::fs::read_to_string(root.join(&f)) else { continue };
        let hit = text.to_lowercase().split(|c: char| !c.is_alphanumeric()).any(|w| w == word || w == format!("{word}s"));
        assert!(!hit, "{} speaks of a {word}", f.display());
    }
}

#[path = "house/launch.rs"]
mod launch;
#[path = "house/shape.rs"]
mod shape;
#[path = "house/statics.rs"]
mod statics;
#[path = "house/tree.rs"]
mod tree;

/// Reports name methods through the methods' types (`Method::X.as_str()`, `Method::PAPER`), not
/// as string literals, so a renamed method cannot leave a report looking for the old name: no
/// report or claims module of a paper holds one of its methods' names in a string outside its
/// tests.
#[test]
fn reports_name_methods_through_their_types() {
    let names = |all: Vec<&'static str>| all;
    let papers = [
        ("acoo", names(fembench::acoo::spec::Method::all().iter().map(|m| m.as_str()).collect())),
        ("cecka", names(fembench::cecka::spec::Method::all().iter().map(|m| m.as_str()).collect())),
        ("pogo", names(fembench::pogo::spec::Method::all().iter().map(|m| m.as_str()).collect())),
        ("sanfui", names(fembench::sanfui::spec::Method::all().iter().map(|m| m.as_str()).collect())),
    ];
    let mut found = Vec::new();
    for (paper, methods) in &papers {
        for file in [
            "report.rs",
            "claims.rs",
            "limits.rs",
            "traces.rs",
            "multigpu/report.rs",
            "paper_tables.rs",
            "report/mod.rs",
            "report/claims.rs",
            "report/traces.rs",
            "report/paper_tables.rs",
        ] {
            let Ok(text) = std::fs::read_to_string(harness_dir().join("papers").join(paper).join(file)) else { continue };
            let code = shape::without_tests(&text);
            for (line, l) in code.lines().enumerate().filter(|(_, l)| !l.trim_start().starts_with("//")) {
                for m in methods.iter().filter(|m| l.contains(&format!("\"{m}\""))) {
                    found.push(format!("papers/{paper}/{file}:{}: \"{m}\"", line + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "method names as literals (use the Method type):\n{}", found.join("\n"));
}

/// Test files hold one paper or one concern each, so that none nears the 600-line cap.
#[test]
fn no_test_file_is_over_450_lines() {
    let long = rust_files_over(harness_dir().join("tests"), 450);
    assert!(long.is_empty(), "split these test files by paper or concern:\n{}", long.join("\n"));
}

/// The Rust sources of the crates (tests, benches and examples left out), relative to harness/.
fn crate_sources() -> Vec<PathBuf> {
    let root = harness_dir();
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(&root).unwrap().to_path_buf();
            if p.is_dir() && !matches!(rel.to_str(), Some("tests" | "benches" | "examples" | "target")) {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

/// Each crate source, blanked (comments and strings) and cut before its test module.
fn crate_code() -> Vec<(PathBuf, String)> {
    crate_sources()
        .into_iter()
        .map(|rel| {
            let text = std::fs::read_to_string(harness_dir().join(&rel)).unwrap();
            let code = shape::without_tests(&shape::blank(&text)).to_string();
            (rel, code)
        })
        .collect()
}

#[test]
fn no_function_is_over_80_lines_outside_tests() {
    let mut long = Vec::new();
    for (rel, code) in crate_code() {
        for f in shape::functions(&code).into_iter().filter(|f| f.lines > 80) {
            long.push(format!("{}:{} fn {} has {} lines", rel.display(), f.line, f.name, f.lines));
        }
    }
    assert!(long.is_empty(), "split these functions (80 lines at most):\n{}", long.join("\n"));
}

#[test]
fn no_function_takes_more_than_seven_parameters() {
    let mut many = Vec::new();
    for (rel, code) in crate_code() {
        if code.contains("too_many_arguments") {
            many.push(format!("{}: allows clippy::too_many_arguments", rel.display()));
        }
        for f in shape::functions(&code).into_iter().filter(|f| f.params > 7) {
            many.push(format!("{}:{} fn {} takes {} parameters", rel.display(), f.line, f.name, f.params));
        }
    }
    assert!(many.is_empty(), "group these parameters into a struct (7 at most):\n{}", many.join("\n"));
}

#[test]
fn no_module_imports_every_name_of_another() {
    let mut globs = Vec::new();
    for (rel, code) in crate_code() {
        globs.extend(shape::glob_imports(&code).into_iter().map(|(line, u)| format!("{}:{line} {u}", rel.display())));
    }
    assert!(globs.is_empty(), "name what is imported:\n{}", globs.join("\n"));
}

/// The report side (a paper's report, claims and paper-value modules, and bench's report
/// module): tables and figures from rows only. None of it names the device layer or a case's
/// context, so reporting can never measure.
#[test]
fn reporting_code_never_reaches_a_device() {
    let report_side = |rel: &Path| {
        let name = rel.file_name().unwrap().to_string_lossy();
        let in_papers = rel.starts_with("papers");
        let in_report_folder = rel.parent().is_some_and(|d| d.ends_with("report"));
        rel.starts_with("bench/src/report")
            || (in_papers && (in_report_folder || name.contains("report") || name == "claims.rs" || name.starts_with("paper")))
    };
    let mut reaching = Vec::new();
    for (rel, code) in crate_code().into_iter().filter(|(rel, _)| report_side(rel)) {
        for word in ["device::", "fembench_device", "CaseCtx", "dyn Device", "Target"] {
            if code.contains(word) {
                reaching.push(format!("{}: names {word}", rel.display()));
            }
        }
    }
    assert!(reaching.is_empty(), "reporting code reaches the run side:\n{}", reaching.join("\n"));
    assert!(crate_sources().iter().filter(|r| report_side(r)).count() >= 15, "the report side was not found");
}

/// Every argument struct of the build (the device crate's and each benchmark's) matches its
/// kernel's signature in its kernel file, in both precisions of `real`, without compiling
/// anything; and every kernel of every kernel file has a struct.
#[test]
fn every_kernel_has_an_argument_struct_that_matches_its_signature() {
    let declared = fembench::REGISTRY.kernel_args();
    let mut wrong: Vec<String> = declared.iter().filter_map(|d| d.check().err()).collect();
    for source in fembench::REGISTRY.kernels() {
        let code = fembench::device::signature::without_comments(source.text);
        // A kernel: the name after the `void` that follows each KERNEL marker.
        for (at, _) in code.match_indices("KERNEL") {
            let Some(v) = code[at..].find("void") else { continue };
            let name: String = code[at + v + 4..].trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !declared.iter().any(|d| d.kernel == name && d.source.file == source.file) {
                wrong.push(format!("{}: {name} has no argument struct", source.file));
            }
        }
    }
    wrong.dedup();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(declared.len() >= 65, "only {} argument structs", declared.len());
}
