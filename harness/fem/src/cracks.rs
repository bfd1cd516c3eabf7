//! Cracks in a triangle mesh: open polylines that the mesh's edges follow (mesh them as
//! interfaces, [`crate::trimesh::delaunay_with_interfaces`]), then opened by giving each node on
//! a crack, its tips excepted, one copy per side. The two faces of a crack then share no edge
//! and no node, so they are two internal boundaries: waves reflect from them, and a blocker's
//! advancing front meets them as it meets the outer boundary.

use std::collections::{HashMap, HashSet};

use crate::trimesh::TriMesh;

/// What [`open_cracks`] did: the nodes it added (one per crack node but the tips) and the
/// crack's mesh edges (each now two boundary edges).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opened {
    pub new_nodes: usize,
    pub edges: usize,
}

/// Opens each crack of `cracks` (polylines whose segments the mesh's edges follow). A node on a
/// crack is copied for each fan of its triangles that the crack's edges separate (two for a
/// node inside a crack; a tip's triangles form one fan, so a tip stays whole). Fails where a
/// crack segment is not a chain of mesh edges.
pub fn open_cracks(m: &mut TriMesh, cracks: &[Vec<(f64, f64)>]) -> Result<Opened, String> {
    let (edges, on_crack) = crack_edges(m, cracks)?;
    // Each crack node's triangles, joined across the edges that are not crack edges.
    let mut fans: HashMap<u32, Vec<usize>> = on_crack.iter().map(|&v| (v, Vec::new())).collect();
    for (ti, t) in m.tris.iter().enumerate() {
        for v in t {
            if let Some(f) = fans.get_mut(v) {
                f.push(ti);
            }
        }
    }
    let mut new_nodes = 0;
    let mut nodes: Vec<u32> = on_crack.into_iter().collect();
    nodes.sort_unstable();
    for v in nodes {
        new_nodes += split_fans(m, &edges, v, &fans[&v]);
    }
    Ok(Opened { new_nodes, edges: edges.len() })
}

/// The crack edges (node pairs, smaller first) and the nodes on them.
type CrackEdges = (HashSet<(u32, u32)>, HashSet<u32>);

/// The mesh edges along the cracks' segments and the nodes on them; an error names a segment
/// whose ends are not mesh nodes, or whose nodes are not joined by mesh edges.
fn crack_edges(m: &TriMesh, cracks: &[Vec<(f64, f64)>]) -> Result<CrackEdges, String> {
    let mut edges: HashSet<(u32, u32)> = HashSet::new();
    let mut on_crack: HashSet<u32> = HashSet::new();
    let mut mesh_edges: HashSet<(u32, u32)> = HashSet::with_capacity(3 * m.tris.len());
    for t in &m.tris {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            mesh_edges.insert((a.min(b), a.max(b)));
        }
    }
    for (ci, crack) in cracks.iter().enumerate() {
        for w in crack.windows(2) {
            let (p, q) = (w[0], w[1]);
            let along = nodes_along(m, p, q);
            if along.len() < 2 || along[0].0 > 1e-9 || along[along.len() - 1].0 < 1.0 - 1e-9 {
                return Err(format!("crack {ci}: segment {p:?}-{q:?} has no mesh nodes at its ends"));
            }
            for pair in along.windows(2) {
                let (a, b) = (pair[0].1, pair[1].1);
                let e = (a.min(b), a.max(b));
                if !mesh_edges.contains(&e) {
                    return Err(format!("crack {ci}: nodes {a} and {b} on segment {p:?}-{q:?} are not joined by a mesh edge"));
                }
                edges.insert(e);
                on_crack.extend([a, b]);
            }
        }
    }
    Ok((edges, on_crack))
}

/// The mesh nodes on segment p-q, by their position along it (0 at p, 1 at q).
fn nodes_along(m: &TriMesh, p: (f64, f64), q: (f64, f64)) -> Vec<(f64, u32)> {
    let d = (q.0 - p.0, q.1 - p.1);
    let len2 = d.0 * d.0 + d.1 * d.1;
    let tol = 1e-9 * len2.sqrt();
    let mut along: Vec<(f64, u32)> = m
        .points
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let r = (v[0] - p.0, v[1] - p.1);
            let s = (r.0 * d.0 + r.1 * d.1) / len2;
            let off = (r.0 * d.1 - r.1 * d.0).abs() / len2.sqrt();
            (off <= tol && (-1e-9..=1.0 + 1e-9).contains(&s)).then_some((s, i as u32))
        })
        .collect();
    along.sort_by(|a, b| a.0.total_cmp(&b.0));
    along
}

