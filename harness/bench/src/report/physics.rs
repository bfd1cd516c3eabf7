//! No figure above physics: a device-timed row whose GB/s by its own byte count exceeds 105% of
//! the copy bandwidth the same run measured on the same device, backend and precision, or whose
//! GFLOP/s by its executed count exceeds the device's nominal peak, has a wrong cost model. The
//! report lists every such row under its experiment; a test holds the published runs to none.

use polars::prelude::*;

use super::{fmt_num, frame, ReportCtx, ReportError, Table};
use fembench_core::Precision;

/// How far above the measured copy bandwidth a row may go before it is flagged (timing noise
/// and the copy kernel's own shortfall from the true ceiling).
pub const COPY_MARGIN: f64 = 1.05;

/// The column (1 where set) of a row whose flops ran on the TF32 tensor cores: its ceiling is
/// their peak, not the FP32 lanes'.
pub const TF32_COLUMN: &str = "tensor_tf32";

/// The column of a row whose f64 flops ran on the FP64 tensor cores (DMMA: cuBLAS' DGEMM, the
/// mma variants): 1 there, 0 for f64 rows on the FP64 lanes; absent in runs made before rows
/// said so.
pub const FP64_TENSOR_COLUMN: &str = "tensor_fp64";

/// One row above a ceiling.
#[derive(Debug, Clone, PartialEq)]
pub struct Breach {
    pub case_id: String,
    pub metric: String,
    pub on: String,
    /// "GB/s" or "GFLOP/s".
    pub what: &'static str,
    pub value: f64,
    pub ceiling: f64,
}

/// The device-timed, verified rows of an experiment above a ceiling. The device-bandwidth
/// experiment measures the ceilings and is not judged by them.
pub fn breaches(rows: &DataFrame, ctx: &ReportCtx) -> Result<Vec<Breach>, ReportError> {
    if frame::strs(rows, "experiment").is_ok_and(|e| e.first().is_some_and(|e| e == "device-bandwidth")) {
        return Ok(Vec::new());
    }
    let timed = frame::collect(
        frame::with_optional(rows, &["bandwidth_gbs", "gflops", "bytes", "memory_bytes", TF32_COLUMN], &[TF32_COLUMN])?.filter(
            col("status").eq(lit("ok")).and(col("backend").neq(lit("cpu"))).and(col("timer").str().starts_with(lit("device-event"))),
        ),
    )?;
    let s = |c: &str| frame::strs(&timed, c);
    let (case, metric, device, backend, precision) = (s("case_id")?, s("metric")?, s("device")?, s("backend")?, s("precision")?);
    let (gbs, gflops, bytes) = (frame::nums(&timed, "bandwidth_gbs")?, frame::nums(&timed, "gflops")?, frame::nums(&timed, "bytes")?);
    let (memory, tf32) = (frame::nums(&timed, "memory_bytes")?, frame::nums(&timed, TF32_COLUMN)?);
    // A case's working set: the device memory it holds, where any of its rows says (a long run's
    // row counts the bytes of all its steps, not what one step touches); else the row's bytes.
    let mut held: std::collections::HashMap<&str, f64> = std::collections::HashMap::new();
    for (c, &m) in case.iter().zip(&memory).filter(|(_, m)| m.is_finite()) {
        let e = held.entry(c.as_str()).or_insert(m);
        *e = e.max(m);
    }
    let mut out = Vec::new();
    for i in 0..timed.height() {
        let on = format!("{} {} {}", device[i], backend[i], precision[i]);
        let breach = |what, value: f64, ceiling: f64| Breach {
            case_id: case[i].clone(),
            metric: metric[i].clone(),
            on: on.clone(),
            what,
            value,
            ceiling,
        };
        let info = ctx.meta.devices.iter().find(|d| d.name == device[i] && d.backend.map(|b| b.as_str()) == Some(backend[i].as_str()));
        // A working set the L2 can hold between repetitions is served at cache speed: the
        // DRAM copy is no ceiling for it.
        let working_set = held.get(case[i].as_str()).copied().unwrap_or(bytes[i]);
        let cache_resident = info.is_some_and(|d| d.cache_bytes > 0 && working_set < 2.0 * d.cache_bytes as f64);
        if let Some(copy) = ctx.copy_gbs(&device[i], &backend[i], &precision[i]).filter(|_| !cache_resident) {
            if gbs[i].is_finite() && gbs[i] > COPY_MARGIN * copy {
                out.push(breach("GB/s", gbs[i], copy));
            }
        }
        let prec = if precision[i] == "f64" { Precision::F64 } else { Precision::F32 };
        let peak = if tf32[i] == 1.0 { info.and_then(|d| d.tf32_ceiling_gflops()) } else { info.and_then(|d| d.ceiling_gflops(prec)) };
        if let Some(peak) = peak {
            if gflops[i].is_finite() && gflops[i] > peak {
                out.push(breach("GFLOP/s", gflops[i], peak));
            }
        }
    }
    Ok(out)
}

