//! `harness`: the fembench command line.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use fembench::benchmark;
use fembench::device::{self, Backend};
use fembench::runner::{self, RunOptions};
use fembench::{publish, REGISTRY};

mod commands;
mod export;
mod gpu_workers;

#[derive(Parser)]
#[command(name = "harness", version, about = "fembench: run, verify and report GPU finite-element benchmarks")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List every CUDA device, every OpenCL platform and device, and the CPU.
    Devices,
    /// Check experiment files without running them.
    Validate {
        /// Experiment files or folders of them.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Run experiments: every case is measured, verified and written as it finishes. Exits 4
    /// when a row failed (a wrong answer); `--help` lists every exit code.
    #[command(after_help = EXIT_CODES)]
    Run {
        /// Experiment files or folders of them (with --resume: default, the run's own copies).
        #[arg(required_unless_present = "resume")]
        paths: Vec<PathBuf>,
        /// Only these backends (repeatable); default: each experiment's own list.
        #[arg(long = "backend", value_name = "cuda|opencl|cpu")]
        backends: Vec<Backend>,
        /// Device index within each GPU backend (see `harness devices`).
        #[arg(long, default_value_t = 0)]
        device: usize,
        /// Each experiment's small `quick` subset (CPU/PoCL, CI).
        #[arg(long)]
        quick: bool,
        /// Parent folder for the run folder.
        #[arg(long, default_value = "results", conflicts_with = "resume")]
        out: PathBuf,
        /// Continue an interrupted run folder: only cases without rows run.
        #[arg(long, value_name = "RUN_DIR")]
        resume: Option<PathBuf>,
        /// With --resume: run again the cases whose rows have these statuses.
        #[arg(long, value_delimiter = ',', value_parser = ["failed", "skipped"], requires = "resume")]
        retry: Vec<String>,
        /// With --resume: continue a run made on another device, commit or harness version.
        #[arg(long, requires = "resume")]
        force: bool,
        /// Start no new case after this many seconds; the run stops with every finished case
        /// kept, and `--resume` continues it (a batch job's time limit).
        #[arg(long, value_name = "SECONDS")]
        stop_after: Option<f64>,
        /// Also write the report when the run ends: `report.md` and `figures/` in the run folder.
        #[arg(long)]
        report: bool,
        /// Run only part K of N of the case list (1-based, e.g. 2/4); `harness merge` joins the
        /// parts' run folders.
        #[arg(long, value_name = "K/N")]
        shard: Option<fembench::shard::Shard>,
        /// Stored runs (or folders of them) whose case wall times balance the shards.
        #[arg(long, value_name = "DIR", default_value = "results/published")]
        costs_from: Vec<PathBuf>,
        /// Spread the GPU cases over these CUDA devices (`all`, or indices such as 0,2,3): one
        /// worker process per GPU, each a shard pinned to its device; then the CPU cases alone;
        /// then one merged run folder.
        #[arg(long, value_name = "all|0,1,...", conflicts_with_all = ["resume", "shard", "device"])]
        gpus: Option<String>,
        /// The prepared-problem cache: a folder, or `off` (default: FEMBENCH_PREP_CACHE, else
        /// ~/.cache/fembench/prepared). Meshes, operators and f64 references are built once per
        /// machine there and read back by later cases, shards and runs.
        #[arg(long, value_name = "DIR|off")]
        prep_cache: Option<fembench::prep_cache::Setting>,
    },
    /// The prepared-problem cache: `list` its entries (kind, parameters, size, build time, last
    /// use) and the size of the libraries' compiled kernels kept beside them, or `clear` both.
    Cache {
        #[arg(value_parser = ["list", "clear"])]
        action: String,
        /// The cache folder (default: as `harness run` finds it).
        #[arg(long, value_name = "DIR")]
        prep_cache: Option<fembench::prep_cache::Setting>,
    },
    /// Join the run folders of a run's shards (`run --shard K/N`) into one run folder; refuses
    /// shards of different commits, experiment files or kinds of GPU, and a case in two shards.
    Merge {
        /// The shards' run folders.
        #[arg(required = true, num_args = 2..)]
        shards: Vec<PathBuf>,
        /// The merged run folder (new).
        #[arg(long)]
        out: PathBuf,
    },
    /// Write a paper's system (its f64 reference assembly) as Matrix Market files, for SciPy or
    /// Julia: Cecka's heat system (A.mtx, b.mtx, unknowns.csv), a-COO's capacitor (the same,
    /// with capacitor.msh and .vtu), Sanfui's hexahedral box (K.mtx, box.msh, box.vtu) or Banaś'
    /// prism element matrices (element_matrices.mtx, prisms.msh, prisms.vtu); or, with --model,
    /// a Pogo model (Huthwaite 2014) as NAME.msh (Gmsh), NAME.vtu (ParaView), Eq. (4)'s K', C'
    /// and F' as Matrix Market, and model.json.
    Export(export::ExportArgs),
    /// Compare stored runs row by row (CI regression tracking): the last run (NEW) against the
    /// one before it (BASE), ratio of medians with a bootstrap interval and a verdict per row,
    /// each change judged against the row's between-run envelope; exits 1 when something
    /// regressed. More runs before BASE (or --history) are earlier runs whose spread gives
    /// each row its own envelope.
    Compare {
        /// [EARLIER...] BASE NEW: run folders, oldest first.
        #[arg(required = true, num_args = 2.., value_name = "RUN")]
        runs: Vec<PathBuf>,
        /// A folder of earlier runs of the same experiments and kind of device (or a run
        /// folder; repeatable): envelopes from each row's own spread there.
        #[arg(long, value_name = "DIR")]
        history: Vec<PathBuf>,
        /// A change must also exceed this many percent (0: each row's envelope alone decides).
        #[arg(long, default_value_t = 0.0)]
        threshold: f64,
        /// Only these experiments (repeatable).
        #[arg(long = "experiment")]
        experiments: Vec<String>,
        /// table (terminal), markdown (a pull-request comment) or bmf (Bencher Metric Format JSON).
        #[arg(long, default_value = "table", value_parser = ["table", "markdown", "bmf"])]
        format: String,
        /// List the rows judged `same` too.
        #[arg(long)]
        all: bool,
        /// When to exit non-zero.
        #[arg(long, value_enum, default_value = "regression")]
        fail_on: fembench::compare::FailOn,
        /// Compare runs made on different devices or from different experiment files.
        #[arg(long)]
        force: bool,
    },
    /// One static HTML page (inline SVG, no script, no server) of how each experiment's headline
    /// rows moved over a series of runs, with the changes `compare` would call marked and a link
    /// to each run's report.
    History {
        /// Run folders, or folders of them; ordered by when each run started.
        #[arg(required = true)]
        runs: Vec<PathBuf>,
        /// The page to write.
        #[arg(long, default_value = "history.html")]
        out: PathBuf,
    },
    /// Copy a run folder with every time multiplied by FACTOR, to test a regression gate: the
    /// gate that passes a run against itself must fail it against the planted copy.
    #[command(hide = true)]
    Plant {
        run_dir: PathBuf,
        /// The new folder.
        out: PathBuf,
        #[arg(long, default_value_t = 1.5)]
        factor: f64,
    },
    /// Join each experiment's per-case rows files of run folders into one file (the same rows in
    /// far fewer bytes, for a run that is published or kept).
    Compact {
        /// Run folders.
        #[arg(required = true)]
        run_dirs: Vec<PathBuf>,
    },
    /// Compile the kernels that stored runs compiled (their kernels.json) into the disk kernel
    /// cache, in parallel on every core, ahead of a run that will load them.
    Precompile {
        /// Run folders or kernels.json files.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Only these backends (repeatable); default: every backend listed.
        #[arg(long = "backend", value_name = "cuda|opencl")]
        backends: Vec<Backend>,
        /// Device index within each GPU backend.
        #[arg(long, default_value_t = 0)]
        device: usize,
        /// Also compile programs that were listed for another device of the same backend.
        #[arg(long)]
        any_device: bool,
    },
    /// Build tables and figures from a stored run: `report.md` and its `figures/` in the run
    /// folder. With several runs, one hardware comparison of their devices (headline cases side by
    /// side, each as a share of its own run's copy bandwidth) in plots/hardware/.
    Report {
        /// Run folders (results/<run-id>).
        #[arg(required = true)]
        run_dirs: Vec<PathBuf>,
        /// Write the report here instead (report.md, figures/; hardware.md for several runs).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Take each experiment's `outputs:` (which tables and figures) from its namesake in
        /// this folder, e.g. `experiments`: a stored run gets tables added since it ran. Its
        /// rows and every other setting stay its own. One run only.
        #[arg(long, value_name = "DIR")]
        outputs_from: Option<PathBuf>,
    },
}

