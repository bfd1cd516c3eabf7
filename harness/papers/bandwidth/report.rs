//! The attainable-bandwidth table and the bandwidth-against-size figures, from stored rows.

use std::collections::BTreeMap;

use polars::prelude::*;

use super::spec::*;
use crate::report::{fmt_num, frame, Figure, ReportError, Series, Table};

/// The bandwidth rows a report needs, read once.
pub(crate) struct ReportRows {
    pub(crate) backend: Vec<String>,
    pub(crate) device: Vec<String>,
    pub(crate) precision: Vec<String>,
    pub(crate) kernel: Vec<String>,
    pub(crate) mib: Vec<f64>,
    pub(crate) status: Vec<String>,
    pub(crate) mode: Vec<String>,
    pub(crate) gbs: Vec<f64>,
}

impl ReportRows {
    pub(crate) fn read(df: &DataFrame) -> Result<Self, ReportError> {
        Ok(ReportRows {
            backend: frame::strs(df, "backend")?,
            device: frame::strs(df, "device")?,
            precision: frame::strs(df, "precision")?,
            kernel: frame::strs(df, "kernel")?,
            mib: frame::nums(df, "array_mib")?,
            status: frame::strs(df, "status")?,
            mode: frame::strs(df, "mode")?,
            gbs: frame::nums(df, "bandwidth_gbs")?,
        })
    }

    /// (backend, device, precision) -> kernel -> size -> GB/s, for verified warm rows.
    pub(crate) fn grouped(&self) -> BTreeMap<(String, String, String), BTreeMap<String, Vec<(f64, f64)>>> {
        let mut g: BTreeMap<_, BTreeMap<String, Vec<(f64, f64)>>> = BTreeMap::new();
        for i in 0..self.backend.len() {
            if self.status[i] != "ok" || self.mode[i] != "warm" || !self.gbs[i].is_finite() {
                continue;
            }
            g.entry((self.backend[i].clone(), self.device[i].clone(), self.precision[i].clone()))
                .or_default()
                .entry(self.kernel[i].clone())
                .or_default()
                .push((self.mib[i], self.gbs[i]));
        }
        for k in g.values_mut() {
            for pts in k.values_mut() {
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            }
        }
        g
    }
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

pub(crate) fn attainable_table(id: &str, data: &ReportRows) -> Table {
    let mut rows = Vec::new();
    for ((backend, device, precision), kernels) in data.grouped() {
        let memcpy_at: BTreeMap<u64, f64> =
            kernels.get("memcpy").map(|p| p.iter().map(|(m, g)| (m.to_bits(), *g)).collect()).unwrap_or_default();
        let mut names: Vec<&String> = kernels.keys().collect();
        names.sort_by_key(|k| kernel_order(k));
        for k in names {
            let pts = &kernels[k];
            let Some(&(largest, at_largest)) = pts.last() else { continue };
            let &(best_mib, best) = pts.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap_or(&(largest, at_largest));
            let vs = memcpy_at.get(&largest.to_bits()).map(|m| format!("{:.1}%", 100.0 * at_largest / m)).unwrap_or_else(|| "-".into());
            rows.push(vec![
                backend.clone(),
                device.clone(),
                precision.clone(),
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

pub(crate) fn size_figures(id: &str, data: &ReportRows) -> Vec<Figure> {
    data.grouped()
        .into_iter()
        .map(|((backend, device, precision), kernels)| {
            let mut names: Vec<&String> = kernels.keys().collect();
            names.sort_by_key(|k| kernel_order(k));
            Figure {
                name: format!("{id}-{backend}-{precision}-{}", slug(&device)),
                title: format!("{device} ({backend}, {precision}): bandwidth vs array size"),
                x_label: "array size (MiB)".into(),
                y_label: "GB/s".into(),
                log_x: true,
                log_y: false,
                series: names.into_iter().map(|k| Series { label: k.clone(), points: kernels[k].clone(), reference: false }).collect(),
            }
        })
        .collect()
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
