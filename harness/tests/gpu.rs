//! GPU-only checks, run on a machine with an NVIDIA GPU:
//! `cargo test --release --test gpu -- --ignored` (or the carried test binary with `--ignored`).

mod common;

use fembench::device::{self, Backend, DeviceError};
use fembench::kernels::{Defines, KernelSource};
use fembench::load;
use fembench::results::RunDir;
use fembench::runner::{run, RunOptions, RunSummary};

fn quick_bandwidth(backend: Backend, modes: &str) -> RunDir {
    let text = std::fs::read_to_string(common::experiments_dir().join("device-bandwidth.yaml"))
        .unwrap()
        .replace("    target_rel_ci: 0.0\noutputs:", &format!("    target_rel_ci: 0.0\n    modes: {modes}\noutputs:"));
    let dir = tempfile::tempdir().unwrap().keep();
    let path = dir.join("bw.yaml");
    std::fs::write(&path, text).unwrap();
    let opts = RunOptions { backends: vec![backend], quick: true, out_dir: dir.join("results"), ..Default::default() };
    let s = run(&[load(&path).unwrap()], &opts).unwrap();
    assert_eq!(s.rows_failed + s.rows_skipped, 0, "failed or skipped rows on {backend}");
    RunDir::open(&s.run_dir).unwrap()
}

/// The `--quick` sweep of a shipped experiment on CUDA.
fn quick_on_cuda(file: &str) -> RunSummary {
    quick_on_cuda_kept(file).0
}

