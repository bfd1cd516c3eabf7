//! No run's state in a static: what the cases of a run share lives in the run's context.

use std::collections::BTreeSet;

use super::crate_code;

/// The statics that hold state, each with why it is the process's and not a run's. What a run's
/// cases share (problem caches, background jobs, Cecka's problem built ahead) lives in the run's
/// context (bench/src/context.rs), so that two runs in one process share nothing: a new static
/// fails here.
const PROCESS_STATICS: &[(&str, &str, &str)] = &[
    ("bench/src/interrupt.rs", "INSTALL", "the signal handler is installed once per process"),
    ("bench/src/interrupt.rs", "IN_HAND", "the case in hand, read by the process's signal handler"),
    ("bench/src/interrupt.rs", "REQUESTED", "set by the process's signal handler"),
    ("bench/src/prep_cache.rs", "SETTING", "the command line's --prep-cache, set once per process"),
    ("bench/src/prep_cache.rs", "READ", "entries the process read, counted across its threads"),
    ("bench/src/prep_cache.rs", "BUILT", "entries the process built, counted across its threads"),
    ("bench/src/report/figure.rs", "FONT", "plotters registers its font once per process"),
    ("fem/src/partition.rs", "METIS", "METIS is not thread-safe: one lock for the process"),
    ("measure/src/trace.rs", "ON", "read once from the environment"),
    ("measure/src/trace.rs", "TIMES", "a thread-local"),
    ("papers/lib.rs", "REGISTRY", "a constant table"),
];

/// The names of the statics declared in `code` (blanked), with their lines.
fn statics(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in code.lines().enumerate() {
        let words: Vec<&str> = line.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '\'')).filter(|w| !w.is_empty()).collect();
        for pair in words.windows(2) {
            if pair[0] == "static" {
                let name = if pair[1] == "mut" {
                    words.get(words.iter().position(|w| *w == "mut").unwrap_or(0) + 1).copied()
                } else {
                    Some(pair[1])
                };
                out.extend(name.map(|n| (i + 1, n.to_string())));
            }
        }
    }
    out
}

#[test]
fn run_state_lives_in_the_run_context_not_in_statics() {
    let mut unknown = Vec::new();
    let mut seen = BTreeSet::new();
    for (rel, code) in crate_code() {
        let file = rel.to_string_lossy().to_string();
        for (line, name) in statics(&code) {
            match PROCESS_STATICS.iter().find(|(f, n, _)| *f == file && *n == name) {
                Some(_) => drop(seen.insert((file.clone(), name))),
                None => unknown.push(format!("{file}:{line} static {name}")),
            }
        }
    }
    let gone: Vec<String> = PROCESS_STATICS
        .iter()
        .filter(|(f, n, _)| !seen.contains(&(f.to_string(), n.to_string())))
        .map(|(f, n, _)| format!("{f}: static {n} is gone: remove it from PROCESS_STATICS"))
        .collect();
    assert!(unknown.is_empty() && gone.is_empty(), "keep a run's state in its RunContext:\n{}", [unknown, gone].concat().join("\n"));
}

#[test]
fn statics_are_read_from_declarations_not_from_lifetimes() {
    let code = "static A: u32 = 0;\nfn f(x: &'static str) {}\n    static mut B: u8 = 1;\nthread_local! { static C: u8 = 0; }";
    let names: Vec<String> = statics(code).into_iter().map(|(_, n)| n).collect();
    assert_eq!(names, ["A", "B", "C"]);
}
