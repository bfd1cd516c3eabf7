//! The `harness` commands that are one call each into the library: history, merge, compact,
//! export and precompile, with what they print and their exit codes.

use std::path::PathBuf;
use std::process::ExitCode;

use fembench::device::Backend;
use fembench::REGISTRY;

pub fn history(paths: &[PathBuf], out: &std::path::Path) -> ExitCode {
    // Folders of runs stand for the runs inside them.
    let mut runs = Vec::new();
    for p in paths {
        if p.join("meta.json").is_file() {
            runs.push(p.clone());
        } else {
            let inside = std::fs::read_dir(p)
                .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).filter(|d| d.join("meta.json").is_file()).collect::<Vec<_>>());
            match inside {
                Ok(v) if !v.is_empty() => runs.extend(v),
                _ => {
                    eprintln!("error: {}: not a run folder or a folder of runs", p.display());
                    return ExitCode::from(2);
                }
            }
        }
    }
    if runs.len() < 2 {
        eprintln!("error: a history needs at least two runs (got {})", runs.len());
        return ExitCode::from(2);
    }
    match fembench::history::write_history(&runs, out) {
        Ok(n) => {
            println!("{}: {n} charts over {} runs", out.display(), runs.len());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

pub fn merge(shards: &[PathBuf], out: &std::path::Path) -> ExitCode {
    match fembench::merge::merge(&REGISTRY, shards, out) {
        Ok(m) => {
            println!("merged {} shards into {}: {} cases", shards.len(), m.run_dir.display(), m.cases);
            if !m.missing.is_empty() {
                println!("{} planned cases are in no shard (`harness run --resume {}` runs them):", m.missing.len(), m.run_dir.display());
                m.missing.iter().take(20).for_each(|c| println!("  {c}"));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

pub fn compact(run_dirs: &[PathBuf]) -> ExitCode {
    for dir in run_dirs {
        match fembench::results::RunDir::open(dir).and_then(|r| r.compact()) {
            Ok(n) => println!("{}: {n} rows files joined", dir.display()),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

pub fn export(level: u32, order: u32, out: &std::path::Path) -> ExitCode {
    if !(1..=6).contains(&order) || level > 8 {
        eprintln!("error: --order must be 1..6 and --level 0..8 (got order {order}, level {level})");
        return ExitCode::from(2);
    }
    let p = fembench::cecka::problem::system::Problem::new(level as usize, order as usize);
    let s = fembench::cecka::problem::system::assemble_serial(&p);
    let summary = format!("{} unknowns, {} non-zeros ({} nodes, {} elements)", p.n_free, p.nnz(), p.mesh.num_nodes(), p.ne());
    wrote(&summary, fembench::cecka::problem::export::write_system(&p, &s, out), out)
}

/// `harness export --paper acoo`: the capacitor system at a refinement level.
pub fn export_acoo(level: u32, out: &std::path::Path) -> ExitCode {
    if level > 6 {
        eprintln!("error: --level must be 0..6 for the capacitor (got {level})");
        return ExitCode::from(2);
    }
    let summary = format!("a-COO capacitor, level {level}");
    wrote(&summary, fembench::acoo::export::write_system(level as usize, out), out)
}

/// `harness export --paper sanfui`: the hexahedral box's stiffness matrix.
pub fn export_sanfui(nodes: &[usize], out: &std::path::Path) -> ExitCode {
    let n = [0, 1, 2].map(|i| nodes.get(i).copied().unwrap_or(0));
    if nodes.len() != 3 || n.iter().any(|&k| !(2..=400).contains(&k)) {
        eprintln!("error: --nodes must be three counts in 2..400 (got {nodes:?})");
        return ExitCode::from(2);
    }
    let summary = format!("Sanfui box, {} x {} x {} nodes, {} unknowns", n[0], n[1], n[2], 3 * n[0] * n[1] * n[2]);
    wrote(&summary, fembench::sanfui::export::write_system(n, out), out)
}

/// `harness export --paper banas`: the element matrices of the first prisms of the paper's box.
pub fn export_banas(degree: usize, elements: usize, out: &std::path::Path) -> ExitCode {
    if !(1..=7).contains(&degree) || !(1..=4096).contains(&elements) {
        eprintln!("error: --degree must be 1..7 and --elements 1..4096 (got degree {degree}, elements {elements})");
        return ExitCode::from(2);
    }
    let summary = format!("Banaś element matrices, degree {degree}, {elements} prisms");
    wrote(&summary, fembench::banas::export::write_elements(degree, elements, out), out)
}

/// Prints what an export wrote, or why it could not.
fn wrote(summary: &str, written: std::io::Result<Vec<PathBuf>>, out: &std::path::Path) -> ExitCode {
    match written {
        Ok(paths) => {
            println!("{summary}");
            for path in paths {
                println!("wrote {}", path.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: writing {}: {e}", out.display());
            ExitCode::FAILURE
        }
    }
}

pub fn export_pogo(name: &str, coarsen: f64, out: &std::path::Path) -> ExitCode {
    use fembench::pogo::spec::ModelName;
    if !(coarsen >= 1.0 && coarsen <= 64.0) {
        eprintln!("error: --coarsen must lie in [1, 64] (got {coarsen})");
        return ExitCode::from(2);
    }
    let Some(which) = ModelName::ALL.into_iter().find(|m| m.as_str() == name) else {
        eprintln!("error: --model must be weld, gear or geophysical (got `{name}`)");
        return ExitCode::from(2);
    };
    // In the node order the cases run it in: the blocks of Fig. 7 are the run's.
    let m = fembench::pogo::prepared::in_run_order(which.build(coarsen));
    let summary = format!("{}: {} nodes, {} dofs, {} elements", m.name, m.nodes(), m.dofs(), m.mesh.tris.len());
    wrote(&summary, fembench::pogo::export::write_model(&m, out), out)
}

pub fn precompile(paths: &[PathBuf], backends: &[Backend], device: usize, any_device: bool) -> ExitCode {
    let done = match fembench::precompile::precompile(&REGISTRY, paths, backends, device, any_device) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut failed = false;
    for d in done {
        let backend = d.backend.map(|b| b.as_str()).unwrap_or("?");
        if let Some(why) = d.unavailable {
            println!("{backend}: not compiled ({why})");
            continue;
        }
        println!(
            "{backend} ({}): {} programs, {} compiled, {} already cached, {} failed, in {:.1} s",
            d.device,
            d.jobs,
            d.compiled,
            d.cached,
            d.failed.len(),
            d.seconds
        );
        for f in &d.unknown_files {
            println!("  {f}: not a kernel file of this build; skipped");
        }
        if !d.stale.is_empty() {
            println!("  {} programs skipped: their kernel is no longer in that file ({}...)", d.stale.len(), d.stale[0]);
        }
        for (file, e) in &d.failed {
            eprintln!("  error: {file}: {e}");
            failed = true;
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The cache's summary line and one line per entry, least recently used first.
fn list_entries(cache: &fembench::prep_cache::Cache, dir: &std::path::Path, out: &mut impl std::io::Write) -> std::io::Result<()> {
    use fembench::prep_cache;
    let entries = cache.entries();
    let total: u64 = entries.iter().map(|e| e.2).sum();
    let (n, total, limit) = (entries.len(), gib(total), gib(cache.limit));
    writeln!(out, "{}: {n} entries, {total:.2} GiB of {limit:.1} GiB (least recently used go first)", dir.display())?;
    let compiled = dir.join(prep_cache::COMPILED);
    let mib = prep_cache::folder_bytes(&compiled) as f64 / 1048576.0;
    writeln!(out, "  the libraries' compiled kernels (Warp, JAX, TorchInductor, Triton, CuPy): {mib:.1} MiB in {}", compiled.display())?;
    for (path, about, bytes, used) in &entries {
        let (used, mib) = (prep_cache::local_time(*used), *bytes as f64 / 1048576.0);
        match about {
            Some(a) => writeln!(out, "  {:<21} {mib:>9.1} MiB  built in {:>7.2} s  used {used}  {}", a.kind, a.build_s, a.params)?,
            None => writeln!(out, "  {} ({mib:.1} MiB, used {used})", path.display())?,
        }
    }
    Ok(())
}

/// `harness cache list|clear`: the prepared-problem cache's entries, or emptied.
pub fn prep_cache(action: &str) -> ExitCode {
    use fembench::prep_cache::{self, Setting};
    let Setting::Dir(dir) = prep_cache::setting() else {
        println!("the prepared-problem cache is off");
        return ExitCode::SUCCESS;
    };
    let cache = prep_cache::Cache { dir: dir.clone(), limit: prep_cache::limit_bytes() };
    if action == "clear" {
        println!("{}: {} entries and the libraries' compiled kernels removed", dir.display(), cache.clear());
        return ExitCode::SUCCESS;
    }
    // A reader that stops early (`harness cache list | head`) ends the listing, not the process.
    let _ = list_entries(&cache, &dir, &mut std::io::stdout().lock());
    ExitCode::SUCCESS
}

fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}
