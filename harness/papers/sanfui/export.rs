//! `harness export --paper sanfui`: Sanfui and Sharma's linear-elastic box of 8-node hexahedra as
//! a Matrix Market stiffness matrix (the f64 reference assembly, 3 unknowns per node, no
//! constraints: the system every format of the paper stores) and the box for Gmsh and ParaView.

use std::path::{Path, PathBuf};

use super::reference::Prepared;
use super::spec::Problem_ as Problem;
use fembench_fem::vtu::Cell3;

/// Writes `K.mtx` (unknown 3 v + i is component i of node v), `box.msh` (MSH 2.2 hexahedra)
/// and `box.vtu` (each element's parity color, Fig. 9) for a box of nx x ny x nz nodes with the
/// experiment's material and spacing.
pub fn write_system(nodes: [usize; 3], dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let problem = Problem::default();
    let prep = Prepared::new(nodes, problem.spacing, problem.young, problem.poisson);
    let m = &prep.mesh;
    let header = format!(
        "fembench: Sanfui & Sharma's box of 8-node hexahedra, linear elasticity (E = {:e} Pa, nu = {}), {} x {} x {} nodes {:e} m apart\n\
         {} nodes, {} elements; unknown 3 v + i is the displacement component i of node v (0-based), no constraints",
        problem.young,
        problem.poisson,
        m.nodes[0],
        m.nodes[1],
        m.nodes[2],
        problem.spacing,
        m.num_nodes(),
        m.num_elements()
    );
    let k = dir.join("K.mtx");
    fembench_fem::mtx::write_csr(&k, &header, 3 * m.num_nodes(), &prep.pattern.row_ptr, &prep.pattern.col, &prep.reference)?;
    let points: Vec<[f64; 3]> = (0..m.num_nodes() as u32).map(|v| m.coords(v)).collect();
    let msh = dir.join("box.msh");
    std::fs::write(&msh, fembench_fem::vtu::msh22_cells(&points, (Cell3::Hexahedron, &m.elems)))?;
    let mut color = vec![0.0; m.num_elements()];
    prep.colors.iter().enumerate().for_each(|(c, es)| es.iter().for_each(|&e| color[e as usize] = c as f64));
    let vtu = dir.join("box.vtu");
    fembench_fem::vtu::write_cells(&vtu, &points, (Cell3::Hexahedron, &m.elems), &[], &[("color", &color)])?;
    Ok(vec![k, msh, vtu])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// K read back is the reference on its pattern, symmetric, and singular by rigid motions: a
    /// translation of the box has no forces (a shifted or scaled export fails); the mesh files
    /// hold every node and element.
    #[test]
    fn the_exported_box_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let nodes = [4, 3, 3];
        write_system(nodes, dir.path()).unwrap();
        let p = Problem::default();
        let prep = Prepared::new(nodes, p.spacing, p.young, p.poisson);
        let ((rows, cols, nnz), entries) = fembench_fem::mtx::read_coordinate(&dir.path().join("K.mtx")).unwrap();
        assert_eq!((rows, cols, nnz), (3 * 36, 3 * 36, prep.pattern.nnz()));
        let scale = entries.iter().fold(0.0f64, |m, e| m.max(e.2.abs()));
        let mut force = vec![0.0; rows];
        entries.iter().filter(|e| e.1 % 3 == 1).for_each(|&(i, _, v)| force[i] += v);
        assert!(force.iter().all(|f| f.abs() < 1e-9 * scale), "a translation in y is not force-free");
        let at = |i: usize, j: usize| entries.iter().find(|e| (e.0, e.1) == (i, j)).map(|e| e.2);
        assert!(entries.iter().all(|&(i, j, v)| at(j, i).is_some_and(|w| (w - v).abs() <= 1e-12 * scale)), "K is not symmetric");
        let first: Vec<f64> = entries.iter().take(prep.pattern.row_ptr[1] as usize).map(|e| e.2).collect();
        assert_eq!(first, prep.reference[..prep.pattern.row_ptr[1] as usize]);
        let vtu = std::fs::read_to_string(dir.path().join("box.vtu")).unwrap();
        assert!(vtu.contains(r#"NumberOfPoints="36" NumberOfCells="12""#), "{vtu}");
        assert!(std::fs::read_to_string(dir.path().join("box.msh")).unwrap().contains("$Elements\n12\n"));
    }
}
