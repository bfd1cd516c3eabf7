//! `harness export --paper banas`: Banaś et al.'s element stiffness matrices of linear elasticity
//! on prisms of degree p (the f64 reference, Algorithm 2) as one block-diagonal Matrix Market
//! matrix, with the prism mesh for Gmsh and ParaView.

use std::path::{Path, PathBuf};

use super::elasticity::{element_dofs, element_matrices, PrismMesh};
use super::prism::{shape_functions, Reference};
use fembench_fem::vtu::Cell3;

/// Writes `element_matrices.mtx` (element e's A^e is the diagonal block of rows and columns
/// e 3N_sh .. (e + 1) 3N_sh; dof 3 s + i is component i of shape function s), `prisms.msh`
/// (MSH 2.2 6-node prisms, the vertices the geometry is mapped from) and `prisms.vtu` (Young's
/// modulus and Poisson's ratio per element) for the first `elements` prisms of the paper's box.
pub fn write_elements(degree: usize, elements: usize, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let bad = |e: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, e);
    if !(1..=7).contains(&degree) {
        return Err(bad(format!("degree {degree}: the prisms have quadrature for degrees 1..7")));
    }
    std::fs::create_dir_all(dir)?;
    let re = Reference::new(degree).map_err(bad)?;
    let mesh = PrismMesh::with_elements(elements);
    let all: Vec<usize> = (0..mesh.len()).collect();
    let a = element_matrices(&re, &mesh, &all);
    let nd = element_dofs(shape_functions(degree));
    let header = format!(
        "fembench: Banas, Plaszewski & Maciol's element stiffness matrices, 3D linear elasticity on prisms of degree {degree} \
         ({} shape functions, {} quadrature points)\n{} elements, each a diagonal block of {nd} x {nd}: rows and columns \
         e {nd} .. (e + 1) {nd} - 1 (0-based) are element e's; not assembled",
        shape_functions(degree),
        re.nq(),
        mesh.len()
    );
    let (row_ptr, col): (Vec<u32>, Vec<u32>) = block_diagonal(mesh.len(), nd);
    let path = dir.join("element_matrices.mtx");
    fembench_fem::mtx::write_csr(&path, &header, mesh.len() * nd, &row_ptr, &col, &a)?;
    let cells: Vec<u32> = mesh.elements.iter().flatten().copied().collect();
    let msh = dir.join("prisms.msh");
    std::fs::write(&msh, fembench_fem::vtu::msh22_cells(&mesh.vertices, (Cell3::Wedge, &cells)))?;
    let (young, poisson): (Vec<f64>, Vec<f64>) = mesh.material.iter().copied().unzip();
    let vtu = dir.join("prisms.vtu");
    fembench_fem::vtu::write_cells(&vtu, &mesh.vertices, (Cell3::Wedge, &cells), &[], &[("young", &young), ("poisson", &poisson)])?;
    Ok(vec![path, msh, vtu])
}

/// The CSR pattern of `blocks` dense diagonal blocks of `nd` x `nd`, rows of a block in order.
fn block_diagonal(blocks: usize, nd: usize) -> (Vec<u32>, Vec<u32>) {
    let row_ptr = (0..=blocks * nd).map(|r| (r * nd) as u32).collect();
    let col = (0..blocks * nd).flat_map(|r| (r / nd * nd..(r / nd + 1) * nd).map(|c| c as u32)).collect();
    (row_ptr, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each block read back is its element's matrix, row-major, where the reference puts it (a
    /// transposed or shifted export fails), and the mesh files hold every prism.
    #[test]
    fn the_exported_element_matrices_read_back() {
        let dir = tempfile::tempdir().unwrap();
        write_elements(2, 3, dir.path()).unwrap();
        let (re, mesh) = (Reference::new(2).unwrap(), PrismMesh::with_elements(3));
        let a = element_matrices(&re, &mesh, &[0, 1, 2]);
        let nd = element_dofs(shape_functions(2));
        let ((rows, cols, nnz), entries) = fembench_fem::mtx::read_coordinate(&dir.path().join("element_matrices.mtx")).unwrap();
        assert_eq!((rows, cols, nnz), (3 * nd, 3 * nd, 3 * nd * nd));
        for (i, j, v) in entries {
            let (e, r, c) = (i / nd, i % nd, j % nd);
            assert_eq!(j / nd, e, "entry ({i}, {j}) is off its element's block");
            assert_eq!(v, a[(e * nd + r) * nd + c], "element {e} ({r}, {c})");
        }
        let vtu = std::fs::read_to_string(dir.path().join("prisms.vtu")).unwrap();
        assert!(vtu.contains(r#"NumberOfCells="3""#) && vtu.contains("\n13\n"), "{vtu}");
        assert!(std::fs::read_to_string(dir.path().join("prisms.msh")).unwrap().contains("$Elements\n3\n1 6 2 1 1 "));
        assert!(write_elements(9, 1, dir.path()).is_err(), "degree 9 has no quadrature here");
    }
}
