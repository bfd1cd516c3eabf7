//! `harness run ... --gpus all|0,2,3`: the GPU cases of a run spread over the GPUs of one node,
//! one worker process per GPU (each `--shard i/N --device d`, GPU backends only), then the CPU
//! cases in a process of their own, alone, so that host timings keep the cores to themselves;
//! then one merged run folder. Each worker's rows record how many other workers ran beside it
//! (`concurrent_workers`) and its device index (`device_index`). Each worker runs on its share of
//! the node's cores, and all share one prepared-problem cache; the cases of one prepared
//! problem go to one worker ([`fembench::shard::assign_groups`]). `--stop-after` holds for the
//! whole run: the workers get it, and the CPU cases what is left of it; `--costs-from` balances
//! the workers' shards.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use fembench::device::{self, Backend};

/// What `harness run` passes on to every worker.
pub struct Forwarded {
    /// `--stop-after`: seconds from the start of the whole run.
    pub stop_after: Option<f64>,
    /// `--costs-from`: the stored runs whose case walls balance the shards.
    pub costs_from: Vec<PathBuf>,
}

pub fn run(paths: &[PathBuf], backends: &[Backend], quick: bool, out: &Path, gpus: &str, report: bool, fwd: &Forwarded) -> ExitCode {
    let started = std::time::Instant::now();
    let devices = match parse_gpus(gpus) {
        Ok(d) if !d.is_empty() => d,
        Ok(_) => {
            eprintln!("error: --gpus {gpus}: no CUDA device found");
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("error: --gpus {gpus}: {e}");
            return ExitCode::from(2);
        }
    };
    let stamp = fembench::results::stamp();
    let shards_dir = out.join(format!("{stamp}-shards"));
    let Ok(exe) = std::env::current_exe() else { return ExitCode::FAILURE };
    let n = devices.len();
    println!("{n} workers on CUDA devices {devices:?}, then the CPU cases alone");
    let job = Workers { exe: &exe, paths, quick, shards_dir: &shards_dir, fwd };
    let Some(mut ended) = job.gpu_workers(&devices, backends) else { return ExitCode::FAILURE };
    if backends.is_empty() || backends.contains(&Backend::Cpu) {
        ended = ended.max(match fwd.stop_after.map(|s| s - started.elapsed().as_secs_f64()) {
            Some(left) if left <= 0.0 => {
                println!(
                    "--stop-after {}: no time left for the CPU cases (`harness run --resume` runs them)",
                    fwd.stop_after.unwrap_or_default()
                );
                Worker::Stopped
            }
            left => job.cpu_cases(left),
        });
    }
    let merged = out.join(format!("{stamp}-{}gpus{n}", if quick { "quick-" } else { "" }));
    if !merge_shards(&shards_dir, &merged) {
        return ExitCode::FAILURE;
    }
    if ended == Worker::Stopped {
        println!("stopped with cases left: continue with `harness run --resume {}`", merged.display());
    }
    // As `harness run`: a stopped run gets its report when it is finished.
    if report && matches!(ended, Worker::Ok | Worker::RowsFailed) && fembench::publish::report_run(&fembench::REGISTRY, &merged).is_err() {
        ended = ended.max(Worker::Broke);
    }
    match ended {
        Worker::Ok => ExitCode::SUCCESS,
        // Cases left by --stop-after: `harness run --resume` continues the merged run (exit 3).
        Worker::Stopped => ExitCode::from(3),
        // A failed row in any worker fails the whole run as `harness run` does (exit 4).
        Worker::RowsFailed => ExitCode::from(4),
        Worker::Broke => ExitCode::FAILURE,
    }
}

/// How a worker process ended, the worst last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Worker {
    Ok,
    /// It exited 3: `--stop-after` left cases unrun (or none was started for lack of time).
    Stopped,
    /// It exited 4: a row failed, and every case ran.
    RowsFailed,
    /// Any other non-zero exit, or a process that could not be waited for.
    Broke,
}

impl Worker {
    fn of(status: std::io::Result<std::process::ExitStatus>, what: &str) -> Worker {
        match status {
            Ok(st) if st.success() => Worker::Ok,
            Ok(st) if st.code() == Some(3) => Worker::Stopped,
            Ok(st) if st.code() == Some(4) => {
                eprintln!("{what}: a row failed (exit 4)");
                Worker::RowsFailed
            }
            Ok(st) => {
                eprintln!("{what} ended with {st}");
                Worker::Broke
            }
            Err(e) => {
                eprintln!("{what}: {e}");
                Worker::Broke
            }
        }
    }
}

/// The worker processes' common command line: this executable, the experiment files, quick or
/// full, and the folder of their runs.
struct Workers<'a> {
    exe: &'a Path,
    paths: &'a [PathBuf],
    quick: bool,
    shards_dir: &'a Path,
    fwd: &'a Forwarded,
}