fn gib(b: u64) -> String {
    format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
}

fn devices() -> ExitCode {
    for backend in Backend::ALL {
        match device::list(backend) {
            Ok(list) if list.is_empty() => println!("{backend}: no devices"),
            Ok(list) => {
                for d in list {
                    println!(
                        "{backend} #{}: {} | {} | driver {} | {} | {} | {} compute units | fp64 {} | cache {} KiB | local mem {} KiB{}{}",
                        d.index,
                        d.name,
                        d.platform,
                        if d.driver_version.is_empty() { "-" } else { &d.driver_version },
                        d.runtime_version,
                        gib(d.memory_bytes),
                        d.compute_units,
                        if d.fp64 { "yes" } else { "no" },
                        d.cache_bytes / 1024,
                        d.local_mem_bytes / 1024,
                        d.compute_capability.as_deref().map(|c| format!(" | compute capability {c}")).unwrap_or_default(),
                        d.uuid.as_deref().map(|u| format!(" | {u}")).unwrap_or_default()
                    );
                }
            }
            Err(e) => println!("{backend}: unavailable: {e}"),
        }
    }
    ExitCode::SUCCESS
}

fn load(paths: &[PathBuf]) -> Result<Vec<Box<dyn benchmark::Experiment>>, ExitCode> {
    let errors = match REGISTRY.load_all(paths) {
        Ok(all) => return Ok(all),
        Err(errors) => errors,
    };
    for e in &errors {
        eprintln!("error: {e}");
    }
    eprintln!("{} experiment file(s) refused; nothing was run", errors.len());
    Err(ExitCode::from(2))
}

