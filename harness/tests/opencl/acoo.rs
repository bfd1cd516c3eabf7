//! a-COO's methods on OpenCL: the capacitor solved.

use crate::common;

#[test]
fn acoo_methods_solve_the_capacitor_on_opencl() {
    let Some(df) = common::quick_rows_on_opencl("acoo-capacitor.yaml", "acoo-capacitor") else { return };
    let strs = |c: &str| df.column(c).unwrap().str().unwrap().iter().map(|s| s.unwrap_or("").to_string()).collect::<Vec<_>>();
    let nums = |c: &str| df.column(c).unwrap().f64().unwrap().iter().map(|v| v.unwrap_or(f64::NAN)).collect::<Vec<_>>();
    let (status, method, metric, reason, precision) = (strs("status"), strs("method"), strs("metric"), strs("reason"), strs("precision"));
    let (error, gap, csr, reference) = (nums("error"), nums("iteration_gap"), nums("csr_error"), nums("reference_iterations"));
    let (tolerance, gbs, single) = (nums("tolerance"), nums("bandwidth_gbs"), nums("cg_single"));
    let (mut seen, mut absent) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
    let mut products = 0;
    for i in 0..df.height() {
        assert!(common::ok_or_library_absent(&status[i], &reason[i]), "{} {} {}: {}", method[i], precision[i], metric[i], reason[i]);
        if status[i] != "ok" {
            absent.insert((method[i].clone(), precision[i].clone()));
            continue;
        }
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
        if ["a-fem", "csr-atomic", "csr-color"].contains(&method[i].as_str()) {
            assert_eq!(single[i], 1.0, "{} {}: the quick file's CSR CG is the single-reduction form", method[i], precision[i]);
        }
        if method[i] == "a-fem" {
            // The consolidated lists are exactly the reference CSR pattern, values to rounding
            // (the run's bound is 64 u (1 + X/h) of the largest entry, X/h from the mesh).
            let limit = if precision[i] == "f64" { 1e-13 } else { 1.6e-5 };
            assert!(csr[i] <= limit, "a-fem {} CSR error {}", precision[i], csr[i]);
        }
        seen.insert((method[i].clone(), precision[i].clone()));
    }
    // Every case the quick file plans on OpenCL and the host, from the file and the registry: the
    // device methods in f32 and f64 (each with its product row), the host ones in f64.
    use fembench::device::Backend;
    let planned = common::planned_cases("acoo-capacitor.yaml", &[Backend::OpenCl, Backend::Cpu]);
    assert_eq!(seen, planned.difference(&absent).cloned().collect(), "{seen:?}");
    assert_eq!(products, common::planned_cases("acoo-capacitor.yaml", &[Backend::OpenCl]).len());
}

/// The other form of our CSR CG (the direction update inside the product, four launches an
/// iteration), on the quick file's CSR methods: every row verified, the iteration count within
/// two of the reference's, and the rows say which form ran.
#[test]
fn acoo_csr_cg_with_the_direction_update_in_the_product_solves_on_opencl() {
    let edits = [
        ("  cg_single_reduction: true\nsweep:", "  cg_single_reduction: false\nsweep:"),
        ("    cg_single_reduction: true\n  measure:", "    cg_single_reduction: false\n  measure:"),
        (
            "    method: [a-fem, ebe-v1, ebe-v2, csr-atomic, csr-color, cusparse-cg-graph, cusparse-cg-device, cusparse-cg, warp-cg, jax-cg, warp-cpu, jax-cpu, cpu-serial, cpu-parallel]",
            "    method: [a-fem, csr-atomic, csr-color]",
        ),
    ];
    let Some(df) = common::quick_rows_on_opencl_edited("acoo-capacitor.yaml", "acoo-capacitor", &edits) else { return };
    let strs = |c: &str| df.column(c).unwrap().str().unwrap().iter().map(|s| s.unwrap_or("").to_string()).collect::<Vec<_>>();
    let nums = |c: &str| df.column(c).unwrap().f64().unwrap().iter().map(|v| v.unwrap_or(f64::NAN)).collect::<Vec<_>>();
    let (status, metric, precision) = (strs("status"), strs("metric"), strs("precision"));
    let (gap, single, fused, error) = (nums("iteration_gap"), nums("cg_single"), nums("cg_fused"), nums("error"));
    let totals: Vec<usize> = (0..df.height()).filter(|&i| metric[i] == "total").collect();
    assert_eq!(totals.len(), 6, "three methods in two precisions");
    for i in totals {
        assert_eq!(status[i], "ok", "row {i}");
        assert!(
            gap[i] <= 2.0 && error[i] <= if precision[i] == "f64" { 1e-8 } else { 1e-3 },
            "row {i}: gap {}, error {}",
            gap[i],
            error[i]
        );
        assert_eq!((single[i], fused[i]), (0.0, 1.0), "row {i}");
    }
}
