//! Gmsh mesh import: a user's own 2D domain.
//!
//! Reads ASCII `.msh` files of format 4.1 (Gmsh's default) and 2.2 (`-format msh2`); 3-node
//! triangles (type 2) are the mesh.
//! - [`read`] (Cecka et al.'s problem): 2-node lines (type 1) in a physical group named in
//!   `dirichlet` are its Dirichlet edges; the harness then refines the mesh and adds the
//!   order-k nodes itself.
//! - [`read_labelled`] (Pogo's models): each triangle's physical group (a material) and the
//!   nodes of each physical group of points (type 15: sources, receivers).
//!
//! Written here rather than taken from a crate: `mshio` reads 4.1 only, skips
//! `$PhysicalNames`, and brings nom 5 and lexical-core 0.7 for a format this small.
//! Every error names the file and, where it has one, the line.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use crate::trimesh::{orient_ccw, TriMesh};

#[derive(Debug, Clone)]
pub struct GmshError {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for GmshError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for GmshError {}

/// Reads `path` and returns its triangles with the Dirichlet edges of `dirichlet` (physical
/// group name, or its number as text, to prescribed value).
pub fn read(path: &Path, dirichlet: &BTreeMap<String, f64>) -> Result<TriMesh, GmshError> {
    parse(&read_text(path)?, dirichlet).map_err(|(line, message)| GmshError { path: path.into(), line, message })
}

type ParseError = (Option<usize>, String);

/// Whitespace-separated tokens of one section, with their line numbers.
struct Tokens<'a> {
    items: Vec<(usize, &'a str)>,
    next: usize,
    section: &'a str,
    end_line: usize,
}

impl<'a> Tokens<'a> {
    fn word(&mut self, what: &str) -> Result<(usize, &'a str), ParseError> {
        let t = self.items.get(self.next).copied();
        self.next += 1;
        t.ok_or_else(|| (Some(self.end_line), format!("${}: ended where {what} was expected", self.section)))
    }
    fn num<T: std::str::FromStr>(&mut self, what: &str) -> Result<T, ParseError> {
        let (line, w) = self.word(what)?;
        w.parse().map_err(|_| (Some(line), format!("${}: `{w}` is not a valid {what}", self.section)))
    }
    /// x y z of a node; z is read and dropped (the problem is 2D).
    fn point(&mut self) -> Result<[f64; 2], ParseError> {
        let p = [self.num("x coordinate")?, self.num("y coordinate")?];
        let _z: f64 = self.num("z coordinate")?;
        Ok(p)
    }
    fn skip(&mut self, n: usize, what: &str) -> Result<(), ParseError> {
        for _ in 0..n {
            self.word(what)?;
        }
        Ok(())
    }
}

/// Sections by name: their tokens, from the line after `$Name` to `$EndName`.
fn sections(text: &str) -> Result<HashMap<&str, Tokens<'_>>, ParseError> {
    let mut out = HashMap::new();
    let mut lines = text.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        let line = line.trim();
        let Some(name) = line.strip_prefix('$') else { continue };
        let mut items = Vec::new();
        let end = format!("$End{name}");
        let mut end_line = None;
        for (j, l) in lines.by_ref() {
            if l.trim() == end {
                end_line = Some(j + 1);
                break;
            }
            items.extend(l.split_whitespace().map(|w| (j + 1, w)));
        }
        let end_line = end_line.ok_or((Some(i + 1), format!("${name} has no {end}")))?;
        out.insert(name, Tokens { items, next: 0, section: name, end_line });
    }
    Ok(out)
}

const LINE: u32 = 1;
const TRIANGLE: u32 = 2;
const POINT: u32 = 15;

/// Gmsh element types that are surfaces the harness does not take (it builds order-k nodes
/// on straight 3-node triangles itself).
fn unsupported_surface(t: u32) -> Option<&'static str> {
    match t {
        3 | 10 | 16 => Some("quadrangles"),
        9 | 21 | 23 | 25 | 42 | 43 | 44 | 45 | 20 | 22 | 24 => Some("curved or higher-order triangles"),
        _ => None,
    }
}

