//! Experiment definitions: the YAML schema, its validation, and the expansion of a sweep into
//! cases.
//!
//! Every field is typed, so serde (through serde-saphyr) rejects an unknown key, a wrong type,
//! an unknown backend or an empty list with the file's line and column and the valid choices,
//! before anything runs. A file is parsed twice: once for its `benchmark:` key alone, then fully
//! against that benchmark's own sweep, problem and output types.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Deserialize;

pub use fembench_core::{cartesian, NonEmpty, ParamValue, Params};
use fembench_core::{Backend, Precision};
use fembench_measure::MeasurePolicy;

/// One experiment file, typed by its benchmark.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(bound(deserialize = "S: Deserialize<'de>, P: Deserialize<'de> + Default, O: Deserialize<'de>"))]
pub struct ExperimentSpec<S, P, O> {
    /// Short name, used in result paths and report titles.
    pub id: String,
    pub title: String,
    /// Which paper (and which of its tables or figures) this reproduces.
    #[serde(default)]
    pub paper: Option<String>,
    /// Which benchmark module runs the file (a name in the registry).
    pub benchmark: String,
    /// Fixed problem parameters of the benchmark.
    #[serde(default)]
    pub problem: P,
    /// Lists whose cartesian product gives the cases.
    pub sweep: S,
    pub backends: NonEmpty<Backend>,
    pub precisions: NonEmpty<Precision>,
    #[serde(default)]
    pub measure: MeasurePolicy,
    /// The small subset that `--quick` runs (CPU and PoCL in CI).
    #[serde(default)]
    pub quick: Option<QuickSpec<S, P>>,
    pub outputs: O,
}

/// `outputs:` of an experiment file, typed by each benchmark's own table and figure names.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(bound(deserialize = "T: Deserialize<'de>, F: Deserialize<'de>"))]
pub struct Outputs<T, F> {
    #[serde(default)]
    pub tables: Vec<T>,
    #[serde(default)]
    pub figures: Vec<F>,
}

/// What `--quick` changes. A quick sweep or problem replaces the whole sweep or problem; quick
/// measure settings replace only the settings they name.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(bound(deserialize = "S: Deserialize<'de>, P: Deserialize<'de>"))]
pub struct QuickSpec<S, P> {
    #[serde(default)]
    pub sweep: Option<S>,
    #[serde(default)]
    pub problem: Option<P>,
    #[serde(default)]
    pub measure: Option<fembench_measure::MeasureOverride>,
}

/// A bad experiment file: where, and what.
#[derive(Debug, Clone, thiserror::Error)]
pub struct ExperimentError {
    pub path: PathBuf,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub message: String,
}

