//! Every kernel runs on an OpenCL device (PoCL in CI) and matches the reference, in f32 and f64.

#[path = "opencl/afem.rs"]
mod afem;
mod common;
#[path = "opencl/peers.rs"]
mod peers;
#[path = "opencl/pogo_split.rs"]
mod pogo_split;

use fembench::device::{Backend, DeviceError};
use fembench::kernels::{Defines, KernelSource};
use fembench::load;
use fembench::results::RunDir;
use fembench::runner::{run, RunOptions};

#[test]
fn bandwidth_kernels_match_the_reference_on_opencl() {
    let _turn = common::opencl_turn();
    let Some(dev) = common::opencl_device() else { return };
    drop(dev);
    let exp = load(&common::experiments_dir().join("device-bandwidth.yaml")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let opts = RunOptions { backends: vec![Backend::OpenCl], quick: true, out_dir: out.path().into(), ..Default::default() };
    let summary = run(&[exp], &opts).unwrap();
    assert_eq!(summary.rows_failed, 0);
    assert_eq!(summary.rows_skipped, 0);
    // 8 kernels x 2 sizes x 2 precisions in the quick sweep.
    assert_eq!(summary.rows_ok, 32);
    let df = RunDir::open(&summary.run_dir).unwrap().read_experiment("device-bandwidth").unwrap().unwrap();
    let err = df.column("error").unwrap().f64().unwrap().iter().flatten().fold(0.0f64, f64::max);
    let f64_rows = df.column("precision").unwrap().str().unwrap().iter().filter(|p| *p == Some("f64")).count();
    assert_eq!(f64_rows, 16);
    assert!(err < 1e-3, "largest verification error {err}");
}

#[test]
fn opencl_compile_error_keeps_options_and_log() {
    let _turn = common::opencl_turn();
    let Some(dev) = common::opencl_device() else { return };
    let broken = KernelSource { file: "broken.kern", text: "KERNEL void k(GLOBAL real *x) { x[0] = undeclared_name; }" };
    let defines = Defines::for_precision(fembench::Precision::F32).with("BLOCK", 64);
    match dev.compile(&broken, &defines) {
        Err(DeviceError::Compile { backend, file, options, log, .. }) => {
            assert_eq!(backend, Backend::OpenCl);
            assert_eq!(file, "broken.kern");
            assert!(options.contains(&"-DBLOCK=64".to_string()), "{options:?}");
            assert!(log.contains("undeclared_name"), "log: {log}");
        }
        Err(e) => panic!("expected a compile error, got {e}"),
        Ok(_) => panic!("broken kernel compiled"),
    }
}

/// Cecka et al.: every GPU method (full and dummy kernels) on small meshes, orders 1..4, f32 and
/// f64, checked inside each case entry by entry against its own error bound (the full methods
/// against the serial f64 reference, the dummies against the dummy system: a dummy that runs the
/// full kernel, or writes nothing, fails).
#[test]
fn cecka_methods_match_the_reference_on_opencl() {
    let _turn = common::opencl_turn();
    let Some(dev) = common::opencl_device() else { return };
    drop(dev);
    let exp = load(&common::experiments_dir().join("cecka-orders.yaml")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let opts = RunOptions { backends: vec![Backend::OpenCl], quick: true, out_dir: out.path().into(), ..Default::default() };
    let summary = run(&[exp], &opts).unwrap();
    assert_eq!(summary.rows_failed, 0);
    let df = RunDir::open(&summary.run_dir).unwrap().read_experiment("cecka-orders").unwrap().unwrap();
    let status: Vec<_> = df.column("status").unwrap().str().unwrap().iter().map(|s| s.unwrap_or("").to_string()).collect();
    let method: Vec<_> = df.column("method").unwrap().str().unwrap().iter().map(|s| s.unwrap_or("").to_string()).collect();
    let precision: Vec<_> = df.column("precision").unwrap().str().unwrap().iter().map(|s| s.unwrap_or("").to_string()).collect();
    let error: Vec<_> = df.column("error").unwrap().f64().unwrap().iter().collect();
    let table6: Vec<_> = df.column("table6_error").unwrap().f64().unwrap().iter().collect();
    let (mut checked, mut dummies) = (0, 0);
    for i in 0..df.height() {
        // A CPU method on OpenCL is not a case: no row at all (it was a "skipped" row before).
        assert_ne!(method[i], "cpu-serial", "a cpu-serial row on OpenCL");
        assert_eq!(status[i], "ok", "{} {}", method[i], precision[i]);
        // The error column is the largest error over its per-entry bound.
        assert!(error[i].unwrap() <= 1.0, "{} {} error/bound {:?}", method[i], precision[i], error[i]);
        if !method[i].ends_with("dummy") {
            if precision[i] == "f32" {
                assert!(table6[i].unwrap() < 1e-5, "{} f32 Table VI error {:?}", method[i], table6[i]);
            }
            checked += 1;
        } else {
            dummies += 1;
        }
    }
    // 6 full methods (ElemColor, GlobalNZ, SharedNZ, LocalNZ, ElemAtomic, SharedAtomic) and their
    // dummies, and the peers coo-radix and slot-scatter, x 4 orders x 2 precisions.
    assert_eq!((checked, dummies), (64, 48));
}

/// The time of a gated region leaves out the host's time between launches (issue 9, item 6):
/// the same interval as CUDA's events, from the gate's opening to the last command's end.
#[test]
fn timed_regions_leave_out_host_time_between_launches() {
    let _turn = common::opencl_turn();
    let Some(dev) = common::opencl_device() else { return };
    common::check_gated_timing(dev.as_ref(), 80, 0.040);
}

#[test]
fn pinned_host_buffers_round_trip_inside_timed_regions() {
    let _turn = common::opencl_turn();
    let Some(dev) = common::opencl_device() else { return };
    let n = 1 << 16;
    let mut src = dev.alloc_host(n * 4).unwrap();
    assert!(src.pinned());
    for (i, v) in src.typed_mut::<u32>().iter_mut().enumerate() {
        *v = i as u32 * 3;
    }
    let mut back = dev.alloc_host(n * 4).unwrap();
    let mut buf = dev.alloc(n * 4).unwrap();
    let up = dev.time_events(&mut || dev.upload_async(&mut buf, &src, n * 4)).unwrap();
    let down = dev.time_events(&mut || dev.download_async(&buf, &mut back, n * 4)).unwrap();
    assert!(up > 0.0 && down > 0.0);
    assert_eq!(back.typed::<u32>(), src.typed::<u32>());
}

/// Banaś honours the cache modes (it ran warm whatever the file said), and every pass is
/// checked on poisoned outputs.
#[test]
fn banas_runs_cold_when_asked() {
    let _turn = common::opencl_turn();
    let Some(dev) = common::opencl_device() else { return };
    drop(dev);
    let text = std::fs::read_to_string(common::experiments_dir().join("banas-integration.yaml"))
        .unwrap()
        .replace("    degree: [1, 2, 3, 4]", "    degree: [1, 2]")
        .replace("    max_reps: 1\n", "    max_reps: 1\n    modes: [warm, cold]\n");
    assert!(text.contains("modes: [warm, cold]"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("banas-cold.yaml");
    std::fs::write(&path, text).unwrap();
    let opts = RunOptions { backends: vec![Backend::OpenCl], quick: true, out_dir: dir.path().into(), ..Default::default() };
    let s = run(&[load(&path).unwrap()], &opts).unwrap();
    assert_eq!(s.rows_failed, 0);
    let df = RunDir::open(&s.run_dir).unwrap().read_experiment("banas-integration").unwrap().unwrap();
    let col = |c: &str| df.column(c).unwrap().str().unwrap().iter().map(|v| v.unwrap_or("").to_string()).collect::<Vec<_>>();
    let (metric, mode, status) = (col("metric"), col("mode"), col("status"));
    let kernels = |m: &str| (0..df.height()).filter(|&i| metric[i] == "kernel" && mode[i] == m && status[i] == "ok").count();
    // 4 variants x 2 degrees x 2 precisions, in each mode.
    assert_eq!((kernels("warm"), kernels("cold")), (16, 16));
}

/// A resumed run uses the device it was made on, whatever `--device` says now.
#[test]
fn resume_uses_the_runs_own_device() {
    let _turn = common::opencl_turn();
    let Some(dev) = common::opencl_device() else { return };
    drop(dev);
    let exp = || load(&common::experiments_dir().join("device-bandwidth.yaml")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let opts = RunOptions { backends: vec![Backend::OpenCl], quick: true, out_dir: out.path().into(), ..Default::default() };
    let s = run(&[exp()], &opts).unwrap();
    let dir = RunDir::open(&s.run_dir).unwrap();
    let df = dir.read_experiment("device-bandwidth").unwrap().unwrap();
    let ids: std::collections::BTreeSet<String> =
        df.column("case_id").unwrap().str().unwrap().iter().take(3).map(|v| v.unwrap().to_string()).collect();
    dir.remove_cases("device-bandwidth", &ids).unwrap();
    let resumed = RunOptions { resume: Some(s.run_dir.clone()), device_index: 99, ..opts };
    let again = run(&[exp()], &resumed).unwrap();
    assert_eq!((again.cases_run, again.rows_ok, again.rows_skipped), (3, 3, 0));
}

#[test]
fn banas_variants_match_the_reference_on_opencl() {
    let _turn = common::opencl_turn();
    let Some(dev) = common::opencl_device() else { return };
    drop(dev);
    let exp = load(&common::experiments_dir().join("banas-integration.yaml")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let opts = RunOptions { backends: vec![Backend::OpenCl, Backend::Cpu], quick: true, out_dir: out.path().into(), ..Default::default() };
    let summary = run(&[exp], &opts).unwrap();
    assert_eq!(summary.rows_failed, 0);
    let df = RunDir::open(&summary.run_dir).unwrap().read_experiment("banas-integration").unwrap().unwrap();
    let col = |c: &str| df.column(c).unwrap().str().unwrap().iter().map(|v| v.unwrap_or("").to_string()).collect::<Vec<_>>();
    let (metric, status, precision, method) = (col("metric"), col("status"), col("precision"), col("method"));
    let error: Vec<f64> = df.column("error").unwrap().f64().unwrap().iter().map(|v| v.unwrap_or(f64::NAN)).collect();
    // 4 variants x p = 1..4 x f32 and f64, each verified (the kernel rows), and the CPU reference.
    let checked: Vec<usize> =
        (0..df.height()).filter(|&i| metric[i] == "kernel" && status[i] == "ok" && method[i] != "cpu-reference").collect();
    assert_eq!(checked.len(), 4 * 4 * 2);
    for i in checked {
        let tol = if precision[i] == "f64" { 1e-10 } else { 1e-4 };
        assert!(error[i] <= tol, "{} {}: error {}", method[i], precision[i], error[i]);
    }
    assert_eq!((0..df.height()).filter(|&i| method[i] == "cpu-reference" && status[i] == "ok").count(), 4);
}

#[test]
fn acoo_methods_solve_the_capacitor_on_opencl() {
    let Some(df) = common::quick_rows_on_opencl("acoo-capacitor.yaml", "acoo-capacitor") else { return };
    let strs = |c: &str| df.column(c).unwrap().str().unwrap().iter().map(|s| s.unwrap_or("").to_string()).collect::<Vec<_>>();
    let nums = |c: &str| df.column(c).unwrap().f64().unwrap().iter().map(|v| v.unwrap_or(f64::NAN)).collect::<Vec<_>>();
    let (status, method, metric, reason, precision) = (strs("status"), strs("method"), strs("metric"), strs("reason"), strs("precision"));
    let (error, gap, csr, reference) = (nums("error"), nums("iteration_gap"), nums("csr_error"), nums("reference_iterations"));
    let (tolerance, gbs) = (nums("tolerance"), nums("bandwidth_gbs"));
    let mut seen = std::collections::BTreeSet::new();
    let mut products = 0;
    for i in 0..df.height() {
        assert_eq!(status[i], "ok", "{} {} {}: {}", method[i], precision[i], metric[i], reason[i]);
        if metric[i] == "spmv" {
            // The product on its own, checked on a probe against the f64 reference matrix: to
            // rounding in f64; in f32 off by more than f64 rounding, within the row's bound.
            let limit = if precision[i] == "f64" { 1e-14 } else { tolerance[i] };
            assert!(error[i] <= limit && error[i] <= tolerance[i], "{} {} product error {}", method[i], precision[i], error[i]);
            assert!(precision[i] == "f64" || error[i] > 1e-12, "{} f32 product error {}", method[i], error[i]);
            assert!(gbs[i] > 0.0, "{} {} product GB/s {}", method[i], precision[i], gbs[i]);
            products += 1;
            continue;
        }
        if precision[i] == "f64" {
            // Quick mode: CG to 1e-12, every solution within 1e-8 of the reference, within two
            // iterations of the reference CG.
            assert!(error[i] <= 1e-8, "{} error {}", method[i], error[i]);
            assert!(gap[i] <= 2.0, "{} iteration gap {}", method[i], gap[i]);
        } else {
            // f32: CG to 1e-6, within 1e-3 of the f64 reference, and within 5% of the
            // reference CG's iterations to 1e-6; but not exact (an f32 solution that matched the
            // f64 reference to 1e-8 would not be f32).
            assert!(error[i] <= 1e-3 && error[i] > 1e-8, "{} f32 error {}", method[i], error[i]);
            assert!(gap[i] <= 2f64.max(0.05 * reference[i]), "{} f32 iteration gap {} of {}", method[i], gap[i], reference[i]);
        }
        if method[i] == "a-fem" {
            // The consolidated lists are exactly the reference CSR pattern, values to rounding
            // (the run's bound is 64 u (1 + X/h) of the largest entry, X/h from the mesh).
            let limit = if precision[i] == "f64" { 1e-13 } else { 1.6e-5 };
            assert!(csr[i] <= limit, "a-fem {} CSR error {}", precision[i], csr[i]);
        }
        seen.insert((method[i].clone(), precision[i].clone()));
    }
    // Five device methods in f32 and f64 (each with its product row), the two CPU methods in f64.
    assert_eq!(seen.len(), 12, "{seen:?}");
    assert_eq!(products, 10);
}

/// The ten symbolic + numeric combinations, the baselines (SharedNZ in 48 KB: several bricks)
/// and the CPU addto, f32 and f64, each
/// read through the indices its symbolic kernel wrote and equal to the f64 reference within its
/// precision's bound.
/// The device check reads a result a part of the nodes at a time, through offset downloads: for
/// every format, parts of 7 nodes give the whole check's answer, and a wrong value in the last
/// part is still found.
#[test]
fn sanfui_device_check_by_parts_equals_the_whole_check() {
    use fembench::device::DeviceExt;
    use fembench::sanfui::formats::{self, Check};
    use fembench::sanfui::spec::Format;
    let _turn = common::opencl_turn();
    let Some(dev) = common::opencl_device() else { return };
    let prep = fembench::sanfui::reference::Prepared::new([6, 5, 4], 1e-3, 2e11, 0.3);
    let (nb, p) = (&prep.nb, &prep.pattern);
    for f in Format::ALL {
        let (r, c, v) = formats::encode(f, nb, p, &prep.reference);
        let mut off = prep.reference.clone();
        let last = off.len() - 1;
        off[last] += 1e-3 * prep.scale[last];
        let (_, _, bad) = formats::encode(f, nb, p, &off);
        let up_r = (!r.is_empty()).then(|| dev.upload_slice(&r).unwrap());
        let (up_c, up_v, up_bad) = (dev.upload_slice(&c).unwrap(), dev.upload_slice(&v).unwrap(), dev.upload_slice(&bad).unwrap());
        let on =
            |vals, part| fembench::sanfui::gpu::check_on_device::<f64>(dev.as_ref(), f, (up_r.as_ref(), &up_c, vals), &prep, part).unwrap();
        let whole = formats::check(f, nb, &r, &c, &v, p, &prep.reference, &prep.scale);
        assert_eq!(whole, Check { worst: 0.0, structure: None }, "{f:?}");
        assert_eq!(on(&up_v, 7 * 243), whole, "{f:?}");
        assert_eq!(on(&up_v, usize::MAX), whole, "{f:?}");
        let found = on(&up_bad, 7 * 243);
        assert!(found.structure.is_none() && (found.worst - 1e-3).abs() < 1e-9, "{f:?}: {found:?}");
    }
}

#[test]
fn sanfui_formats_match_the_reference_on_opencl() {
    let Some(df) = common::quick_rows_on_opencl("sanfui-formats.yaml", "sanfui-formats") else { return };
    let strs = |c: &str| df.column(c).unwrap().str().unwrap().iter().map(|s| s.unwrap_or("").to_string()).collect::<Vec<_>>();
    let nums = |c: &str| df.column(c).unwrap().f64().unwrap().iter().map(|v| v.unwrap_or(f64::NAN)).collect::<Vec<_>>();
    let (status, method, metric, reason, precision) = (strs("status"), strs("method"), strs("metric"), strs("reason"), strs("precision"));
    let (error, nnz, eq6) = (nums("error"), nums("nnz"), nums("eq6_nnz"));
    let mut seen = std::collections::BTreeSet::new();
    for i in 0..df.height() {
        assert_eq!(status[i], "ok", "{} {} {}: {}", method[i], precision[i], metric[i], reason[i]);
        // f64 to 1e-14 of each entry's scale here (the run's bound is 1e-12); f32 to 1e-4.
        let limit = if precision[i] == "f64" { 1e-14 } else { 1e-4 };
        assert!(error[i] <= limit, "{} {} error {}", method[i], precision[i], error[i]);
        assert_eq!(nnz[i], eq6[i]);
        seen.insert((method[i].clone(), precision[i].clone()));
    }
    // 14 device methods (coo-radix, the radix-sort peer, among them) in two precisions, and the
    // two CPU methods in f64.
    assert_eq!(seen.len(), 30, "{seen:?}");
    assert!(seen.contains(&("coo-radix".to_string(), "f64".to_string())));
    assert!(seen.contains(&("ellm-gather".to_string(), "f32".to_string())));
    assert!(seen.contains(&("shared-nz".to_string(), "f64".to_string())));
}

/// A run lists the programs it compiled (kernels.json); `precompile` compiles such a list into
/// the disk cache (a program new to the cache is compiled, then found there), and reads the list
/// of a stored run back.
#[test]
fn a_runs_kernel_list_is_kept_and_precompiles() {
    let _turn = common::opencl_turn();
    let Some(dev) = common::opencl_device() else { return };
    // A program no cache has seen: a definition unique to this test run.
    let unique =
        format!("{}{}", std::process::id(), std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos());
    let source = fembench::REGISTRY.kernels().into_iter().find(|k| k.file == "bandwidth.kern").unwrap();
    let jobs = vec![(source, Defines::for_precision(fembench::Precision::F32).with("FB_TEST_UNIQUE", unique))];
    assert!(matches!(dev.precompile(&jobs)[..], [Ok(true)]), "a new program is compiled");
    let again = dev.precompile(&jobs);
    if fembench::device::kernel_cache::dir().is_some() {
        assert!(matches!(again[..], [Ok(false)]), "then found in the cache: {again:?}");
    }
    drop(dev);
    let exp = load(&common::experiments_dir().join("device-bandwidth.yaml")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let opts = RunOptions { backends: vec![Backend::OpenCl], quick: true, out_dir: out.path().into(), ..Default::default() };
    let s = run(&[exp], &opts).unwrap();
    let listed = RunDir::open(&s.run_dir).unwrap().read_kernels().unwrap();
    assert!(listed.iter().any(|r| r.file == "bandwidth.kern" && r.backend == Backend::OpenCl), "{listed:?}");
    let done = fembench::precompile::precompile(&fembench::REGISTRY, &[s.run_dir.clone()], &[], 0, false).unwrap();
    let d = &done[0];
    assert_eq!(done.len(), 1);
    assert!(d.failed.is_empty() && d.unknown_files.is_empty(), "{d:?}");
    assert_eq!(d.compiled + d.cached, d.jobs);
    assert!(d.jobs > 0 && d.jobs <= listed.len());
    // A stale entry (acoo.kern selecting a scan kernel that moved to scan.kern) is skipped, not
    // built as a program without kernels.
    let mut stale = listed.clone();
    stale[0].file = "acoo.kern".into();
    stale[0].defines = vec![("FB_SELECT".into(), "1".into()), ("FB_ONLY_scan_add".into(), "1".into())];
    let manifest = out.path().join("stale.json");
    std::fs::write(&manifest, serde_json::to_string(&stale[..1]).unwrap()).unwrap();
    let done = fembench::precompile::precompile(&fembench::REGISTRY, &[manifest], &[], 0, false).unwrap();
    assert_eq!((done[0].jobs, &done[0].stale[..]), (0, &["acoo.kern: scan_add".to_string()][..]), "{done:?}");
    let missing = fembench::precompile::precompile(&fembench::REGISTRY, &[out.path().join("nowhere")], &[], 0, false).unwrap_err();
    assert!(missing.contains("nowhere"), "{missing}");
}

/// Pogo's device methods (sliced ELL, f32 and f64, and f64 with K' in f32; the paper's kernel
/// on the aligned and the greedy blocks' memory arrangements, f32 and f64) and Eq. (4) on the
/// host, each after 100 steps from rest equal to the element-by-element f64 oracle within its
/// bound, with the receivers' traces.
#[test]
fn pogo_steps_match_the_oracle_on_opencl() {
    pogo_rows_match_the_oracle("pogo-weld");
}

/// The same for the geophysical model: four rocks, absorbing regions (damping in C'), and a
/// checked pass that starts from rest on the Gaussian's rising flank.
#[test]
fn pogo_geophysical_steps_match_the_oracle_on_opencl() {
    pogo_rows_match_the_oracle("pogo-geophysical");
}

/// The same for the gear (experiments/pogo-gear.yaml): internal boundaries (a bore, holes, opened
/// cracks), a force on every node of a tooth face, and a full run of a stated number of steps.
#[test]
fn pogo_gear_steps_match_the_oracle_on_opencl() {
    pogo_rows_match_the_oracle("pogo-gear");
}

fn pogo_rows_match_the_oracle(file: &str) {
    let experiment = file.rsplit('/').next().unwrap_or(file);
    let Some(df) = common::quick_rows_on_opencl(&format!("{file}.yaml"), experiment) else { return };
    let strs = |c: &str| df.column(c).unwrap().str().unwrap().iter().map(|s| s.unwrap_or("").to_string()).collect::<Vec<_>>();
    let nums = |c: &str| df.column(c).unwrap().f64().unwrap().iter().map(|v| v.unwrap_or(f64::NAN)).collect::<Vec<_>>();
    let (status, method, reason, precision, metric) = (strs("status"), strs("method"), strs("reason"), strs("precision"), strs("metric"));
    let (error, tolerance, trace) = (nums("error"), nums("tolerance"), nums("trace_error"));
    let (run_steps, stride, receivers) = (nums("timed_steps"), nums("trace_stride"), nums("receivers"));
    let traces = df.column("trace").unwrap().list().unwrap().clone();
    let mut seen = std::collections::BTreeSet::new();
    let mut full = std::collections::BTreeSet::new();
    for i in 0..df.height() {
        assert_eq!(status[i], "ok", "{} {} {}: {}", metric[i], method[i], precision[i], reason[i]);
        let f64_only = precision[i] == "f64" && !method[i].ends_with("kf32");
        if metric[i] == "full-run" {
            // The full run: U at the CPU window's end within the long-run bound (at most 0.1),
            // the receivers' discrepancy over the window small, every stored step present.
            assert!(error[i] <= tolerance[i] && tolerance[i] <= 0.1, "{} {} full-run error {}", method[i], precision[i], error[i]);
            assert!(trace[i] <= if f64_only { 1e-8 } else { 0.1 }, "{} {} full-run trace {}", method[i], precision[i], trace[i]);
            let stored = traces.get_as_series(i).unwrap().len() as f64;
            assert_eq!(stored, (run_steps[i] / stride[i]).ceil() * 2.0 * receivers[i], "{} {}", method[i], precision[i]);
            full.insert((method[i].clone(), precision[i].clone()));
            continue;
        }
        assert!(
            if f64_only { error[i] <= 1e-12 } else { error[i] <= tolerance[i] && error[i] > 0.0 },
            "{} {} error {}",
            method[i],
            precision[i],
            error[i]
        );
        if !method[i].starts_with("cpu") {
            assert!(trace[i] <= if f64_only { 1e-10 } else { 1e-2 }, "{} {} trace {}", method[i], precision[i], trace[i]);
        }
        seen.insert((method[i].clone(), precision[i].clone()));
    }
    // sell, pogo-aligned and pogo-greedy in f32 and f64, sell-kf32, pogo-aligned-kf32 and the
    // two CPU methods in f64; the full runs of sell and pogo-aligned (f32, f64) and of
    // sell-kf32.
    assert_eq!(seen.len(), 10, "{seen:?}");
    assert_eq!(full.len(), 5, "{full:?}");
}

/// The shared COO-route kernels (coo_sum.kern with the shared scan): pairs sorted on the host,
/// duplicates summed on the device, in f32 and f64, against a host sum; enough pairs that the
/// scan spans several blocks, and rows left empty.
#[test]
fn coo_sum_kernels_sum_sorted_duplicates_on_opencl() {
    use fembench::device::coo_sum::{sum_duplicates, CooSumKernels, CooSumScratch, CsrOut, SortedCoo};
    use fembench::device::kernels::{COO_SUM, SCAN};
    use fembench::device::scan::ScanKernels;
    use fembench::device::DeviceExt;
    let _turn = common::opencl_turn();
    let Some(dev) = common::opencl_device() else { return };
    let (rows, pairs) = (60usize, 5000usize);
    // A fixed pseudo-random stream; every third row left empty.
    let mut state = 12345u64;
    let mut next = |m: usize| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 33) as usize) % m
    };
    let input: Vec<(i32, i32, f64)> =
        (0..pairs).map(|_| (3 * next(rows / 3) as i32, next(40) as i32, next(1000) as f64 / 7.0 - 50.0)).collect();
    let mut perm: Vec<i32> = (0..pairs as i32).collect();
    perm.sort_by_key(|&k| (input[k as usize].0, input[k as usize].1));
    let (row, col): (Vec<i32>, Vec<i32>) = perm.iter().map(|&k| (input[k as usize].0, input[k as usize].1)).unzip();
    let row_ptr: Vec<i32> = (0..=rows as i32).map(|r| row.partition_point(|&x| x < r) as i32).collect();
    let mut expect: std::collections::BTreeMap<(i32, i32), f64> = Default::default();
    for &(r, c, v) in &input {
        *expect.entry((r, c)).or_default() += v;
    }
    let nnz = expect.len();
    let scan_m = dev.compile(&SCAN, &Defines::new()).unwrap();
    let scan = ScanKernels {
        blocks: dev.kernel(&scan_m, "scan_blocks").unwrap(),
        sums: dev.kernel(&scan_m, "scan_sums").unwrap(),
        add: dev.kernel(&scan_m, "scan_add").unwrap(),
    };
    for precision in [fembench::Precision::F32, fembench::Precision::F64] {
        let m = dev.compile(&COO_SUM, &Defines::for_precision(precision)).unwrap();
        let k = CooSumKernels {
            heads: dev.kernel(&m, "coo_heads").unwrap(),
            segsum: dev.kernel(&m, "coo_segsum").unwrap(),
            compact: dev.kernel(&m, "coo_compact_rows").unwrap(),
        };
        let vals = match precision {
            fembench::Precision::F32 => dev.upload_slice(&input.iter().map(|p| p.2 as f32).collect::<Vec<_>>()).unwrap(),
            fembench::Precision::F64 => dev.upload_slice(&input.iter().map(|p| p.2).collect::<Vec<_>>()).unwrap(),
        };
        let s = if precision == fembench::Precision::F32 { 4 } else { 8 };
        let (row_b, col_b, perm_b, ptr_b) = (
            dev.upload_slice(&row).unwrap(),
            dev.upload_slice(&col).unwrap(),
            dev.upload_slice(&perm).unwrap(),
            dev.upload_slice(&row_ptr).unwrap(),
        );
        let (out_ptr, out_col, out_val) = (dev.alloc(4 * (rows + 1)).unwrap(), dev.alloc(4 * nnz).unwrap(), dev.alloc(s * nnz).unwrap());
        let scratch = CooSumScratch::new(dev.as_ref(), pairs).unwrap();
        let coo = SortedCoo { rows, pairs, row: &row_b, col: &col_b, perm: &perm_b, row_ptr: &ptr_b, vals: &vals };
        sum_duplicates(dev.as_ref(), &k, &scan, &scratch, &coo, &CsrOut { row_ptr: &out_ptr, col: &out_col, val: &out_val }).unwrap();
        dev.synchronize().unwrap();
        let got_ptr: Vec<i32> = dev.download_vec(&out_ptr, rows + 1).unwrap();
        let got_col: Vec<i32> = dev.download_vec(&out_col, nnz).unwrap();
        let got: Vec<f64> = match precision {
            fembench::Precision::F32 => dev.download_vec::<f32>(&out_val, nnz).unwrap().into_iter().map(f64::from).collect(),
            fembench::Precision::F64 => dev.download_vec::<f64>(&out_val, nnz).unwrap(),
        };
        let mut at = 0;
        for r in 0..rows as i32 {
            assert_eq!(got_ptr[r as usize], at as i32, "{precision}: row {r} starts at {}", got_ptr[r as usize]);
            for (&(_, c), &v) in expect.range((r, i32::MIN)..(r + 1, i32::MIN)) {
                assert_eq!(got_col[at], c, "{precision}: entry {at}");
                assert!((got[at] - v).abs() <= 1e-4 * (1.0 + v.abs()), "{precision}: entry {at} = {} not {v}", got[at]);
                at += 1;
            }
        }
        assert_eq!((at, got_ptr[rows] as usize), (nnz, nnz), "{precision}");
    }
}

/// The Cecka peer's element kernel (cecka_coo_elements; the peer itself needs cuSPARSE's sort):
/// its triplets, summed on the host, and its right-hand side equal the serial f64 system, with
/// every pair that touches a prescribed dof in the sentinel row. Order 2, f64.
#[test]
fn cecka_coo_element_triplets_sum_to_the_reference_on_opencl() {
    use fembench::cecka::system::{assemble_serial, Problem, SOURCE_F};
    use fembench::device::{Arg, DeviceExt, Launch};
    let _turn = common::opencl_turn();
    let Some(dev) = common::opencl_device() else { return };
    let p = Problem::new(1, 2);
    let (en, ne, nf) = (p.en(), p.ne(), p.n_free);
    let pairs = en * en * ne;
    let conn: Vec<u32> = (0..en * ne).map(|idx| p.mesh.element(idx % ne)[idx / ne]).collect();
    let up = |v: &[f64]| dev.upload_slice(v).unwrap();
    let (x, y, g, refs) = (up(&p.mesh.x), up(&p.mesh.y), up(&p.g), up(&p.refs.packed()));
    let (conn_b, dof) = (dev.upload_slice(&conn).unwrap(), dev.upload_slice(&p.dof).unwrap());
    let (ke, row, col, rhs) =
        (dev.alloc(8 * pairs).unwrap(), dev.alloc(4 * pairs).unwrap(), dev.alloc(4 * pairs).unwrap(), up(&vec![0.0; nf]));
    let m = dev.compile(&fembench::cecka::CECKA, &Defines::for_precision(fembench::Precision::F64).with("EN", en)).unwrap();
    let k = dev.kernel(&m, "cecka_coo_elements").unwrap();
    let args = [
        Arg::Buf(&x),
        Arg::Buf(&y),
        Arg::Buf(&conn_b),
        Arg::Buf(&dof),
        Arg::Buf(&g),
        Arg::Buf(&refs),
        Arg::Buf(&ke),
        Arg::Buf(&row),
        Arg::Buf(&col),
        Arg::Buf(&rhs),
        Arg::real(fembench::Precision::F64, SOURCE_F),
        Arg::I32(ne as i32),
        Arg::I32(nf as i32),
    ];
    dev.launch(&k, Launch::cover(ne, 128), &args).unwrap();
    dev.synchronize().unwrap();
    let (v, r, c): (Vec<f64>, Vec<i32>, Vec<i32>) =
        (dev.download_vec(&ke, pairs).unwrap(), dev.download_vec(&row, pairs).unwrap(), dev.download_vec(&col, pairs).unwrap());
    let reference = assemble_serial(&p);
    let mut sums = vec![0.0; p.nnz()];
    let mut sentinel = 0;
    for t in 0..pairs {
        if r[t] == nf as i32 || c[t] == nf as i32 {
            assert_eq!((r[t], c[t]), (nf as i32, nf as i32), "pair {t}: half a sentinel");
            sentinel += 1;
            continue;
        }
        let row = r[t] as usize;
        let (lo, hi) = (p.row_ptr[row] as usize, p.row_ptr[row + 1] as usize);
        let at = lo + p.col[lo..hi].iter().position(|&cc| cc as i32 == c[t]).unwrap_or_else(|| panic!("pair {t} not in the pattern"));
        sums[at] += v[t];
    }
    assert!(sentinel > 0, "the plate has prescribed dofs");
    let scale = reference.vals.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    for (k, (a, b)) in sums.iter().zip(&reference.vals).enumerate() {
        assert!((a - b).abs() <= 1e-12 * scale, "entry {k}: {a} against {b}");
    }
    let got_rhs: Vec<f64> = dev.download_vec(&rhs, nf).unwrap();
    let rscale = reference.rhs.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    for (k, (a, b)) in got_rhs.iter().zip(&reference.rhs).enumerate() {
        assert!((a - b).abs() <= 1e-12 * rscale, "rhs {k}: {a} against {b}");
    }
}

/// The Banaś peer's first step (banas_bmatrix; the GEMM itself is cuBLAS): B and w |det J| D B on
/// PoCL, multiplied on the host as B^T E, equal Algorithm 2's f64 element matrices. p = 2, f64.
#[test]
fn banas_bmatrix_gives_the_element_matrices_on_opencl() {
    use fembench::banas::elasticity::{element_matrices, PrismMesh};
    use fembench::banas::prism::{jacobian_terms, Reference};
    use fembench::device::{Arg, DeviceExt, Launch};
    let _turn = common::opencl_turn();
    let Some(dev) = common::opencl_device() else { return };
    let (re, mesh) = (Reference::new(2).unwrap(), PrismMesh::with_elements(3));
    let (nsh, nq, ne) = (re.nsh, re.nq(), mesh.len());
    let (k, n) = (6 * nq, 3 * nsh);
    let jt: Vec<f64> = (0..ne)
        .flat_map(|e| {
            let x = mesh.element_vertices(e);
            re.quad.iter().flat_map(move |pt| jacobian_terms(&x, pt))
        })
        .collect();
    let lame: Vec<f64> = (0..ne).flat_map(|e| <[f64; 2]>::from(mesh.lame(e))).collect();
    let (dphi, jt_b, lame_b) = (dev.upload_slice(&re.dphi).unwrap(), dev.upload_slice(&jt).unwrap(), dev.upload_slice(&lame).unwrap());
    let (bm, em) = (dev.alloc(8 * k * n * ne).unwrap(), dev.alloc(8 * k * n * ne).unwrap());
    let defines = Defines::for_precision(fembench::Precision::F64)
        .with("NSH", nsh)
        .with("NQ", nq)
        .with("FB_SELECT", 1)
        .with("FB_ONLY_banas_bmatrix", 1);
    let m = dev.compile(&fembench::banas::BANAS, &defines).unwrap();
    let kernel = dev.kernel(&m, "banas_bmatrix").unwrap();
    let args = [Arg::Buf(&dphi), Arg::Buf(&jt_b), Arg::Buf(&lame_b), Arg::Buf(&bm), Arg::Buf(&em), Arg::I32(ne as i32)];
    dev.launch(&kernel, Launch::cover(ne * n * k, 256), &args).unwrap();
    dev.synchronize().unwrap();
    let (b, e): (Vec<f64>, Vec<f64>) = (dev.download_vec(&bm, k * n * ne).unwrap(), dev.download_vec(&em, k * n * ne).unwrap());
    let want = element_matrices(&re, &mesh, &(0..ne).collect::<Vec<_>>());
    for el in 0..ne {
        let (b, e, want) = (&b[el * k * n..], &e[el * k * n..], &want[el * n * n..(el + 1) * n * n]);
        let scale = want.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        for c1 in 0..n {
            for c2 in 0..n {
                let got: f64 = (0..k).map(|r| b[c1 * k + r] * e[c2 * k + r]).sum();
                assert!((got - want[c1 * n + c2]).abs() <= 1e-11 * scale, "element {el} ({c1}, {c2}): {got} against {}", want[c1 * n + c2]);
            }
        }
    }
}
