//! A corpus of malformed variants of every shipped file: each refused with its place and field.

use super::shipped;
use std::path::PathBuf;

/// One malformed variant of a shipped experiment file: what was done, the text, and what the
/// refusal must name (None: the file is not text, or the fault is not in one field).
struct Malformed {
    what: &'static str,
    bytes: Vec<u8>,
    field: Option<String>,
}

/// `text` with its top-level block `key:` (to the next top-level key) replaced by `with`.
fn replace_block(text: &str, key: &str, with: &str) -> Option<String> {
    let mut out = String::new();
    let mut found = false;
    let mut inside = false;
    for line in text.split_inclusive('\n') {
        let top = line.chars().next().is_some_and(|c| !c.is_whitespace() && c != '#');
        if top && line.starts_with(&format!("{key}:")) {
            found = true;
            inside = true;
            out.push_str(with);
            out.push('\n');
            continue;
        }
        if inside && !top {
            continue;
        }
        inside = false;
        out.push_str(line);
    }
    found.then_some(out)
}

/// The malformed variants of one shipped file, every kind of fault that applies to it.
fn malformed_variants(text: &str) -> Vec<Malformed> {
    let mut out = Vec::new();
    let mut push = |what, t: Option<String>, field: Option<&str>| {
        if let Some(t) = t {
            out.push(Malformed { what, bytes: t.into_bytes(), field: field.map(String::from) });
        }
    };
    let first_sweep = text.lines().skip_while(|l| !l.starts_with("sweep:")).nth(1).filter(|l| l.contains(": ["));
    push("unknown top-level key", Some(format!("{text}mesure: {{ warmup: 1 }}\n")), Some("mesure"));
    push("unknown precision", replace_block(text, "precisions", "precisions: [f16]"), Some("precisions"));
    push("unknown backend", replace_block(text, "backends", "backends: [cuda, vulkan]"), Some("backends"));
    push("unknown benchmark", replace_block(text, "benchmark", "benchmark: no-such-benchmark"), Some("benchmark"));
    push("unsafe id", replace_block(text, "id", "id: ../up"), Some("id"));
    push("id twice", replace_block(text, "id", "id: a\nid: b"), Some("id"));
    push("warm-up that never ends", replace_block(text, "measure", "measure: { warmup: 4000000000 }"), Some("measure.warmup"));
    push(
        "time that never ends",
        replace_block(text, "measure", "measure: { min_time_s: 1.0e9, max_time_s: 0 }"),
        Some("measure.min_time_s"),
    );
    push("NaN setting", replace_block(text, "measure", "measure: { target_rel_ci: .nan }"), Some("measure.target_rel_ci"));
    push("min_reps of 0", replace_block(text, "measure", "measure:\n  min_reps: 0"), Some("measure.min_reps"));
    push("text for a number", replace_block(text, "measure", "measure: { max_reps: many }"), Some("measure.max_reps"));
    push("bad quick measure", replace_block(text, "quick", "quick:\n  measure: { min_reps: 0 }"), Some("quick.measure.min_reps"));
    push("unknown quick key", replace_block(text, "quick", "quick:\n  sweeps: {}"), Some("sweeps"));
    push(
        "unknown problem field",
        Some(format!("{}problem: {{ no_such_field: 1 }}\n", replace_block(text, "problem", "").unwrap_or(text.into()))),
        Some("no_such_field"),
    );
    if let Some(line) = first_sweep {
        let (key, rest) = line.split_once(": [").unwrap();
        let first = rest.split([',', ']']).next().unwrap().trim();
        push("a sweep value twice", Some(text.replacen(line, &format!("{key}: [{first}, {rest}"), 1)), Some("sweep"));
        push("an empty sweep list", Some(text.replacen(line, &format!("{key}: []"), 1)), Some(key.trim()));
        push("a number for a list", Some(text.replacen(line, &format!("{key}: 7"), 1)), Some(key.trim()));
    }
    push("two documents", Some(format!("{text}---\nid: second\n")), None);
    let mut latin1 = text.as_bytes().to_vec();
    let at = text.find("title:").unwrap() + "title: ".len();
    latin1.insert(at, 0xe9);
    out.push(Malformed { what: "not UTF-8", bytes: latin1, field: None });
    out
}

/// Every shipped experiment file, broken in every way that applies to it: each variant is refused
/// by the loader `validate` and `run` use, with file, line and column, and the field in the
/// project's own words where one field is at fault; never accepted, never a panic.
#[test]
fn a_corpus_of_malformed_files_is_refused_with_place_and_field() {
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in [shipped(), shipped().join("large")] {
        files.extend(std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "yaml")));
    }
    files.sort();
    let tmp = tempfile::tempdir().unwrap();
    let (mut total, mut placed, mut named, mut accepted) = (0, 0, 0, Vec::new());
    let mut unplaced = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (i, m) in malformed_variants(&text).into_iter().enumerate() {
            total += 1;
            let path = tmp.path().join(format!("{}-{i}.yaml", file.file_stem().unwrap().to_string_lossy()));
            std::fs::write(&path, &m.bytes).unwrap();
            let err = match fembench::REGISTRY.load_all(&[&path]) {
                Ok(_) => {
                    accepted.push(format!("{}: {}", file.display(), m.what));
                    continue;
                }
                Err(errs) => errs.into_iter().next().unwrap(),
            };
            let shown = err.to_string();
            if err.line.is_some() && err.column.is_some() {
                placed += 1;
            } else {
                unplaced.push(format!("{}: {shown}", m.what));
            }
            for leak in ["DuplicateKeyPolicy", "from_str_multiple", "configured policy", "budget breached", "Options"] {
                assert!(!shown.contains(leak), "{}: the parser's words leak: {shown}", m.what);
            }
            match m.field.as_deref() {
                Some(f) if shown.contains(f) => named += 1,
                Some(f) => panic!("{} ({}): the message does not name `{f}`: {shown}", m.what, file.display()),
                None => {}
            }
        }
    }
    eprintln!(
        "{total} malformed variants: {placed} refused with line and column, {named} with the field named, {} accepted",
        accepted.len()
    );
    assert!(total >= 100, "only {total} variants");
    assert!(accepted.is_empty(), "accepted: {accepted:#?}");
    assert!(unplaced.is_empty(), "refused without a place: {unplaced:#?}");
}
