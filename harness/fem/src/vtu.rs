//! VTK unstructured-grid output (`.vtu`, ASCII XML) for ParaView: a 2D triangle mesh, or 3D cells
//! of one kind (hexahedra, wedges), with named point data (a solution, a material id, a partition)
//! and cell data.

use std::io::{BufWriter, Write};
use std::path::Path;

/// Writes triangles (`tris`, counter-clockwise vertex triples) over points (x, y; z = 0), with
/// one scalar per point for each entry of `point_data` and one per triangle for `cell_data`.
pub fn write_triangles(
    path: &Path,
    x: &[f64],
    y: &[f64],
    tris: &[[u32; 3]],
    point_data: &[(&str, &[f64])],
    cell_data: &[(&str, &[f64])],
) -> std::io::Result<()> {
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, what.to_string());
    if x.len() != y.len() {
        return Err(bad("x and y differ in length"));
    }
    if let Some((name, _)) = point_data.iter().find(|(_, v)| v.len() != x.len()) {
        return Err(bad(&format!("point data `{name}` has not one value per point")));
    }
    if let Some((name, _)) = cell_data.iter().find(|(_, v)| v.len() != tris.len()) {
        return Err(bad(&format!("cell data `{name}` has not one value per triangle")));
    }
    let mut w = BufWriter::new(std::fs::File::create(path)?);
    writeln!(w, r#"<?xml version="1.0"?>"#)?;
    writeln!(w, r#"<VTKFile type="UnstructuredGrid" version="1.0" byte_order="LittleEndian" header_type="UInt64">"#)?;
    writeln!(w, "<UnstructuredGrid>")?;
    writeln!(w, r#"<Piece NumberOfPoints="{}" NumberOfCells="{}">"#, x.len(), tris.len())?;
    writeln!(w, r#"<Points><DataArray type="Float64" NumberOfComponents="3" format="ascii">"#)?;
    for (a, b) in x.iter().zip(y) {
        writeln!(w, "{a:.17e} {b:.17e} 0")?;
    }
    writeln!(w, "</DataArray></Points>")?;
    writeln!(w, "<Cells>")?;
    writeln!(w, r#"<DataArray type="UInt32" Name="connectivity" format="ascii">"#)?;
    for t in tris {
        writeln!(w, "{} {} {}", t[0], t[1], t[2])?;
    }
    writeln!(w, "</DataArray>")?;
    writeln!(w, r#"<DataArray type="UInt64" Name="offsets" format="ascii">"#)?;
    for i in 0..tris.len() {
        writeln!(w, "{}", 3 * (i + 1))?;
    }
    writeln!(w, "</DataArray>")?;
    // VTK_TRIANGLE = 5.
    writeln!(w, r#"<DataArray type="UInt8" Name="types" format="ascii">"#)?;
    for _ in tris {
        writeln!(w, "5")?;
    }
    writeln!(w, "</DataArray>")?;
    writeln!(w, "</Cells>")?;
    write_data(&mut w, point_data, cell_data)
}

/// The point and cell data arrays, then the end of the file.
fn write_data(w: &mut impl Write, point_data: &[(&str, &[f64])], cell_data: &[(&str, &[f64])]) -> std::io::Result<()> {
    for (tag, data) in [("PointData", point_data), ("CellData", cell_data)] {
        writeln!(w, "<{tag}>")?;
        for (name, v) in data {
            writeln!(w, r#"<DataArray type="Float64" Name="{name}" format="ascii">"#)?;
            for x in *v {
                writeln!(w, "{x:.17e}")?;
            }
            writeln!(w, "</DataArray>")?;
        }
        writeln!(w, "</{tag}>")?;
    }
    writeln!(w, "</Piece>\n</UnstructuredGrid>\n</VTKFile>")?;
    w.flush()
}

/// A kind of 3D cell: its VTK type, its Gmsh MSH 2.2 type and its vertex count (both formats
/// number a hexahedron's and a prism's vertices bottom face first, counter-clockwise, as
/// `fembench_fem::hexmesh` and the prism meshes do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell3 {
    Hexahedron,
    Wedge,
}

impl Cell3 {
    pub fn vertices(self) -> usize {
        match self {
            Cell3::Hexahedron => 8,
            Cell3::Wedge => 6,
        }
    }
    fn vtk(self) -> u8 {
        match self {
            Cell3::Hexahedron => 12,
            Cell3::Wedge => 13,
        }
    }
    fn gmsh(self) -> u8 {
        match self {
            Cell3::Hexahedron => 5,
            Cell3::Wedge => 6,
        }
    }
}

/// Writes 3D cells of one kind (`cells`: `kind.vertices()` point indices each, flat) over
/// `points`, with one scalar per point for each entry of `point_data` and one per cell for
/// `cell_data`.
pub fn write_cells(
    path: &Path,
    points: &[[f64; 3]],
    (kind, cells): (Cell3, &[u32]),
    point_data: &[(&str, &[f64])],
    cell_data: &[(&str, &[f64])],
) -> std::io::Result<()> {
    let bad = |what: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, what);
    let nv = kind.vertices();
    let count = cells.len() / nv;
    if cells.len() % nv != 0 || cells.iter().any(|&v| v as usize >= points.len()) {
        return Err(bad(format!("cells are not {nv} point indices each")));
    }
    if let Some((name, _)) = point_data.iter().find(|(_, v)| v.len() != points.len()) {
        return Err(bad(format!("point data `{name}` has not one value per point")));
    }
    if let Some((name, _)) = cell_data.iter().find(|(_, v)| v.len() != count) {
        return Err(bad(format!("cell data `{name}` has not one value per cell")));
    }
    let mut w = BufWriter::new(std::fs::File::create(path)?);
    writeln!(w, r#"<?xml version="1.0"?>"#)?;
    writeln!(w, r#"<VTKFile type="UnstructuredGrid" version="1.0" byte_order="LittleEndian" header_type="UInt64">"#)?;
    writeln!(w, "<UnstructuredGrid>")?;
    writeln!(w, r#"<Piece NumberOfPoints="{}" NumberOfCells="{count}">"#, points.len())?;
    writeln!(w, r#"<Points><DataArray type="Float64" NumberOfComponents="3" format="ascii">"#)?;
    for p in points {
        writeln!(w, "{:.17e} {:.17e} {:.17e}", p[0], p[1], p[2])?;
    }
    writeln!(w, "</DataArray></Points>\n<Cells>")?;
    writeln!(w, r#"<DataArray type="UInt32" Name="connectivity" format="ascii">"#)?;
    for c in cells.chunks(nv) {
        writeln!(w, "{}", c.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(" "))?;
    }
    writeln!(w, "</DataArray>\n<DataArray type=\"UInt64\" Name=\"offsets\" format=\"ascii\">")?;
    for i in 0..count {
        writeln!(w, "{}", nv * (i + 1))?;
    }
    writeln!(w, "</DataArray>\n<DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">")?;
    for _ in 0..count {
        writeln!(w, "{}", kind.vtk())?;
    }
    writeln!(w, "</DataArray>\n</Cells>")?;
    write_data(&mut w, point_data, cell_data)
}

/// Gmsh MSH 2.2 text of 3D cells of one kind over `points` (physical group 1, 1-based indices).
pub fn msh22_cells(points: &[[f64; 3]], (kind, cells): (Cell3, &[u32])) -> String {
    let mut out = format!("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n{}\n", points.len());
    for (i, p) in points.iter().enumerate() {
        out += &format!("{} {:e} {:e} {:e}\n", i + 1, p[0], p[1], p[2]);
    }
    let nv = kind.vertices();
    out += &format!("$EndNodes\n$Elements\n{}\n", cells.len() / nv);
    for (e, c) in cells.chunks(nv).enumerate() {
        let ids: Vec<String> = c.iter().map(|v| (v + 1).to_string()).collect();
        out += &format!("{} {} 2 1 1 {}\n", e + 1, kind.gmsh(), ids.join(" "));
    }
    out + "$EndElements\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_two_triangle_square_is_written_with_its_data() {
        let dir = std::env::temp_dir().join(format!("fembench-vtu-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("square.vtu");
        let (x, y) = ([0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 1.0, 1.0]);
        let tris = [[0, 1, 2], [0, 2, 3]];
        write_triangles(&path, &x, &y, &tris, &[("u", &[0.0, 1.0, 2.0, 3.0])], &[("material", &[1.0, 2.0])]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(r#"NumberOfPoints="4" NumberOfCells="2""#));
        assert!(text.contains("0 2 3\n") && text.contains(r#"Name="u""#) && text.contains(r#"Name="material""#));
        assert!(text.contains("Name=\"types\" format=\"ascii\">\n5\n5\n</DataArray>"), "two VTK_TRIANGLE cells");
        let e = write_triangles(&path, &x, &y, &tris, &[("u", &[0.0])], &[]).unwrap_err();
        assert!(e.to_string().contains("`u`"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_hexahedron_and_a_prism_are_written_as_3d_cells() {
        let dir = std::env::temp_dir().join(format!("fembench-vtu3-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cube: Vec<[f64; 3]> = (0..8).map(|v| [(v & 1) as f64, (v >> 1 & 1) as f64, (v >> 2) as f64]).collect();
        let hex = [0, 1, 3, 2, 4, 5, 7, 6];
        let path = dir.join("cube.vtu");
        let id: Vec<f64> = (0..8).map(f64::from).collect();
        write_cells(&path, &cube, (Cell3::Hexahedron, &hex), &[("id", &id)], &[("young", &[2.0])]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(r#"NumberOfPoints="8" NumberOfCells="1""#) && text.contains("\n0 1 3 2 4 5 7 6\n"), "{text}");
        assert!(text.contains("\n12\n</DataArray>") && text.contains(r#"Name="young""#), "{text}");
        assert!(write_cells(&path, &cube, (Cell3::Wedge, &hex), &[], &[]).is_err(), "8 indices are not wedges");
        assert!(write_cells(&path, &cube, (Cell3::Hexahedron, &[0, 1, 3, 2, 4, 5, 7, 8]), &[], &[]).is_err(), "point 8 does not exist");
        let msh = msh22_cells(&cube, (Cell3::Wedge, &[0, 1, 2, 4, 5, 6]));
        assert!(msh.contains("$Nodes\n8\n") && msh.contains("$Elements\n1\n1 6 2 1 1 1 2 3 5 6 7\n"), "{msh}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