/// The same, with the folder its run is in (the run is gone once the folder is dropped).
fn quick_on_cuda_kept(file: &str) -> (RunSummary, tempfile::TempDir) {
    let exp = load(&common::experiments_dir().join(file)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let opts = RunOptions { backends: vec![Backend::Cuda], quick: true, out_dir: dir.path().into(), ..Default::default() };
    (run(&[exp], &opts).unwrap(), dir)
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn cuda_device_is_listed_with_its_properties() {
    let list = device::list(Backend::Cuda).unwrap();
    assert!(!list.is_empty());
    let d = &list[0];
    assert!(d.memory_bytes > 1 << 30 && d.compute_units > 0 && d.cache_bytes > 0);
    assert!(d.compute_capability.is_some());
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn bandwidth_kernels_verify_on_cuda_warm_and_cold() {
    let run = quick_bandwidth(Backend::Cuda, "[warm, cold]");
    let df = run.read_experiment("device-bandwidth").unwrap().unwrap();
    // 8 kernels x 2 sizes x 2 precisions x 2 modes.
    assert_eq!(df.height(), 64);
    let modes: Vec<_> = df.column("mode").unwrap().str().unwrap().iter().flatten().map(str::to_string).collect();
    assert_eq!(modes.iter().filter(|m| *m == "cold").count(), 32);
}

#[test]
#[ignore = "needs an NVIDIA GPU with its OpenCL driver"]
fn bandwidth_kernels_verify_on_nvidia_opencl() {
    let list = device::list(Backend::OpenCl).unwrap();
    assert!(list[0].platform.contains("NVIDIA"), "OpenCL device 0 is {} ({})", list[0].name, list[0].platform);
    let run = quick_bandwidth(Backend::OpenCl, "[warm]");
    assert_eq!(run.read_experiment("device-bandwidth").unwrap().unwrap().height(), 32);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn cuda_compile_error_keeps_the_log() {
    let dev = device::open(Backend::Cuda, 0).unwrap();
    let broken = KernelSource { file: "broken.kern", text: "KERNEL void k(GLOBAL real *x) { x[0] = undeclared_name; }" };
    match dev.compile(&broken, &Defines::new()) {
        Err(DeviceError::Compile { log, .. }) => assert!(log.contains("undeclared_name"), "{log}"),
        other => panic!("expected a compile error, got {:?}", other.map(|_| ())),
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn cecka_methods_verify_on_cuda() {
    let s = quick_on_cuda("cecka-orders.yaml");
    assert_eq!(s.rows_failed, 0);
    // Every GPU method, full and dummy (each against its own system), and the three peers (the
    // radix-sort COO route, the slot-map scatter and the cuSPARSE COO route), at orders 1-4 in f32
    // and f64.
    assert_eq!(s.rows_ok, 15 * 4 * 2);
}

/// The external peers on the GPU: CuPy's and PyTorch's assembly routes, run by
/// peers/cecka_assembly.py on the same device, verified like every method (a GPU machine without
/// CuPy or PyTorch fails here; elsewhere their rows say skipped).
#[test]
#[ignore = "needs an NVIDIA GPU, and Python with CuPy and PyTorch"]
fn cecka_python_peers_verify_on_cuda() {
    let (s, _dir) = quick_on_cuda_kept("cecka-sizes.yaml");
    assert_eq!(s.rows_failed, 0);
    let run = RunDir::open(&s.run_dir).unwrap();
    let df = run.read_experiment("cecka-sizes").unwrap().unwrap();
    let (metric, status, library) = (
        df.column("metric").unwrap().str().unwrap(),
        df.column("status").unwrap().str().unwrap(),
        df.column("library").unwrap().str().unwrap(),
    );
    for route in ["cupy-tocsr", "torch-index-add"] {
        let rows: Vec<usize> = (0..df.height()).filter(|&i| metric.get(i) == Some(route)).collect();
        // Two levels, f32 and f64, warm only.
        assert_eq!(rows.len(), 4, "{route}");
        assert!(rows.iter().all(|&i| status.get(i) == Some("ok") && library.get(i).is_some_and(|l| !l.is_empty())), "{route}");
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn banas_variants_verify_on_cuda() {
    let s = quick_on_cuda("banas-integration.yaml");
    assert_eq!(s.rows_failed, 0);
    // The four variants, gram-nojac and mma-nojac at p = 1..4 in f32 and f64, six rows each (five stages and the total),
    // the cuBLAS GEMM peer's three (bmatrix, gemm, kernel) in both, and in f32 the TF32 peer's
    // three and the 3xTF32 peer's four (split too), every pass checked against the f64
    // reference on poisoned outputs; and the Python peers' one row each (torch-bmm and
    // cupy-matmul at p = 1..4 in f32 and f64), where Python has PyTorch and CuPy.
    // gram-nojac and mma-nojac beside the paper's four, in both precisions.
    let ours = 6 * 4 * 2 * 6 + 4 * 2 * 3 + 4 * (3 + 4);
    let python = if std::env::var_os("FEMBENCH_REQUIRE_PYTHON").is_some() { 2 * 4 * 2 } else { s.rows_ok.saturating_sub(ours) };
    assert_eq!(s.rows_ok, ours + python, "{} rows ok", s.rows_ok);
}

/// The Python peers run cold when asked: each cold repetition after a flush of the device's L2
/// by the library's own buffer, a row per mode. Banaś' torch-bmm and cupy-matmul at p = 1, 2.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn python_peers_run_cold_when_asked() {
    let text = std::fs::read_to_string(common::experiments_dir().join("banas-integration.yaml")).unwrap();
    let quick = text.split("quick:").nth(1).and_then(|q| q.lines().find(|l| l.trim_start().starts_with("method:"))).unwrap();
    let text = text
        .replacen(quick, "    method: [torch-bmm, cupy-matmul]", 1)
        .replace("    degree: [1, 2, 3, 4]", "    degree: [1, 2]")
        .replace("    max_reps: 1\n", "    max_reps: 1\n    modes: [warm, cold]\n");
    assert!(text.contains("modes: [warm, cold]") && text.contains("method: [torch-bmm, cupy-matmul]"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("banas-python-cold.yaml");
    std::fs::write(&path, text).unwrap();
    let opts = RunOptions { backends: vec![Backend::Cuda], quick: true, out_dir: dir.path().into(), ..Default::default() };
    let s = run(&[load(&path).unwrap()], &opts).unwrap();
    assert_eq!(s.rows_failed, 0);
    let df = RunDir::open(&s.run_dir).unwrap().read_experiment("banas-integration").unwrap().unwrap();
    let col = |c: &str| df.column(c).unwrap().str().unwrap().iter().map(|v| v.unwrap_or("").to_string()).collect::<Vec<_>>();
    let (mode, status) = (col("mode"), col("status"));
    let ok = |m: &str| (0..df.height()).filter(|&i| mode[i] == m && status[i] == "ok").count();
    // 2 routes x 2 degrees x 2 precisions, in each mode.
    assert_eq!((ok("warm"), ok("cold")), (8, 8));
}

/// The gate: a host sleep between two launches is not counted on CUDA either, and a
/// synchronising call inside a region is refused instead of waiting forever.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn cuda_timed_regions_leave_out_host_time() {
    let dev = device::open(Backend::Cuda, 0).unwrap();
    common::check_gated_timing(dev.as_ref(), 50, 0.005);
    assert!(dev.healthy());
    // Pinned host memory, copied both ways inside timed regions.
    let mut src = dev.alloc_host(4096).unwrap();
    assert!(src.pinned());
    src.typed_mut::<u32>().iter_mut().for_each(|w| *w = 7);
    let mut buf = dev.alloc(4096).unwrap();
    dev.time_events(&mut || dev.upload_async(&mut buf, &src, 4096)).unwrap();
    let mut host = dev.alloc_host(4096).unwrap();
    dev.time_events(&mut || dev.download_async(&buf, &mut host, 4096)).unwrap();
    assert!(host.typed::<u32>().iter().all(|&w| w == 7));
}

/// After a sticky error (an illegal address) the device reports itself unhealthy, so the runner
/// drops it. Seen on the H200 (driver 580): a new context in the same process is refused even
/// after cuDevicePrimaryCtxReset, with an error that names the illegal address; the runner then
/// records the remaining CUDA cases as skipped with that reason (`--retry skipped` recovers them
/// in a fresh process). This test states both facts; it must run last (`zz_`), as it leaves the
/// process without CUDA.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn zz_cuda_sticky_error_marks_the_device_unhealthy() {
    use fembench::device::{Buffer, DeviceExt, Launch};
    const BAD: KernelSource = KernelSource { file: "bad.kern", text: "KERNEL void bad(GLOBAL int *p) { p[(idx_t)1 << 40] = 1; }" };
    fembench::device::kernel_args! {
        const _BAD_ARGS in BAD;
        struct Bad<'a> = "bad" { p: &'a Buffer }
    }
    {
        let dev = device::open(Backend::Cuda, 0).unwrap();
        let module = dev.compile(&BAD, &Defines::new()).unwrap();
        let k = dev.kernel(&module, "bad").unwrap();
        let buf = dev.alloc(64).unwrap();
        dev.launch_with(&k, Launch { groups: 1, group_size: 1 }, &Bad { p: &buf }).unwrap();
        assert!(dev.synchronize().is_err(), "the illegal address went unnoticed");
        assert!(!dev.healthy());
    }
    match device::open(Backend::Cuda, 0) {
        Ok(dev) => assert!(dev.healthy(), "a reopened device must work if the driver gives one"),
        Err(e) => assert!(e.to_string().contains("illegal"), "{e}"),
    }
}

/// Every a-COO method solves the quick capacitor on CUDA (CG to 1e-12, within 1e-8 of the
/// reference), and no timed body waits on itself (a module loaded inside a gated body once hung
/// every CUDA case: kernels are fetched before the timed bodies now).
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn acoo_methods_solve_the_capacitor_on_cuda() {
    let s = quick_on_cuda("acoo-capacitor.yaml");
    assert_eq!((s.rows_failed, s.rows_skipped), (0, 0));
    // a-fem 5 stages + total, ebe-v1 3 + total, ebe-v2 2 + total, csr-atomic and csr-color
    // 2 + total, and the cuSPARSE/cuBLAS peers (cusparse-cg-graph, cusparse-cg-device,
    // cusparse-cg) 2 + total, each with its product row (spmv); in f64 and f32.
    assert_eq!(s.rows_ok, 2 * (7 + 5 + 4 + 4 + 4 + 4 + 4 + 4));
}

/// Sanfui-Sharma on CUDA, with the cuSPARSE peers: the COO-to-CSR path (coo-cusparse) and
/// cuSPARSE's CSR and BSR SpMV beside ours, every row verified.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn sanfui_methods_and_the_cusparse_peers_verify_on_cuda() {
    let s = quick_on_cuda("sanfui-formats.yaml");
    assert_eq!((s.rows_failed, s.rows_skipped), (0, 0));
    // Per box and precision: COO and ELL 3 stages + total + spmv (x 2 races), CSR also its
    // cuSPARSE SpMV, COOM and ELLM 4 stages + total + spmv + cuSPARSE SpMV (BSR, CSR),
    // elem-atomic 2 + total + both SpMVs, coo-radix and coo-cusparse 4 + total + both SpMVs,
    // ellm-gather 3 stages + total + spmv, shared-nz 2 stages + total + both SpMVs: 89; 2 boxes,
    // 2 precisions.
    assert_eq!(s.rows_ok, 89 * 4);
}

/// Pogo's sliced-ELL steps, the paper's kernel on both blockers' arrangements and the
/// cuSPARSE steps (CSR and sliced ELL), f32 and f64, each checked against the element-by-element oracle after 100
/// steps from rest.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn pogo_steps_and_the_cusparse_step_verify_on_cuda() {
    let s = quick_on_cuda("pogo-weld.yaml");
    assert_eq!((s.rows_failed, s.rows_skipped), (0, 0));
    // Per mesh: sell, pogo-aligned, pogo-greedy, csr-cusparse and sell-cusparse in f32 and f64,
    // sell-kf32 and pogo-aligned-kf32 in f64; two meshes; and the full runs of sell and
    // pogo-aligned (f32, f64) and sell-kf32 on the coarser mesh, and their arrival checks on the
    // finer one.
    assert_eq!(s.rows_ok, 12 * 2 + 5 + 5);
}

/// The same for the geophysical model (four rocks, absorbing regions, Gaussian force).
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn pogo_geophysical_steps_and_full_runs_verify_on_cuda() {
    let s = quick_on_cuda("pogo-geophysical.yaml");
    assert_eq!((s.rows_failed, s.rows_skipped), (0, 0));
    assert_eq!(s.rows_ok, 12 * 2 + 5);
}

/// Pogo split across the node's GPUs (experiments/large/pogo-multigpu.yaml, quick form): on a
/// node of two or more GPUs every case verifies (ours and the paper's kernel), and every
/// two-GPU run equals the one-GPU run to the bit; on one GPU the two-GPU cases are skipped and the rest verify.
#[test]
#[ignore = "needs an NVIDIA GPU (two for the NCCL cases)"]
fn pogo_split_across_gpus_equals_the_one_gpu_run_on_cuda() {
    let (s, _dir) = quick_on_cuda_kept("large/pogo-multigpu.yaml");
    let gpus = device::list(Backend::Cuda).unwrap().len();
    assert_eq!(s.rows_failed, 0);
    // Three studies x three methods (ours two, the paper's kernel) x GPU counts 1 and 2.
    assert_eq!((s.rows_ok, s.rows_skipped), if gpus >= 2 { (18, 0) } else { (9, 9) });
    let df = fembench::results::RunDir::open(&s.run_dir).unwrap().read_experiment("pogo-multigpu").unwrap().unwrap();
    // Every run on two GPUs is compared with a one-GPU run of its model (the weak study's too:
    // its two-GPU model has no one-GPU case, so the case makes that run itself).
    let (vs, on) = (common::column_f64(&df, "vs_one_gpu"), common::column_f64(&df, "gpus"));
    let status: Vec<&str> = df.column("status").unwrap().str().unwrap().iter().map(|v| v.unwrap_or("")).collect();
    let checked: Vec<f64> = (0..vs.len()).filter(|&i| on[i] > 1.0 && status[i] == "ok").map(|i| vs[i]).collect();
    assert_eq!(checked.len(), if gpus >= 2 { 9 } else { 0 }, "{on:?}");
    assert!(checked.iter().all(|&v| v == 0.0), "{vs:?}");
}

/// NVRTC compiles a list of programs on all cores into the disk cache; a program new to the
/// cache is compiled, then found there, and a broken one fails alone.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn cuda_precompiles_in_parallel_into_the_cache() {
    let dev = device::open(Backend::Cuda, 0).unwrap();
    let unique =
        format!("{}{}", std::process::id(), std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos());
    let source = fembench::REGISTRY.kernels().into_iter().find(|k| k.file == "bandwidth.kern").unwrap();
    let broken = KernelSource { file: "broken.kern", text: "KERNEL void k(GLOBAL real *x) { x[0] = undeclared_name; }" };
    let defines = |p| Defines::for_precision(p).with("FB_TEST_UNIQUE", &unique);
    let jobs = vec![
        (source, defines(fembench::Precision::F32)),
        (source, defines(fembench::Precision::F64)),
        (broken, defines(fembench::Precision::F32)),
    ];
    let first = dev.precompile(&jobs);
    assert!(matches!(first[..], [Ok(true), Ok(true), Err(DeviceError::Compile { .. })]), "{first:?}");
    if fembench::device::kernel_cache::dir().is_some() {
        let again = dev.precompile(&jobs[..2]);
        assert!(matches!(again[..], [Ok(false), Ok(false)]), "{again:?}");
    }
}

/// A sticky error in the middle of a run (`FEMBENCH_TEST_STICKY_FAULT` faults the device just
/// before one case) costs that case only: the runner drops the device, and where the driver
/// refuses a new context in the same process, the harness runs the skipped cases again in a
/// new process (`--resume --retry skipped`). The run ends with every other case verified.
/// The harness binary is `FEMBENCH_HARNESS_BIN` where the test binary runs away from its tree.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_sticky_error_mid_run_costs_one_case_and_the_rest_run_in_a_new_process() {
    let path = common::experiments_dir().join("device-bandwidth.yaml");
    let points = load(&path).unwrap().points(true);
    let victim = fembench::runner::case_id(Backend::Cuda, fembench::Precision::F32, &points[1]);
    let out = tempfile::tempdir().unwrap().keep();
    let exe =
        std::env::var_os("FEMBENCH_HARNESS_BIN").map(std::path::PathBuf::from).unwrap_or_else(|| env!("CARGO_BIN_EXE_harness").into());
    let st = std::process::Command::new(exe)
        .arg("run")
        .arg(&path)
        .args(["--quick", "--backend", "cuda", "--out"])
        .arg(&out)
        .env("FEMBENCH_TEST_STICKY_FAULT", &victim)
        .env_remove("FEMBENCH_RELAUNCH_DEPTH")
        .status()
        .unwrap();
    assert!(st.success(), "{st}");
    let runs: Vec<_> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let statuses = RunDir::open(&runs[0]).unwrap().case_statuses("device-bandwidth").unwrap();
    let mut by_case = std::collections::BTreeMap::<String, Vec<String>>::new();
    for (id, s) in statuses {
        by_case.entry(id).or_default().push(s);
    }
    assert_eq!(by_case.len(), 2 * points.len(), "every case has rows: {by_case:?}");
    for (id, s) in &by_case {
        let want = if *id == victim { "failed" } else { "ok" };
        assert!(s.iter().all(|x| x == want), "{id}: {s:?} (the faulted case is {victim})");
    }
}
