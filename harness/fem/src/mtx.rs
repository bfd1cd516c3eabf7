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

/// A coordinate file as `write_csr` writes it: (rows, columns, entries) and each entry as
/// 0-based (row, column, value).
#[allow(clippy::type_complexity)]
pub fn read_coordinate(path: &Path) -> std::io::Result<((usize, usize, usize), Vec<(usize, usize, f64)>)> {
    let bad = |l: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: not a Matrix Market line: {l}", path.display()));
    let text = std::fs::read_to_string(path)?;
    let mut lines = text.lines().filter(|l| !l.starts_with('%'));
    let size = lines.next().ok_or_else(|| bad(""))?;
    let dims: Vec<usize> = size.split_whitespace().map(|v| v.parse().map_err(|_| bad(size))).collect::<Result<_, _>>()?;
    let [rows, cols, nnz] = dims[..] else { return Err(bad(size)) };
    let mut entries = Vec::with_capacity(nnz);
    for l in lines {
        let f: Vec<&str> = l.split_whitespace().collect();
        let parse = |k: usize| f.get(k).and_then(|v| v.parse::<f64>().ok()).ok_or_else(|| bad(l));
        let (i, j, v) = (parse(0)? as usize, parse(1)? as usize, parse(2)?);
        entries.push((i - 1, j - 1, v));
    }
    Ok(((rows, cols, nnz), entries))
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
