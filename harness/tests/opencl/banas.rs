//! Banaś' integration kernels on OpenCL against the reference.

use crate::common;
use fembench::device::Backend;
use fembench::kernels::Defines;
use fembench::load;
use fembench::results::RunDir;
use fembench::runner::{run, RunOptions};

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
    // 5 variants (the paper's four and gram-nojac) x 2 degrees x 2 precisions, in each mode.
    assert_eq!((kernels("warm"), kernels("cold")), (20, 20));
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
    // 5 variants (the paper's four and gram-nojac) x p = 1..4 x f32 and f64, each verified (the
    // kernel rows), the CPU reference, and NumPy's route on the host (p = 1..4, f64) where Python
    // has NumPy. mma-nojac (tensor cores, CUDA) is skipped on OpenCL, with its reason.
    let host = ["cpu-reference", "numpy-matmul"];
    let checked: Vec<usize> =
        (0..df.height()).filter(|&i| metric[i] == "kernel" && status[i] == "ok" && !host.contains(&method[i].as_str())).collect();
    assert_eq!(checked.len(), 5 * 4 * 2);
    assert!(checked.iter().filter(|&&i| method[i] == "gram-nojac").count() == 8);
    let reason = col("reason");
    let mma: Vec<usize> = (0..df.height()).filter(|&i| method[i] == "mma-nojac").collect();
    assert_eq!(mma.len(), 8, "mma-nojac's rows: p = 1..4, f32 and f64");
    assert!(
        mma.iter().all(|&i| status[i] == "skipped" && reason[i].contains("CUDA only")),
        "{:?}",
        mma.iter().map(|&i| &reason[i]).collect::<Vec<_>>()
    );
    let numpy = (0..df.height()).filter(|&i| method[i] == "numpy-matmul" && status[i] == "ok").count();
    assert!(numpy == 4 || (numpy == 0 && std::env::var_os("FEMBENCH_REQUIRE_PYTHON").is_none()), "{numpy} numpy-matmul rows ok");
    for i in checked {
        let tol = if precision[i] == "f64" { 1e-10 } else { 1e-4 };
        assert!(error[i] <= tol, "{} {}: error {}", method[i], precision[i], error[i]);
    }
    assert_eq!((0..df.height()).filter(|&i| method[i] == "cpu-reference" && status[i] == "ok").count(), 4);
}

/// The Banaś peer's first step (banas_bmatrix; the GEMM itself is cuBLAS): B and w |det J| D B on
/// PoCL, multiplied on the host as B^T E, equal Algorithm 2's f64 element matrices. p = 2, f64.
#[test]
fn banas_bmatrix_gives_the_element_matrices_on_opencl() {
    use fembench::banas::elasticity::{element_matrices, PrismMesh};
    use fembench::banas::kernel::Bmatrix;
    use fembench::banas::prism::{jacobian_terms, Reference};
    use fembench::device::{DeviceExt, Launch};
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
    let args = Bmatrix { dphi: &dphi, jterms: &jt_b, lame: &lame_b, bm: &bm, em: &em, ne: ne as i32 };
    dev.launch_with(&kernel, Launch::cover(ne * n * k, 256), &args).unwrap();
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
