//! The Python processes that run the external peers, one per script and device, started at the
//! first case that needs one and kept for the rest of the run ([`crate::context::RunContext`]):
//! importing CuPy or PyTorch and making a CUDA context costs seconds, which a process per case
//! paid again for every case. Cases still run one at a time, never concurrently with a method.
//!
//! The protocol: the worker runs `python3 <script> --serve` (`fembench_peer.main`), reads one
//! case folder a line on its standard input, runs the case (writing `result.json` there, a skip
//! or an error included), frees what its libraries keep cached on the device, and answers
//! `done <folder>` on its standard output. Whatever the script prints goes to its standard error,
//! whose last lines are kept for the message of a worker that died. A worker that dies or runs
//! past the deadline is stopped and forgotten; the next case starts another.
//!
//! What the libraries compile (Warp's modules, JAX's XLA programs, TorchInductor's and Triton's
//! kernels, CuPy's) goes under the prepared-problem cache ([`crate::prep_cache::compiled_dir`]),
//! so that a later run, shard or resume reads it back as it reads the prepared problems; with the
//! cache off, into the worker's own folder, gone with it. Compiles happen before a route's timer
//! either way: the rows are the same.

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::benchmark::CaseError;

/// Lines of a worker's standard error kept for a failure's message.
const KEPT_LINES: usize = 8;

/// The libraries' own variables for their compile caches, and each one's subfolder of the compile
/// folder (Warp and JAX take theirs from `FEMBENCH_COMPILE_CACHE`: `fembench_peer.compile_cache`).
const COMPILE_CACHES: [(&str, &str); 3] =
    [("TORCHINDUCTOR_CACHE_DIR", "inductor"), ("TRITON_CACHE_DIR", "triton"), ("CUPY_CACHE_DIR", "cupy")];

/// A script file written beside the worker: its name and text.
pub(crate) type ScriptFile = (&'static str, &'static str);

