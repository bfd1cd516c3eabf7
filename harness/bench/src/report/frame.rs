//! Small typed accessors over result frames, so report code reads columns without `unwrap()`.

use polars::prelude::*;

use super::ReportError;
use crate::results::is_declared;

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

/// A list column of f64 (a series the benchmark stored) as one vector per row (null: empty).
pub fn lists(df: &DataFrame, column: &str) -> Result<Vec<Vec<f64>>, ReportError> {
    let c = df.column(column).map_err(|e| col_err(column, e))?;
    let c = c.cast(&DataType::List(Box::new(DataType::Float64))).map_err(|e| col_err(column, e))?;
    let ca = c.list().map_err(|e| col_err(column, e))?;
    (0..ca.len())
        .map(|i| match ca.get_as_series(i) {
            Some(s) => Ok(s.f64().map_err(|e| col_err(column, e))?.iter().map(|v| v.unwrap_or(f64::NAN)).collect()),
            None => Ok(Vec::new()),
        })
        .collect()
}

fn query_err(e: PolarsError) -> ReportError {
    ReportError::Column { column: "(query)".into(), detail: e.to_string() }
}

/// Runs a lazy query.
pub fn collect(query: LazyFrame) -> Result<DataFrame, ReportError> {
    query.collect().map_err(query_err)
}

/// The frame with a null-free f64 column of NaN added for every named column it lacks, so that a
/// query can read columns that older runs or other methods did not write. Only a column the rows
/// may hold is optional (`declared`: the benchmark's `COLUMNS`; [`is_declared`]): one that is
/// neither in the frame nor declared is an error naming it, so a column renamed on the run side
/// fails the report instead of printing "-".
pub fn with_optional(df: &DataFrame, columns: &[&str], declared: &[&str]) -> Result<LazyFrame, ReportError> {
    if let Some(c) = columns.iter().find(|c| df.column(c).is_err() && !is_declared(c, declared)) {
        let detail = "read by a report, absent from the rows and declared by neither the benchmark nor the runner: renamed?";
        return Err(ReportError::Column { column: c.to_string(), detail: detail.into() });
    }
    let missing: Vec<Expr> = columns.iter().filter(|c| df.column(c).is_err()).map(|c| lit(f64::NAN).alias(*c)).collect();
    let cast: Vec<Expr> = columns.iter().map(|c| col(*c).cast(DataType::Float64).fill_null(lit(f64::NAN))).collect();
    let lf = df.clone().lazy();
    let lf = if missing.is_empty() { lf } else { lf.with_columns(missing) };
    Ok(lf.with_columns(cast))
}

/// The external peers of a run: each (metric, library and version) once, in row order; empty
/// where the run has none (or predates the `library` column).
pub fn libraries(df: &DataFrame) -> Vec<(String, String)> {
    let (Ok(metric), Ok(library)) = (strs(df, "metric"), strs(df, "library")) else { return Vec::new() };
    let mut seen: Vec<(String, String)> = Vec::new();
    for (m, l) in metric.into_iter().zip(library) {
        if !l.is_empty() && !seen.iter().any(|(sm, sl)| *sm == m && *sl == l) {
            seen.push((m, l));
        }
    }
    seen
}

/// A note naming the external peers' libraries and versions, if the run has any.
pub fn libraries_note(df: &DataFrame) -> Option<String> {
    let libs = libraries(df);
    let named: Vec<String> = libs.iter().map(|(m, l)| format!("{m}: {l}")).collect();
    (!named.is_empty()).then(|| format!("External peers (Python, run by the harness as a subprocess on the same device, checked against the same f64 reference) in this run: {}.", named.join("; ")))
}

/// `column` equals one of `values`.
pub fn one_of(column: &str, values: &[&str]) -> Expr {
    values.iter().fold(lit(false), |acc, v| acc.or(col(column).eq(lit(*v))))
}

