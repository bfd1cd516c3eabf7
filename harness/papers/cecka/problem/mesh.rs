//! Meshes for the Cecka et al. test problem: a plate with holes (their Fig. 11 is not in the
//! text), meshed by constrained Delaunay refinement (spade), refined uniformly so the P1 meshes
//! follow Table VI's sizes (x4 elements per level), then given order-k Lagrange nodes and
//! renumbered along a Z-order curve for locality (the generic parts: `fembench_fem::trimesh`).

pub use fembench_fem::trimesh::{delaunay, lagrange, orient_ccw, refine_uniform, refined, LagrangeMesh, TriMesh};

/// Plate [0, 4] x [0, 2] with three circular holes; Dirichlet g = 200 on x = 0, g = 10 on x = 4.
pub const WIDTH: f64 = 4.0;
pub const HEIGHT: f64 = 2.0;
pub const G_LEFT: f64 = 200.0;
pub const G_RIGHT: f64 = 10.0;
const HOLES: [(f64, f64, f64); 3] = [(1.0, 1.0, 0.35), (2.2, 0.7, 0.3), (3.1, 1.3, 0.4)];
const HOLE_SEGMENTS: usize = 12;
/// Maximum triangle area of the coarse mesh: gives about 290 triangles, Table VI's first size.
const COARSE_MAX_AREA: f64 = 0.028;

/// The coarse unstructured mesh of the plate with holes.
pub fn coarse_plate() -> TriMesh {
    let mut loops = Vec::new();
    // Outer boundary with a few points per side so Dirichlet sides are split evenly.
    let mut outer = Vec::new();
    let (nx, ny) = (8, 4);
    for i in 0..nx {
        outer.push((WIDTH * i as f64 / nx as f64, 0.0));
    }
    for j in 0..ny {
        outer.push((WIDTH, HEIGHT * j as f64 / ny as f64));
    }
    for i in (1..=nx).rev() {
        outer.push((WIDTH * i as f64 / nx as f64, HEIGHT));
    }
    for j in (1..=ny).rev() {
        outer.push((0.0, HEIGHT * j as f64 / ny as f64));
    }
    loops.push(outer);
    for (cx, cy, r) in HOLES {
        loops.push(
            (0..HOLE_SEGMENTS)
                .map(|s| {
                    let t = std::f64::consts::TAU * s as f64 / HOLE_SEGMENTS as f64;
                    (cx + r * t.cos(), cy + r * t.sin())
                })
                .collect(),
        );
    }
    let mut m = delaunay(&loops, 25.0, COARSE_MAX_AREA);
    // g = 200 on the side x = 0, g = 10 on x = WIDTH.
    let on = |v: u32, x: f64| (m.points[v as usize][0] - x).abs() < 1e-12;
    m.dirichlet = m
        .boundary_edges()
        .into_iter()
        .filter_map(|[a, b]| {
            if on(a, 0.0) && on(b, 0.0) {
                Some(([a, b], G_LEFT))
            } else if on(a, WIDTH) && on(b, WIDTH) {
                Some(([a, b], G_RIGHT))
            } else {
                None
            }
        })
        .collect();
    m
}

/// The P1 mesh of refinement level `level` (level 0: about 290 triangles; each level x4).
pub fn plate(level: usize) -> TriMesh {
    refined(coarse_plate(), level)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coarse_mesh_is_near_table_vi_first_size_and_valid() {
        let m = coarse_plate();
        assert!((250..=340).contains(&m.tris.len()), "{} triangles", m.tris.len());
        let area: f64 = m.signed_areas().inspect(|&a| assert!(a > 0.0, "clockwise or degenerate triangle")).sum();
        // Plate minus the polygonal holes.
        let holes: f64 =
            HOLES.iter().map(|&(_, _, r)| 0.5 * HOLE_SEGMENTS as f64 * r * r * (std::f64::consts::TAU / HOLE_SEGMENTS as f64).sin()).sum();
        assert!((area - (WIDTH * HEIGHT - holes)).abs() < 1e-9, "area {area}");
    }

    #[test]
    fn refinement_multiplies_elements_by_four_and_keeps_area() {
        let m0 = coarse_plate();
        let m1 = refine_uniform(&m0);
        assert_eq!(m1.tris.len(), 4 * m0.tris.len());
        // Euler: V - E + F is unchanged by refinement.
        let euler = |m: &TriMesh| {
            let mut edges = std::collections::HashSet::new();
            for t in &m.tris {
                for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
                    edges.insert((a.min(b), a.max(b)));
                }
            }
            m.points.len() as i64 - edges.len() as i64 + m.tris.len() as i64
        };
        assert_eq!(euler(&m0), euler(&m1));
        assert_eq!(euler(&m0), 1 - HOLES.len() as i64);
    }

    #[test]
    fn lagrange_nodes_are_shared_and_counted() {
        let p1 = coarse_plate();
        for k in 1..=4 {
            let m = lagrange(&p1, k);
            let mut edges = std::collections::HashSet::new();
            for t in &p1.tris {
                for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
                    edges.insert((a.min(b), a.max(b)));
                }
            }
            let interior = (k - 1) * (k.saturating_sub(2)) / 2;
            assert_eq!(m.num_nodes(), p1.points.len() + edges.len() * (k - 1) + p1.tris.len() * interior);
            // Every node is used, and no two nodes coincide.
            let mut used = vec![false; m.num_nodes()];
            m.elems.iter().for_each(|&v| used[v as usize] = true);
            assert!(used.iter().all(|&u| u));
            let mut pts: Vec<(i64, i64)> = m.x.iter().zip(&m.y).map(|(x, y)| ((x * 1e9) as i64, (y * 1e9) as i64)).collect();
            pts.sort();
            pts.dedup();
            assert_eq!(pts.len(), m.num_nodes(), "k={k}: duplicated nodes");
        }
    }

    #[test]
    fn the_plate_written_as_msh_reads_back_as_the_same_problem() {
        use fembench_fem::gmsh;
        let plate = coarse_plate();
        let (text, dirichlet) = gmsh::to_msh22(&plate);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plate.msh");
        std::fs::write(&path, text).unwrap();
        let back = gmsh::read(&path, &dirichlet).unwrap();
        assert_eq!(back.points, plate.points);
        assert_eq!(back.tris, plate.tris);
        assert_eq!(back.dirichlet, plate.dirichlet);
        let (a, b) = (super::super::system::Problem::new(1, 2), super::super::system::Problem::from_p1(&refined(back, 1), 1, 2));
        assert_eq!((a.row_ptr, a.col, a.g, a.mesh.elems), (b.row_ptr, b.col, b.g, b.mesh.elems));
    }
}
