//! Straight-sided triangle meshes: the P1 mesh with its Dirichlet edges, uniform refinement,
//! order-k Lagrange meshes (shared edge nodes, interior nodes) and Z-order renumbering for
//! locality. Any 2D paper builds its meshes here (spade meshing or Gmsh import, then refinement).

use std::collections::HashMap;

use rayon::prelude::*;

use spade::{AngleLimit, ConstrainedDelaunayTriangulation, Point2, RefinementParameters, Triangulation};

use crate::elements::Elements;

/// A straight-sided P1 triangle mesh (counter-clockwise triangles) with its Dirichlet data.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct TriMesh {
    pub points: Vec<[f64; 2]>,
    pub tris: Vec<[u32; 3]>,
    /// Boundary edges with a prescribed value g: every node on them (vertices, and the edge
    /// nodes of order k) is prescribed.
    pub dirichlet: Vec<([u32; 2], f64)>,
}

impl TriMesh {
    /// Signed area of each triangle (positive: counter-clockwise).
    pub fn signed_areas(&self) -> impl Iterator<Item = f64> + '_ {
        self.tris.iter().map(|t| {
            let [a, b, c] = t.map(|i| self.points[i as usize]);
            0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]))
        })
    }

    /// max |coordinate| over the smallest altitude of any triangle: an element's edge vectors,
    /// formed from coordinates rounded to a precision of unit roundoff u, carry a relative error
    /// of about u times this.
    pub fn coordinate_ratio(&self) -> f64 {
        let reach = self.points.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
        let edge = |a: [f64; 2], b: [f64; 2]| (a[0] - b[0]).hypot(a[1] - b[1]);
        let altitude = self.tris.iter().zip(self.signed_areas()).fold(f64::INFINITY, |m, (t, area)| {
            let [a, b, c] = t.map(|i| self.points[i as usize]);
            m.min(2.0 * area.abs() / edge(a, b).max(edge(b, c)).max(edge(c, a)))
        });
        reach / altitude
    }

    /// Edges used by exactly one triangle.
    pub fn boundary_edges(&self) -> Vec<[u32; 2]> {
        let mut count: HashMap<(u32, u32), u32> = HashMap::with_capacity(self.tris.len() * 2);
        for t in &self.tris {
            for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
                *count.entry((a.min(b), a.max(b))).or_insert(0) += 1;
            }
        }
        let mut edges: Vec<[u32; 2]> = count.into_iter().filter(|&(_, c)| c == 1).map(|((a, b), _)| [a, b]).collect();
        edges.sort_unstable();
        edges
    }
}

/// The triangle's vertices in counter-clockwise order.
pub fn orient_ccw(points: &[[f64; 2]], t: [u32; 3]) -> [u32; 3] {
    let [a, b, c] = t.map(|i| points[i as usize]);
    let cross = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
    if cross < 0.0 {
        [t[0], t[2], t[1]]
    } else {
        t
    }
}

/// A P1 mesh of the region bounded by closed polygons (`loops`: the outer boundary and any
/// holes), by constrained Delaunay refinement (spade): no angle below `min_angle_deg`, no
/// triangle larger than `max_area`. Triangles counter-clockwise; Dirichlet edges are the
/// caller's to set.
pub fn delaunay(loops: &[Vec<(f64, f64)>], min_angle_deg: f64, max_area: f64) -> TriMesh {
    triangulate(loops, &[], min_angle_deg, max_area, None)
}

/// As [`delaunay`], with open polylines inside the region (`interfaces`: material boundaries)
/// that the mesh's edges follow, so every triangle lies on one side of each. A triangle belongs
/// to the region when its centroid is inside an odd number of `loops`. Unlike [`delaunay`]
/// (spade's default cap of ten new vertices per input vertex, which the meshes of the papers
/// built before this one were made with), the refinement may add as many vertices as the
/// area asks for, boundary and interface edges are split to the element size, and a
/// refinement that stops short panics.
pub fn delaunay_with_interfaces(loops: &[Vec<(f64, f64)>], interfaces: &[Vec<(f64, f64)>], min_angle_deg: f64, max_area: f64) -> TriMesh {
    let (mut lo, mut hi) = ([f64::MAX; 2], [f64::MIN; 2]);
    for &(x, y) in loops.iter().flatten() {
        lo = [lo[0].min(x), lo[1].min(y)];
        hi = [hi[0].max(x), hi[1].max(y)];
    }
    // Refined triangles average well under max_area: allow ten times the area's count.
    let cap = 10.0 * (hi[0] - lo[0]) * (hi[1] - lo[1]) / max_area;
    triangulate(loops, interfaces, min_angle_deg, max_area, Some(cap.min(1e9) as usize + 1000))
}

