//! `harness export`: an assembled system as Matrix Market files (the matrix over the free
//! degrees of freedom and the right-hand side) plus the coordinates of each unknown, to load in
//! SciPy (`scipy.io.mmread`) or Julia (`MatrixMarket.mmread`), through `fembench_fem::mtx`.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::system::{Problem, System};

/// Writes `A.mtx` (coordinate, real, general), `b.mtx` (array, real) and `unknowns.csv`
/// (dof, node, x, y) into `dir`; returns the paths written.
pub fn write_system(p: &Problem, s: &System, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let header = format!(
        "fembench: steady heat problem of Cecka, Lew & Darve 2011, plate with holes, refinement level {}, Lagrange order {}\n\
         {} nodes, {} elements; prescribed nodes are not unknowns (their values are folded into b)",
        p.level,
        p.mesh.order,
        p.mesh.num_nodes(),
        p.ne()
    );
    let a_path = dir.join("A.mtx");
    fembench_fem::mtx::write_csr(&a_path, &header, p.n_free, &p.row_ptr, &p.col, &s.vals)?;
    let b_path = dir.join("b.mtx");
    fembench_fem::mtx::write_vector(&b_path, &header, &s.rhs)?;
    let c_path = dir.join("unknowns.csv");
    let mut w = BufWriter::new(std::fs::File::create(&c_path)?);
    writeln!(w, "dof,node,x,y")?;
    for (node, &d) in p.dof.iter().enumerate() {
        if d >= 0 {
            writeln!(w, "{d},{node},{:.17e},{:.17e}", p.mesh.x[node], p.mesh.y[node])?;
        }
    }
    w.flush()?;
    Ok(vec![a_path, b_path, c_path])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cecka::problem::system::assemble_serial;

    /// Reads the files back and checks them against the system: sizes, the product of the
    /// exported matrix with a known vector (a transposed or shifted export fails), and b.
    #[test]
    fn exported_files_round_trip() {
        let p = Problem::new(0, 2);
        let s = assemble_serial(&p);
        let dir = tempfile::tempdir().unwrap();
        write_system(&p, &s, dir.path()).unwrap();
        let a = std::fs::read_to_string(dir.path().join("A.mtx")).unwrap();
        let mut lines = a.lines().filter(|l| !l.starts_with('%'));
        let dims: Vec<usize> = lines.next().unwrap().split_whitespace().map(|v| v.parse().unwrap()).collect();
        assert_eq!(dims, vec![p.n_free, p.n_free, p.nnz()]);
        // y = A x for x_j = j + 1, from the file and from CSR.
        let mut y_file = vec![0.0; p.n_free];
        for l in lines {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (i, j, v): (usize, usize, f64) = (f[0].parse().unwrap(), f[1].parse().unwrap(), f[2].parse().unwrap());
            y_file[i - 1] += v * j as f64;
        }
        for r in 0..p.n_free {
            let y: f64 = (p.row_ptr[r] as usize..p.row_ptr[r + 1] as usize).map(|k| s.vals[k] * (p.col[k] + 1) as f64).sum();
            assert!((y - y_file[r]).abs() <= 1e-12 * y.abs().max(1.0), "row {r}: {y} vs {}", y_file[r]);
        }
        let b = std::fs::read_to_string(dir.path().join("b.mtx")).unwrap();
        let vals: Vec<f64> = b.lines().filter(|l| !l.starts_with('%')).skip(1).map(|l| l.trim().parse().unwrap()).collect();
        assert_eq!(vals, s.rhs);
        let c = std::fs::read_to_string(dir.path().join("unknowns.csv")).unwrap();
        assert_eq!(c.lines().count(), p.n_free + 1);
    }
}
