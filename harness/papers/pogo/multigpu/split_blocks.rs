//! The paper's kernel on one part of a split model: the part's nodes in blocks of 512 arranged as
//! section 3.2 does ([`crate::pogo::arrange`]), its K' and link pointers as the kernel reads them
//! ([`BlockData`]). The blocks come in three runs:
//! - the blocks of the nodes the part sends, stepped first so that their U can travel while
//! - the interior blocks are stepped;
//! - the halo blocks: the nodes the part receives, which its blocks load through their tables
//!   and no thread steps (they have no rows, so no link pointer).
//!
//! A part's blocks are the one-GPU blocks (the aligned blocker's, on the whole model) cut by
//! the part and by the three kinds of node, so that a part of a one-part split has the one-GPU
//! blocks. A halo block holds at most 128 nodes: all of them lie in the four rows that other
//! blocks load. Its nodes have no links, so it needs no loads of its own. Each node's links are
//! the node, then its neighbours in the model's order, on every part: a part's sums are the
//! one-part run's, in the same order.

use super::split::Part;
use crate::pogo::arrange::{arrange, EDGE_ROWS, WIDTH};
use crate::pogo::blocked::BlockData;

/// A part's arrangement for the paper's kernel.
pub struct PartBlocks {
    pub data: BlockData,
    /// Blocks `0..sent` hold the nodes the part sends, `sent..owned` its interior and
    /// `owned..` its halo.
    pub sent: usize,
    pub owned: usize,
}

impl PartBlocks {
    /// Where the part's node k lies in the x plane (its y at that plus the plane's length).
    pub fn position(&self, k: u32) -> u32 {
        self.data.global[k as usize]
    }
}

/// The three kinds of a part's nodes, in the order their blocks come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Sent,
    Interior,
    Halo,
}

fn kind(part: &Part, k: usize) -> Kind {
    if k < part.interior {
        Kind::Interior
    } else if k < part.owned {
        Kind::Sent
    } else {
        Kind::Halo
    }
}

/// The part's node graph on its own numbering: an owned node's neighbours (its rows' columns
/// in the model's order, the node itself left out); a halo node has none.
fn local_graph(part: &Part) -> (Vec<usize>, Vec<u32>) {
    let p = &part.sys.pattern;
    let mut xadj = Vec::with_capacity(part.len() + 1);
    let mut adj = Vec::new();
    xadj.push(0);
    for k in 0..part.len() {
        let row = p.row_ptr[2 * k] as usize..p.row_ptr[2 * k + 1] as usize;
        adj.extend(p.col[row].iter().step_by(2).map(|&c| c / 2).filter(|&j| j as usize != k));
        xadj.push(adj.len());
    }
    (xadj, adj)
}

/// The part's first blocks: each one-GPU block (`model_block`, by model node) cut by the three
/// kinds, the halo's pieces cut again to at most four rows of nodes; numbered by kind, then by
/// the one-GPU block.
fn first_blocks(part: &Part, model_block: &[u32]) -> Vec<u32> {
    let mut keyed: Vec<(Kind, u32, u32)> =
        (0..part.len()).map(|k| (kind(part, k), model_block[part.node_at[k] as usize], k as u32)).collect();
    keyed.sort_unstable();
    let mut block = vec![0u32; part.len()];
    let (mut id, mut fill) = (0u32, 0usize);
    for (q, &(kd, b, k)) in keyed.iter().enumerate() {
        let cap = if kd == Kind::Halo { EDGE_ROWS * WIDTH } else { usize::MAX };
        let new_group = q > 0 && (keyed[q - 1].0, keyed[q - 1].1) != (kd, b);
        if q > 0 && (new_group || fill == cap) {
            id += 1;
            fill = 0;
        }
        block[k as usize] = id;
        fill += 1;
    }
    block
}

