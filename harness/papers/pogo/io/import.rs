//! A Pogo model whose mesh comes from a Gmsh `.msh` file (format 4.1 or 2.2, ASCII) instead of
//! our mesher: the file gives the nodes, the 3-node triangles, each triangle's material (its
//! physical group: 1 + the material's index in the model) and the source's and receivers'
//! nodes (points of physical group 100, and receiver i as a point of group 201 + i), as
//! `harness export` writes them; the named model gives the rest: its materials, damping rule,
//! source direction and signal, time step and increments (no dof is fixed: none of the three
//! models fixes any). The time step is checked against the
//! file mesh's own CFL limit, as for a built model.

use std::path::Path;

use super::super::model::{geo_damping, Model};
use super::super::spec::ModelName;

/// Physical group of the source's nodes, and of the first receiver's node.
pub const SOURCE_GROUP: i32 = 100;
pub const RECEIVER_GROUP: i32 = 201;

/// The model `name` on the mesh of `path`. Errors name the file and, where there is one, its
/// line.
pub fn from_msh(path: &Path, name: ModelName) -> Result<Model, String> {
    let l = fembench_fem::gmsh::read_labelled(path).map_err(|e| e.to_string())?;
    let at = |line: Option<usize>| match line {
        Some(n) => format!("{}:{n}", path.display()),
        None => path.display().to_string(),
    };
    // The physics of the model as we build it (coarse: only its constants are taken).
    let template = name.build(16.0);
    let nmat = template.materials.len();
    let mut material = Vec::with_capacity(l.tri_group.len());
    for (&g, &line) in l.tri_group.iter().zip(&l.tri_line) {
        if g < 1 || g as usize > nmat {
            return Err(format!(
                "{}: a triangle of physical group {g}: the {} model's materials are groups 1..={nmat} (1 + the material's index)",
                at(Some(line)),
                name.as_str()
            ));
        }
        material.push((g - 1) as u8);
    }
    let source = l.point_groups.get(&SOURCE_GROUP).cloned().unwrap_or_default();
    if source.is_empty() {
        return Err(format!("{}: no source: the source's nodes are points of physical group {SOURCE_GROUP}", at(None)));
    }
    let receivers: Vec<u32> = (RECEIVER_GROUP..).map_while(|g| l.point_groups.get(&g).and_then(|v| v.first().copied())).collect();
    if receivers.is_empty() {
        return Err(format!("{}: no receiver: receiver i is a point of physical group {} + i", at(None), RECEIVER_GROUP));
    }
    let mut source_nodes = source;
    source_nodes.sort_unstable();
    source_nodes.dedup();
    let mesh = l.mesh;
    let damping = mesh
        .tris
        .iter()
        .map(|t| {
            let c = t.iter().fold((0.0, 0.0), |(x, y), &i| (x + mesh.points[i as usize][0] / 3.0, y + mesh.points[i as usize][1] / 3.0));
            if name == ModelName::Geophysical {
                geo_damping(c)
            } else {
                0.0
            }
        })
        .collect();
    let nodes = mesh.points.len();
    let mut model = Model {
        name: template.name,
        mesh,
        materials: template.materials,
        material,
        damping,
        fixed: vec![false; 2 * nodes],
        source: super::super::model::Source { nodes: source_nodes, ..template.source },
        receivers,
        dt: template.dt,
        increments: template.increments,
        check_start: template.check_start,
        element_size: 0.0,
    };
    model.element_size = model.mean_edge();
    model.check_dt().map_err(|e| format!("{}: {e}", at(None)))?;
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pogo::export::to_msh;
    use crate::pogo::system::Oracle;

    #[test]
    fn every_model_written_as_msh_reads_back_as_the_same_model() {
        let dir = tempfile::tempdir().unwrap();
        for name in ModelName::ALL {
            let m = name.build(16.0);
            let path = dir.path().join(format!("{}.msh", m.name));
            std::fs::write(&path, to_msh(&m)).unwrap();
            let back = from_msh(&path, name).unwrap();
            // Nodes are numbered in the order the triangles use them: compare by coordinates.
            assert_eq!((back.nodes(), back.mesh.tris.len()), (m.nodes(), m.mesh.tris.len()));
            let at = |model: &Model, v: &[u32]| v.iter().map(|&i| model.mesh.points[i as usize]).collect::<Vec<_>>();
            for (a, b) in m.mesh.tris.iter().zip(&back.mesh.tris) {
                assert_eq!(at(&m, a), at(&back, b));
            }
            assert_eq!((&back.material, &back.damping), (&m.material, &m.damping));
            let sorted = |mut v: Vec<[f64; 2]>| {
                v.sort_by(|p, q| p.partial_cmp(q).unwrap());
                v
            };
            assert_eq!(sorted(at(&back, &back.source.nodes)), sorted(at(&m, &m.source.nodes)));
            assert_eq!(at(&back, &back.receivers), at(&m, &m.receivers));
            assert_eq!((back.dt, back.increments, back.source.direction), (m.dt, m.increments, m.source.direction));
            // The same waves at the receivers (sums in another node order: round-off only).
            let (_, want) = Oracle::new(&m).run(60);
            let (_, got) = Oracle::new(&back).run(60);
            let peak = want.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            let worst = got.iter().zip(&want).fold(0.0f64, |a, (g, w)| a.max((g - w).abs()));
            assert!(worst <= 1e-12 * peak && peak > 0.0, "{}: {worst} of {peak}", m.name);
        }
    }

    #[test]
    fn a_file_without_the_models_groups_is_refused_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let m = ModelName::Weld.build(16.0);
        let text = to_msh(&m);
        let path = dir.path().join("weld.msh");
        // A third material where the weld has two: the line of the first such triangle.
        let first = text.lines().position(|l| l.split_whitespace().nth(1) == Some("2")).unwrap();
        let bad: Vec<String> = text
            .lines()
            .enumerate()
            .map(|(i, l)| if i == first { l.replacen(" 2 2 1 1 ", " 2 2 3 3 ", 1).replacen(" 2 2 2 2 ", " 2 2 3 3 ", 1) } else { l.into() })
            .collect();
        std::fs::write(&path, bad.join("\n")).unwrap();
        let e = from_msh(&path, ModelName::Weld).unwrap_err();
        assert!(e.contains(&format!("weld.msh:{}", first + 1)) && e.contains("physical group 3"), "{e}");
        // No source group (its point moved to group 99).
        std::fs::write(&path, text.replace(" 15 2 100 100 ", " 15 2 99 99 ")).unwrap();
        let e = from_msh(&path, ModelName::Weld).unwrap_err();
        assert!(e.contains("no source") && e.contains("weld.msh"), "{e}");
    }
}