/// The groups of rows with equal `keys`, in the keys' sorted order (rows keep their order within a
/// group): a polars stable sort, then one slice per run of equal keys.
pub fn groups(df: &DataFrame, keys: &[&str]) -> Result<Vec<DataFrame>, ReportError> {
    if keys.is_empty() || df.height() == 0 {
        return Ok(if df.height() == 0 { Vec::new() } else { vec![df.clone()] });
    }
    let by: Vec<PlSmallStr> = keys.iter().map(|k| PlSmallStr::from(*k)).collect();
    let sorted = collect(df.clone().lazy().sort(by, SortMultipleOptions::default().with_maintain_order(true)))?;
    let cols: Vec<&Column> = keys.iter().map(|k| sorted.column(k).map_err(|e| col_err(k, e))).collect::<Result<_, _>>()?;
    let same = |a: usize, b: usize| cols.iter().all(|c| matches!((c.get(a), c.get(b)), (Ok(x), Ok(y)) if x == y));
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=sorted.height() {
        if i == sorted.height() || !same(start, i) {
            out.push(sorted.slice(start as i64, i - start));
            start = i;
        }
    }
    Ok(out)
}

/// The first value of a string column (empty for an empty frame).
pub fn first_str(df: &DataFrame, column: &str) -> Result<String, ReportError> {
    Ok(strs(df, column)?.into_iter().next().unwrap_or_default())
}

/// The first value of a numeric column (NaN for an empty frame).
pub fn first_num(df: &DataFrame, column: &str) -> Result<f64, ReportError> {
    Ok(nums(df, column)?.into_iter().next().unwrap_or(f64::NAN))
}

/// An error naming the first of `columns` that the frame lacks.
pub fn require(df: &DataFrame, columns: &[&str]) -> Result<(), ReportError> {
    for c in columns {
        df.column(c).map_err(|e| col_err(c, e))?;
    }
    Ok(())
}

/// The frame with a string column added.
pub fn with_strs(mut df: DataFrame, column: &str, values: Vec<String>) -> Result<DataFrame, ReportError> {
    df.with_column(Column::new(column.into(), values)).map_err(|e| col_err(column, e))?;
    Ok(df)
}

/// A frame of `rows` rows from string and number columns (how reports' unit tests build rows).
pub fn of_columns(rows: usize, strs: Vec<(&str, Vec<String>)>, nums: Vec<(&str, Vec<f64>)>) -> Result<DataFrame, ReportError> {
    let columns: Vec<Column> = strs
        .into_iter()
        .map(|(name, v)| Column::new(name.into(), v))
        .chain(nums.into_iter().map(|(name, v)| Column::new(name.into(), v)))
        .collect();
    DataFrame::new(rows, columns).map_err(|e| col_err("(new frame)", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_sorted_by_key_and_keep_row_order_inside() {
        let df = df! { "k" => ["b", "a", "b", "a", "c"], "n" => [1i64, 2, 1, 1, 3], "v" => [1.0, 2.0, 3.0, 4.0, 5.0] }.unwrap();
        let g = groups(&df, &["k", "n"]).unwrap();
        let got: Vec<(String, Vec<f64>)> =
            g.iter().map(|g| (format!("{}{}", first_str(g, "k").unwrap(), first_num(g, "n").unwrap()), nums(g, "v").unwrap())).collect();
        let want = [("a1", vec![4.0]), ("a2", vec![2.0]), ("b1", vec![1.0, 3.0]), ("c3", vec![5.0])];
        assert_eq!(got, want.map(|(k, v)| (k.to_string(), v)));
        assert!(groups(&df.slice(0, 0), &["k"]).unwrap().is_empty());
    }

    #[test]
    fn optional_columns_are_added_as_nan_only_where_declared_and_required_ones_are_named() {
        let df = df! { "a" => [1i64, 2] }.unwrap();
        let out = collect(with_optional(&df, &["a", "b", "gflops"], &["b"]).unwrap()).unwrap();
        assert!(nums(&out, "gflops").unwrap().iter().all(|v| v.is_nan()), "a row's own column is declared");
        let err = with_optional(&df, &["a", "renamed"], &["b"]).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("renamed"), "{err}");
        assert_eq!(nums(&out, "a").unwrap(), vec![1.0, 2.0]);
        assert!(nums(&out, "b").unwrap().iter().all(|v| v.is_nan()));
        let err = require(&df, &["a", "zz"]).unwrap_err().to_string();
        assert!(err.contains("zz"), "{err}");
    }
}
