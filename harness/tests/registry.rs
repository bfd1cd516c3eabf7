//! A new benchmark is one type implementing `Benchmark` (its run side) and `Report` (its report
//! side) plus one registry line: this test adds one (the sum of 1..n on the host, checked
//! against n(n+1)/2), loads its experiment file through its registry, runs it (one case fails
//! verification), and reports it, touching nothing else of the harness.

use std::path::Path;

use fembench::benchmark::{Benchmark, CaseCtx, CaseError, Measured, Report, Spec, Target};
use fembench::experiment::{NonEmpty, ParamValue, Params};
use fembench::measure::measure_host;
use fembench::registry::{entry, Registry};
use fembench::report::{ReportCtx, ReportError, ReportItem, Table};
use fembench::results::RunDir;
use fembench::runner::{run, RunOptions};
use polars::prelude::DataFrame;
use serde::Deserialize;

struct SumBench;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Sweep {
    n: NonEmpty<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct Problem {}

#[derive(Debug, Clone, Deserialize)]
struct Outputs {}

impl Benchmark for SumBench {
    const NAME: &'static str = "sum-test";
    type Sweep = Sweep;
    type Problem = Problem;
    type Outputs = Outputs;
    type Point = u64;

    fn points(sweep: &Sweep) -> Vec<u64> {
        sweep.n.to_vec()
    }
    fn params(n: &u64) -> Params {
        Params::default().push("n", ParamValue::Int(*n as i64))
    }
    fn case_exists(_: &u64, backend: fembench::Backend, _: fembench::Precision) -> bool {
        backend == fembench::Backend::Cpu
    }
    fn run(ctx: &mut CaseCtx, _: &Problem, &n: &u64) -> Result<Vec<Measured>, CaseError> {
        assert!(matches!(ctx.target, Target::Cpu));
        let mut sum = f64::NAN;
        let timing = measure_host::<()>(ctx.policy, &mut || {
            sum = (1..=n).map(|i| i as f64).sum();
            Ok(())
        })
        .unwrap();
        let exact = (n * (n + 1) / 2) as f64;
        Ok(vec![Measured::verified("sum", timing, (sum - exact).abs() / exact, 1e-12)])
    }
}

impl Report for SumBench {
    fn report(spec: &Spec<Self>, rows: &DataFrame, _: &ReportCtx) -> Result<Vec<ReportItem>, ReportError> {
        Ok(vec![ReportItem::Table(Table {
            name: format!("{}-rows", spec.id),
            title: format!("{} rows of the sum test", rows.height()),
            header: vec!["rows".into()],
            rows: vec![vec![rows.height().to_string()]],
            notes: vec![],
        })])
    }
}

/// The whole registry of this test build: one line.
static REGISTRY: Registry = Registry(&[entry::<SumBench>()]);

#[test]
fn a_new_benchmark_is_one_registry_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sum.yaml");
    std::fs::write(
        &file,
        "id: sum\ntitle: sum\nbenchmark: sum-test\nsweep: { n: [10, 1000, 0] }\nbackends: [cpu]\nprecisions: [f64]\n\
         measure: { warmup: 0, min_reps: 3, max_reps: 3, min_time_s: 0 }\noutputs: {}\n",
    )
    .unwrap();
    let exps = REGISTRY.load_all(&[&file]).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!((exps[0].kind(), exps[0].case_count(false)), ("sum-test", 3));
    // The shipped benchmarks are not in this registry: their files are refused by name.
    let other = Path::new(env!("CARGO_MANIFEST_DIR")).join("../experiments/cecka-sizes.yaml");
    let e = REGISTRY.load(&other).err().expect("cecka-assembly is not registered here").to_string();
    assert!(e.contains("unknown benchmark `cecka-assembly`") && e.contains("`sum-test`"), "{e}");

