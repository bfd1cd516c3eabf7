//! Where each Sanfui-Sharma method stops fitting, from stored rows (failed ones included): the
//! largest box that ran and its device bytes, the first larger box that did not and why, and the
//! box at which the bytes per node would fill the device; the 32-bit index limit beside them.

use polars::prelude::*;

use super::spec::Method;
use crate::report::{fmt_num, frame, ReportCtx, ReportError, Table};

/// The largest box whose every value a 32-bit index reaches: 243 N < 2^31 (the validation
/// refuses larger boxes).
pub fn index_limit_nodes() -> f64 {
    ((i32::MAX as usize - 1) / 243) as f64
}

/// Where each device method stops fitting, from every row (failed ones included): per device
/// and method, the largest box that ran and the device bytes it took, the first larger box
/// that did not run and its reason, and the box at which the bytes per node measured there
/// would fill the device's memory.
pub(crate) fn memory_limit(id: &str, df: &DataFrame, ctx: &ReportCtx) -> Result<Table, ReportError> {
    use std::collections::BTreeMap;
    let all = frame::collect(frame::with_optional(df, &["device_bytes"], super::spec::COLUMNS)?.filter(col("backend").neq(lit("cpu"))))?;
    let s = |c: &str| frame::strs(&all, c);
    let (backend, device, precision, method, metric, status) =
        (s("backend")?, s("device")?, s("precision")?, s("method")?, s("metric")?, s("status")?);
    // (a run whose rows all passed may have no reason column)
    let reason: Vec<Option<String>> = match all.column("reason") {
        Ok(_) => s("reason")?.into_iter().map(|r| (!r.is_empty()).then_some(r)).collect(),
        Err(_) => vec![None; all.height()],
    };
    let (nx, ny, nz, bytes) =
        (frame::nums(&all, "nx")?, frame::nums(&all, "ny")?, frame::nums(&all, "nz")?, frame::nums(&all, "device_bytes")?);
    // (device, backend, precision, method) -> nodes -> (ran, device bytes, why not)
    type Case = (bool, f64, Option<String>);
    let mut cases: BTreeMap<(String, String, String, usize), BTreeMap<u64, Case>> = BTreeMap::new();
    for i in 0..all.height() {
        let Some(m) = Method::all().iter().position(|m| m.as_str() == method[i]) else { continue };
        let nodes = (nx[i] * ny[i] * nz[i]) as u64;
        let key = (device[i].clone(), backend[i].clone(), precision[i].clone(), m);
        let c = cases.entry(key).or_default().entry(nodes).or_insert((true, f64::NAN, None));
        if status[i] != "ok" {
            c.0 = false;
            if c.2.is_none() {
                c.2 = Some(reason[i].clone().unwrap_or_else(|| status[i].clone()));
            }
        } else if metric[i] == "total" && bytes[i].is_finite() {
            c.1 = bytes[i];
        }
    }
    let rows = cases
        .iter()
        .map(|((d, b, p, m), boxes)| {
            let memory =
                ctx.meta.devices.iter().find(|x| &x.name == d && x.backend.is_some_and(|k| k.as_str() == b)).map(|x| x.memory_bytes as f64);
            let ran = boxes.iter().filter(|(_, c)| c.0).last();
            let per_node = ran.map_or(f64::NAN, |(&n, c)| c.1 / n as f64);
            let after = ran.map_or(0, |(&n, _)| n);
            let not = boxes.iter().find(|(&n, c)| !c.0 && n > after);
            vec![
                format!("{d} {b} {p}"),
                Method::all()[*m].as_str().to_string(),
                ran.map_or("-".into(), |(&n, _)| fmt_num(n as f64)),
                ran.map_or("-".into(), |(_, c)| fmt_num(c.1 / 1e9)),
                fmt_num(per_node),
                memory.map_or("-".into(), |mem| fmt_num(mem / per_node)),
                not.map_or("-".into(), |(&n, _)| fmt_num(n as f64)),
                not.and_then(|(_, c)| c.2.clone()).unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    Ok(Table {
        name: format!("{id}-memory-limit"),
        title: "Where each method stops fitting: the largest box that ran, its device memory, and where its bytes per node would fill the device".into(),
        header: [
            "device",
            "method",
            "largest box run (nodes)",
            "device GB there",
            "device bytes / node",
            "nodes that would fill the device",
            "first larger box not run",
            "why",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        notes: vec![
            format!(
                "Every format indexes its values with 32-bit ints: 243 N < 2^31 caps a box at {} nodes (the validation refuses larger boxes). Where the nodes that would fill the device are more, the index limit binds first.",
                fmt_num(index_limit_nodes())
            ),
            "Device bytes: the method's buffers at its largest box (K^e, the format's arrays, the converted CSR and plans where it has them), not the driver's own.".into(),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::frame;

    /// The memory-limit table reads failed rows too: the largest box that ran, its bytes per
    /// node, where they would fill the device, and the first larger box that did not run.
    #[test]
    fn the_memory_limit_table_follows_the_rows() {
        // ellm-atomic ran at both boxes (1000 and 4000 nodes); coo-color ran at the first and
        // failed at the second; one CPU row that the table leaves out.
        let cases = [
            ("cuda", "ellm-atomic", 10.0, "ok", "total", 2.0e6, ""),
            ("cuda", "ellm-atomic", 20.0, "ok", "total", 16.0e6, ""),
            ("cuda", "coo-color", 10.0, "ok", "total", 3.0e6, ""),
            ("cuda", "coo-color", 20.0, "failed", "case", f64::NAN, "needs about 9 GB of device memory"),
            ("cpu", "cpu-serial", 20.0, "ok", "total", f64::NAN, ""),
        ];
        let n = cases.len();
        let col = |f: fn(&(&str, &str, f64, &str, &str, f64, &str)) -> String| cases.iter().map(f).collect::<Vec<String>>();
        let strs = vec![
            ("backend", col(|c| c.0.into())),
            ("method", col(|c| c.1.into())),
            ("status", col(|c| c.3.into())),
            ("metric", col(|c| c.4.into())),
            ("reason", col(|c| c.6.into())),
            ("device", vec!["GPU".to_string(); n]),
            ("precision", vec!["f64".to_string(); n]),
        ];
        let k: Vec<f64> = cases.iter().map(|c| c.2).collect();
        let nums = vec![("nx", k.clone()), ("ny", k.clone()), ("nz", vec![10.0; n]), ("device_bytes", cases.iter().map(|c| c.5).collect())];
        let df = frame::of_columns(n, strs, nums).unwrap();
        let device = crate::device::DeviceInfo {
            backend: Some(crate::Backend::Cuda),
            name: "GPU".into(),
            memory_bytes: 64_000_000,
            ..Default::default()
        };
        let ctx = ReportCtx { meta: crate::results::RunMeta { devices: vec![device], ..Default::default() }, copy_gbs: vec![] };
        let t = memory_limit("x", &df, &ctx).unwrap();
        assert_eq!(t.rows.len(), 2, "{:?}", t.rows);
        let row = |m: &str| t.rows.iter().find(|r| r[1] == m).unwrap().clone();
        // ellm-atomic: 4000 nodes, 16 MB, 4000 bytes a node: 64 MB fills at 16000 nodes.
        assert_eq!(row("ellm-atomic")[2..], ["4000", "0.016", "4000", "16000", "-", "-"].map(String::from));
        // coo-color: 1000 nodes, 3000 bytes a node; 4000 nodes did not run, and why.
        assert_eq!(
            row("coo-color")[2..],
            ["1000", "3.000e-3", "3000", "21333", "4000", "needs about 9 GB of device memory"].map(String::from)
        );
    }
}
