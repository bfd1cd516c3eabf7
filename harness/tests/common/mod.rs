//! Shared test helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use fembench::device::{self, Backend, Device};

/// The shipped experiments; FEMBENCH_EXPERIMENTS overrides it where a carried test binary runs
/// away from its source tree.
pub fn experiments_dir() -> PathBuf {
    match std::env::var_os("FEMBENCH_EXPERIMENTS") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../experiments"),
    }
}

/// PoCL crashes when several threads build programs in separate contexts at once (the harness
/// itself drives devices from one thread), so OpenCL tests in one binary take turns.
pub static OPENCL: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub fn opencl_turn() -> std::sync::MutexGuard<'static, ()> {
    OPENCL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The OpenCL device tests run on (PoCL in CI). Absent is a failure where
/// FEMBENCH_REQUIRE_OPENCL=1 (CI sets it), else the test says so and passes.
pub fn opencl_device() -> Option<Box<dyn Device>> {
    match device::open(Backend::OpenCl, 0) {
        Ok(d) => Some(d),
        Err(e) => {
            if std::env::var("FEMBENCH_REQUIRE_OPENCL").as_deref() == Ok("1") {
                panic!("FEMBENCH_REQUIRE_OPENCL=1 but OpenCL is unavailable: {e}");
            }
            eprintln!("skipping: no OpenCL device ({e})");
            None
        }
    }
}

/// Whether NVRTC is loadable; absent is a failure where FEMBENCH_REQUIRE_NVRTC=1.
pub fn nvrtc_available() -> bool {
    if device::cuda::nvrtc_present() {
        return true;
    }
    if std::env::var("FEMBENCH_REQUIRE_NVRTC").as_deref() == Ok("1") {
        panic!("FEMBENCH_REQUIRE_NVRTC=1 but libnvrtc could not be loaded (LD_LIBRARY_PATH?)");
    }
    eprintln!("skipping: NVRTC not found");
    false
}

/// Times two fills of a small buffer with a host sleep between them inside one gated region:
/// the region must leave the sleep out (under `limit_s`), refuse a synchronising call, and
/// leave the device usable with the fills done. Shared by the PoCL and the CUDA tests.
pub fn check_gated_timing(dev: &dyn Device, sleep_ms: u64, limit_s: f64) {
    use fembench::device::scan::FillU32;
    use fembench::device::{DeviceExt, Launch};
    use fembench::kernels::Defines;
    let module = dev.compile(&fembench::kernels::CACHE_FLUSH, &Defines::new()).unwrap();
    let fill = dev.kernel(&module, "fb_fill_u32").unwrap();
    let buf = dev.alloc(4096).unwrap();
    let args = FillU32 { buf: &buf, value: 7, n: 1024 };
    let t = dev
        .time_events(&mut || {
            dev.launch_with(&fill, Launch::cover(1024, 64), &args)?;
            std::thread::sleep(std::time::Duration::from_millis(sleep_ms));
            dev.launch_with(&fill, Launch::cover(1024, 64), &args)
        })
        .unwrap();
    assert!(t < limit_s, "the region counted the host's {sleep_ms} ms sleep: {t} s");
    let r = dev.time_events(&mut || {
        dev.launch_with(&fill, Launch::cover(1024, 64), &args)?;
        dev.synchronize()
    });
    assert!(r.is_err(), "a synchronising call inside a region was allowed");
    dev.synchronize().unwrap();
    let words: Vec<u32> = dev.download_vec(&buf, 1024).unwrap();
    assert!(words.iter().all(|&w| w == 7));
}

/// A stand-in experiment whose cases return whatever `outcome` says, by index: for tests of the
/// runner and the results pipeline that need failures, panics and odd extras on demand.
pub struct Scripted {
    pub id: &'static str,
    pub cases: usize,
    pub outcome: fn(usize) -> Result<Vec<fembench::benchmark::Measured>, fembench::benchmark::CaseError>,
}

impl fembench::benchmark::Experiment for Scripted {
    fn id(&self) -> &str {
        self.id
    }
    fn kind(&self) -> &'static str {
        "device-bandwidth"
    }
    fn path(&self) -> &Path {
        Path::new("scripted.yaml")
    }
    fn text(&self) -> &str {
        self.id
    }
    fn backends(&self) -> &[Backend] {
        &[Backend::Cpu]
    }
    fn precisions(&self) -> &[fembench::Precision] {
        &[fembench::Precision::F64]
    }
    fn policy(&self, _quick: bool) -> fembench::measure::MeasurePolicy {
        fembench::measure::MeasurePolicy { warmup: 0, min_reps: 3, min_time_s: 0.0, ..Default::default() }
    }
    fn points(&self, _quick: bool) -> Vec<fembench::experiment::Params> {
        (0..self.cases)
            .map(|i| fembench::experiment::Params::default().push("i", fembench::experiment::ParamValue::Int(i as i64)))
            .collect()
    }
    fn has_quick(&self) -> bool {
        true
    }
    fn run_point(
        &self,
        _ctx: &mut fembench::benchmark::CaseCtx,
        _quick: bool,
        index: usize,
    ) -> Result<Vec<fembench::benchmark::Measured>, fembench::benchmark::CaseError> {
        (self.outcome)(index)
    }
    fn columns(&self) -> &'static [&'static str] {
        &[]
    }
    fn report(
        &self,
        _rows: &polars::prelude::DataFrame,
        _ctx: &fembench::report::ReportCtx,
    ) -> Result<Vec<fembench::report::ReportItem>, fembench::report::ReportError> {
        Ok(vec![])
    }
}

