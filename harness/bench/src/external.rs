//! Python peers (the `external` peer kind): a script that ships with the project (`peers/*.py`)
//! runs a library's route on the case's device in a Python process of its own, one case at a
//! time, and hands back its timed repetitions, its library's versions and the outputs of its
//! checked pass; the benchmark checks the outputs against its f64 reference like any method's.
//!
//! The protocol (`peers/fembench_peer.py` is the Python side): fembench writes a folder with
//! `problem.json` (route, precision, device, the repetition rule, scalars, and per input array
//! its dtype, length and raw little-endian file) and hands it to the script's worker, which runs
//! for the whole run ([`crate::peer_worker`]). The script writes `result.json`:
//! `{"library", "timer", "samples_s", "outputs"}` (outputs described as the inputs are),
//! `{"skipped": reason}` where Python lacks a package, or `{"error": traceback}`. A missing
//! Python is a skip too; a route that fails, or a worker that dies, is a failed row with the end
//! of what it printed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::benchmark::CaseError;
use crate::peer_worker::Workers;
use fembench_core::Precision;
use fembench_measure::{CacheMode, MeasurePolicy, Timer, Timing};

/// The Python side of the protocol, written beside every script.
const HELPER: Script = Script { file: "fembench_peer.py", text: include_str!("../../../peers/fembench_peer.py") };

/// A peer script, embedded in the binary so that a carried release build runs it anywhere.
#[derive(Debug, Clone, Copy)]
pub struct Script {
    /// Its name under `peers/`.
    pub file: &'static str,
    pub text: &'static str,
}

/// How long one script may run before it is stopped and its row failed.
const DEADLINE: Duration = Duration::from_secs(600);

/// The arrays and scalars handed to a script, written as they are added.
pub struct Inputs {
    dir: tempfile::TempDir,
    arrays: Map<String, Value>,
    scalars: Map<String, Value>,
}

fn io_failed(what: &str, e: std::io::Error) -> CaseError {
    CaseError::Failed(format!("external peer: {what}: {e}"))
}

impl Inputs {
    pub fn new() -> Result<Inputs, CaseError> {
        let dir = tempfile::Builder::new().prefix("fembench-peer-").tempdir().map_err(|e| io_failed("temporary folder", e))?;
        Ok(Inputs { dir, arrays: Map::new(), scalars: Map::new() })
    }

    fn write(mut self, name: &str, dtype: &str, len: usize, bytes: Vec<u8>) -> Result<Inputs, CaseError> {
        let file = format!("in_{name}.bin");
        std::fs::write(self.dir.path().join(&file), bytes).map_err(|e| io_failed(&file, e))?;
        self.arrays.insert(name.into(), json!({"dtype": dtype, "len": len, "file": file}));
        Ok(self)
    }
    pub fn f64s(self, name: &str, v: &[f64]) -> Result<Inputs, CaseError> {
        self.write(name, "f64", v.len(), v.iter().flat_map(|x| x.to_le_bytes()).collect())
    }
    pub fn i32s(self, name: &str, v: &[i32]) -> Result<Inputs, CaseError> {
        self.write(name, "i32", v.len(), v.iter().flat_map(|x| x.to_le_bytes()).collect())
    }
    pub fn u32s(self, name: &str, v: &[u32]) -> Result<Inputs, CaseError> {
        self.write(name, "u32", v.len(), v.iter().flat_map(|x| x.to_le_bytes()).collect())
    }
    pub fn scalar(mut self, name: &str, v: f64) -> Inputs {
        self.scalars.insert(name.into(), json!(v));
        self
    }
}

/// Where and how a route runs: its precision, its CUDA device (None: on the host), and the
/// experiment's repetition rule (the script stops at the minimum count and time; it keeps no
/// noise target).
pub struct Placement<'a> {
    pub precision: Precision,
    pub device: Option<usize>,
    pub policy: &'a MeasurePolicy,
    /// Bytes a cold repetition's flush writes (the case's [`CacheFlusher`]'s; 0: none, and the
    /// script's own minimum on the host).
    ///
    /// [`CacheFlusher`]: fembench_measure::CacheFlusher
    pub flush_bytes: usize,
}

/// What a script handed back.
#[derive(Debug)]
pub struct Outcome {
    /// The library and its version, as the script names them ("CuPy 13.3.0 (CUDA 12.4)").
    pub library: String,
    /// The warm repetitions, then the cold ones where the case asked for them (each after a
    /// flush of the device's cache by the script's library, or of the host's on the host).
    pub timings: Vec<Timing>,
    /// Each stage's warm samples, where the route times its stages (`fembench_peer.time_stages`):
    /// `timings` then holds the passes' totals.
    pub stages: BTreeMap<String, Timing>,
    outputs: BTreeMap<String, Vec<f64>>,
}