/// Nodes per element of the types that may sit beside triangles (2.2 lists no count).
fn nodes_of_type(t: u32) -> Option<usize> {
    Some(match t {
        1 => 2,
        2 => 3,
        3 => 4,
        4 => 4,
        5 => 8,
        6 => 6,
        7 => 5,
        8 => 3,
        9 => 6,
        10 => 9,
        11 => 10,
        15 => 1,
        16 => 8,
        20 => 9,
        21 => 10,
        26 => 4,
        _ => return None,
    })
}

struct Raw {
    /// Node tag to coordinates.
    nodes: HashMap<u64, [f64; 2]>,
    /// Triangles by node tags, with the line of each and their physical tags.
    tris: Vec<([u64; 3], usize, Vec<i32>)>,
    /// Lines by node tags with their physical tags.
    lines: Vec<([u64; 2], Vec<i32>)>,
    /// Points (type 15) by node tag, with the line of each and their physical tags.
    points: Vec<(u64, usize, Vec<i32>)>,
}

/// The header, the physical names and the elements of a file.
fn parse_raw(text: &str) -> Result<(Raw, HashMap<String, i32>), ParseError> {
    let mut s = sections(text)?;
    let mut format = s.remove("MeshFormat").ok_or((None, "no $MeshFormat section: not a Gmsh .msh file".to_string()))?;
    let version: String = format.num("version")?;
    let file_type: u32 = format.num("file type")?;
    if file_type != 0 {
        return Err((None, "binary .msh is not read; save as ASCII (Gmsh: Mesh.Binary = 0)".into()));
    }
    let mut names: HashMap<String, i32> = HashMap::new();
    if let Some(mut t) = s.remove("PhysicalNames") {
        let n: usize = t.num("number of physical names")?;
        for _ in 0..n {
            let _dim: u32 = t.num("dimension")?;
            let tag: i32 = t.num("physical tag")?;
            let (_, name) = t.word("physical name")?;
            names.insert(name.trim_matches('"').to_string(), tag);
        }
    }
    let raw = match version.as_str() {
        "4.1" => parse_v41(&mut s)?,
        "2.2" | "2.1" | "2" | "2.0" => parse_v22(&mut s)?,
        v => return Err((None, format!("MSH version {v} is not read (4.1 and 2.2 are)"))),
    };
    Ok((raw, names))
}

/// The triangles with their nodes numbered compactly in the order the triangles use them
/// (counter-clockwise), and that numbering by node tag.
fn triangles(raw: &Raw) -> Result<(TriMesh, HashMap<u64, u32>), ParseError> {
    let mut index: HashMap<u64, u32> = HashMap::new();
    let mut points = Vec::new();
    let mut tris = Vec::with_capacity(raw.tris.len());
    for (t, line, _) in &raw.tris {
        let mut v = [0u32; 3];
        for (slot, tag) in v.iter_mut().zip(t) {
            let p = *raw.nodes.get(tag).ok_or((Some(*line), format!("triangle names node {tag}, which $Nodes does not hold")))?;
            *slot = *index.entry(*tag).or_insert_with(|| {
                points.push(p);
                (points.len() - 1) as u32
            });
        }
        let [a, b, c] = v.map(|i| points[i as usize]);
        let area2 = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
        if area2.abs() <= 1e-14 * (a[0].abs() + a[1].abs() + 1.0).powi(2) {
            return Err((Some(*line), "degenerate triangle (zero area)".into()));
        }
        tris.push(orient_ccw(&points, v));
    }
    if tris.is_empty() {
        return Err((None, "no 3-node triangles (element type 2) in $Elements".into()));
    }
    Ok((TriMesh { points, tris, dirichlet: Vec::new() }, index))
}

/// A mesh with its physical groups: each triangle's (its first; 0 where it has none), with the
/// file line that lists it, and the nodes of each group of points, in file order.
#[derive(Debug, Clone)]
pub struct Labelled {
    pub mesh: TriMesh,
    pub tri_group: Vec<i32>,
    pub tri_line: Vec<usize>,
    pub point_groups: BTreeMap<i32, Vec<u32>>,
    /// Physical names to their tags.
    pub names: HashMap<String, i32>,
}

/// Reads `path`: its triangles with their groups and its groups of points.
pub fn read_labelled(path: &Path) -> Result<Labelled, GmshError> {
    labelled(&read_text(path)?).map_err(|(line, message)| GmshError { path: path.into(), line, message })
}

