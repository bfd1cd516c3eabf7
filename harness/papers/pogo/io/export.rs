//! `harness export --model NAME`: a Pogo model as files a user can open elsewhere:
//! - `NAME.msh`: Gmsh MSH 2.2, each triangle in the physical group of its material (1 + the
//!   material's index), the source nodes as points of group 100 and receiver i as a point of
//!   group 201 + i;
//! - `NAME.vtu`: VTK for ParaView, with the material, damping d, density and wave speeds per
//!   element, and per node the aligned and greedy blocks (Fig. 7's partitions), the lumped mass and the source and receiver marks;
//! - `Kp.mtx`, `Cp.mtx`, `F.mtx`: Eq. (4)'s K' (over all 2N dofs, dof 2i + a is node i's
//!   direction a), C' and F' (F'(t) = F' signal(t)) as Matrix Market, for `scipy.io.mmread`;
//! - `fig7-NAME-aligned.png`, `fig7-NAME-greedy.png`: Fig. 7, the two partitions of a section;
//! - `model.json`: the time step, increments, signal, source direction, receivers and the CFL
//!   limit.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::super::model::{Model, Signal};
use super::super::system::{lumped, System};
use crate::fem::aligned::Blocking;
use crate::fem::elements::Elements;
use crate::fem::partition;

/// The MSH 2.2 text of a model (materials as physical groups; source and receivers as points).
pub fn to_msh(m: &Model) -> String {
    let mut out = format!("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n{}\n", m.nodes());
    for (i, p) in m.mesh.points.iter().enumerate() {
        let _ = writeln!(out, "{} {:.17e} {:.17e} 0", i + 1, p[0], p[1]);
    }
    let points: Vec<(u32, usize)> =
        m.source.nodes.iter().map(|&v| (v, 100)).chain(m.receivers.iter().enumerate().map(|(i, &v)| (v, 201 + i))).collect();
    let _ = write!(out, "$EndNodes\n$Elements\n{}\n", points.len() + m.mesh.tris.len());
    let mut tag = 0;
    for &(v, group) in &points {
        tag += 1;
        let _ = writeln!(out, "{tag} 15 2 {group} {group} {}", v + 1);
    }
    for (t, &mat) in m.mesh.tris.iter().zip(&m.material) {
        tag += 1;
        let g = mat as usize + 1;
        let _ = writeln!(out, "{tag} 2 2 {g} {g} {} {} {}", t[0] + 1, t[1] + 1, t[2] + 1);
    }
    out += "$EndElements\n";
    out
}

fn signal_json(s: &Signal) -> serde_json::Value {
    match *s {
        Signal::Hann { freq, cycles } => serde_json::json!({"kind": "hann", "frequency_hz": freq, "cycles": cycles}),
        Signal::Gaussian { a, t0 } => serde_json::json!({"kind": "gaussian", "formula": "exp(-a (t - t0)^2)", "a": a, "t0_s": t0}),
        Signal::None => serde_json::json!({"kind": "none"}),
    }
}

/// The section Fig. 7 shows: for the weld, 24 mm of the plate around the weld through its
/// thickness; for other models, the middle third of their width.
fn fig7_window(m: &Model) -> [f64; 4] {
    let (lo, hi) = m.mesh.points.iter().fold(([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]), |(lo, hi), p| {
        ([lo[0].min(p[0]), lo[1].min(p[1])], [hi[0].max(p[0]), hi[1].max(p[1])])
    });
    let (cx, w) = ((lo[0] + hi[0]) / 2.0, if m.name == "weld" { 12e-3 } else { (hi[0] - lo[0]) / 6.0 });
    [cx - w, cx + w, lo[1], hi[1]]
}

/// Writes the model's files into `dir` and returns their paths.
pub fn write_model(m: &Model, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let msh = dir.join(format!("{}.msh", m.name));
    std::fs::write(&msh, to_msh(m))?;
    let sys = System::build(m);
    let flat: Vec<u32> = m.mesh.tris.iter().flatten().copied().collect();
    let elements = Elements { nodes: &flat, per_element: 3, corners: 3, num_nodes: m.nodes() };
    let blocks = partition::greedy_nodes(elements, 512);
    let aligned = fembench_fem::aligned::aligned_nodes(elements, &m.mesh.points, &Default::default());
    let mut paths = vec![msh, write_vtu(m, dir, (&blocks, &aligned))?];
    paths.extend(write_fig7(m, dir, (&blocks, &aligned))?);
    paths.extend(write_operators(m, dir, &sys)?);
    paths.push(write_json(m, dir, &sys, (&blocks, &aligned))?);
    Ok(paths)
}