/// Runs an experiment file's quick subset on OpenCL and the CPU into a temporary folder and
/// returns its rows (None without an OpenCL device).
#[allow(dead_code)]
pub fn quick_rows_on_opencl(file: &str, id: &str) -> Option<polars::prelude::DataFrame> {
    quick_rows_on_opencl_edited(file, id, &[])
}

/// [`quick_rows_on_opencl`] of a copy of the file with each `(from, to)` of `edits` replaced
/// (a large file whose full problem needs more host memory than this machine has, made to fit:
/// its quick block is what runs).
pub fn quick_rows_on_opencl_edited(file: &str, id: &str, edits: &[(&str, &str)]) -> Option<polars::prelude::DataFrame> {
    let _turn = opencl_turn();
    drop(opencl_device()?);
    let dir = tempfile::tempdir().unwrap();
    let mut text = std::fs::read_to_string(experiments_dir().join(file)).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{file} holds `{from}`");
        text = text.replace(from, to);
    }
    let path = dir.path().join(Path::new(file).file_name().unwrap());
    std::fs::write(&path, text).unwrap();
    let exp = fembench::load(&path).unwrap();
    let out = tempfile::tempdir().unwrap();
    let opts = fembench::runner::RunOptions {
        backends: vec![fembench::device::Backend::OpenCl, fembench::device::Backend::Cpu],
        quick: true,
        out_dir: out.path().into(),
        ..Default::default()
    };
    let summary = fembench::runner::run(&[exp], &opts).unwrap();
    Some(fembench::results::RunDir::open(&summary.run_dir).unwrap().read_experiment(id).unwrap().unwrap())
}

/// The (method, precision) cases the quick run of `file` plans on `backends`, from the file and
/// the registry (a method added to the file adds its cases; one that cannot run there adds none).
pub fn planned_cases(file: &str, backends: &[fembench::device::Backend]) -> std::collections::BTreeSet<(String, String)> {
    let exp = fembench::load(&experiments_dir().join(file)).unwrap();
    let mut out = std::collections::BTreeSet::new();
    for (i, params) in exp.points(true).iter().enumerate() {
        let method = params.get("method").map(|m| m.to_string().trim_matches('"').to_string()).expect("a method axis");
        for &p in exp.precisions() {
            if backends.iter().any(|&b| exp.case_exists(true, i, b, p)) {
                out.insert((method.clone(), p.as_str().to_string()));
            }
        }
    }
    out
}

/// Whether a row's status is allowed: `ok`, or `skipped` because Python lacks a library's
/// package where FEMBENCH_REQUIRE_PYTHON is unset (a machine without JAX or Warp).
pub fn ok_or_library_absent(status: &str, reason: &str) -> bool {
    status == "ok" || (status == "skipped" && reason.contains("is not installed") && std::env::var_os("FEMBENCH_REQUIRE_PYTHON").is_none())
}

/// A published run folder: `results/published/<gpu>`.
/// A column as f64 values (integers cast; a missing value is NaN).
pub fn column_f64(df: &polars::prelude::DataFrame, name: &str) -> Vec<f64> {
    let col = df.column(name).unwrap().cast(&polars::prelude::DataType::Float64).unwrap();
    col.f64().unwrap().iter().map(|v| v.unwrap_or(f64::NAN)).collect()
}

pub fn published(gpu: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../results/published").join(gpu)
}

/// The targets of the relative links (`[text](target)` and `![alt](target)`) of a Markdown text,
/// without their `#anchor`; addresses with a scheme (`https:`) are left out.
pub fn markdown_links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].split('#').next().unwrap_or("").trim();
        let scheme = target.split_once(':').is_some_and(|(s, _)| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphabetic()));
        if !target.is_empty() && !scheme && !target.contains(char::is_whitespace) {
            out.push(target.to_string());
        }
    }
    out
}

/// Sets a numeric column to `value` in every rows file of an experiment's folder (a test's way to
/// make a run whose rows say something else).
pub fn set_column(rows_dir: &Path, column: &str, value: f64) {
    use polars::prelude::*;
    for e in std::fs::read_dir(rows_dir).unwrap() {
        let path = e.unwrap().path();
        let mut df = ParquetReader::new(std::fs::File::open(&path).unwrap()).finish().unwrap();
        let n = df.height();
        df.with_column(Column::new(column.into(), vec![value; n])).unwrap();
        ParquetWriter::new(std::fs::File::create(&path).unwrap()).finish(&mut df).unwrap();
    }
}