fn labelled(text: &str) -> Result<Labelled, ParseError> {
    let (raw, names) = parse_raw(text)?;
    let (mesh, index) = triangles(&raw)?;
    let mut point_groups: BTreeMap<i32, Vec<u32>> = BTreeMap::new();
    for (tag, line, phys) in &raw.points {
        let v = *index
            .get(tag)
            .ok_or_else(|| (Some(*line), format!("a point of physical group {phys:?} is node {tag}, which no triangle uses")))?;
        phys.iter().for_each(|&g| point_groups.entry(g).or_default().push(v));
    }
    Ok(Labelled {
        mesh,
        tri_group: raw.tris.iter().map(|t| t.2.first().copied().unwrap_or(0)).collect(),
        tri_line: raw.tris.iter().map(|t| t.1).collect(),
        point_groups,
        names,
    })
}

fn read_text(path: &Path) -> Result<String, GmshError> {
    let text = std::fs::read(path).map_err(|e| GmshError { path: path.into(), line: None, message: e.to_string() })?;
    String::from_utf8(text).map_err(|_| GmshError {
        path: path.into(),
        line: None,
        message: "not a text file: binary .msh is not read; save as ASCII (Gmsh: Mesh.Binary = 0)".into(),
    })
}

fn parse(text: &str, dirichlet: &BTreeMap<String, f64>) -> Result<TriMesh, ParseError> {
    let (raw, names) = parse_raw(text)?;
    // Dirichlet groups: (key as written, physical tag, value).
    let mut groups: Vec<(&str, i32, f64)> = Vec::with_capacity(dirichlet.len());
    for (key, &g) in dirichlet {
        let tag = names.get(key).copied().or_else(|| key.parse::<i32>().ok()).ok_or((
            None,
            format!(
                "dirichlet: no physical group `{key}` (named groups: {})",
                if names.is_empty() { "none".to_string() } else { names.keys().cloned().collect::<Vec<_>>().join(", ") }
            ),
        ))?;
        groups.push((key, tag, g));
    }
    let value_of: HashMap<i32, f64> = groups.iter().map(|&(_, tag, g)| (tag, g)).collect();
    let (mut m, index) = triangles(&raw)?;
    let boundary: std::collections::HashSet<[u32; 2]> = m.boundary_edges().into_iter().collect();
    let mut used: std::collections::HashSet<i32> = std::collections::HashSet::new();
    for (l, phys) in &raw.lines {
        let Some((&tag, &g)) = phys.iter().find_map(|p| value_of.get_key_value(p)) else { continue };
        let (Some(&a), Some(&b)) = (index.get(&l[0]), index.get(&l[1])) else {
            return Err((None, format!("a line of physical group {tag} has a node no triangle uses")));
        };
        if !boundary.contains(&[a.min(b), a.max(b)]) {
            return Err((None, format!("a line of physical group {tag} is not a boundary edge of the triangles")));
        }
        used.insert(tag);
        m.dirichlet.push(([a, b], g));
    }
    if let Some((key, _, _)) = groups.iter().find(|(_, tag, _)| !used.contains(tag)) {
        return Err((None, format!("dirichlet: physical group `{key}` holds no 2-node lines (element type 1)")));
    }
    if m.dirichlet.is_empty() {
        return Err((
            None,
            "no Dirichlet edges: the problem would be singular; name a physical group of boundary lines in `dirichlet`".into(),
        ));
    }
    Ok(m)
}

