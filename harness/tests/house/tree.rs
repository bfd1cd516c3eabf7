//! What the tracked tree holds: curated runs only, and little of it.

use super::{harness_dir, tracked_files};

/// Only curated runs are tracked: every tracked file under results/ or plots/ is a published one
/// (or the folder's README), and the tree stays small (it travels to GPU machines with the 17 MB
/// binary; 3 MB of it are the A/A runs the regression gate's floors rest on): each published run
/// under 12 MB, the rest under 10 MB.
#[test]
fn only_published_runs_are_tracked_and_the_tree_is_small() {
    let root = harness_dir().join("..");
    let files = tracked_files();
    for f in &files {
        let top = f.components().next().map(|c| c.as_os_str().to_string_lossy().to_string()).unwrap_or_default();
        if top == "results" || top == "plots" {
            let second = f.components().nth(1).map(|c| c.as_os_str().to_string_lossy().to_string()).unwrap_or_default();
            assert!(second == "published" || second == "README.md", "{} is tracked outside published/", f.display());
        }
    }
    // Each published run is compacted, with its figures as SVG where the gallery shows no PNG of
    // them: under 12 MB a run; the rest of the tree under 10 MB.
    let mut sizes = std::collections::BTreeMap::<String, u64>::new();
    for f in &files {
        let parts: Vec<String> = f.components().take(3).map(|c| c.as_os_str().to_string_lossy().to_string()).collect();
        let published_run = parts.len() == 3 && parts[0] == "results" && parts[1] == "published" && f.components().count() > 3;
        let key = if published_run { parts.join("/") } else { "the rest".to_string() };
        *sizes.entry(key).or_default() += std::fs::metadata(root.join(f)).map(|m| m.len()).unwrap_or(0);
    }
    for (part, bytes) in &sizes {
        let limit = if part == "the rest" { 10_000_000 } else { 12_000_000 };
        assert!(*bytes < limit, "{part} holds {bytes} tracked bytes (at most {limit})");
    }
}

/// A paper's folder shows its parts: at most 20 source files flat in any folder of
/// `harness/papers`, and no family of files sharing a prefix (`scaling_*`) outside a subfolder of
/// its own.
#[test]
fn paper_folders_show_their_parts() {
    fn visit(dir: &std::path::Path, out: &mut Vec<String>) {
        let entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        let files: Vec<String> = entries
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .map(|p| p.file_stem().unwrap().to_string_lossy().to_string())
            .collect();
        if files.len() > 20 {
            out.push(format!("{} holds {} files: group them in subfolders", dir.display(), files.len()));
        }
        let mut prefixes = std::collections::BTreeMap::<&str, usize>::new();
        for f in &files {
            if let Some((prefix, _)) = f.split_once('_') {
                *prefixes.entry(prefix).or_default() += 1;
            }
        }
        for (prefix, n) in prefixes {
            if n >= 4 {
                out.push(format!("{} holds {n} files named {prefix}_*: make them a subfolder `{prefix}/`", dir.display()));
            }
        }
        entries.iter().filter(|p| p.is_dir()).for_each(|d| visit(d, out));
    }
    let mut problems = Vec::new();
    visit(&harness_dir().join("papers"), &mut problems);
    assert!(problems.is_empty(), "{problems:#?}");
}