/// Blocks renumbered by kind (sent, interior, halo), then by number, with where each kind's
/// blocks end.
fn by_kind(part: &Part, block: &[u32]) -> (Vec<u32>, [usize; 2]) {
    let blocks = block.iter().map(|&b| b as usize + 1).max().unwrap_or(0);
    let mut kind_of = vec![Kind::Interior; blocks];
    block.iter().enumerate().for_each(|(k, &b)| kind_of[b as usize] = kind(part, k));
    let mut order: Vec<u32> = (0..blocks as u32).collect();
    order.sort_by_key(|&b| (kind_of[b as usize], b));
    let mut new_of = vec![0u32; blocks];
    order.iter().enumerate().for_each(|(n, &b)| new_of[b as usize] = n as u32);
    let ends = [Kind::Sent, Kind::Interior].map(|k| kind_of.iter().filter(|&&x| x <= k).count());
    (block.iter().map(|&b| new_of[b as usize]).collect(), ends)
}

/// The part arranged for the paper's kernel. `model_block` is each model node's one-GPU block
/// and `points` the model's node coordinates. Blocks that the arrangement splits come back
/// numbered after every other; the arrangement is then made again with its blocks in kind order.
pub fn arrange_part(part: &Part, model_block: &[u32], points: &[[f64; 2]]) -> Result<PartBlocks, String> {
    let (xadj, adj) = local_graph(part);
    let local_points: Vec<[f64; 2]> = part.node_at.iter().map(|&i| points[i as usize]).collect();
    let mut block = first_blocks(part, model_block);
    for _ in 0..4 {
        let arr = arrange(&xadj, &adj, &local_points, &block, 200)?;
        let now: Vec<u32> = arr.slot.iter().map(|&s| s / crate::pogo::arrange::BLOCK as u32).collect();
        let (ordered, [sent, owned]) = by_kind(part, &now);
        if ordered == now {
            return Ok(PartBlocks { data: BlockData::new(&part.sys, arr), sent, owned });
        }
        block = ordered;
    }
    Err("the part's blocks did not settle in kind order after four arrangements".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fem::aligned::aligned_nodes;
    use crate::fem::elements::Elements;
    use crate::fem::partition;
    use crate::pogo::model::weld;
    use crate::pogo::multigpu::split::Split;
    use crate::pogo::prepared::in_run_order;
    use crate::pogo::system::System;

    struct Fixture {
        sys: System,
        model: crate::pogo::model::Model,
        blocks: Vec<u32>,
    }

    fn fixture(h: f64) -> Fixture {
        let model = in_run_order(weld(h));
        let sys = System::build(&model);
        let flat: Vec<u32> = model.mesh.tris.iter().flatten().copied().collect();
        let elements = Elements { nodes: &flat, per_element: 3, corners: 3, num_nodes: model.nodes() };
        let blocks = aligned_nodes(elements, &model.mesh.points, &Default::default()).block;
        Fixture { sys, model, blocks }
    }

    fn split(f: &Fixture, parts: usize) -> Split {
        let flat: Vec<u32> = f.model.mesh.tris.iter().flatten().copied().collect();
        let elements = Elements { nodes: &flat, per_element: 3, corners: 3, num_nodes: f.model.nodes() };
        let owner = partition::metis_nodes(elements, parts).unwrap().into_iter().map(|p| p as u32).collect();
        Split::new(&f.sys, owner, parts, &(0..f.model.nodes() as u32).collect::<Vec<_>>(), 64)
    }

    /// `steps` increments of every part with the paper's kernel on the host from `start` (dof
    /// order), the halo handed over after each where `hand_over`; the model's U (dof order).
    fn run(f: &Fixture, split: &Split, arranged: &[PartBlocks], start: &[f64], steps: usize, hand_over: bool) -> Vec<f64> {
        let mut u: Vec<[Vec<f64>; 3]> = split
            .parts
            .iter()
            .zip(arranged)
            .map(|(part, pb)| {
                let local: Vec<f64> = part.node_at.iter().flat_map(|&i| [start[2 * i as usize], start[2 * i as usize + 1]]).collect();
                let placed = pb.data.from_dofs(&local);
                [placed.clone(), placed, vec![0.0; 2 * pb.data.slots]]
            })
            .collect();
        for k in 0..steps {
            let amp = f.model.source.signal.at(k as f64 * f.model.dt);
            for (pb, [prev, curr, next]) in arranged.iter().zip(u.iter_mut()) {
                pb.data.step_host(prev, curr, next, amp);
            }
            for (q, part) in split.parts.iter().enumerate() {
                for r in part.recvs.iter().filter(|_| hand_over) {
                    let send = split.parts[r.peer].sends.iter().find(|l| l.peer == q).unwrap();
                    let (from, to) = (&arranged[r.peer], &arranged[q]);
                    for (&h, &s) in r.at.iter().zip(&send.at) {
                        let (a, b) = (from.position(s) as usize, to.position(h) as usize);
                        let (x, y) = (u[r.peer][2][a], u[r.peer][2][from.data.slots + a]);
                        u[q][2][b] = x;
                        u[q][2][to.data.slots + b] = y;
                    }
                }
            }
            u.iter_mut().for_each(|v| v.rotate_left(1));
        }
        let mut out = vec![f64::NAN; 2 * f.sys.nodes];
        for ((part, pb), v) in split.parts.iter().zip(arranged).zip(&u) {
            for (k, &i) in part.node_at[..part.owned].iter().enumerate() {
                let g = pb.position(k as u32) as usize;
                out[2 * i as usize] = v[1][g];
                out[2 * i as usize + 1] = v[1][pb.data.slots + g];
            }
        }
        out
    }

    #[test]
    fn a_part_has_its_sent_then_interior_then_halo_blocks_and_halo_blocks_fit_four_rows() {
        let f = fixture(1.2e-3);
        let s = split(&f, 3);
        for part in &s.parts {
            let pb = arrange_part(part, &f.blocks, &f.model.mesh.points).unwrap();
            let arr = &pb.data.arr;
            assert!(0 < pb.sent && pb.sent < pb.owned && pb.owned < arr.blocks, "{} {} {}", pb.sent, pb.owned, arr.blocks);
            for k in 0..part.len() {
                let (b, p) = (arr.slot[k] as usize / 512, arr.slot[k] as usize % 512);
                let want = match kind(part, k) {
                    Kind::Sent => 0..pb.sent,
                    Kind::Interior => pb.sent..pb.owned,
                    Kind::Halo => pb.owned..arr.blocks,
                };
                assert!(want.contains(&b), "node {k} in block {b}");
                if kind(part, k) == Kind::Halo {
                    assert!(p < EDGE_ROWS * WIDTH, "a halo node at slot {p}");
                }
            }
        }
    }

    #[test]
    fn the_paper_kernel_on_parts_equals_the_one_part_run_to_the_bit_and_a_dropped_halo_shows() {
        let f = fixture(1.2e-3);
        let start = crate::pogo::multigpu::gpu::start_state(2 * f.sys.nodes);
        let one = split(&f, 1);
        let one_blocks: Vec<PartBlocks> = one.parts.iter().map(|p| arrange_part(p, &f.blocks, &f.model.mesh.points).unwrap()).collect();
        let want = run(&f, &one, &one_blocks, &start, 40, true);
        assert!(want.iter().all(|v| v.is_finite()));
        for parts in [2, 3] {
            let s = split(&f, parts);
            let arranged: Vec<PartBlocks> = s.parts.iter().map(|p| arrange_part(p, &f.blocks, &f.model.mesh.points).unwrap()).collect();
            assert_eq!(run(&f, &s, &arranged, &start, 40, true), want, "{parts} parts");
            let dropped = run(&f, &s, &arranged, &start, 40, false);
            assert!(crate::fem::verify::relative_l2(&dropped, &want) > 1e-6, "{parts} parts without the halo");
        }
        // And the one-part run is the CPU's Eq. (4) within rounding (another summation order).
        let mut cpu = [start.clone(), start.clone(), vec![0.0; start.len()]];
        for k in 0..40 {
            let [a, b, c] = &mut cpu;
            f.sys.step(a, b, c, f.model.source.signal.at(k as f64 * f.model.dt), false);
            cpu.rotate_left(1);
        }
        assert!(crate::fem::verify::relative_l2(&want, &cpu[1]) < 1e-12);
    }
}
