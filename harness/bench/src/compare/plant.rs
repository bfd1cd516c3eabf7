//! A planted slowdown: a copy of a run folder whose timed rows all take `factor` times as long.
//! It exists to test a regression gate (`harness plant`, used by `.ci/run`): a gate that passes
//! a run against itself must fail it against its planted copy. Nothing here measures.

use std::path::{Path, PathBuf};

use polars::prelude::*;

use super::CompareError;
use crate::results::{write_file_atomic, RunDir};

/// Columns that scale with time, and those that scale with its inverse.
const TIMES: [&str; 7] = ["time_median_s", "time_min_s", "time_max_s", "time_mean_s", "time_stddev_s", "time_ci_low_s", "time_ci_high_s"];
const RATES: [&str; 3] = ["bandwidth_gbs", "gflops", "paper_gflops"];

/// Copies `run` to `out` (a new folder) with every time multiplied by `factor`; returns the rows
/// files rewritten. The copy's meta.json names it as planted.
pub fn plant_slowdown(run: &Path, out: &Path, factor: f64) -> Result<usize, CompareError> {
    let err = |path: &Path, detail: String| CompareError::Rows { path: path.to_path_buf(), detail };
    if !(factor.is_finite() && factor > 0.0) {
        return Err(err(run, format!("the factor must be a positive number (got {factor})")));
    }
    RunDir::open(run)?;
    if out.exists() {
        return Err(err(out, "exists already: name a new folder".into()));
    }
    copy_tree(run, out).map_err(|e| err(out, e.to_string()))?;
    let meta_path = out.join("meta.json");
    let text = std::fs::read_to_string(&meta_path).map_err(|e| err(&meta_path, e.to_string()))?;
    let mut meta: serde_json::Value = serde_json::from_str(&text).map_err(|e| err(&meta_path, e.to_string()))?;
    if let Some(id) = meta.get("run_id").and_then(|v| v.as_str()).map(|s| format!("{s}-planted-x{factor}")) {
        meta["run_id"] = serde_json::Value::String(id);
    }
    write_file_atomic(&meta_path, serde_json::to_string_pretty(&meta).unwrap_or_default().as_bytes())?;
    let mut files = 0;
    for file in rows_files(&out.join("rows")).map_err(|e| err(out, e.to_string()))? {
        let df = ParquetReader::new(std::fs::File::open(&file).map_err(|e| err(&file, e.to_string()))?)
            .finish()
            .map_err(|e| err(&file, e.to_string()))?;
        let mut df = scaled(df, factor).map_err(|e| err(&file, e.to_string()))?;
        let mut bytes = Vec::new();
        ParquetWriter::new(&mut bytes).finish(&mut df).map_err(|e| err(&file, e.to_string()))?;
        write_file_atomic(&file, &bytes)?;
        files += 1;
    }
    Ok(files)
}

/// The rows with every time column and every sample times `factor`, rates divided by it.
fn scaled(mut df: DataFrame, factor: f64) -> PolarsResult<DataFrame> {
    for (names, by) in [(&TIMES[..], factor), (&RATES[..], 1.0 / factor)] {
        for &c in names {
            if let Ok(col) = df.column(c) {
                let v = col.cast(&DataType::Float64)?.f64()?.clone() * by;
                df.with_column(Column::new(c.into(), v.into_series()))?;
            }
        }
    }
    if let Ok(col) = df.column("samples_s") {
        let list = col.list()?.clone();
        let rows: Vec<Series> = (0..list.len())
            .map(|i| {
                let s: Vec<f64> = list
                    .get_as_series(i)
                    .and_then(|s| s.cast(&DataType::Float64).ok())
                    .map(|s| s.f64().map(|ca| ca.into_no_null_iter().map(|t| t * factor).collect()).unwrap_or_default())
                    .unwrap_or_default();
                Series::new("".into(), s)
            })
            .collect();
        df.with_column(Column::new("samples_s".into(), rows))?;
    }
    Ok(df)
}

fn rows_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            out.extend(rows_files(&p)?);
        } else if p.extension().is_some_and(|x| x == "parquet") {
            out.push(p);
        }
    }
    out.sort();
    Ok(out)
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let target = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_tree(&e.path(), &target)?;
        } else if e.file_name() != "lock" {
            std::fs::copy(e.path(), target)?;
        }
    }
    Ok(())
}