    let s = run(&exps, &RunOptions { out_dir: dir.path().join("results"), ..Default::default() }).unwrap();
    // n = 0: the relative error is 0/0, NaN, and a NaN error fails verification.
    assert_eq!((s.rows_ok, s.rows_failed), (2, 1));
    let df = RunDir::open(&s.run_dir).unwrap().read_experiment("sum").unwrap().unwrap();
    assert_eq!(df.height(), 3);
    let out = fembench::publish::report_run(&REGISTRY, &s.run_dir).unwrap();
    assert!(out.not_reported.is_empty(), "{:?}", out.not_reported);
    assert!(out.terminal.contains("3 rows of the sum test"), "{}", out.terminal);
    assert!(out.terminal.contains("Failed cases of sum (1)") && out.terminal.contains("verification failed"), "{}", out.terminal);
}

/// A benchmark whose cases leave a deferred rest (as a Pogo full run's check against its CPU
/// window does): every case logs when it runs and when its rest runs.
struct DeferBench;

static LOG: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

impl Benchmark for DeferBench {
    const NAME: &'static str = "defer-test";
    type Sweep = Sweep;
    type Problem = Problem;
    type Outputs = Outputs;
    type Point = u64;

    fn points(sweep: &Sweep) -> Vec<u64> {
        sweep.n.to_vec()
    }
    fn params(n: &u64) -> Params {
        Params::default().push("n", ParamValue::Int(*n as i64))
    }
    fn case_exists(_: &u64, backend: fembench::Backend, _: fembench::Precision) -> bool {
        backend == fembench::Backend::Cpu
    }
    fn run(ctx: &mut CaseCtx, _: &Problem, &n: &u64) -> Result<Vec<Measured>, CaseError> {
        LOG.lock().unwrap().push(format!("run {n}"));
        let timing = measure_host::<()>(ctx.policy, &mut || Ok(())).unwrap();
        if n % 2 == 1 {
            ctx.deferred = Some(Box::new(move |mut rows: Vec<Measured>| {
                LOG.lock().unwrap().push(format!("rest {n}"));
                let timing = rows[0].timing.clone().expect("the case's timing");
                rows.push(Measured::verified("later", timing, if n == 3 { 1.0 } else { 0.0 }, 0.5));
                rows
            }));
        }
        Ok(vec![Measured::verified("now", timing, 0.0, 1.0)])
    }
}

impl Report for DeferBench {
    fn report(_: &Spec<Self>, _: &DataFrame, _: &ReportCtx) -> Result<Vec<ReportItem>, ReportError> {
        Ok(vec![])
    }
}

static DEFER_REGISTRY: Registry = Registry(&[entry::<DeferBench>()]);

#[test]
fn a_deferred_rest_runs_before_the_next_host_timed_case_and_before_the_experiment_ends() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("defer.yaml");
    std::fs::write(
        &file,
        "id: defer\ntitle: defer\nbenchmark: defer-test\nsweep: { n: [1, 2, 3] }\nbackends: [cpu]\nprecisions: [f64]\n\
         measure: { warmup: 0, min_reps: 1, max_reps: 1, min_time_s: 0 }\noutputs: {}\n",
    )
    .unwrap();
    let exps = DEFER_REGISTRY.load_all(&[&file]).unwrap_or_else(|e| panic!("{e:?}"));
    let s = run(&exps, &RunOptions { out_dir: dir.path().join("results"), ..Default::default() }).unwrap();
    // Case 1's rest before case 2 (timed on the host), case 3's before the run ends.
    assert_eq!(*LOG.lock().unwrap(), ["run 1", "rest 1", "run 2", "run 3", "rest 3"]);
    // Rows: 1 now + later, 2 now, 3 now + a later row that fails its check.
    assert_eq!((s.rows_ok, s.rows_failed), (4, 1));
    let dir_run = RunDir::open(&s.run_dir).unwrap();
    assert_eq!(dir_run.read_experiment("defer").unwrap().unwrap().height(), 5);
    assert!(dir_run.crashed_cases("defer").unwrap().is_empty(), "every case's started marker was cleared");
}