impl fmt::Display for ExperimentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let (Some(l), Some(c)) = (self.line, self.column) {
            write!(f, ":{l}:{c}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl ExperimentError {
    fn from_yaml(path: &Path, text: &str, e: serde_saphyr::Error) -> Self {
        let loc = e.location();
        // The error's Display carries a snippet with its own line numbers; we keep the message
        // itself and put the location in front, compiler-style.
        let mut message = e.without_snippet().to_string();
        if let Some(l) = &loc {
            let suffix = format!(" at line {}, column {}", l.line(), l.column());
            if let Some(stripped) = message.strip_suffix(&suffix) {
                message = stripped.to_string();
            }
        }
        let (line, column) = (loc.as_ref().map(|l| l.line() as u32), loc.as_ref().map(|l| l.column() as u32));
        // Faults of the whole file (a second document, its size) are in no one field.
        let whole_file = ["from_str_multiple", "budget breached"].iter().any(|w| message.contains(w));
        let mut message = plain_words(&message);
        // Name the field the error is in, unless the message already does.
        if let Some(field) = line.filter(|_| !whole_file).and_then(|l| field_at(text, l, column.unwrap_or(1))) {
            if !message.contains(&format!("`{field}`")) && !message.starts_with(&format!("{field}:")) {
                message = format!("{field}: {message}");
            }
        }
        ExperimentError { path: path.to_path_buf(), line, column, message }
    }

    /// A file that is not UTF-8 text: the place of its first invalid byte.
    pub fn not_utf8(path: &Path, bytes: &[u8], e: &std::str::Utf8Error) -> Self {
        let good = &bytes[..e.valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
        let column = (good.len() - good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)) as u32 + 1;
        ExperimentError {
            path: path.to_path_buf(),
            line: Some(line),
            column: Some(column),
            message: "the file is not UTF-8 text (an experiment file is YAML in UTF-8)".into(),
        }
    }

    pub fn plain(path: &Path, message: impl Into<String>) -> Self {
        ExperimentError { path: path.to_path_buf(), line: None, column: None, message: message.into() }
    }

    /// An error about a field serde accepted but a later check refused: the field's line and
    /// column where it is written, else those of the nearest enclosing mapping that is.
    pub fn at(path: &Path, text: &str, field: &str, message: impl Into<String>) -> Self {
        let mut parts: Vec<&str> = field.split('.').collect();
        let mut loc = None;
        while !parts.is_empty() && loc.is_none() {
            loc = locate(text, &parts.join("."));
            parts.pop();
        }
        let (line, column) = loc.unwrap_or((1, 1));
        ExperimentError { path: path.to_path_buf(), line: Some(line), column: Some(column), message: message.into() }
    }
}

/// The YAML parser's words where they name its own API or types, in the project's words.
fn plain_words(message: &str) -> String {
    const WORDS: [(&str, &str); 6] = [
        ("DuplicateKeyPolicy", "a key appears twice in one mapping; keep one"),
        ("from_str_multiple", "the file holds more than one YAML document (a `---` line); an experiment file is one document"),
        ("non-finite float", "a number is NaN or infinite; give a finite number"),
        ("budget breached", "the file is too large or too deeply nested for an experiment file"),
        ("expected mapping start", "expected a mapping here (`key: value` lines, or `{ key: value }`)"),
        ("expected sequence start", "expected a list here (`[a, b]`, or `- a` lines)"),
    ];
    if let Some((_, plain)) = WORDS.iter().find(|(w, _)| message.contains(w)) {
        return plain.to_string();
    }
    // serde's names of integer types, as a user would say them.
    let mut out = message.to_string();
    for (ty, words) in [
        ("u8", "a whole number from 0 to 255"),
        ("u16", "a whole number from 0 to 65535"),
        ("u32", "a whole number from 0 to 4294967295"),
        ("u64", "a whole number of 0 or more"),
        ("usize", "a whole number of 0 or more"),
        ("i32", "a whole number"),
        ("i64", "a whole number"),
        ("f64", "a number"),
        ("f32", "a number"),
    ] {
        out = out
            .replace(&format!("invalid {ty}"), &format!("expected {words}, got"))
            .replace(&format!("expected {ty}"), &format!("expected {words}"));
    }
    out.replace("floating point `", "the number `")
}

/// The dotted path of the field written at a line and column of a YAML text (`measure.warmup`,
/// `sweep.array_mib`): the key on that line, or the innermost mapping around it; keys of a flow
/// mapping (`measure: { warmup: x }`) are read up to the column. None outside every mapping.
pub fn field_at(text: &str, line: u32, column: u32) -> Option<String> {
    let mut stack: Vec<(usize, String)> = Vec::new();
    for (ln, raw) in text.lines().enumerate().take(line as usize) {
        let code = raw.split(" #").next().unwrap_or("");
        let trimmed = code.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indent = code.len() - trimmed.len();
        let here = ln + 1 == line as usize;
        if !trimmed.starts_with('-') {
            if let Some((key, _)) = trimmed.split_once(':') {
                let key = key.trim().trim_matches(|c| c == '"' || c == '\'');
                if !key.is_empty() && key.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.')) {
                    while stack.last().is_some_and(|(i, _)| *i >= indent) {
                        stack.pop();
                    }
                    stack.push((indent, key.to_string()));
                }
            }
        }
        if here {
            // In a flow mapping, the `key: value` segment that holds the column.
            let col = (column.saturating_sub(1) as usize).min(code.len());
            let before = &code[..code.char_indices().map(|(i, _)| i).take_while(|&i| i <= col).last().unwrap_or(0)];
            if let Some(brace) = before.rfind('{') {
                let start = before.rfind(',').filter(|&c| c > brace).unwrap_or(brace) + 1;
                let end = code[start..].find([',', '}']).map_or(code.len(), |e| start + e);
                if let Some((k, _)) = code[start..end].split_once(':') {
                    let k = k.trim();
                    if !k.is_empty() {
                        stack.push((usize::MAX, k.to_string()));
                    }
                }
            }
        }
    }
    let path: Vec<String> = stack.into_iter().map(|(_, k)| k).collect();
    (!path.is_empty()).then(|| path.join("."))
}

/// Line and column (1-based) of a dotted field path such as `measure.max_reps` in a YAML text,
/// in block mappings and in flow mappings (`measure: { max_reps: 3 }`). Comments and list items
/// are skipped; None where the path is not written.
pub fn locate(text: &str, field: &str) -> Option<(u32, u32)> {
    let parts: Vec<&str> = field.split('.').collect();
    let mut stack: Vec<(usize, String)> = Vec::new();
    for (ln, raw) in text.lines().enumerate() {
        let line = raw.split(" #").next().unwrap_or("");
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('-') {
            continue;
        }
        let indent = line.len() - trimmed.len();
        let Some((key, rest)) = trimmed.split_once(':') else { continue };
        let key = key.trim().trim_matches(|c| c == '"' || c == '\'');
        while stack.last().is_some_and(|(i, _)| *i >= indent) {
            stack.pop();
        }
        stack.push((indent, key.to_string()));
        let path: Vec<&str> = stack.iter().map(|(_, k)| k.as_str()).collect();
        if path == parts {
            return Some((ln as u32 + 1, indent as u32 + 1));
        }
        // Flow mappings: the rest of the path, key by key, further along this line.
        if parts.len() > path.len() && parts[..path.len()] == path[..] && rest.contains('{') {
            let mut from = line.len() - rest.len();
            let mut found = None;
            for want in &parts[path.len()..] {
                let hit = line[from..].match_indices(&format!("{want}:")).find(|(i, _)| {
                    let before = line[..from + i].chars().next_back();
                    matches!(before, Some('{' | ',' | ' '))
                });
                match hit {
                    Some((i, _)) => {
                        from += i;
                        found = Some(from);
                        from += want.len() + 1;
                    }
                    None => {
                        found = None;
                        break;
                    }
                }
            }
            if let Some(col) = found {
                return Some((ln as u32 + 1, col as u32 + 1));
            }
        }
    }
    None
}