fn triangulate(
    loops: &[Vec<(f64, f64)>],
    interfaces: &[Vec<(f64, f64)>],
    min_angle_deg: f64,
    max_area: f64,
    max_new_vertices: Option<usize>,
) -> TriMesh {
    let mut cdt = ConstrainedDelaunayTriangulation::<Point2<f64>>::new();
    for (pts, closed) in loops.iter().map(|l| (l, true)).chain(interfaces.iter().map(|l| (l, false))) {
        let handles: Vec<_> = pts.iter().map(|&(x, y)| cdt.insert(Point2::new(x, y)).expect("finite point")).collect();
        let edges = if closed { handles.len() } else { handles.len().saturating_sub(1) };
        for i in 0..edges {
            cdt.add_constraint(handles[i], handles[(i + 1) % handles.len()]);
        }
    }
    // spade's own exclusion counts constraint crossings, which would cut the region at an
    // interface; with interfaces the centroid test below decides instead.
    let mut params = RefinementParameters::<f64>::new()
        .exclude_outer_faces(interfaces.is_empty())
        .with_angle_limit(AngleLimit::from_deg(min_angle_deg))
        .with_max_allowed_area(max_area);
    match max_new_vertices {
        // Boundary and interface edges are split as the refinement needs (their pieces stay
        // constraints, so the shapes are kept): an edge kept whole blocks every circumcentre
        // that encroaches it, and a long one stops the refinement at its first triangles.
        Some(cap) => params = params.with_max_additional_vertices(cap),
        None => params = params.keep_constraint_edges(),
    }
    let result = cdt.refine(params);
    assert!(max_new_vertices.is_none() || result.refinement_complete, "the mesh refinement ran out of vertices");
    let excluded: std::collections::HashSet<_> = result.excluded_faces.iter().map(|f| f.index()).collect();
    // The faces kept, as vertex indices and positions, in spade's order.
    let faces: Vec<[(usize, [f64; 2]); 3]> = cdt
        .inner_faces()
        .filter(|face| !excluded.contains(&face.fix().index()))
        .map(|face| {
            face.vertices().map(|v| {
                let p = v.position();
                (v.fix().index(), [p.x, p.y])
            })
        })
        .collect();
    // With interfaces, a face is kept when its centroid lies inside an odd number of loops
    // (the gear's 2.8M faces against its outline of thousands of edges: on every core, each
    // loop's bounding box first).
    let keep: Vec<bool> = if interfaces.is_empty() {
        vec![true; faces.len()]
    } else {
        let boxes: Vec<[f64; 4]> = loops.iter().map(|l| bounding_box(l)).collect();
        faces
            .par_iter()
            .map(|f| {
                let c = f.iter().fold((0.0, 0.0), |(x, y), (_, p)| (x + p[0] / 3.0, y + p[1] / 3.0));
                let within = |b: &[f64; 4]| c.0 >= b[0] && c.0 <= b[2] && c.1 >= b[1] && c.1 <= b[3];
                loops.iter().zip(&boxes).filter(|(l, b)| within(b) && inside(l, c)).count() % 2 == 1
            })
            .collect()
    };
    let mut used: HashMap<usize, u32> = HashMap::new();
    let mut points = Vec::new();
    let mut tris = Vec::new();
    for (f, _) in faces.iter().zip(&keep).filter(|(_, &k)| k) {
        let mut t = [0u32; 3];
        for (slot, &(id, p)) in t.iter_mut().zip(f.iter()) {
            *slot = *used.entry(id).or_insert_with(|| {
                points.push(p);
                (points.len() - 1) as u32
            });
        }
        tris.push(orient_ccw(&points, t));
    }
    TriMesh { points, tris, dirichlet: Vec::new() }
}

/// The smallest box holding the polygon: [min x, min y, max x, max y].
fn bounding_box(poly: &[(f64, f64)]) -> [f64; 4] {
    poly.iter().fold([f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY], |b, &(x, y)| {
        [b[0].min(x), b[1].min(y), b[2].max(x), b[3].max(y)]
    })
}