/// The mesh with its blocks (greedy and aligned), lumped mass, source and receivers on the
/// nodes and its materials on the elements, for ParaView.
fn write_vtu(m: &Model, dir: &Path, (blocks, aligned): (&[u32], &Blocking)) -> std::io::Result<PathBuf> {
    let (mass, _) = lumped(m);
    let (x, y): (Vec<f64>, Vec<f64>) = m.mesh.points.iter().map(|p| (p[0], p[1])).unzip();
    let mut src = vec![0.0; m.nodes()];
    m.source.nodes.iter().for_each(|&v| src[v as usize] = 1.0);
    let mut rec = vec![0.0; m.nodes()];
    m.receivers.iter().enumerate().for_each(|(i, &v)| rec[v as usize] = (i + 1) as f64);
    let block: Vec<f64> = blocks.iter().map(|&b| b as f64).collect();
    let aligned_block: Vec<f64> = aligned.block.iter().map(|&b| b as f64).collect();
    let per_element = |f: &dyn Fn(usize) -> f64| (0..m.mesh.tris.len()).map(f).collect::<Vec<f64>>();
    let mat = |e: usize| &m.materials[m.material[e] as usize];
    let (material, rho) = (per_element(&|e| m.material[e] as f64), per_element(&|e| mat(e).rho));
    let (vp, vs) = (per_element(&|e| mat(e).vp()), per_element(&|e| mat(e).vs()));
    let vtu = dir.join(format!("{}.vtu", m.name));
    fembench_fem::vtu::write_triangles(
        &vtu,
        &x,
        &y,
        &m.mesh.tris,
        &[("aligned_block", &aligned_block), ("greedy_block", &block), ("lumped_mass", &mass), ("source", &src), ("receiver", &rec)],
        &[("material", &material), ("damping", &m.damping), ("density", &rho), ("vp", &vp), ("vs", &vs)],
    )?;
    Ok(vtu)
}

/// Fig. 7: the two partitions of a section of the model, as pictures.
fn write_fig7(m: &Model, dir: &Path, (blocks, aligned): (&[u32], &Blocking)) -> std::io::Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    let window = fig7_window(m);
    for (name, b) in [("aligned", &aligned.block[..]), ("greedy", blocks)] {
        let nb = b.iter().max().map_or(0, |&x| x + 1);
        let title = format!(
            "{} model, {name} blocks of 512 nodes: {nb} blocks, eta {:.1}%",
            m.name,
            100.0 * m.nodes() as f64 / (nb as f64 * 512.0)
        );
        let png = dir.join(format!("fig7-{}-{name}.png", m.name));
        let mesh = (&m.mesh.points[..], &m.mesh.tris[..]);
        crate::report::figure::draw_partition(&png, &title, mesh, b, &m.material, window).map_err(std::io::Error::other)?;
        paths.push(png);
    }
    Ok(paths)
}

/// Eq. (4)'s operators as Matrix Market files: K', C' and F'.
fn write_operators(m: &Model, dir: &Path, sys: &System) -> std::io::Result<Vec<PathBuf>> {
    let header = format!(
        "fembench: Pogo (Huthwaite 2014) {} model, Eq. (4): U_next = F' signal(t) + C' U_prev + K' U_curr\n\
         {} nodes, {} dofs (dof 2i + a: node i, direction a = 0 x, 1 y), {} elements, dt = {:e} s",
        m.name,
        m.nodes(),
        m.dofs(),
        m.mesh.tris.len(),
        m.dt
    );
    let n = 2 * m.nodes();
    let kp = dir.join("Kp.mtx");
    fembench_fem::mtx::write_csr(&kp, &header, n, &sys.pattern.row_ptr, &sys.pattern.col, &sys.kp)?;
    let cp = dir.join("Cp.mtx");
    fembench_fem::mtx::write_vector(&cp, &header, &sys.cp)?;
    let mut f = vec![0.0; n];
    sys.src_dof.iter().zip(&sys.src_coef).for_each(|(&d, &c)| f[d as usize] = c);
    let fp = dir.join("F.mtx");
    fembench_fem::mtx::write_vector(&fp, &header, &f)?;
    Ok(vec![kp, cp, fp])
}