/// The breaches as a report table, or none.
pub fn table(id: &str, breaches: &[Breach]) -> Option<Table> {
    (!breaches.is_empty()).then(|| Table {
        name: format!("{id}-above-physics"),
        title: format!("Rows above physics in {id} ({}): their cost model is wrong", breaches.len()),
        header: ["case", "metric", "device", "figure", "value", "ceiling", "over"].map(String::from).to_vec(),
        rows: breaches
            .iter()
            .map(|b| {
                vec![
                    b.case_id.clone(),
                    b.metric.clone(),
                    b.on.clone(),
                    b.what.into(),
                    fmt_num(b.value),
                    fmt_num(b.ceiling),
                    format!("{:.0}%", 100.0 * b.value / b.ceiling),
                ]
            })
            .collect(),
        notes: vec![format!(
            "Ceilings: GB/s, {:.0}% of the copy bandwidth this run measured on the same device, backend and precision (device-bandwidth), for working sets over twice the L2 (smaller ones the L2 serves between repetitions); GFLOP/s, the device's nominal peak for the precision (FP64 tensor cores included where the device has them; the TF32 tensor cores' for rows run on them). A device-timed row above one counts bytes or flops the kernel does not move or execute.",
            100.0 * COPY_MARGIN
        )],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::frame::of_columns;

    fn rows(gbs: &[f64], timer: &str) -> DataFrame {
        let n = gbs.len();
        let strs = vec![
            ("case_id", (0..n).map(|i| format!("c{i}")).collect()),
            ("metric", vec!["kernel".into(); n]),
            ("status", vec!["ok".into(); n]),
            ("backend", vec!["cuda".into(); n]),
            ("device", vec!["GPU".into(); n]),
            ("precision", vec!["f32".into(); n]),
            ("timer", vec![timer.into(); n]),
        ];
        let nums = vec![
            ("bandwidth_gbs", gbs.to_vec()),
            ("gflops", vec![f64::NAN; n]),
            ("bytes", vec![1e9; n]),
            ("memory_bytes", vec![f64::NAN; n]),
        ];
        of_columns(n, strs, nums).unwrap()
    }

    #[test]
    fn a_device_timed_row_above_the_copy_ceiling_is_flagged_and_a_host_timed_one_is_not() {
        let ctx = ReportCtx { meta: Default::default(), copy_gbs: vec![("GPU".into(), "cuda".into(), "f32".into(), 1000.0)] };
        let b = breaches(&rows(&[900.0, 1040.0, 1060.0, 2000.0], "device-event"), &ctx).unwrap();
        assert_eq!(b.iter().map(|b| b.case_id.as_str()).collect::<Vec<_>>(), ["c2", "c3"]);
        assert!(table("x", &b).unwrap().rows[1][6] == "200%");
        assert!(breaches(&rows(&[2000.0], "host-wall"), &ctx).unwrap().is_empty());
        // No copy measured in the run: nothing to judge by.
        let none = ReportCtx { meta: Default::default(), copy_gbs: vec![] };
        assert!(breaches(&rows(&[2000.0], "device-event"), &none).unwrap().is_empty());
        assert!(table("x", &[]).is_none());
    }

    #[test]
    fn a_tf32_row_is_judged_by_the_tensor_cores_peak() {
        let h100 = fembench_device::DeviceInfo {
            backend: Some(fembench_device::Backend::Cuda),
            name: "GPU".into(),
            compute_units: 132,
            clock_mhz: 1980,
            compute_capability: Some("9.0".into()),
            ..Default::default()
        };
        let fp32 = h100.peak_gflops(Precision::F32).unwrap();
        assert_eq!(h100.tf32_ceiling_gflops(), Some(8.0 * fp32));
        let mut ctx = ReportCtx { meta: Default::default(), copy_gbs: vec![] };
        ctx.meta.devices.push(h100);
        // Twice the FP32 lanes' peak: above physics on them, within the TF32 tensor cores'.
        let mut df = rows(&[f64::NAN, f64::NAN], "device-event");
        df.with_column(Column::new("gflops".into(), vec![2.0 * fp32; 2])).unwrap();
        df.with_column(Column::new(TF32_COLUMN.into(), vec![0.0, 1.0])).unwrap();
        let b = breaches(&df, &ctx).unwrap();
        assert_eq!(b.iter().map(|b| b.case_id.as_str()).collect::<Vec<_>>(), ["c0"]);
    }
}