/// Whether `p` lies inside the closed polygon (even-odd rule).
pub fn inside(poly: &[(f64, f64)], p: (f64, f64)) -> bool {
    let mut odd = false;
    for i in 0..poly.len() {
        let (a, b) = (poly[i], poly[(i + 1) % poly.len()]);
        if (a.1 > p.1) != (b.1 > p.1) && p.0 < a.0 + (p.1 - a.1) / (b.1 - a.1) * (b.0 - a.0) {
            odd = !odd;
        }
    }
    odd
}

/// Splits every triangle into four through its edge midpoints.
pub fn refine_uniform(m: &TriMesh) -> TriMesh {
    let mut points = m.points.clone();
    let mut mid: HashMap<(u32, u32), u32> = HashMap::with_capacity(m.tris.len() * 2);
    let mut midpoint = |a: u32, b: u32, points: &mut Vec<[f64; 2]>| -> u32 {
        let key = (a.min(b), a.max(b));
        *mid.entry(key).or_insert_with(|| {
            let (p, q) = (points[a as usize], points[b as usize]);
            points.push([0.5 * (p[0] + q[0]), 0.5 * (p[1] + q[1])]);
            (points.len() - 1) as u32
        })
    };
    let mut tris = Vec::with_capacity(m.tris.len() * 4);
    for &[a, b, c] in &m.tris {
        let ab = midpoint(a, b, &mut points);
        let bc = midpoint(b, c, &mut points);
        let ca = midpoint(c, a, &mut points);
        tris.extend([[a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca]]);
    }
    let dirichlet = m
        .dirichlet
        .iter()
        .flat_map(|&([a, b], g)| {
            let mid = midpoint(a, b, &mut points);
            [([a, mid], g), ([mid, b], g)]
        })
        .collect();
    TriMesh { points, tris, dirichlet }
}

/// `m` with its nodes in reverse Cuthill-McKee order ([`crate::ordering::rcm`] on its node
/// graph) and its triangles sorted by their lowest new node: a kernel with a thread per node or
/// per triangle then reads nearby addresses (uniform refinement numbers each level's midpoints
/// after every coarser node, far from their neighbours).
pub fn renumbered_rcm(m: &TriMesh) -> TriMesh {
    let nodes: Vec<u32> = m.tris.iter().flatten().copied().collect();
    let graph = crate::elements::Elements { nodes: &nodes, per_element: 3, corners: 3, num_nodes: m.points.len() };
    let (xadj, adj) = crate::partition::node_graph(graph);
    let order = crate::ordering::rcm(&xadj, &adj);
    let mut new_of = vec![0u32; m.points.len()];
    order.iter().enumerate().for_each(|(k, &v)| new_of[v as usize] = k as u32);
    let points = order.iter().map(|&v| m.points[v as usize]).collect();
    let mut tris: Vec<[u32; 3]> = m.tris.iter().map(|t| t.map(|v| new_of[v as usize])).collect();
    tris.sort_by_key(|t| (*t.iter().min().expect("three nodes"), *t.iter().max().expect("three nodes")));
    let dirichlet = m.dirichlet.iter().map(|&(e, g)| (e.map(|v| new_of[v as usize]), g)).collect();
    TriMesh { points, tris, dirichlet }
}

/// `m` refined uniformly `levels` times.
pub fn refined(mut m: TriMesh, levels: usize) -> TriMesh {
    for _ in 0..levels {
        m = refine_uniform(&m);
    }
    m
}

/// An order-k Lagrange mesh: every node with its coordinates, and each element's nodes in the
/// local order of [`crate::lagrange::reference_nodes`].
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct LagrangeMesh {
    pub order: usize,
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    /// Element-major: element e's nodes are `elems[e * en .. (e + 1) * en]`.
    pub elems: Vec<u32>,
    pub nodes_per_element: usize,
    /// Prescribed value per node: Some(g) on the Dirichlet edges, None elsewhere.
    pub prescribed: Vec<Option<f64>>,
}