fn root(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

/// Crack node `v`'s triangles (`fan`) in groups joined across the edges that are not crack
/// edges: the first group keeps the node, every other gets a copy of it; returns the copies made.
fn split_fans(m: &mut TriMesh, edges: &HashSet<(u32, u32)>, v: u32, fan: &[usize]) -> usize {
    let mut parent: Vec<usize> = (0..fan.len()).collect();
    for i in 0..fan.len() {
        for j in i + 1..fan.len() {
            let (ti, tj) = (m.tris[fan[i]], m.tris[fan[j]]);
            let shared = ti.iter().find(|&&w| w != v && tj.contains(&w));
            if let Some(&w) = shared {
                if !edges.contains(&(v.min(w), v.max(w))) {
                    let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                    parent[a] = b;
                }
            }
        }
    }
    let mut copy_of_root: HashMap<usize, u32> = HashMap::new();
    let mut new_nodes = 0;
    let first = root(&mut parent, 0);
    for i in 0..fan.len() {
        let r = root(&mut parent, i);
        if r == first {
            continue;
        }
        let id = *copy_of_root.entry(r).or_insert_with(|| {
            m.points.push(m.points[v as usize]);
            new_nodes += 1;
            (m.points.len() - 1) as u32
        });
        for slot in m.tris[fan[i]].iter_mut().filter(|s| **s == v) {
            *slot = id;
        }
    }
    new_nodes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trimesh::delaunay_with_interfaces;

    #[test]
    fn a_crack_inside_a_square_becomes_two_faces_that_share_no_edge() {
        let square = vec![(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)];
        let crack = vec![(0.3, 0.5), (0.5, 0.55), (0.7, 0.5)];
        let mut m = delaunay_with_interfaces(&[square], std::slice::from_ref(&crack), 28.0, 0.002);
        let (nodes, boundary) = (m.points.len(), m.boundary_edges().len());
        let opened = open_cracks(&mut m, std::slice::from_ref(&crack)).unwrap();
        // Every crack node but the two tips is copied once; each crack edge is now two
        // boundary edges; the mesh keeps its triangles, all still counter-clockwise.
        assert!(opened.edges >= 4, "the mesher splits the two segments");
        assert_eq!(opened.new_nodes, opened.edges - 1);
        assert_eq!(m.points.len(), nodes + opened.new_nodes);
        assert_eq!(m.boundary_edges().len(), boundary + 2 * opened.edges);
        assert!(m.signed_areas().all(|a| a > 0.0));
        // No edge crosses the crack: each copy's neighbours lie on one side of it (or on it),
        // the original's on the other.
        let mut adjacent: HashMap<u32, HashSet<u32>> = HashMap::new();
        for t in &m.tris {
            for k in 0..3 {
                adjacent.entry(t[k]).or_default().insert(t[(k + 1) % 3]);
                adjacent.entry(t[(k + 1) % 3]).or_default().insert(t[k]);
            }
        }
        // Above (+) or below (-) the crack's line at the point's x (extended past its ends).
        let side = |w: u32| {
            let v = m.points[w as usize];
            let seg = if v[0] < crack[1].0 { 0 } else { 1 };
            let (p, q) = (crack[seg], crack[seg + 1]);
            (q.0 - p.0) * (v[1] - p.1) - (q.1 - p.1) * (v[0] - p.0)
        };
        for c in nodes as u32..m.points.len() as u32 {
            let original = (0..nodes as u32).find(|&v| m.points[v as usize] == m.points[c as usize]).unwrap();
            assert!(!adjacent[&c].contains(&original));
            let signs = |v: u32| {
                let mut s: Vec<i8> = adjacent[&v].iter().map(|&w| side(w)).filter(|s| s.abs() > 1e-12).map(|s| s.signum() as i8).collect();
                s.sort_unstable();
                s.dedup();
                s
            };
            let (a, b) = (signs(c), signs(original));
            assert!(a.len() == 1 && b.len() == 1 && a[0] == -b[0], "node {c}: sides {a:?} and {b:?}");
        }
        // Connected around the tips: the mesh is still one piece.
        let mut seen = vec![false; m.points.len()];
        let mut stack = vec![0u32];
        while let Some(v) = stack.pop() {
            if !std::mem::replace(&mut seen[v as usize], true) {
                stack.extend(adjacent[&v].iter().copied());
            }
        }
        assert!(seen.iter().all(|&s| s), "the cracked square is still one piece");
    }

    #[test]
    fn a_crack_the_mesh_does_not_follow_is_refused() {
        let square = vec![(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)];
        let mut m = delaunay_with_interfaces(&[square], &[], 28.0, 0.01);
        assert!(open_cracks(&mut m, &[vec![(0.31, 0.52), (0.69, 0.47)]]).is_err());
    }
}
