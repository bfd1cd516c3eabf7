//! The registry: which benchmark modules exist. The harness crate lists them, one line each
//! (`entry::<cecka::CeckaAssembly>()`); everything else (loading experiment files, naming the
//! valid `benchmark:` values, compiling every kernel file in the tests) reads this list.

use std::path::Path;

use fembench_device::args::Declared;
use fembench_device::kernels::{KernelSource, CACHE_FLUSH, COO_SUM, RADIX_SORT, SCAN};

use crate::benchmark::{load_as, Checks, Experiment, Report};
use crate::experiment::{self, ExperimentError};

type Loader = fn(&Path, String, Checks) -> Result<Box<dyn Experiment>, ExperimentError>;

/// One benchmark module: its `benchmark:` name, its kernel files, and how to load its files.
#[derive(Clone, Copy)]
pub struct Entry {
    pub name: &'static str,
    pub kernels: &'static [KernelSource],
    /// The argument structs of the kernels it launches (`Benchmark::kernel_args`).
    pub kernel_args: fn() -> Vec<Declared>,
    load: Loader,
}

/// The registry line of benchmark `B`.
pub const fn entry<B: Report>() -> Entry {
    Entry { name: B::NAME, kernels: B::KERNELS, kernel_args: B::kernel_args, load: load_as::<B> }
}

/// Every benchmark module of a build.
#[derive(Clone, Copy)]
pub struct Registry(pub &'static [Entry]);

impl Registry {
    /// The valid `benchmark:` values, in registry order.
    pub fn names(&self) -> Vec<&'static str> {
        self.0.iter().map(|e| e.name).collect()
    }

    /// Every kernel file of the build, the harness' own first, each once.
    pub fn kernels(&self) -> Vec<KernelSource> {
        let mut out = vec![CACHE_FLUSH, SCAN, COO_SUM, RADIX_SORT];
        for k in self.0.iter().flat_map(|e| e.kernels) {
            if !out.iter().any(|o| o.file == k.file) {
                out.push(*k);
            }
        }
        out
    }

    /// Every argument struct of the build, the device crate's own first.
    pub fn kernel_args(&self) -> Vec<Declared> {
        let mut out = fembench_device::args::declared();
        out.extend(self.0.iter().flat_map(|e| (e.kernel_args)()));
        out
    }

    /// Parses and validates one experiment file.
    pub fn load(&self, path: &Path) -> Result<Box<dyn Experiment>, ExperimentError> {
        self.load_with(path, Checks::Full)
    }

    /// Parses one experiment file with the given checks: first its `benchmark:` key, then the
    /// whole file against that benchmark's own types.
    pub fn load_with(&self, path: &Path, checks: Checks) -> Result<Box<dyn Experiment>, ExperimentError> {
        let bytes = std::fs::read(path).map_err(|e| ExperimentError::plain(path, format!("cannot be read: {e}")))?;
        let text = String::from_utf8(bytes).map_err(|e| ExperimentError::not_utf8(path, e.as_bytes(), &e.utf8_error()))?;
        self.load_text(path, text, checks)
    }

    /// Parses an experiment's text (errors name `path`).
    pub fn load_text(&self, path: &Path, text: String, checks: Checks) -> Result<Box<dyn Experiment>, ExperimentError> {
        let name = experiment::benchmark_of(path, &text)?;
        match self.0.iter().find(|e| e.name == name) {
            Some(e) => (e.load)(path, text, checks),
            None => {
                let valid = self.names().iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
                Err(ExperimentError::at(
                    path,
                    &text,
                    "benchmark",
                    format!("benchmark: unknown benchmark `{name}`, expected one of {valid}"),
                ))
            }
        }
    }

    /// Parses every experiment file under each path (a file or a folder); all errors are
    /// returned, not only the first, and two files may not share an id.
    pub fn load_all<P: AsRef<Path>>(&self, paths: &[P]) -> Result<Vec<Box<dyn Experiment>>, Vec<ExperimentError>> {
        let mut files = Vec::new();
        let mut errors = Vec::new();
        for p in paths {
            match experiment::experiment_files(p.as_ref()) {
                Ok(f) => files.extend(f),
                Err(e) => errors.push(e),
            }
        }
        let mut out: Vec<Box<dyn Experiment>> = Vec::new();
        for f in files {
            if out.iter().any(|p| p.path() == f) {
                continue; // named twice (a file and its folder): loaded once
            }
            match self.load(&f) {
                Ok(e) => {
                    if let Some(prev) = out.iter().find(|p| p.id() == e.id()) {
                        errors.push(ExperimentError::plain(&f, format!("id `{}` is already used by {}", e.id(), prev.path().display())));
                    } else {
                        out.push(e);
                    }
                }
                Err(e) => errors.push(e),
            }
        }
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(errors)
        }
    }
}
