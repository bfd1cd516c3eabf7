//! Records the git commit the harness was built from (in this crate, which writes run
//! metadata), for run metadata: `git describe --always
//! --dirty`, so a build from a changed tree says `-dirty`.
//!
//! Cargo re-runs this script only when a watched path changes, so it watches what moves the
//! answer: HEAD, the branch ref HEAD points to (a commit moves the ref, not HEAD), packed refs,
//! the index, and the sources that go into the binary (an edit makes the tree dirty).
fn main() {
    let commit = std::process::Command::new("git")
        .args(["describe", "--always", "--dirty", "--abbrev=12"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=FEMBENCH_GIT_COMMIT={commit}");
    let git_dir = std::process::Command::new("git")
        .args(["rev-parse", "--git-dir"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| std::path::PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if let Some(git) = git_dir {
        println!("cargo:rerun-if-changed={}", git.join("HEAD").display());
        println!("cargo:rerun-if-changed={}", git.join("index").display());
        // Watched only where it exists: cargo counts a missing watched file as changed, which
        // rebuilt this crate and the binary on every build. A `git pack-refs` that creates it
        // also deletes the loose ref watched below.
        if git.join("packed-refs").exists() {
            println!("cargo:rerun-if-changed={}", git.join("packed-refs").display());
        }
        if let Ok(head) = std::fs::read_to_string(git.join("HEAD")) {
            if let Some(r) = head.trim().strip_prefix("ref: ") {
                println!("cargo:rerun-if-changed={}", git.join(r).display());
            }
        }
    }
    for dir in [
        "src",
        "build.rs",
        "Cargo.toml",
        "../src",
        "../core",
        "../device",
        "../measure",
        "../fem",
        "../tests",
        "../benches",
        "../examples",
        "../Cargo.toml",
        "../../kernels",
        "../../peers",
        "../../experiments",
        "../../Cargo.toml",
    ] {
        println!("cargo:rerun-if-changed={dir}");
    }
}
