//! Matrix Market output (coordinate and array formats), to load an assembled system in SciPy
//! (`scipy.io.mmread`) or Julia (`MatrixMarket.mmread`). Values are written with 17 significant
//! digits, so an f64 reads back bit for bit.

use std::io::{BufWriter, Write};
use std::path::Path;

/// A CSR matrix, `%`-comment lines first (each line of `comment` becomes one).
pub fn write_csr(path: &Path, comment: &str, cols: usize, row_ptr: &[u32], col: &[u32], vals: &[f64]) -> std::io::Result<()> {
    let rows = row_ptr.len().saturating_sub(1);
    let mut w = BufWriter::new(std::fs::File::create(path)?);
    writeln!(w, "%%MatrixMarket matrix coordinate real general")?;
    for l in comment.lines() {
        writeln!(w, "% {l}")?;
    }
    writeln!(w, "{rows} {cols} {}", vals.len())?;
    for r in 0..rows {
        for k in row_ptr[r] as usize..row_ptr[r + 1] as usize {
            writeln!(w, "{} {} {:.17e}", r + 1, col[k] + 1, vals[k])?;
        }
    }
    w.flush()
}

/// A dense column vector (array format).
pub fn write_vector(path: &Path, comment: &str, v: &[f64]) -> std::io::Result<()> {
    let mut w = BufWriter::new(std::fs::File::create(path)?);
    writeln!(w, "%%MatrixMarket matrix array real general")?;
    for l in comment.lines() {
        writeln!(w, "% {l}")?;
    }
    writeln!(w, "{} 1", v.len())?;
    for x in v {
        writeln!(w, "{x:.17e}")?;
    }
    w.flush()
}