impl Workers<'_> {
    /// `harness run` of these experiments with `args` added.
    fn command(&self) -> Command {
        let mut cmd = Command::new(self.exe);
        cmd.arg("run").args(self.paths).arg("--out").arg(self.shards_dir);
        // Every worker shares this process's prepared-problem cache.
        cmd.arg("--prep-cache").arg(fembench::prep_cache::setting().arg());
        if self.quick {
            cmd.arg("--quick");
        }
        for c in &self.fwd.costs_from {
            cmd.arg("--costs-from").arg(c);
        }
        cmd
    }

    /// One worker per GPU, each on its shard of the cases, side by side; how the worst ended, or
    /// None where one could not start.
    fn gpu_workers(&self, devices: &[usize], backends: &[Backend]) -> Option<Worker> {
        let gpu_backends: Vec<Backend> =
            if backends.is_empty() { vec![Backend::Cuda] } else { backends.iter().copied().filter(|b| *b != Backend::Cpu).collect() };
        let n = devices.len();
        let shares = core_shares(n);
        let mut children = Vec::new();
        for (i, d) in devices.iter().enumerate() {
            let mut cmd = self.command();
            if let Some(cpus) = shares.get(i).filter(|c| !c.is_empty()) {
                pin(&mut cmd, cpus.clone());
            }
            cmd.arg("--shard").arg(format!("{}/{n}", i + 1)).arg("--device").arg(d.to_string());
            if let Some(s) = self.fwd.stop_after {
                cmd.arg("--stop-after").arg(s.to_string());
            }
            for b in &gpu_backends {
                cmd.arg("--backend").arg(b.to_string());
            }
            cmd.env("FEMBENCH_CONCURRENT_WORKERS", (n - 1).to_string());
            match cmd.spawn() {
                Ok(c) => children.push((*d, c)),
                Err(e) => {
                    eprintln!("error: could not start the worker for GPU {d}: {e}");
                    return None;
                }
            }
        }
        let mut worst = Worker::Ok;
        for (d, mut c) in children {
            worst = worst.max(Worker::of(c.wait(), &format!("the worker for GPU {d}")));
        }
        Some(worst)
    }

    /// The CPU cases, alone on the host after the GPU workers, with `left` seconds of
    /// `--stop-after`; how they ended.
    fn cpu_cases(&self, left: Option<f64>) -> Worker {
        let mut cmd = self.command();
        if let Some(left) = left {
            cmd.arg("--stop-after").arg(left.to_string());
        }
        Worker::of(cmd.arg("--backend").arg("cpu").status(), "the CPU cases' process")
    }
}

/// The cores this process may use, in `n` contiguous shares of (nearly) equal size: one per
/// worker, so that N workers' thread pools (rayon sizes itself to the cores a process may use)
/// do not oversubscribe the node. Empty where the cores cannot be read.
fn core_shares(n: usize) -> Vec<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set, filled by the kernel.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: the set's size is passed with it.
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0 {
        return Vec::new();
    }
    // SAFETY: reads a bit of the set filled above.
    let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect();
    if cpus.len() < n || n <= 1 {
        return vec![cpus; n];
    }
    (0..n).map(|i| cpus[i * cpus.len() / n..(i + 1) * cpus.len() / n].to_vec()).collect()
}

/// Starts `cmd` on `cpus` only: it and every thread it makes.
fn pin(cmd: &mut Command, cpus: Vec<usize>) {
    use std::os::unix::process::CommandExt;
    println!("  worker on cores {}-{}", cpus[0], cpus[cpus.len() - 1]);
    // SAFETY: between fork and exec the closure only fills a set on its stack and makes one
    // system call (async-signal-safe).
    unsafe {
        cmd.pre_exec(move || {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            cpus.iter().for_each(|&c| libc::CPU_SET(c, &mut set));
            match libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
}

/// The workers' runs merged into one run folder (one run is moved there); whether it worked.
fn merge_shards(shards_dir: &Path, merged: &Path) -> bool {
    let shards: Vec<PathBuf> = std::fs::read_dir(shards_dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.join("meta.json").is_file()).collect())
        .unwrap_or_default();
    let m = if shards.len() == 1 {
        std::fs::rename(&shards[0], merged).map_err(|e| e.to_string())
    } else {
        fembench::merge::merge(&fembench::REGISTRY, &shards, merged)
            .map(|m| {
                if !m.missing.is_empty() {
                    println!("{} planned cases are in no worker's run", m.missing.len());
                }
            })
            .map_err(|e| e.to_string())
    };
    if let Err(e) = m {
        eprintln!("error: merging the workers' runs: {e}");
        return false;
    }
    println!("run {}: merged from {} runs in {}", merged.display(), shards.len().max(1), shards_dir.display());
    true
}

fn parse_gpus(spec: &str) -> Result<Vec<usize>, String> {
    if spec == "all" {
        return device::list(Backend::Cuda).map(|l| l.into_iter().map(|d| d.index).collect()).map_err(|e| e.to_string());
    }
    spec.split(',').map(|s| s.trim().parse::<usize>().map_err(|_| format!("`{s}` is not a device index"))).collect()
}