/// The model's facts (sizes, time step, signal, source, receivers, materials, block counts).
fn write_json(m: &Model, dir: &Path, sys: &System, (blocks, aligned): (&[u32], &Blocking)) -> std::io::Result<PathBuf> {
    let json = serde_json::json!({
        "model": m.name,
        "nodes": m.nodes(),
        "dofs": m.dofs(),
        "elements": m.mesh.tris.len(),
        "element_size_m": m.element_size,
        "dt_s": m.dt,
        "critical_dt_s": m.critical_dt(),
        "increments": m.increments,
        "signal": signal_json(&m.source.signal),
        "source_direction": m.source.direction,
        "source_nodes": m.source.nodes,
        "receiver_nodes": m.receivers,
        "receiver_dofs": sys.rec_dof,
        "materials": m.materials.iter().map(|mt| serde_json::json!({"density": mt.rho, "vp": mt.vp(), "vs": mt.vs()})).collect::<Vec<_>>(),
        "greedy_blocks": blocks.iter().max().map_or(0, |&b| b + 1),
        "aligned_blocks": aligned.blocks,
    });
    let jp = dir.join("model.json");
    std::fs::write(&jp, serde_json::to_string_pretty(&json).map_err(std::io::Error::other)?)?;
    Ok(jp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pogo::model;

    /// The files read back: the mesh by the Gmsh reader (nodes, triangles, and each triangle's
    /// material group), K' by its product with a known vector (a transposed or shifted export
    /// fails), F' and the JSON.
    #[test]
    fn exported_model_files_read_back() {
        let m = model::weld(1.2e-3);
        let dir = tempfile::tempdir().unwrap();
        let paths = write_model(&m, dir.path()).unwrap();
        assert_eq!(paths.len(), 8);
        // The MSH 2.2 sections: every node with its coordinates, every triangle with its nodes
        // and its material's group, the source and the receivers as points.
        let msh = std::fs::read_to_string(dir.path().join("weld.msh")).unwrap();
        let section = |name: &str| -> Vec<Vec<f64>> {
            let start = msh.find(&format!("${name}\n")).unwrap() + name.len() + 2;
            let end = msh.find(&format!("$End{name}")).unwrap();
            msh[start..end].lines().skip(1).map(|l| l.split_whitespace().map(|v| v.parse().unwrap()).collect()).collect()
        };
        let nodes = section("Nodes");
        assert_eq!(nodes.len(), m.nodes());
        for (row, p) in nodes.iter().zip(&m.mesh.points) {
            assert_eq!((row[1], row[2]), (p[0], p[1]));
        }
        let elements = section("Elements");
        let tris: Vec<&Vec<f64>> = elements.iter().filter(|r| r[1] == 2.0).collect();
        assert_eq!(tris.len(), m.mesh.tris.len());
        for ((row, t), &k) in tris.iter().zip(&m.mesh.tris).zip(&m.material) {
            assert_eq!(row[3] as u8, k + 1);
            assert_eq!([row[5], row[6], row[7]], t.map(|v| (v + 1) as f64));
        }
        let points: Vec<(usize, u32)> = elements.iter().filter(|r| r[1] == 15.0).map(|r| (r[3] as usize, r[5] as u32 - 1)).collect();
        let mut want = vec![(100, m.source.nodes[0])];
        want.extend(m.receivers.iter().enumerate().map(|(i, &v)| (201 + i, v)));
        assert_eq!(points, want);
        assert!(m.material.contains(&0) && m.material.contains(&1));

        let sys = System::build(&m);
        let n = 2 * m.nodes();
        let text = std::fs::read_to_string(dir.path().join("Kp.mtx")).unwrap();
        let mut lines = text.lines().filter(|l| !l.starts_with('%'));
        let dims: Vec<usize> = lines.next().unwrap().split_whitespace().map(|v| v.parse().unwrap()).collect();
        assert_eq!(dims, vec![n, n, sys.pattern.col.len()]);
        let mut y_file = vec![0.0; n];
        for l in lines {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (i, j, v): (usize, usize, f64) = (f[0].parse().unwrap(), f[1].parse().unwrap(), f[2].parse().unwrap());
            y_file[i - 1] += v * j as f64;
        }
        for r in 0..n {
            let want: f64 = (sys.pattern.row_ptr[r]..sys.pattern.row_ptr[r + 1])
                .map(|q| sys.kp[q as usize] * (sys.pattern.col[q as usize] + 1) as f64)
                .sum();
            assert!((y_file[r] - want).abs() <= 1e-12 * want.abs().max(1.0), "row {r}: {} vs {want}", y_file[r]);
        }
        let f = std::fs::read_to_string(dir.path().join("F.mtx")).unwrap();
        let nonzero = f.lines().filter(|l| !l.starts_with('%')).skip(1).filter(|l| l.parse::<f64>().unwrap() != 0.0).count();
        assert_eq!(nonzero, sys.src_dof.len());
        let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("model.json")).unwrap()).unwrap();
        assert_eq!(json["dofs"].as_u64(), Some(m.dofs() as u64));
        assert_eq!(json["signal"]["kind"], "hann");
        // Both blockings: fewer aligned blocks than greedy ones on the weld, each at least
        // nodes / 512; Fig. 7's pictures are PNG files.
        let (a, g) = (json["aligned_blocks"].as_u64().unwrap(), json["greedy_blocks"].as_u64().unwrap());
        assert!(a >= m.nodes().div_ceil(512) as u64 && a <= g, "aligned {a}, greedy {g}");
        // In the run's node order the exported blocks are the run's own (Fig. 7 from the same
        // build and numbering as the run's tables).
        let dir = tempfile::tempdir().unwrap();
        write_model(&crate::pogo::prepared::in_run_order(model::weld(1.2e-3)), dir.path()).unwrap();
        let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("model.json")).unwrap()).unwrap();
        let run = crate::pogo::prepared::Prepared::new(|| model::weld(1.2e-3), 10, 512).unwrap();
        assert_eq!(json["aligned_blocks"].as_u64(), Some(run.aligned.blocks as u64));
        assert_eq!(json["greedy_blocks"].as_u64(), Some(run.greedy_blocks as u64));
        for name in ["aligned", "greedy"] {
            let png = std::fs::read(dir.path().join(format!("fig7-weld-{name}.png"))).unwrap();
            assert_eq!(&png[1..4], b"PNG");
        }
    }
}
