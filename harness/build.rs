//! Fingerprints of the code that makes each paper's prepared problems, for the keys of the
//! prepared-problem cache (`fembench::prep_code`): the SHA-256 of the paper's folder and of the
//! shared finite-element and core crates' sources, file names and contents in path order. An
//! edit to any of them changes the fingerprint, so the cache misses.
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

const PAPERS: [&str; 5] = ["acoo", "banas", "cecka", "pogo", "sanfui"];
const SHARED: [&str; 2] = ["fem/src", "core/src"];

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn hash(h: &mut Sha256, dir: &str) {
    let mut list = Vec::new();
    files(Path::new(dir), &mut list);
    list.sort();
    for p in list {
        h.update(p.to_string_lossy().as_bytes());
        h.update(std::fs::read(&p).unwrap_or_default());
    }
}

fn main() {
    for dir in SHARED.iter().map(|s| s.to_string()).chain(PAPERS.iter().map(|p| format!("papers/{p}"))) {
        println!("cargo:rerun-if-changed={dir}");
    }
    for paper in PAPERS {
        let mut h = Sha256::new();
        hash(&mut h, &format!("papers/{paper}"));
        SHARED.iter().for_each(|s| hash(&mut h, s));
        println!("cargo:rustc-env=FEMBENCH_CODE_{}={:x}", paper.to_uppercase(), h.finalize());
    }
}
