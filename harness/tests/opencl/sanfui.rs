//! Sanfui and Sharma's formats on OpenCL against the reference.

use crate::common;

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
    let _turn = common::opencl_turn();
    let Some(dev) = common::opencl_device() else { return };
    let prep = fembench::sanfui::reference::Prepared::new([6, 5, 4], 1e-3, 2e11, 0.3);
    let (nb, p) = (&prep.nb, &prep.pattern);
    for f in fembench::sanfui::registry::formats() {
        let (r, c, v) = formats::encode(f, nb, p, &prep.reference);
        let mut off = prep.reference.clone();
        let last = off.len() - 1;
        off[last] += 1e-3 * prep.scale[last];
        let (_, _, bad) = formats::encode(f, nb, p, &off);
        let up_r = (!r.is_empty()).then(|| dev.upload_slice(&r).unwrap());
        let (up_c, up_v, up_bad) = (dev.upload_slice(&c).unwrap(), dev.upload_slice(&v).unwrap(), dev.upload_slice(&bad).unwrap());
        let on =
            |vals, part| fembench::sanfui::gpu::check_on_device::<f64>(dev.as_ref(), f, (up_r.as_ref(), &up_c, vals), &prep, part).unwrap();
        let whole = formats::check(f, nb, (&r, &c), &v, prep.expected());
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
    let (mut seen, mut absent) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
    for i in 0..df.height() {
        assert!(common::ok_or_library_absent(&status[i], &reason[i]), "{} {} {}: {}", method[i], precision[i], metric[i], reason[i]);
        if status[i] != "ok" {
            absent.insert((method[i].clone(), precision[i].clone()));
            continue;
        }
        // f64 to 1e-14 of each entry's scale here (the run's bound is 1e-12); f32 to 1e-4.
        let limit = if precision[i] == "f64" { 1e-14 } else { 1e-4 };
        assert!(error[i] <= limit, "{} {} error {}", method[i], precision[i], error[i]);
        assert_eq!(nnz[i], eq6[i]);
        seen.insert((method[i].clone(), precision[i].clone()));
    }
    // Every case the quick file plans on OpenCL and the host, from the file and the registry: the
    // device methods (coo-radix, the radix-sort peer, among them) in two precisions, the host
    // ones in f64.
    let planned = common::planned_cases("sanfui-formats.yaml", &[fembench::device::Backend::OpenCl, fembench::device::Backend::Cpu]);
    assert_eq!(seen, planned.difference(&absent).cloned().collect(), "{seen:?}");
    assert!(seen.contains(&("coo-radix".to_string(), "f64".to_string())));
    assert!(seen.contains(&("ellm-gather".to_string(), "f32".to_string())));
    assert!(seen.contains(&("shared-nz".to_string(), "f64".to_string())));
}
