//! Cecka's assembly methods on OpenCL against the reference.

use crate::common;
use fembench::device::Backend;
use fembench::kernels::Defines;
use fembench::load;
use fembench::results::RunDir;
use fembench::runner::{run, RunOptions};

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
    // Every case the file plans on OpenCL has its row, full methods and dummies alike: counted
    // from the file and the registry (a method added to the file adds its cases here).
    let exp = load(&common::experiments_dir().join("cecka-orders.yaml")).unwrap();
    let (mut planned_full, mut planned_dummies) = (0, 0);
    for (i, params) in exp.points(true).iter().enumerate() {
        let on_opencl = exp.precisions().iter().filter(|&&p| exp.case_exists(true, i, Backend::OpenCl, p)).count();
        match params.get("method").map(|m| m.to_string()).is_some_and(|m| m.ends_with("-dummy")) {
            true => planned_dummies += on_opencl,
            false => planned_full += on_opencl,
        }
    }
    assert!(planned_full > 0 && planned_dummies > 0);
    assert_eq!((checked, dummies), (planned_full, planned_dummies));
}

/// The Cecka peer's element kernel (cecka_coo_elements; the peer itself needs cuSPARSE's sort):
/// its triplets, summed on the host, and its right-hand side equal the serial f64 system, with
/// every pair that touches a prescribed dof in the sentinel row. Order 2, f64.
#[test]
fn cecka_coo_element_triplets_sum_to_the_reference_on_opencl() {
    use fembench::cecka::kernel::CooElements;
    use fembench::cecka::problem::system::{assemble_serial, Problem, SOURCE_F};
    use fembench::device::{DeviceExt, Launch, RealArg};
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
    let args = CooElements {
        x: &x,
        y: &y,
        conn: &conn_b,
        dof: &dof,
        g: &g,
        refs: &refs,
        ke: &ke,
        row: &row,
        col: &col,
        rhs: &rhs,
        f: RealArg::new(fembench::Precision::F64, SOURCE_F),
        ne: ne as i32,
        nfree: nf as i32,
    };
    dev.launch_with(&k, Launch::cover(ne, 128), &args).unwrap();
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