/// Experiment ids name result folders and files: letters, digits, '-', '_' and '.', not
/// starting with '.'.
pub fn check_id(id: &str) -> Result<(), String> {
    let ok = !id.is_empty()
        && !id.starts_with('.')
        && id.len() <= 100
        && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(format!("id `{id}` is not safe as a file name: use 1-100 letters, digits, '-', '_' or '.', not starting with '.'"))
    }
}

/// Parses a whole file as the spec type of its benchmark.
pub fn parse_spec<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T, ExperimentError> {
    serde_saphyr::from_str(text).map_err(|e| ExperimentError::from_yaml(path, text, e))
}

/// First pass: only the `benchmark:` key, to pick the types of the second pass.
pub fn benchmark_of(path: &Path, text: &str) -> Result<String, ExperimentError> {
    #[derive(Deserialize)]
    struct Probe {
        benchmark: Option<String>,
    }
    let probe: Probe = parse_spec(path, text)?;
    probe.benchmark.ok_or_else(|| {
        // A missing key has no line of its own: point at the top-level mapping's first key.
        let first = text.lines().position(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#')).unwrap_or(0);
        ExperimentError {
            path: path.to_path_buf(),
            line: Some(first as u32 + 1),
            column: Some(1),
            message: "missing field `benchmark` (which benchmark module runs this file)".into(),
        }
    })
}

/// Experiment files named by a CLI argument: the file itself, or every `*.yaml`/`*.yml` of a
/// folder, sorted.
pub fn experiment_files(path: &Path) -> Result<Vec<PathBuf>, ExperimentError> {
    if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| ExperimentError::plain(path, e.to_string()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| matches!(p.extension().and_then(|x| x.to_str()), Some("yaml" | "yml")))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(ExperimentError::plain(path, "folder holds no .yaml experiment files"));
        }
        Ok(files)
    } else {
        match std::fs::metadata(path) {
            Ok(_) => Ok(vec![path.to_path_buf()]),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ExperimentError::plain(path, "no such file or folder")),
            Err(e) => Err(ExperimentError::plain(path, format!("cannot be read: {e}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "id: x\nproblem:\n  group_size: 0 # bad\nmeasure: { warmup: 1, max_reps: 3 }\nquick:\n  measure: { min_reps: 5 }\n";

    #[test]
    fn fields_are_located_in_block_and_flow_mappings() {
        assert_eq!(locate(TEXT, "id"), Some((1, 1)));
        assert_eq!(locate(TEXT, "problem.group_size"), Some((3, 3)));
        assert_eq!(locate(TEXT, "measure.max_reps"), Some((4, 23)));
        assert_eq!(locate(TEXT, "quick.measure.min_reps"), Some((6, 14)));
        assert_eq!(locate(TEXT, "measure.min_reps"), None);
        let e = ExperimentError::at(Path::new("f.yaml"), TEXT, "measure.min_reps", "m");
        assert_eq!((e.line, e.column), (Some(4), Some(1)), "falls back to the enclosing mapping");
    }

    #[test]
    fn the_field_at_a_place_is_named() {
        assert_eq!(field_at(TEXT, 3, 15).as_deref(), Some("problem.group_size"));
        assert_eq!(field_at(TEXT, 4, 25).as_deref(), Some("measure.max_reps"));
        assert_eq!(field_at(TEXT, 4, 14).as_deref(), Some("measure.warmup"));
        assert_eq!(field_at(TEXT, 6, 16).as_deref(), Some("quick.measure.min_reps"));
        assert_eq!(field_at("sweep:\n  n: [1, x]\n", 2, 10).as_deref(), Some("sweep.n"));
        assert_eq!(field_at("", 1, 1), None);
    }

    #[test]
    fn parser_words_become_the_projects() {
        assert!(!plain_words("duplicate key: set DuplicateKeyPolicy in Options if acceptable").contains("Policy"));
        assert_eq!(plain_words("invalid u32: `abc`"), "expected a whole number from 0 to 4294967295, got: `abc`");
        assert!(plain_words("budget breached: Nodes { nodes: 250001 }").starts_with("the file is too large"));
    }

    #[test]
    fn ids_must_be_safe_file_names() {
        assert!(check_id("cecka-sizes_2.v1").is_ok());
        for bad in ["", "../up", "a/b", ".hidden", "a b", "x:y"] {
            assert!(check_id(bad).is_err(), "{bad}");
        }
    }
}