// A sweep axis is one line of the benchmark's `axes!` list: here `parts` (the sum taken in that
// many partial sums) beside `n`. The file's list, the case's field, the cases' product and the
// parameter column all come from that line.
fembench::axes! {
    struct AxesSweep => #[derive(Copy)] struct AxesPoint {
        n: u64,
        parts: usize,
    }
}

struct AxesBench;

impl Benchmark for AxesBench {
    const NAME: &'static str = "axes-test";
    type Sweep = AxesSweep;
    type Problem = Problem;
    type Outputs = Outputs;
    type Point = AxesPoint;

    fn points(sweep: &AxesSweep) -> Vec<AxesPoint> {
        sweep.product()
    }
    fn params(p: &AxesPoint) -> Params {
        p.params()
    }
    fn case_exists(_: &AxesPoint, backend: fembench::Backend, _: fembench::Precision) -> bool {
        backend == fembench::Backend::Cpu
    }
    fn run(ctx: &mut CaseCtx, _: &Problem, p: &AxesPoint) -> Result<Vec<Measured>, CaseError> {
        let (n, parts) = (p.n, p.parts as u64);
        let mut sum = f64::NAN;
        let timing = measure_host::<()>(ctx.policy, &mut || {
            let part = |k: u64| (k * n / parts + 1..=(k + 1) * n / parts).map(|i| i as f64).sum::<f64>();
            sum = (0..parts).map(part).sum();
            Ok(())
        })
        .unwrap();
        let exact = (n * (n + 1) / 2) as f64;
        Ok(vec![Measured::verified("sum", timing, (sum - exact).abs() / exact, 1e-12)])
    }
}

impl Report for AxesBench {
    fn report(_: &Spec<Self>, _: &DataFrame, _: &ReportCtx) -> Result<Vec<ReportItem>, ReportError> {
        Ok(vec![])
    }
}

static AXES_REGISTRY: Registry = Registry(&[entry::<AxesBench>()]);

#[test]
fn a_new_sweep_axis_is_one_line_of_the_axes_list() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, sweep: &str| {
        let file = dir.path().join(name);
        std::fs::write(
            &file,
            format!(
                "id: axes\ntitle: axes\nbenchmark: axes-test\nsweep: {sweep}\nbackends: [cpu]\nprecisions: [f64]\n\
                 measure: {{ warmup: 0, min_reps: 1, max_reps: 1, min_time_s: 0 }}\noutputs: {{}}\n"
            ),
        )
        .unwrap();
        file
    };
    let file = write("axes.yaml", "{ n: [10, 1000], parts: [1, 3, 7] }");
    let exps = AXES_REGISTRY.load_all(&[&file]).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(exps[0].case_count(false), 6);
    let s = run(&exps, &RunOptions { out_dir: dir.path().join("results"), ..Default::default() }).unwrap();
    assert_eq!((s.rows_ok, s.rows_failed), (6, 0));
    // Each axis is a parameter column; the first axis varies fastest.
    let df = RunDir::open(&s.run_dir).unwrap().read_experiment("axes").unwrap().unwrap();
    let ints = |c: &str| {
        df.column(c).unwrap().cast(&polars::prelude::DataType::Int64).unwrap().i64().unwrap().into_no_null_iter().collect::<Vec<_>>()
    };
    assert_eq!(ints("n"), [10, 1000, 10, 1000, 10, 1000]);
    assert_eq!(ints("parts"), [1, 1, 3, 3, 7, 7]);
    // The file must list every axis (each with a value), and no other.
    for (name, sweep, field) in [
        ("missing.yaml", "{ n: [10] }", "parts"),
        ("empty.yaml", "{ n: [10], parts: [] }", "parts"),
        ("other.yaml", "{ n: [10], parts: [1], m: [2] }", "m"),
    ] {
        let e = AXES_REGISTRY.load(&write(name, sweep)).err().unwrap_or_else(|| panic!("{name} was accepted"));
        assert!(e.line == Some(4) && e.to_string().contains(field), "{name}: {e}");
    }
}