impl LagrangeMesh {
    pub fn num_nodes(&self) -> usize {
        self.x.len()
    }
    pub fn num_elements(&self) -> usize {
        self.elems.len() / self.nodes_per_element
    }
    pub fn element(&self, e: usize) -> &[u32] {
        &self.elems[e * self.nodes_per_element..(e + 1) * self.nodes_per_element]
    }
    /// The connectivity as coloring and partitioning see it (the 3 vertices are the corners).
    pub fn elements(&self) -> Elements<'_> {
        Elements { nodes: &self.elems, per_element: self.nodes_per_element, corners: 3, num_nodes: self.num_nodes() }
    }
}

/// Adds shared edge nodes and interior nodes to a P1 mesh (straight sides: nodes interpolate the
/// vertices), then renumbers nodes and elements along a Z-order curve.
pub fn lagrange(p1: &TriMesh, k: usize) -> LagrangeMesh {
    let en = crate::lagrange::nodes_per_element(k);
    let mut x: Vec<f64> = p1.points.iter().map(|p| p[0]).collect();
    let mut y: Vec<f64> = p1.points.iter().map(|p| p[1]).collect();
    let mut edge_base: HashMap<(u32, u32), u32> = HashMap::new();
    let mut elems = Vec::with_capacity(p1.tris.len() * en);
    let interp = |a: [f64; 2], b: [f64; 2], t: f64| [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])];
    for &[v0, v1, v2] in &p1.tris {
        elems.extend([v0, v1, v2]);
        for (a, b) in [(v0, v1), (v1, v2), (v2, v0)] {
            let key = (a.min(b), a.max(b));
            let base = *edge_base.entry(key).or_insert_with(|| {
                let base = x.len() as u32;
                // Stored from the lower-numbered vertex.
                let (p, q) = (p1.points[key.0 as usize], p1.points[key.1 as usize]);
                for j in 1..k {
                    let c = interp(p, q, j as f64 / k as f64);
                    x.push(c[0]);
                    y.push(c[1]);
                }
                base
            });
            for j in 1..k {
                let idx = if a < b { j - 1 } else { k - j - 1 };
                elems.push(base + idx as u32);
            }
        }
        let (p0, pa, pb) = (p1.points[v0 as usize], p1.points[v1 as usize], p1.points[v2 as usize]);
        for j in 1..k {
            for i in 1..k {
                if i + j < k {
                    let (s, t) = (i as f64 / k as f64, j as f64 / k as f64);
                    x.push(p0[0] + s * (pa[0] - p0[0]) + t * (pb[0] - p0[0]));
                    y.push(p0[1] + s * (pa[1] - p0[1]) + t * (pb[1] - p0[1]));
                    elems.push((x.len() - 1) as u32);
                }
            }
        }
    }
    // Dirichlet edges: their vertices and edge nodes (a node on two groups keeps the first).
    let mut prescribed: Vec<Option<f64>> = vec![None; x.len()];
    for &([a, b], g) in &p1.dirichlet {
        let base = edge_base.get(&(a.min(b), a.max(b))).copied();
        let edge_nodes = base.into_iter().flat_map(|base| (0..k.saturating_sub(1)).map(move |j| base + j as u32));
        for v in [a, b].into_iter().chain(edge_nodes) {
            prescribed[v as usize].get_or_insert(g);
        }
    }
    let mut m = LagrangeMesh { order: k, x, y, elems, nodes_per_element: en, prescribed };
    renumber_z_order(&mut m);
    m
}

/// Z-order key of (x, y) in the square of side `span` from `lo`.
fn z_key(x: f64, y: f64, lo: [f64; 2], span: f64) -> u64 {
    let q = |v: f64, lo: f64| (((v - lo) / span).clamp(0.0, 1.0) * 65535.0) as u64;
    let spread = |mut v: u64| {
        v &= 0xFFFF;
        v = (v | (v << 8)) & 0x00FF_00FF;
        v = (v | (v << 4)) & 0x0F0F_0F0F;
        v = (v | (v << 2)) & 0x3333_3333;
        v = (v | (v << 1)) & 0x5555_5555;
        v
    };
    spread(q(x, lo[0])) | (spread(q(y, lo[1])) << 1)
}