impl Outcome {
    /// Output `name` of the checked pass (integers come back exactly: they are below 2^53).
    pub fn output(&self, name: &str) -> Result<&[f64], CaseError> {
        self.outputs
            .get(name)
            .map(|v| &v[..])
            .ok_or_else(|| CaseError::Failed(format!("external peer: the script returned no output {name}")))
    }
}

#[derive(Deserialize)]
struct ArrayFile {
    dtype: String,
    len: usize,
    file: String,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ScriptResult {
    Skipped {
        skipped: String,
    },
    Error {
        error: String,
    },
    Done {
        library: String,
        timer: String,
        samples_s: Vec<f64>,
        /// The cold repetitions, where the case asked for them and the route could flush.
        #[serde(default)]
        cold_samples_s: Option<Vec<f64>>,
        /// Each stage's samples, where the route times its stages.
        #[serde(default)]
        stages: BTreeMap<String, Vec<f64>>,
        outputs: BTreeMap<String, ArrayFile>,
    },
}

/// The Python that runs the scripts: `FEMBENCH_PYTHON`, else `python3` on the path.
fn python() -> String {
    std::env::var("FEMBENCH_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Runs `route` of `script` on `inputs` and reads back what it returned, on the run's worker for
/// the script and device (started at the first case that needs it: [`crate::peer_worker`]).
pub fn run(workers: &Mutex<Workers>, script: &Script, route: &str, inputs: Inputs, at: &Placement) -> Result<Outcome, CaseError> {
    let dir = inputs.dir.path();
    let p = at.policy;
    let problem = json!({
        "route": route,
        "precision": at.precision.as_str(),
        "device": at.device,
        "measure": {"warmup": p.warmup, "min_reps": p.min_reps, "max_reps": p.max_reps, "min_time_s": p.min_time_s, "max_time_s": p.max_time_s},
        "modes": p.modes.iter().map(|m| m.as_str()).collect::<Vec<_>>(),
        "flush_bytes": at.flush_bytes,
        "scalars": inputs.scalars,
        "arrays": inputs.arrays,
    });
    std::fs::write(dir.join("problem.json"), problem.to_string()).map_err(|e| io_failed("problem.json", e))?;
    let files = [(HELPER.file, HELPER.text), (script.file, script.text)];
    workers.lock().unwrap_or_else(|e| e.into_inner()).call(&python(), &files, at.device, dir, DEADLINE)?;
    let text = std::fs::read_to_string(dir.join("result.json")).map_err(|e| io_failed("result.json", e))?;
    let result: ScriptResult =
        serde_json::from_str(&text).map_err(|e| CaseError::Failed(format!("external peer: result.json does not parse: {e}")))?;
    outcome(result, dir)
}

/// The CUDA device a route `name` runs on for the case (None: the host, on the cpu backend); on
/// another GPU backend the case is skipped with the reason.
pub fn cuda_device(ctx: &crate::benchmark::CaseCtx, name: &str) -> Result<Option<usize>, CaseError> {
    match ctx.target {
        crate::benchmark::Target::Gpu(dev) if dev.info().backend == Some(fembench_device::Backend::Cuda) => Ok(Some(dev.info().index)),
        crate::benchmark::Target::Gpu(_) => Err(CaseError::Skipped(format!("{name} runs on CUDA devices"))),
        crate::benchmark::Target::Cpu => Ok(None),
    }
}

/// Runs `route` of `script` for the case, on `device` ([`cuda_device`]) in the case's precision
/// and repetition rule (with its cache flush's size), on the run's worker. The background's host
/// work is quieted first: the script's host work is inside its timers.
pub fn run_for(
    ctx: &mut crate::benchmark::CaseCtx,
    device: Option<usize>,
    script: &Script,
    route: &str,
    inputs: Inputs,
) -> Result<Outcome, CaseError> {
    ctx.run.background().quiet();
    let at = Placement { precision: ctx.precision, device, policy: ctx.policy, flush_bytes: ctx.flusher.map_or(0, |f| f.bytes()) };
    run(&workers(ctx.run), script, route, inputs, &at)
}

/// The run's Python workers ([`crate::peer_worker`]), kept in its context.
pub fn workers(run: &crate::context::RunContext) -> std::sync::Arc<Mutex<Workers>> {
    run.state("python peer workers", || Mutex::new(Workers::default()))
}

fn outcome(result: ScriptResult, dir: &Path) -> Result<Outcome, CaseError> {
    let (library, timer, samples, cold, stages, files) = match result {
        ScriptResult::Skipped { skipped } => return Err(CaseError::Skipped(skipped)),
        ScriptResult::Error { error } => {
            let tail: Vec<&str> = error.lines().rev().take(4).collect();
            return Err(CaseError::Failed(format!("external peer: {}", tail.into_iter().rev().collect::<Vec<_>>().join(" | "))));
        }
        ScriptResult::Done { library, timer, samples_s, cold_samples_s, stages, outputs } => {
            (library, timer, samples_s, cold_samples_s, stages, outputs)
        }
    };
    let timer = match timer.as_str() {
        "device-event-open" => Timer::DeviceEventOpen,
        "host-wall" => Timer::HostWall,
        other => return Err(CaseError::Failed(format!("external peer: unknown timer {other:?}"))),
    };
    let mut timings = vec![Timing { samples, timer, mode: CacheMode::Warm, batch: 1 }];
    timings.extend(cold.map(|samples| Timing { samples, timer, mode: CacheMode::Cold, batch: 1 }));
    let stages: BTreeMap<String, Timing> =
        stages.into_iter().map(|(name, samples)| (name, Timing { samples, timer, mode: CacheMode::Warm, batch: 1 })).collect();
    for (what, t) in timings.iter().map(|t| (t.mode.as_str(), t)).chain(stages.iter().map(|(n, t)| (n.as_str(), t))) {
        if t.samples.is_empty() || t.samples.iter().any(|s| !(s.is_finite() && *s > 0.0)) {
            return Err(CaseError::Failed(format!("external peer: bad {what} samples {:?}", t.samples)));
        }
    }
    let mut outputs = BTreeMap::new();
    for (name, a) in files {
        outputs.insert(name, read_array(&dir.join(&a.file), &a)?);
    }
    Ok(Outcome { library, timings, stages, outputs })
}

/// One output file as f64 values.
fn read_array(path: &PathBuf, a: &ArrayFile) -> Result<Vec<f64>, CaseError> {
    let bytes = std::fs::read(path).map_err(|e| io_failed(&a.file, e))?;
    let width = match a.dtype.as_str() {
        "f64" | "i64" => 8,
        "f32" | "i32" => 4,
        other => return Err(CaseError::Failed(format!("external peer: output {} has unknown dtype {other}", a.file))),
    };
    if bytes.len() != width * a.len {
        return Err(CaseError::Failed(format!("external peer: {} holds {} bytes, not {} x {width}", a.file, bytes.len(), a.len)));
    }
    // The element type is matched once, not per value.
    let decode: fn(&[u8]) -> f64 = match a.dtype.as_str() {
        "f64" => |c| f64::from_le_bytes(c.try_into().unwrap_or_default()),
        "i64" => |c| i64::from_le_bytes(c.try_into().unwrap_or_default()) as f64,
        "f32" => |c| f32::from_le_bytes(c.try_into().unwrap_or_default()) as f64,
        _ => |c| i32::from_le_bytes(c.try_into().unwrap_or_default()) as f64,
    };
    let values = bytes.chunks_exact(width).map(decode);
    Ok(values.collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ECHO: Script = Script {
        file: "echo_peer.py",
        text: "import os, sys\n\
               import fembench_peer as fp\n\
               def route(p):\n\
               \x20   if p.route == 'skip':\n        fp.skip(p.folder, 'no such library here')\n\
               \x20   if p.route == 'crash':\n        raise RuntimeError('the route broke')\n\
               \x20   if p.route == 'die':\n        print('dying now', file=sys.stderr)\n        os._exit(3)\n\
               \x20   if p.route == 'where':\n        fp.finish(p, fp.compile_cache('warp') + ' ' + os.environ['TORCHINDUCTOR_CACHE_DIR'], 'host-wall', [1.0], {})\n        return\n\
               \x20   x = p.arrays['x'] * p.scalars['k']\n\
               \x20   s = fp.time_host(p, lambda: x.sum())\n\
               \x20   fp.finish(p, f'NumPy test {os.getpid()}', 'host-wall', s, {'y': x, 'n': p.arrays['n'] + 1})\n\
               fp.main({r: route for r in ('double', 'skip', 'crash', 'die', 'where')})\n",
    };

    fn python_with_numpy() -> bool {
        std::process::Command::new(python()).args(["-c", "import numpy"]).status().is_ok_and(|s| s.success())
    }

    fn call(workers: &Mutex<Workers>, route: &str) -> Result<Outcome, CaseError> {
        call_in(workers, route, &[CacheMode::Warm])
    }

    fn call_in(workers: &Mutex<Workers>, route: &str, modes: &[CacheMode]) -> Result<Outcome, CaseError> {
        let modes = fembench_core::NonEmpty(modes.to_vec());
        let policy = MeasurePolicy { warmup: 1, min_reps: 3, max_reps: 3, min_time_s: 0.0, modes, ..MeasurePolicy::default() };
        let inputs = Inputs::new()?.f64s("x", &[1.0, 2.5, -4.0])?.i32s("n", &[7, -1])?.scalar("k", 2.0);
        run(workers, &ECHO, route, inputs, &Placement { precision: Precision::F64, device: None, policy: &policy, flush_bytes: 1 << 20 })
    }

    /// The protocol both ways: arrays and scalars in, outputs and samples back; a skip is a skip,
    /// a crash a failure that quotes the script, and the cases of a run share one worker, which
    /// goes on after a skip or a crash. A worker that dies fails its case with what it printed,
    /// and the next case starts another. Needs Python with NumPy (CI installs it).
    #[test]
    fn a_script_gets_its_inputs_and_returns_outputs_samples_skips_and_failures() {
        if !python_with_numpy() {
            assert!(
                std::env::var_os("FEMBENCH_REQUIRE_PYTHON").is_none(),
                "FEMBENCH_REQUIRE_PYTHON is set and there is no Python with NumPy"
            );
            eprintln!("skipped: no Python with NumPy");
            return;
        }
        let workers = Mutex::new(Workers::default());
        let out = call(&workers, "double").unwrap();
        assert_eq!(out.output("y").unwrap(), &[2.0, 5.0, -8.0]);
        assert_eq!(out.output("n").unwrap(), &[8.0, 0.0]);
        assert!(out.library.starts_with("NumPy test"), "{}", out.library);
        assert_eq!(out.timings.len(), 1, "warm only");
        assert_eq!((out.timings[0].samples.len(), out.timings[0].timer), (3, Timer::HostWall));
        assert!(out.output("z").is_err());
        assert!(matches!(call(&workers, "skip"), Err(CaseError::Skipped(r)) if r == "no such library here"));
        assert!(matches!(call(&workers, "crash"), Err(CaseError::Failed(r)) if r.contains("the route broke")));
        let again = call(&workers, "double").unwrap();
        assert_eq!(again.library, out.library, "one worker (one process id) for the run's cases");
        let died = call(&workers, "die").unwrap_err();
        assert!(matches!(&died, CaseError::Failed(r) if r.contains("dying now")), "{died:?}");
        assert_eq!(workers.lock().unwrap().running(), 0, "a dead worker is forgotten");
        let next = call(&workers, "double").unwrap();
        assert_ne!(next.library, out.library, "the next case starts another worker");
        // Cold runs where asked: as many samples again, each after the host's flush.
        let both = call_in(&workers, "double", &[CacheMode::Warm, CacheMode::Cold]).unwrap();
        let modes: Vec<(CacheMode, usize)> = both.timings.iter().map(|t| (t.mode, t.samples.len())).collect();
        assert_eq!(modes, [(CacheMode::Warm, 3), (CacheMode::Cold, 3)]);
    }

    /// The libraries compile into the folder the workers are given (the prepared-problem cache's),
    /// each in its subfolder; with none, into the worker's own temporary folder.
    #[test]
    fn the_libraries_compile_into_the_cache_folder_or_the_workers_own() {
        if !python_with_numpy() {
            eprintln!("skipped: no Python with NumPy");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let into = Mutex::new(Workers::compiling_into(Some(dir.path().to_path_buf())));
        let d = dir.path().display();
        assert_eq!(call(&into, "where").unwrap().library, format!("{d}/warp {d}/inductor"));
        let own = call(&Mutex::new(Workers::compiling_into(None)), "where").unwrap().library;
        let temp = std::env::temp_dir().join("fembench-worker-");
        assert!(
            own.starts_with(&*temp.to_string_lossy()) && own.contains("/compiled/warp ") && own.ends_with("/compiled/inductor"),
            "{own}"
        );
    }

    #[test]
    fn a_missing_python_is_a_skip() {
        let dir = tempfile::tempdir().unwrap();
        let r = Workers::default().call("/nonexistent/python3", &[("x.py", "")], None, dir.path(), DEADLINE);
        assert!(matches!(r, Err(CaseError::Skipped(why)) if why.contains("no Python")));
    }
}
