//! The attainable-bandwidth table and the bandwidth-against-size figures, from stored rows.

use std::collections::BTreeMap;

use polars::prelude::*;

use super::spec::StreamKernel;
use super::spec::{FigureName, TableName};
use crate::benchmark::{Report, Spec};
use crate::report::{fmt_num, frame, Figure, ReportError, Series, Table};
use crate::report::{ReportCtx, ReportItem};

/// The verified warm bandwidth curves of one (backend, device, precision): each kernel's
/// (array MiB, GB/s) points in size order, kernels in the suite's order.
pub(crate) struct Curves {
    pub(crate) backend: String,
    pub(crate) device: String,
    pub(crate) precision: String,
    pub(crate) kernels: Vec<(String, Vec<(f64, f64)>)>,
}

/// The curves of a bandwidth frame, one per (backend, device, precision) in sorted order: a polars
/// lazy query filters and sorts the rows, and they are cut into groups.
pub(crate) fn curves(df: &DataFrame) -> Result<Vec<Curves>, ReportError> {
    frame::require(df, &["backend", "device", "precision", "kernel", "array_mib", "status", "mode", "bandwidth_gbs"])?;
    let ok = col("status").eq(lit("ok")).and(col("mode").eq(lit("warm"))).and(col("bandwidth_gbs").cast(DataType::Float64).is_finite());
    let rows = frame::collect(df.clone().lazy().filter(ok).sort(["array_mib"], SortMultipleOptions::default().with_maintain_order(true)))?;
    let mut out = Vec::new();
    for g in frame::groups(&rows, &["backend", "device", "precision"])? {
        let mut kernels = Vec::new();
        for k in frame::groups(&g, &["kernel"])? {
            let points = frame::nums(&k, "array_mib")?.into_iter().zip(frame::nums(&k, "bandwidth_gbs")?).collect();
            kernels.push((frame::first_str(&k, "kernel")?, points));
        }
        kernels.sort_by_key(|(k, _)| kernel_order(k));
        out.push(Curves {
            backend: frame::first_str(&g, "backend")?,
            device: frame::first_str(&g, "device")?,
            precision: frame::first_str(&g, "precision")?,
            kernels,
        });
    }
    Ok(out)
}

pub(crate) fn kernel_order(name: &str) -> usize {
    StreamKernel::ALL.iter().position(|k| k.as_str() == name).unwrap_or(usize::MAX)
}

/// The attainable bandwidth of each backend/device/precision in a bandwidth frame: the best
/// streaming-kernel figure at the largest measured size (the DRAM regime), GB/s, over verified
/// warm rows. A polars lazy query: filter, the figure at the largest size per kernel, the best
/// kernel per device.
pub fn attainable_gbs(df: &DataFrame) -> Result<BTreeMap<(String, String, String), f64>, ReportError> {
    let is_stream = StreamKernel::ALL.iter().filter(|k| k.is_stream()).fold(lit(false), |acc, k| acc.or(col("kernel").eq(lit(k.as_str()))));
    let keys = [col("backend"), col("device"), col("precision")];
    let best = df
        .clone()
        .lazy()
        .filter(col("status").eq(lit("ok")).and(col("mode").eq(lit("warm"))).and(is_stream).and(col("bandwidth_gbs").is_finite()))
        .group_by([keys[0].clone(), keys[1].clone(), keys[2].clone(), col("kernel")])
        .agg([col("bandwidth_gbs").sort_by([col("array_mib")], SortMultipleOptions::default()).last()])
        .group_by(keys)
        .agg([col("bandwidth_gbs").max()])
        .collect()
        .map_err(|e| ReportError::Column { column: "bandwidth_gbs".into(), detail: e.to_string() })?;
    let (b, d, p, g) = (
        frame::strs(&best, "backend")?,
        frame::strs(&best, "device")?,
        frame::strs(&best, "precision")?,
        frame::nums(&best, "bandwidth_gbs")?,
    );
    Ok((0..best.height()).map(|i| ((b[i].clone(), d[i].clone(), p[i].clone()), g[i])).collect())
}