fn parse_v41(s: &mut HashMap<&str, Tokens<'_>>) -> Result<Raw, ParseError> {
    // Entities: physical tags of each point, curve and surface entity, by dimension.
    let mut entity_phys: [HashMap<i32, Vec<i32>>; 3] = Default::default();
    if let Some(mut t) = s.remove("Entities") {
        let counts: [usize; 4] =
            [t.num("number of points")?, t.num("number of curves")?, t.num("number of surfaces")?, t.num("number of volumes")?];
        for (dim, &n) in counts.iter().enumerate() {
            for _ in 0..n {
                let tag: i32 = t.num("entity tag")?;
                t.skip(if dim == 0 { 3 } else { 6 }, "bounding box coordinate")?;
                let np: usize = t.num("number of physical tags")?;
                let phys: Vec<i32> = (0..np).map(|_| t.num("physical tag")).collect::<Result<_, _>>()?;
                if dim > 0 {
                    let nb: usize = t.num("number of bounding entities")?;
                    t.skip(nb, "bounding entity tag")?;
                }
                if dim < 3 {
                    entity_phys[dim].insert(tag, phys);
                }
            }
        }
    }
    let mut t = s.remove("Nodes").ok_or((None, "no $Nodes section".to_string()))?;
    let blocks: usize = t.num("number of node blocks")?;
    let total: usize = t.num("number of nodes")?;
    t.skip(2, "node tag range")?;
    let mut nodes = HashMap::with_capacity(total);
    for _ in 0..blocks {
        let _dim: u32 = t.num("entity dimension")?;
        let _tag: i32 = t.num("entity tag")?;
        let parametric: u32 = t.num("parametric flag")?;
        let n: usize = t.num("nodes in block")?;
        let tags: Vec<u64> = (0..n).map(|_| t.num("node tag")).collect::<Result<_, _>>()?;
        for tag in tags {
            let p = t.point()?;
            if parametric != 0 {
                return Err((None, "parametric node coordinates are not read; save without them (Mesh.SaveParametric = 0)".into()));
            }
            nodes.insert(tag, p);
        }
    }
    let mut t = s.remove("Elements").ok_or((None, "no $Elements section".to_string()))?;
    let blocks: usize = t.num("number of element blocks")?;
    t.skip(3, "element counts")?;
    let (mut tris, mut lines, mut points) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..blocks {
        let dim: u32 = t.num("entity dimension")?;
        let entity: i32 = t.num("entity tag")?;
        let (line, ty) = t.word("element type")?;
        let ty: u32 = ty.parse().map_err(|_| (Some(line), format!("$Elements: `{ty}` is not a valid element type")))?;
        let n: usize = t.num("elements in block")?;
        if let Some(what) = unsupported_surface(ty) {
            return Err((Some(line), format!("element type {ty} ({what}): only straight 3-node triangles (type 2) are read")));
        }
        let per = nodes_of_type(ty).ok_or((Some(line), format!("element type {ty} is not known to this reader")))?;
        for _ in 0..n {
            let (eline, _) = t.word("element tag")?;
            let v: Vec<u64> = (0..per).map(|_| t.num("node tag")).collect::<Result<_, _>>()?;
            let phys = || entity_phys.get(dim as usize).and_then(|p| p.get(&entity)).cloned().unwrap_or_default();
            match (ty, dim) {
                (TRIANGLE, 2) => tris.push(([v[0], v[1], v[2]], eline, phys())),
                (LINE, 1) => lines.push(([v[0], v[1]], phys())),
                (POINT, 0) => points.push((v[0], eline, phys())),
                _ => {}
            }
        }
    }
    Ok(Raw { nodes, tris, lines, points })
}

fn parse_v22(s: &mut HashMap<&str, Tokens<'_>>) -> Result<Raw, ParseError> {
    let mut t = s.remove("Nodes").ok_or((None, "no $Nodes section".to_string()))?;
    let n: usize = t.num("number of nodes")?;
    let mut nodes = HashMap::with_capacity(n);
    for _ in 0..n {
        let tag: u64 = t.num("node tag")?;
        nodes.insert(tag, t.point()?);
    }
    let mut t = s.remove("Elements").ok_or((None, "no $Elements section".to_string()))?;
    let n: usize = t.num("number of elements")?;
    let (mut tris, mut lines, mut points) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..n {
        let (line, _) = t.word("element tag")?;
        let ty: u32 = t.num("element type")?;
        let ntags: usize = t.num("number of tags")?;
        let tags: Vec<i32> = (0..ntags).map(|_| t.num("tag")).collect::<Result<_, _>>()?;
        if let Some(what) = unsupported_surface(ty) {
            return Err((Some(line), format!("element type {ty} ({what}): only straight 3-node triangles (type 2) are read")));
        }
        let per = nodes_of_type(ty).ok_or((Some(line), format!("element type {ty} is not known to this reader")))?;
        let v: Vec<u64> = (0..per).map(|_| t.num("node tag")).collect::<Result<_, _>>()?;
        // The first tag of a 2.2 element is its physical group.
        let phys = || tags.first().copied().into_iter().collect();
        match ty {
            TRIANGLE => tris.push(([v[0], v[1], v[2]], line, phys())),
            LINE => lines.push(([v[0], v[1]], phys())),
            POINT => points.push((v[0], line, phys())),
            _ => {}
        }
    }
    Ok(Raw { nodes, tris, lines, points })
}