/// `--stop-after` is a number of seconds >= 0.
fn check_stop_after(stop_after: Option<f64>) -> Result<(), ExitCode> {
    if stop_after.is_some_and(|s| !(s >= 0.0 && s.is_finite())) {
        eprintln!("error: --stop-after must be a number of seconds >= 0");
        return Err(ExitCode::from(2));
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Run { prep_cache: Some(s), .. } | Command::Cache { prep_cache: Some(s), .. } = &cli.command {
        fembench::prep_cache::configure(s.clone());
    }
    match cli.command {
        Command::Devices => devices(),
        Command::Validate { paths } => validate(&paths),
        Command::Run { paths, backends, quick, out, report: with_report, gpus: Some(gpus), stop_after, costs_from, .. } => {
            if let Err(code) = check_stop_after(stop_after) {
                return code;
            }
            let fwd = gpu_workers::Forwarded { stop_after, costs_from };
            gpu_workers::run(&paths, &backends, quick, &out, &gpus, with_report, &fwd)
        }
        Command::Run {
            paths,
            backends,
            device,
            quick,
            out,
            resume,
            retry,
            force,
            stop_after,
            report: with_report,
            shard,
            costs_from,
            ..
        } => {
            if let Err(code) = check_stop_after(stop_after) {
                return code;
            }
            // A resume without files runs the run folder's own copies of its experiments.
            let paths = match (&resume, paths.is_empty()) {
                (Some(run), true) => vec![run.join("experiments")],
                _ => paths,
            };
            let opts = RunOptions {
                backends,
                device_index: device,
                quick,
                out_dir: out,
                resume,
                retry,
                force,
                progress: true,
                stop_after: stop_after.map(std::time::Duration::from_secs_f64),
                shard,
                costs_from,
            };
            run(&paths, &opts, with_report)
        }
        Command::Report { run_dirs, out, outputs_from } if run_dirs.len() == 1 => {
            write_report(&run_dirs[0], out.as_deref(), outputs_from.as_deref())
        }
        Command::Report { outputs_from: Some(_), .. } => {
            eprintln!("error: --outputs-from applies to the report of one run, not to a hardware comparison");
            ExitCode::FAILURE
        }
        Command::Report { run_dirs, out, .. } => hardware_report(&run_dirs, &out.unwrap_or_else(|| PathBuf::from("plots/hardware"))),
        Command::Precompile { paths, backends, device, any_device } => commands::precompile(&paths, &backends, device, any_device),
        Command::Compare { runs, history, threshold, experiments, format, all, fail_on, force } => {
            if !(threshold >= 0.0 && threshold < 100.0) {
                eprintln!("error: --threshold must be a percentage in [0, 100) (got {threshold})");
                return ExitCode::from(2);
            }
            let mut earlier = history;
            earlier.extend(runs[..runs.len() - 1].iter().cloned());
            let opts = fembench::compare::CompareOptions { threshold: threshold / 100.0, history: earlier, experiments, force };
            compare(&runs, &opts, &format, all, fail_on)
        }
        Command::Cache { action, .. } => commands::prep_cache(&action),
        Command::Compact { run_dirs } => commands::compact(&run_dirs),
        Command::Merge { shards, out } => commands::merge(&shards, &out),
        Command::History { runs, out } => commands::history(&runs, &out),
        Command::Plant { run_dir, out, factor } => plant(&run_dir, &out, factor),
        Command::Export(args) => args.run(),
    }
}

/// `harness validate`: each file's cases, or why it is refused.
fn validate(paths: &[PathBuf]) -> ExitCode {
    match load(paths) {
        Ok(exps) => {
            for e in &exps {
                let quick = if e.has_quick() { format!("{} in --quick", e.case_count(true)) } else { "no quick subset".into() };
                println!("ok {} ({}): {} cases, {quick}", e.path().display(), e.kind(), e.case_count(false));
            }
            ExitCode::SUCCESS
        }
        Err(code) => code,
    }
}

/// `--quick` over files without a `quick:` block would run their full sweeps: refused, naming
/// each.
fn refuse_without_quick(exps: &[Box<dyn benchmark::Experiment>]) -> Result<(), ExitCode> {
    let without: Vec<_> = exps.iter().filter(|e| !e.has_quick()).collect();
    for e in &without {
        eprintln!(
            "error: {}: no `quick:` block, so --quick would run its full sweep ({} cases); add one or run it without --quick",
            e.path().display(),
            e.case_count(false)
        );
    }
    if without.is_empty() {
        return Ok(());
    }
    eprintln!("{} experiment file(s) refused; nothing was run", without.len());
    Err(ExitCode::from(2))
}

/// `harness run` on one device: load, run, say how it ended (and how to continue it), report.
fn run(paths: &[PathBuf], opts: &RunOptions, with_report: bool) -> ExitCode {
    let exps = match load(paths) {
        Ok(e) => e,
        Err(code) => return code,
    };
    if opts.quick {
        if let Err(code) = refuse_without_quick(&exps) {
            return code;
        }
    }
    fembench::interrupt::install();
    match runner::run(&exps, opts) {
        Ok(s) => {
            if s.devices_reopened > 0 && s.rows_skipped > 0 {
                relaunch_for_skipped(paths, &opts.backends, opts.device_index, opts.quick, &s.run_dir);
            }
            let ended = summarise(&s, opts.stop_after);
            // A run with wrong answers still gets its report: the failures table says which.
            if with_report && matches!(ended, Ended::Finished | Ended::RowsFailed) {
                let code = write_report(&s.run_dir, None, None);
                if ended == Ended::Finished {
                    return code;
                }
            }
            ended.code()
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// How a run ended, and its exit code ([`EXIT_CODES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// Every case ran; every row ok, skipped or infeasible: 0.
    Finished,
    /// Some row failed (a wrong answer, or an error of the method or the device): 4.
    RowsFailed,
    /// `--stop-after` left cases unstarted: 3 (`--resume` continues).
    Stopped,
    /// An interrupt stopped it: 130.
    Interrupted,
}

impl Ended {
    fn code(self) -> ExitCode {
        match self {
            Ended::Finished => ExitCode::SUCCESS,
            Ended::RowsFailed => ExitCode::from(4),
            Ended::Stopped => ExitCode::from(3),
            Ended::Interrupted => ExitCode::from(130),
        }
    }
}

/// The exit codes of `harness run`, as `--help` lists them.
const EXIT_CODES: &str = "Exit codes of `harness run`:
  0    every case ran; every row verified (ok), skipped with its reason, or infeasible by construction
  1    an error stopped the run (its folder could not be written, a worker could not start)
  2    bad input: an experiment file or option is refused, and nothing ran
  3    stopped by --stop-after with cases left: `harness run --resume RUN` continues it
  4    a row failed: a wrong answer (verification), or an error of the method or the device;
       the run went on, every finished case is kept, and --report still writes the report
  130  interrupted (Ctrl-C): `harness run --resume RUN` continues it
A run that is interrupted exits 130, and one with a failed row exits 4 even if stopped early.";

/// Prints a run's counts; how it ended, with the command that continues it where it did not
/// finish.
fn summarise(s: &runner::RunSummary, stop_after: Option<std::time::Duration>) -> Ended {
    let infeasible = if s.rows_infeasible > 0 { format!(", {} infeasible", s.rows_infeasible) } else { String::new() };
    println!(
        "run {}: {} cases ({} already done), {} rows ok, {} failed, {} skipped{infeasible}",
        s.run_dir.display(),
        s.cases_run,
        s.cases_skipped_as_done,
        s.rows_ok,
        s.rows_failed,
        s.rows_skipped
    );
    if s.interrupted {
        println!("interrupted with {} cases left: continue with `harness run --resume {}`", s.cases_left, s.run_dir.display());
        return Ended::Interrupted;
    }
    if s.cases_left > 0 {
        println!(
            "stopped after {:.0} s with {} cases left: continue with `harness run --resume {}`",
            stop_after.unwrap_or_default().as_secs_f64(),
            s.cases_left,
            s.run_dir.display()
        );
    }
    if s.rows_failed > 0 {
        println!("{} rows failed (exit 4): the FAILED lines above and the report's failures table say why", s.rows_failed);
        return Ended::RowsFailed;
    }
    if s.cases_left > 0 {
        return Ended::Stopped;
    }
    Ended::Finished
}

/// `harness report RUN RUN...`: the runs side by side as one hardware comparison.
fn hardware_report(run_dirs: &[PathBuf], out: &std::path::Path) -> ExitCode {
    match fembench::hardware::write_hardware_report(run_dirs, out) {
        Ok((md, terminal, figures)) => {
            print!("{terminal}");
            println!("report: {}", md.display());
            figures.iter().for_each(|f| println!("figure: {}", f.display()));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `harness compare [EARLIER...] BASE NEW`: the table in `format`, failing where `fail_on` says.
fn compare(
    runs: &[PathBuf],
    opts: &fembench::compare::CompareOptions,
    format: &str,
    all: bool,
    fail_on: fembench::compare::FailOn,
) -> ExitCode {
    let (new, base) = (&runs[runs.len() - 1], &runs[runs.len() - 2]);
    match fembench::compare::compare_runs(base, new, opts) {
        Ok(c) => {
            match format {
                "bmf" => println!("{}", serde_json::to_string_pretty(&c.to_bmf()).unwrap_or_default()),
                "markdown" => print!("{}", c.table(all).to_markdown()),
                _ => print!("{}", c.table(all).to_terminal()),
            }
            if c.fails(fail_on) {
                eprintln!("{}", c.summary());
                return ExitCode::FAILURE;
            }
            for p in &c.problems {
                eprintln!("warning: {p}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// `harness plant`: a copy of a run with every time multiplied (a planted slowdown for CI).
fn plant(run_dir: &std::path::Path, out: &std::path::Path, factor: f64) -> ExitCode {
    match fembench::compare::plant::plant_slowdown(run_dir, out, factor) {
        Ok(n) => {
            println!("{}: {n} rows files with every time x{factor}", out.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// After a sticky device error, the driver can refuse a new context for the rest of this
/// process, so the cases it skipped run again in a new process (`--resume --retry skipped`),
/// at most twice in a chain. The rows the new process writes land in the same run folder.
fn relaunch_for_skipped(paths: &[PathBuf], backends: &[Backend], device: usize, quick: bool, run_dir: &std::path::Path) {
    const DEPTH: &str = "FEMBENCH_RELAUNCH_DEPTH";
    let depth: u32 = std::env::var(DEPTH).ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    if depth >= 2 {
        eprintln!("a device was lost again; run `harness run --resume {} --retry skipped` by hand", run_dir.display());
        return;
    }
    let Ok(exe) = std::env::current_exe() else { return };
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("run").args(paths).arg("--resume").arg(run_dir).arg("--retry").arg("skipped").arg("--device").arg(device.to_string());
    for b in backends {
        cmd.arg("--backend").arg(b.to_string());
    }
    if quick {
        cmd.arg("--quick");
    }
    eprintln!("a device was lost during the run; running its skipped cases again in a new process");
    match cmd.env(DEPTH, (depth + 1).to_string()).status() {
        Ok(st) if st.success() => {}
        Ok(st) => eprintln!("the new process ended with {st}"),
        Err(e) => eprintln!("could not start a new process: {e}"),
    }
}

fn write_report(run_dir: &std::path::Path, out: Option<&std::path::Path>, outputs_from: Option<&std::path::Path>) -> ExitCode {
    if let Some(dir) = out {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("error: {}: {e}", dir.display());
            return ExitCode::from(2);
        }
    }
    match publish::report_run_with(&REGISTRY, run_dir, out, outputs_from) {
        Ok(out) => {
            print!("{}", out.terminal);
            if let Some(md) = out.markdown_path {
                println!("report: {}", md.display());
            }
            for f in out.figure_paths {
                println!("figure: {}", f.display());
            }
            for (id, why) in &out.not_reported {
                eprintln!("error: experiment {id} could not be reported: {why}");
            }
            if out.not_reported.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
