//! `harness export --paper acoo`: the parallel-plate capacitor of the a-COO paper as Matrix Market
//! files (the f64 reference assembly over the free nodes, and its right-hand side from the plates'
//! potentials), the unknowns' coordinates, and the mesh for Gmsh and ParaView.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::capacitor::{mesh, Capacitor};

/// Writes `A.mtx`, `b.mtx`, `unknowns.csv` (dof, node, x, y), `capacitor.msh` (MSH 2.2: the
/// triangles, and the Dirichlet edges as physical groups 10 + i, one per potential) and
/// `capacitor.vtu` (each node's unknown, -1 where prescribed, and its prescribed potential).
pub fn write_system(level: usize, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let m = mesh(level);
    let c = Capacitor::from_mesh(&m);
    let (vals, rhs) = c.assemble_by_sorting();
    let header = format!(
        "fembench: a-COO's parallel-plate capacitor (Laplace's equation, P1 triangles), refinement level {level}\n\
         {} nodes, {} triangles; nodes on the plates and the box are not unknowns (their potentials are folded into b)",
        c.num_nodes(),
        c.num_elements()
    );
    let (a, b, u) = (dir.join("A.mtx"), dir.join("b.mtx"), dir.join("unknowns.csv"));
    fembench_fem::mtx::write_csr(&a, &header, c.n_free, &c.pattern.row_ptr, &c.pattern.col, &vals)?;
    fembench_fem::mtx::write_vector(&b, &header, &rhs)?;
    let mut w = BufWriter::new(std::fs::File::create(&u)?);
    writeln!(w, "dof,node,x,y")?;
    for (node, &d) in c.dof.iter().enumerate().filter(|(_, &d)| d >= 0) {
        writeln!(w, "{d},{node},{:.17e},{:.17e}", c.x[node], c.y[node])?;
    }
    w.flush()?;
    let msh = dir.join("capacitor.msh");
    std::fs::write(&msh, fembench_fem::gmsh::to_msh22(&m).0)?;
    let vtu = dir.join("capacitor.vtu");
    let unknown: Vec<f64> = c.dof.iter().map(|&d| d as f64).collect();
    fembench_fem::vtu::write_triangles(&vtu, &c.x, &c.y, &c.tris, &[("unknown", &unknown), ("prescribed", &c.g)], &[])?;
    Ok(vec![a, b, u, msh, vtu])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The files read back give the system: its sizes, its product with a known vector (a
    /// transposed or shifted export fails) and its right-hand side; the mesh files name every
    /// node and triangle.
    #[test]
    fn the_exported_capacitor_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        write_system(0, dir.path()).unwrap();
        let c = Capacitor::new(0);
        let (vals, rhs) = c.assemble_by_sorting();
        let (n, entries) = fembench_fem::mtx::read_coordinate(&dir.path().join("A.mtx")).unwrap();
        assert_eq!(n, (c.n_free, c.n_free, c.pattern.nnz()));
        let x: Vec<f64> = (0..c.n_free).map(|j| (j + 1) as f64).collect();
        let mut want = vec![0.0; c.n_free];
        super::super::capacitor::spmv(&c.pattern, &vals, &x, &mut want);
        let mut got = vec![0.0; c.n_free];
        entries.iter().for_each(|&(i, j, v)| got[i] += v * x[j]);
        assert!(got.iter().zip(&want).all(|(a, b)| (a - b).abs() <= 1e-12 * b.abs().max(1.0)));
        let b = std::fs::read_to_string(dir.path().join("b.mtx")).unwrap();
        let b: Vec<f64> = b.lines().filter(|l| !l.starts_with('%')).skip(1).map(|l| l.trim().parse().unwrap()).collect();
        assert_eq!(b, rhs);
        let msh = std::fs::read_to_string(dir.path().join("capacitor.msh")).unwrap();
        assert!(msh.contains(&format!("$Nodes\n{}\n", c.num_nodes())));
        let vtu = std::fs::read_to_string(dir.path().join("capacitor.vtu")).unwrap();
        assert!(vtu.contains(&format!(r#"NumberOfPoints="{}" NumberOfCells="{}""#, c.num_nodes(), c.num_elements())));
    }
}