/// MSH 2.2 text of `m` (the writer `harness export` and the tests use): physical group 1 for its triangles, 10 + i for the Dirichlet edges
/// of the i-th distinct value.
pub fn to_msh22(m: &TriMesh) -> (String, BTreeMap<String, f64>) {
    let mut values: Vec<f64> = m.dirichlet.iter().map(|d| d.1).collect();
    values.sort_by(|a, b| a.partial_cmp(b).unwrap());
    values.dedup();
    let mut out = format!("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n{}\n", m.points.len());
    for (i, p) in m.points.iter().enumerate() {
        out += &format!("{} {:e} {:e} 0\n", i + 1, p[0], p[1]);
    }
    out += &format!("$EndNodes\n$Elements\n{}\n", m.dirichlet.len() + m.tris.len());
    let mut tag = 0;
    for &([a, b], g) in &m.dirichlet {
        tag += 1;
        let group = 10 + values.iter().position(|&v| v == g).unwrap();
        out += &format!("{tag} 1 2 {group} {group} {} {}\n", a + 1, b + 1);
    }
    for t in &m.tris {
        tag += 1;
        out += &format!("{tag} 2 2 1 1 {} {} {}\n", t[0] + 1, t[1] + 1, t[2] + 1);
    }
    out += "$EndElements\n";
    (out, values.iter().enumerate().map(|(i, &g)| ((10 + i).to_string(), g)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The unit square as two triangles, left side "hot" (g = 1), right side "cold" (tag 12).
    const SQUARE_41: &str = r#"$MeshFormat
4.1 0 8
$EndMeshFormat
$PhysicalNames
3
1 11 "hot"
1 12 "cold"
2 13 "plate"
$EndPhysicalNames
$Entities
4 4 1 0
1 0 0 0 0
2 1 0 0 0
3 1 1 0 0
4 0 1 0 0
1 0 0 0 1 0 0 0 2 1 -2
2 1 0 0 1 1 0 1 12 2 2 -3
3 0 1 0 1 1 0 0 2 3 -4
4 0 0 0 0 1 0 1 11 2 4 -1
1 0 0 0 1 1 0 1 13 4 1 2 3 4
$EndEntities
$Nodes
2 4 1 4
2 1 0 2
1
2
0 0 0
1 0 0
2 1 0 2
3
4
1 1 0
0 1 0
$EndNodes
$Elements
3 4 1 4
1 2 1 1
1 2 3
1 4 1 1
2 4 1
2 1 2 2
3 1 2 3
4 1 3 4
$EndElements
"#;

    const SQUARE_22: &str = r#"$MeshFormat
2.2 0 8
$EndMeshFormat
$Nodes
4
1 0 0 0
2 1 0 0
3 1 1 0
4 0 1 0
$EndNodes
$Elements
4
1 1 2 12 2 2 3
2 1 2 11 4 4 1
3 2 2 13 1 1 2 3
4 2 2 13 1 1 3 4
$EndElements
"#;

    fn groups(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn both_formats_give_each_triangle_its_group_and_each_point_group_its_nodes() {
        // The square with corner (1, 1) as a point of group 100, in both formats.
        let v41 = SQUARE_41.replace("3 1 1 0 0\n", "3 1 1 0 1 100\n").replace("3 4 1 4\n", "4 5 1 5\n0 3 15 1\n5 3\n");
        let v22 = SQUARE_22.replace("4\n1 1 2 12", "5\n5 15 2 100 3 3\n1 1 2 12");
        for text in [v41, v22] {
            let l = labelled(&text).unwrap();
            assert_eq!(l.tri_group, vec![13, 13]);
            assert_eq!(l.mesh.tris.len(), 2);
            let corner = &l.point_groups[&100];
            assert_eq!(corner.len(), 1);
            assert_eq!(l.mesh.points[corner[0] as usize], [1.0, 1.0]);
            assert_eq!(l.point_groups.len(), 1);
        }
        // A point no triangle uses is refused with its line.
        let stray = SQUARE_22.replace("$EndNodes", "5 2 2 0\n$EndNodes").replace("4\n1 1 2 12", "5\n5 15 2 100 3 5\n1 1 2 12");
        let (line, msg) = labelled(&stray).unwrap_err();
        assert_eq!(line, Some(14), "{msg}");
        assert!(msg.contains("node 5"), "{msg}");
    }

    #[test]
    fn both_formats_give_the_square_with_its_dirichlet_sides() {
        // Groups by number in both formats, by name where the file names them.
        let by_number = groups(&[("11", 1.0), ("12", 2.0)]);
        let by_name = groups(&[("hot", 1.0), ("cold", 2.0)]);
        for (text, dirichlet) in [(SQUARE_41, &by_number), (SQUARE_41, &by_name), (SQUARE_22, &by_number)] {
            let m = parse(text, dirichlet).unwrap();
            assert_eq!(m.points.len(), 4);
            assert_eq!(m.tris.len(), 2);
            let mut d: Vec<(f64, f64)> =
                m.dirichlet.iter().map(|&([a, b], g)| (m.points[a as usize][0] + m.points[b as usize][0], g)).collect();
            d.sort_by(|a, b| a.partial_cmp(b).unwrap());
            // Left side: x sum 0, g = 1; right side: x sum 2, g = 2.
            assert_eq!(d, vec![(0.0, 1.0), (2.0, 2.0)]);
        }
    }

    #[test]
    fn refined_square_prescribes_exactly_the_nodes_of_its_dirichlet_sides() {
        // Refined twice and given order-3 nodes: exactly the nodes on x = 0 and x = 1 are
        // prescribed, each with its side's value.
        let m = parse(SQUARE_22, &groups(&[("11", 1.0), ("12", 2.0)])).unwrap();
        let m = crate::trimesh::refined(m, 2);
        let lm = crate::trimesh::lagrange(&m, 3);
        for (i, p) in lm.prescribed.iter().enumerate() {
            let x = lm.x[i];
            let expect = if x.abs() < 1e-12 {
                Some(1.0)
            } else if (x - 1.0).abs() < 1e-12 {
                Some(2.0)
            } else {
                None
            };
            assert_eq!(*p, expect, "node {i} at x = {x}");
        }
    }

    #[test]
    fn errors_name_the_line_and_the_problem() {
        let bad = SQUARE_22.replace("3 2 2 13 1 1 2 3", "3 2 2 13 1 1 2 x");
        let e = parse(&bad, &groups(&[("11", 1.0)])).unwrap_err();
        assert_eq!(e.0, Some(15), "{e:?}");
        assert!(e.1.contains("`x` is not a valid node tag"), "{}", e.1);
        let quads = SQUARE_22.replace("3 2 2 13 1 1 2 3", "3 3 2 13 1 1 2 3 4");
        let e = parse(&quads, &groups(&[("11", 1.0)])).unwrap_err();
        assert!(e.1.contains("quadrangles"), "{}", e.1);
        let e = parse(SQUARE_41, &groups(&[("warm", 1.0)])).unwrap_err();
        assert!(e.1.contains("no physical group `warm`") && e.1.contains("hot"), "{}", e.1);
        let e = parse(SQUARE_41, &groups(&[("plate", 1.0)])).unwrap_err();
        assert!(e.1.contains("holds no 2-node lines"), "{}", e.1);
        let e = parse(&SQUARE_22.replace("2.2 0 8", "2.2 1 8"), &groups(&[])).unwrap_err();
        assert!(e.1.contains("binary"), "{}", e.1);
        let e = parse(SQUARE_22, &groups(&[])).unwrap_err();
        assert!(e.1.contains("singular"), "{}", e.1);
        let e = parse(&SQUARE_22.replace("$EndNodes\n", ""), &groups(&[])).unwrap_err();
        assert_eq!(e.0, Some(4));
    }
}