pub(crate) fn attainable_table(id: &str, curves: &[Curves]) -> Table {
    let mut rows = Vec::new();
    for c in curves {
        let memcpy = c.kernels.iter().find(|(k, _)| k == "memcpy").map(|(_, p)| p.as_slice()).unwrap_or_default();
        for (k, pts) in &c.kernels {
            let Some(&(largest, at_largest)) = pts.last() else { continue };
            let &(best_mib, best) = pts.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap_or(&(largest, at_largest));
            let vs = memcpy
                .iter()
                .rfind(|(m, _)| m.to_bits() == largest.to_bits())
                .map(|(_, m)| format!("{:.1}%", 100.0 * at_largest / m))
                .unwrap_or_else(|| "-".into());
            rows.push(vec![
                c.backend.clone(),
                c.device.clone(),
                c.precision.clone(),
                k.clone(),
                fmt_num(largest),
                fmt_num(at_largest),
                vs,
                fmt_num(best),
                fmt_num(best_mib),
            ]);
        }
    }
    Table {
        name: format!("{id}-attainable"),
        title: "Attainable device bandwidth (GB/s, bytes read + written, median of repetitions)".into(),
        header: ["backend", "device", "precision", "kernel", "largest MiB", "GB/s at largest", "vs memcpy", "best GB/s", "best at MiB"]
            .map(String::from)
            .to_vec(),
        rows,
        notes: vec![
            "memcpy is the API's device-to-device copy on the same device and size; 'vs memcpy' compares at the largest size.".into(),
            "Sizes per array; sizes under the last-level cache measure the cache, not DRAM.".into(),
        ],
    }
}

pub(crate) fn slug(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
        .collect::<String>()
        .split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

pub(crate) fn size_figures(id: &str, curves: &[Curves]) -> Vec<Figure> {
    curves
        .iter()
        .map(|c| Figure {
            name: format!("{id}-{}-{}-{}", c.backend, c.precision, slug(&c.device)),
            title: format!("{} ({}, {}): bandwidth vs array size", c.device, c.backend, c.precision),
            x_label: "array size (MiB)".into(),
            y_label: "GB/s".into(),
            log_x: true,
            log_y: false,
            series: c.kernels.iter().map(|(k, pts)| Series { label: k.clone(), points: pts.clone(), reference: false }).collect(),
        })
        .collect()
}

/// The report side: tables and figures from a run's rows, never a device.
impl Report for super::benchmark::DeviceBandwidth {
    fn report(spec: &Spec<Self>, rows: &DataFrame, _ctx: &ReportCtx) -> Result<Vec<ReportItem>, ReportError> {
        let data = curves(rows)?;
        let mut items = Vec::new();
        for t in &spec.outputs.tables {
            match t {
                TableName::AttainableBandwidth => items.push(ReportItem::Table(attainable_table(&spec.id, &data))),
            }
        }
        for f in &spec.outputs.figures {
            match f {
                FigureName::BandwidthVsSize => items.extend(size_figures(&spec.id, &data).into_iter().map(ReportItem::Figure)),
            }
        }
        Ok(items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attainable_is_the_best_stream_kernel_at_the_largest_verified_warm_size() {
        let df = df! {
            "backend" => ["cuda", "cuda", "cuda", "cuda", "cuda", "cuda", "opencl"],
            "device" => ["H", "H", "H", "H", "H", "H", "H"],
            "precision" => ["f32"; 7],
            "kernel" => ["copy", "copy", "triad", "gather", "triad", "copy", "copy"],
            "array_mib" => [1.0, 1024.0, 1024.0, 1024.0, 2048.0, 4096.0, 512.0],
            "status" => ["ok", "ok", "ok", "ok", "failed", "ok", "ok"],
            "mode" => ["warm", "warm", "warm", "warm", "warm", "cold", "warm"],
            // Cache-resident copy fastest, gather not a stream kernel, the failed and the cold row
            // larger: none of them is the attainable figure.
            "bandwidth_gbs" => [9000.0, 3000.0, 3100.0, 5000.0, 7000.0, 8000.0, 2500.0],
        }
        .unwrap();
        let got = attainable_gbs(&df).unwrap();
        let key = |b: &str| (b.to_string(), "H".to_string(), "f32".to_string());
        assert_eq!(got.len(), 2);
        assert_eq!(got[&key("cuda")], 3100.0);
        assert_eq!(got[&key("opencl")], 2500.0);
    }
}