/// Nodes and elements sorted along a Z-order curve, so that neighbours in the mesh are mostly
/// neighbours in memory (the locality the paper's node renumbering asks for).
fn renumber_z_order(m: &mut LagrangeMesh) {
    let n = m.num_nodes();
    let bounds = |v: &[f64]| v.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    let ((x0, x1), (y0, y1)) = (bounds(&m.x), bounds(&m.y));
    let lo = [x0, y0];
    let span = (x1 - x0).max(y1 - y0).max(f64::MIN_POSITIVE);
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by_key(|&i| (z_key(m.x[i as usize], m.y[i as usize], lo, span), i));
    let mut new_of = vec![0u32; n];
    for (new, &old) in order.iter().enumerate() {
        new_of[old as usize] = new as u32;
    }
    m.x = order.iter().map(|&o| m.x[o as usize]).collect();
    m.y = order.iter().map(|&o| m.y[o as usize]).collect();
    m.prescribed = order.iter().map(|&o| m.prescribed[o as usize]).collect();
    for v in m.elems.iter_mut() {
        *v = new_of[*v as usize];
    }
    let en = m.nodes_per_element;
    let ne = m.num_elements();
    let mut eorder: Vec<usize> = (0..ne).collect();
    let centroid_key = |e: usize| {
        let nodes = &m.elems[e * en..e * en + 3];
        let cx = nodes.iter().map(|&v| m.x[v as usize]).sum::<f64>() / 3.0;
        let cy = nodes.iter().map(|&v| m.y[v as usize]).sum::<f64>() / 3.0;
        z_key(cx, cy, lo, span)
    };
    let keys: Vec<u64> = (0..ne).map(centroid_key).collect();
    eorder.sort_by_key(|&e| (keys[e], e));
    m.elems = eorder.iter().flat_map(|&e| m.elems[e * en..(e + 1) * en].to_vec()).collect();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The renumbered mesh is the same mesh (each triangle's corners, areas and Dirichlet edges,
    /// by coordinates), and its triangles' node spread is far below the refined numbering's.
    #[test]
    fn the_rcm_renumbering_keeps_the_mesh_and_narrows_its_triangles() {
        let loops = vec![vec![(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]];
        let mut m = delaunay(&loops, 25.0, 0.01);
        m.dirichlet = m.boundary_edges().into_iter().map(|e| (e, 1.0)).collect();
        let m = refined(m, 2);
        let r = renumbered_rcm(&m);
        let key = |m: &TriMesh, t: &[u32; 3]| {
            let mut c: Vec<[u64; 2]> = t.iter().map(|&v| m.points[v as usize].map(f64::to_bits)).collect();
            c.sort();
            c
        };
        let sorted = |m: &TriMesh| {
            let mut all: Vec<_> = m.tris.iter().map(|t| key(m, t)).collect();
            all.sort();
            all
        };
        assert_eq!(sorted(&m), sorted(&r));
        let area = |m: &TriMesh| m.signed_areas().map(|a| a.abs()).sum::<f64>();
        assert!((area(&m) - area(&r)).abs() < 1e-12 && r.signed_areas().all(|a| a > 0.0));
        let edges = |m: &TriMesh| {
            let mut e: Vec<_> = m.dirichlet.iter().map(|(e, g)| (key(m, &[e[0], e[1], e[1]]), g.to_bits())).collect();
            e.sort();
            e
        };
        assert_eq!(edges(&m), edges(&r));
        let spread = |m: &TriMesh| m.tris.iter().map(|t| t.iter().max().unwrap() - t.iter().min().unwrap()).max().unwrap();
        assert!(4 * spread(&r) < spread(&m), "spread {} against {}", spread(&r), spread(&m));
    }

    /// Two triangles of the square [0, 2]^2 cut along a diagonal: the largest coordinate is 2,
    /// the smallest altitude half the diagonal, sqrt(2); and a sliver's altitude rules.
    #[test]
    fn coordinate_ratio_is_the_reach_over_the_smallest_altitude() {
        let square =
            TriMesh { points: vec![[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]], tris: vec![[0, 1, 2], [0, 2, 3]], dirichlet: vec![] };
        let r = square.coordinate_ratio();
        assert!((r - 2.0f64.sqrt()).abs() < 1e-12, "{r}");
        let sliver = TriMesh { points: vec![[0.0, 0.0], [4.0, 0.0], [2.0, 0.01]], tris: vec![[0, 1, 2]], dirichlet: vec![] };
        let r = sliver.coordinate_ratio();
        assert!((r - 4.0 / 0.01).abs() < 1e-9, "{r}");
    }
}