// A new method is one type, its kernel and one line of a method list. Here, two GPU methods of
// Cecka's assembly, added beside the shipped ones in this file only: `elem-atomic-copied`
// assembles with ElemAtomic into buffers of its own, then its own kernel copies them into its
// outputs; `copied-short` is the same with a copy one entry short, so its check must fail.
mod added_method {
    use fembench::benchmark::{CaseCtx, CaseError};
    use fembench::cecka::elem::ElemAtomic;
    use fembench::cecka::method::{Assembly, Case, CeckaMethod, Gpu, GpuMethod, Role};
    use fembench::cecka::problem::checked::Cost;
    use fembench::cecka::registry::MethodList;
    use fembench::device::{Buffer, Device, DeviceExt, DeviceResult, Kernel, Launch};
    use fembench::kernels::{Defines, KernelSource};
    use fembench::real::Real;

    const COPY: KernelSource = KernelSource {
        file: "copy_test.kern",
        text: "KERNEL void copy_test(const GLOBAL real *RESTRICT src, GLOBAL real *RESTRICT dst, int n) {\n\
               int i = GROUP_ID() * LOCAL_SIZE() + LOCAL_ID();\n  if (i < n) dst[i] = src[i];\n}\n",
    };

    fembench::device::kernel_args! {
        pub const COPY_ARGS in COPY;
        pub struct CopyArgs<'a> = "copy_test" { src: &'a Buffer, dst: &'a Buffer, n: i32 }
    }

    /// ElemAtomic's assembly, copied out by its own kernel (`short`: one entry of the values
    /// left out).
    pub struct Copied<const SHORT: bool>;

    impl<const SHORT: bool> GpuMethod for Copied<SHORT> {
        const NAMES: &'static [&'static str] = if SHORT { &["copied-short"] } else { &["elem-atomic-copied", "elem-atomic-copied-dummy"] };
        const ROLE: Role = Role::Beyond;
        fn prepare<T: Real>(&self, ctx: &mut CaseCtx, case: &Case) -> Result<Box<dyn Assembly<T>>, CaseError> {
            let inner = ElemAtomic.prepare::<T>(ctx, case)?;
            let sizes: Vec<usize> = inner.outputs().iter().map(|b| b.bytes() / std::mem::size_of::<T>()).collect();
            let poisoned = |n: usize| case.dev.upload_slice(&vec![T::nan(); n]);
            let outputs = [poisoned(sizes[0])?, poisoned(sizes[1])?];
            let copy = ctx.modules.kernel_for::<CopyArgs>(case.dev, &COPY, &Defines::for_precision(T::PRECISION))?;
            Ok(Box::new(CopiedAssembly { inner, outputs, sizes: [sizes[0] - SHORT as usize, sizes[1]], copy }))
        }
    }

    struct CopiedAssembly<T> {
        inner: Box<dyn Assembly<T>>,
        outputs: [Buffer; 2],
        sizes: [usize; 2],
        copy: Kernel,
    }

    impl<T: Real> Assembly<T> for CopiedAssembly<T> {
        fn enqueue(&self, dev: &dyn Device) -> DeviceResult<()> {
            self.inner.enqueue(dev)?;
            for ((src, dst), &n) in self.inner.outputs().into_iter().zip(&self.outputs).zip(&self.sizes) {
                dev.launch_with(&self.copy, Launch::cover(n, 128), &CopyArgs { src, dst, n: n as i32 })?;
            }
            Ok(())
        }
        fn outputs(&self) -> Vec<&Buffer> {
            self.outputs.iter().collect()
        }
        fn read(&self, dev: &dyn Device) -> Result<(Vec<T>, Vec<T>), CaseError> {
            let size = |b: &Buffer| b.bytes() / std::mem::size_of::<T>();
            let [vals, rhs] = &self.outputs;
            Ok((dev.download_vec::<T>(vals, size(vals))?, dev.download_vec::<T>(rhs, size(rhs))?))
        }
        fn cost(&self) -> Cost {
            let mut cost = self.inner.cost();
            cost.bytes += 2.0 * (self.sizes.iter().sum::<usize>() * std::mem::size_of::<T>()) as f64;
            cost
        }
    }

    /// The list this test runs: the method copied, and the two added ones.
    pub struct WithCopied;

    impl MethodList for WithCopied {
        const METHODS: &'static [&'static dyn CeckaMethod] = &[&Gpu(ElemAtomic), &Gpu(Copied::<false>), &Gpu(Copied::<true>)];
    }
}