/// The run's workers, by script and device (None: the host).
pub struct Workers {
    running: HashMap<(&'static str, Option<usize>), Worker>,
    /// Where the libraries keep what they compile (None: each worker's own folder).
    compiled: Option<PathBuf>,
}

impl Default for Workers {
    /// Workers whose libraries compile into the prepared-problem cache's folder for them.
    fn default() -> Self {
        Workers::compiling_into(crate::prep_cache::compiled_dir())
    }
}

struct Worker {
    child: Child,
    /// Its input; dropped (closed) first when the worker is dropped.
    stdin: Option<ChildStdin>,
    answers: Receiver<String>,
    log: Arc<Mutex<VecDeque<String>>>,
    /// Holds the scripts the worker imports.
    _dir: tempfile::TempDir,
}

fn io_failed(what: &str, e: std::io::Error) -> CaseError {
    CaseError::Failed(format!("external peer: {what}: {e}"))
}

/// The lines of `from`, each sent to `to` (a thread per stream, ending with the stream).
fn forward(from: impl Read + Send + 'static, mut to: impl FnMut(String) + Send + 'static) {
    std::thread::spawn(move || BufReader::new(from).lines().map_while(Result::ok).for_each(&mut to));
}

impl Worker {
    /// Starts `python <script> --serve` with `files` (the script last) in a folder of its own (the
    /// case's problem names its device), its libraries compiling into `compiled` (None: that
    /// folder).
    fn start(python: &str, files: &[ScriptFile], compiled: Option<&Path>) -> Result<Worker, CaseError> {
        let dir = tempfile::Builder::new().prefix("fembench-worker-").tempdir().map_err(|e| io_failed("temporary folder", e))?;
        for (file, text) in files {
            std::fs::write(dir.path().join(file), text).map_err(|e| io_failed(file, e))?;
        }
        let script = dir.path().join(files.last().map_or("", |f| f.0));
        let mut command = Command::new(python);
        // The scripts' folder first, then the user's own PYTHONPATH (packages installed there).
        let path = std::env::join_paths(
            std::iter::once(dir.path().to_path_buf()).chain(std::env::var_os("PYTHONPATH").iter().flat_map(std::env::split_paths)),
        )
        .map_err(|e| CaseError::Failed(format!("external peer: PYTHONPATH: {e}")))?;
        command.arg(&script).arg("--serve").env("PYTHONPATH", path);
        let compiled = compiled.map_or_else(|| dir.path().join("compiled"), Path::to_path_buf);
        for (var, sub) in COMPILE_CACHES {
            command.env(var, compiled.join(sub));
        }
        command.env("FEMBENCH_COMPILE_CACHE", compiled);
        let mut child = match command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(CaseError::Skipped(format!("no Python here ({python} not found; FEMBENCH_PYTHON names another)")))
            }
            Err(e) => return Err(io_failed(python, e)),
        };
        let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (Some(stdin), Some(stdout), Some(stderr)) = (stdin, stdout, stderr) else {
            return Err(CaseError::Failed("external peer: the worker's pipes were not made".into()));
        };
        let (send, answers) = std::sync::mpsc::channel();
        forward(stdout, move |line| drop(send.send(line)));
        let log = Arc::new(Mutex::new(VecDeque::new()));
        let kept = log.clone();
        forward(stderr, move |line| {
            let mut l = kept.lock().unwrap_or_else(|e| e.into_inner());
            l.push_back(line);
            if l.len() > KEPT_LINES {
                l.pop_front();
            }
        });
        Ok(Worker { child, stdin: Some(stdin), answers, log, _dir: dir })
    }

    /// Hands `folder` over and waits for its answer, at most `deadline`.
    fn call(&mut self, folder: &Path, deadline: Duration) -> Result<(), CaseError> {
        let name = folder.to_string_lossy().into_owned();
        let sent = match self.stdin.as_mut() {
            Some(stdin) => writeln!(stdin, "{name}").and_then(|_| stdin.flush()),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        };
        sent.map_err(|_| self.died())?;
        loop {
            match self.answers.recv_timeout(deadline) {
                Ok(line) if line == format!("done {name}") => return Ok(()),
                Ok(_) => continue,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(CaseError::Failed(format!("external peer: the case ran past {} s and was stopped", deadline.as_secs())))
                }
                Err(RecvTimeoutError::Disconnected) => return Err(self.died()),
            }
        }
    }

    /// The failure of a worker that stopped answering, with the last lines it printed.
    fn died(&mut self) -> CaseError {
        let status = self.child.wait().map(|s| s.to_string()).unwrap_or_else(|e| e.to_string());
        // The reader threads end with the pipes; a short wait lets the last lines arrive.
        std::thread::sleep(Duration::from_millis(100));
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        let tail: Vec<&str> = log.iter().map(|s| s.as_str()).collect();
        CaseError::Failed(format!("external peer: the Python worker exited ({status}): {}", tail.join(" | ")))
    }
}

impl Drop for Worker {
    /// Closes the worker's input (it ends its loop) and stops it if it has not ended soon after.
    fn drop(&mut self) {
        drop(self.stdin.take());
        for _ in 0..50 {
            if self.child.try_wait().ok().flatten().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Workers {
    /// Workers whose libraries compile into `compiled` (None: each worker's own folder).
    pub fn compiling_into(compiled: Option<PathBuf>) -> Workers {
        Workers { running: HashMap::new(), compiled }
    }

    /// Runs the case in `folder` on the worker of `files` (the script last) for `device`,
    /// starting it where none runs; a worker that failed is dropped, so the next case starts
    /// another.
    pub(crate) fn call(
        &mut self,
        python: &str,
        files: &[ScriptFile],
        device: Option<usize>,
        folder: &Path,
        deadline: Duration,
    ) -> Result<(), CaseError> {
        let key = (files.last().map_or("", |f| f.0), device);
        if !self.running.contains_key(&key) {
            let worker = Worker::start(python, files, self.compiled.as_deref())?;
            self.running.insert(key, worker);
        }
        let worker = self.running.get_mut(&key).expect("inserted above");
        let answer = worker.call(folder, deadline);
        if answer.is_err() {
            // Dropping it closes its input and stops it.
            self.running.remove(&key);
        }
        answer
    }

    /// How many workers run now.
    pub fn running(&self) -> usize {
        self.running.len()
    }
}
