//! VTK unstructured-grid output (`.vtu`, ASCII XML) for ParaView: a 2D triangle mesh with named
//! point data (a solution, a material id, a partition) and cell data.

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
}