static METHOD_REGISTRY: Registry = Registry(&[entry::<fembench::cecka::benchmark::Assembly<added_method::WithCopied>>()]);

#[test]
fn a_new_method_is_one_type_one_kernel_and_one_line_of_a_method_list() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, methods: &str| {
        let file = dir.path().join(name);
        std::fs::write(
            &file,
            format!(
                "id: added\ntitle: added\nbenchmark: cecka-assembly\nsweep:\n  method: [{methods}]\n  level: [0]\n  order: [1, 2]\n\
                 backends: [opencl]\nprecisions: [f64]\nmeasure: {{ warmup: 0, min_reps: 2, max_reps: 2, min_time_s: 0 }}\n\
                 outputs: {{ tables: [timings] }}\n"
            ),
        )
        .unwrap();
        file
    };
    // A name the list does not hold is refused at its line, naming the list's methods.
    let e = METHOD_REGISTRY.load(&write("unknown.yaml", "elem-atomic, global-nz")).err().expect("global-nz is not in this list");
    assert!(e.line == Some(5) && e.to_string().contains("unknown method `global-nz`"), "{e}");
    assert!(e.to_string().contains("`elem-atomic-copied-dummy`") && e.to_string().contains("`copied-short`"), "{e}");

    let file = write("added.yaml", "elem-atomic, elem-atomic-copied, elem-atomic-copied-dummy, copied-short");
    let exps = METHOD_REGISTRY.load_all(&[&file]).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(exps[0].case_count(false), 8);
    let s = run(&exps, &RunOptions { out_dir: dir.path().join("results"), ..Default::default() }).unwrap();
    if s.rows_ok + s.rows_failed == 0 {
        assert_ne!(std::env::var("FEMBENCH_REQUIRE_OPENCL").as_deref(), Ok("1"), "FEMBENCH_REQUIRE_OPENCL=1 but no case ran on OpenCL");
        return eprintln!("skipping: no OpenCL device");
    }
    // Every case ran and was checked entry by entry against the f64 reference: the copied
    // method and its dummy pass; the short copy leaves an entry poisoned (NaN), and fails.
    let df = RunDir::open(&s.run_dir).unwrap().read_experiment("added").unwrap().unwrap();
    let strs = |c: &str| df.column(c).unwrap().str().unwrap().iter().map(|v| v.unwrap_or("").to_string()).collect::<Vec<_>>();
    let failed: Vec<String> =
        strs("method").into_iter().zip(strs("status")).filter(|(_, st)| st != "ok").map(|(m, st)| format!("{m} {st}")).collect();
    assert_eq!(failed, ["copied-short failed", "copied-short failed"], "{failed:?}");
    assert_eq!((s.rows_ok, s.rows_failed), (6, 2));
    let out = fembench::publish::report_run(&METHOD_REGISTRY, &s.run_dir).unwrap();
    assert!(out.terminal.contains("elem-atomic-copied"), "{}", out.terminal);
}
