//! Small typed accessors over result frames, so report code reads columns without `unwrap()`.

use polars::prelude::*;

use super::ReportError;

fn col_err(column: &str, e: PolarsError) -> ReportError {
    ReportError::Column { column: column.into(), detail: e.to_string() }
}

/// A string column as owned values (nulls as empty strings).
pub fn strs(df: &DataFrame, column: &str) -> Result<Vec<String>, ReportError> {
    let c = df.column(column).map_err(|e| col_err(column, e))?;
    let ca = c.str().map_err(|e| col_err(column, e))?;
    Ok(ca.iter().map(|v| v.unwrap_or("").to_string()).collect())
}

/// A numeric column as f64 (nulls as NaN).
pub fn nums(df: &DataFrame, column: &str) -> Result<Vec<f64>, ReportError> {
    let c = df.column(column).map_err(|e| col_err(column, e))?;
    let c = c.cast(&DataType::Float64).map_err(|e| col_err(column, e))?;
    let ca = c.f64().map_err(|e| col_err(column, e))?;
    Ok(ca.iter().map(|v| v.unwrap_or(f64::NAN)).collect())
}
