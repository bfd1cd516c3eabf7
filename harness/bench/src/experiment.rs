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
    fn from_yaml(path: &Path, e: serde_saphyr::Error) -> Self {
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
        ExperimentError {
            path: path.to_path_buf(),
            line: loc.as_ref().map(|l| l.line() as u32),
            column: loc.as_ref().map(|l| l.column() as u32),
            message,
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
    serde_saphyr::from_str(text).map_err(|e| ExperimentError::from_yaml(path, e))
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
    } else if path.exists() {
        Ok(vec![path.to_path_buf()])
    } else {
        Err(ExperimentError::plain(path, "no such file or folder"))
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
    fn ids_must_be_safe_file_names() {
        assert!(check_id("cecka-sizes_2.v1").is_ok());
        for bad in ["", "../up", "a/b", ".hidden", "a b", "x:y"] {
            assert!(check_id(bad).is_err(), "{bad}");
        }
    }
}
