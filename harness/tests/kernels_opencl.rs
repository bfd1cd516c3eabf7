//! Every kernel runs on an OpenCL device (PoCL in CI) and matches the reference, in f32 and f64.

#[path = "opencl/acoo.rs"]
mod acoo;
#[path = "opencl/afem.rs"]
mod afem;
#[path = "opencl/banas.rs"]
mod banas;
#[path = "opencl/cecka.rs"]
mod cecka;
#[path = "opencl/cecka_variant.rs"]
mod cecka_variant;
mod common;
#[path = "opencl/coo_sum.rs"]
mod coo_sum;
#[path = "opencl/exit_codes.rs"]
mod exit_codes;
#[path = "opencl/lifecycle.rs"]
mod lifecycle;
#[path = "opencl/peers.rs"]
mod peers;
#[path = "opencl/pogo.rs"]
mod pogo;
#[path = "opencl/pogo_split.rs"]
mod pogo_split;
#[path = "opencl/sanfui.rs"]
mod sanfui;
#[path = "opencl/sanfui_format.rs"]
mod sanfui_format;

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
