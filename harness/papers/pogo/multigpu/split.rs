//! The model split into P parts for P GPUs (issue: Pogo across GPUs): METIS k-way on the node
//! graph (least edge cut, balanced nodes, so balanced DOFs), and each part's own numbering:
//! its interior nodes first, then the nodes it sends to other parts, then the halo it receives
//! (grouped by the part that owns it). A part's K' rows are the model's rows of its owned nodes
//! with the columns renumbered and their order kept, so a part's step sums exactly what the
//! one-part step sums, in the same order: a P-part run equals the one-part run to the bit.
//!
//! Each increment a part steps its sent rows, hands their new U to its neighbours (which write
//! it into their halo), and steps its interior rows meanwhile ([`Split::step`] does it on the
//! host; the device run overlaps the exchange with the interior rows).

use crate::fem::csr::Pattern;
use crate::pogo::system::System;

/// The nodes one part exchanges with one neighbour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub peer: usize,
    /// Local positions (nodes): for a send, the owned nodes whose U the peer receives, in the
    /// order of the peer's halo; for a receive, the halo positions, ascending and contiguous.
    pub at: Vec<u32>,
}

impl Link {
    /// The first position where `at` is one contiguous ascending run (the exchange then reads or
    /// writes U in place, with no packing).
    pub fn contiguous(&self) -> Option<u32> {
        let first = *self.at.first()?;
        self.at.iter().enumerate().all(|(k, &q)| q == first + k as u32).then_some(first)
    }
}

/// One part: its nodes, their rows of K' and what it exchanges.
pub struct Part {
    /// The model's node at each local position: interior, sent, halo.
    pub node_at: Vec<u32>,
    /// Positions [0, interior) are owned nodes no other part reads.
    pub interior: usize,
    /// Positions [interior, owned) are owned nodes another part reads; [owned, len) the halo.
    pub owned: usize,
    pub sends: Vec<Link>,
    pub recvs: Vec<Link>,
    /// Eq. (4)'s operators on the local numbering: the owned rows (their columns local), and
    /// empty halo rows (C' zero there); sources and receivers of the owned nodes only.
    pub sys: System,
    /// For each of `sys.rec_dof`, its index among the model's receiver dofs.
    pub rec_index: Vec<usize>,
}

impl Part {
    pub fn len(&self) -> usize {
        self.node_at.len()
    }
    pub fn is_empty(&self) -> bool {
        self.node_at.is_empty()
    }
    /// Nodes this part sends per increment (counted once per neighbour).
    pub fn sent_nodes(&self) -> usize {
        self.sends.iter().map(|l| l.at.len()).sum()
    }
}

pub struct Split {
    pub parts: Vec<Part>,
    /// Each model node's part.
    pub owner: Vec<u32>,
}

impl Split {
    /// `sys` split by `owner` (each node's part, 0..parts). `rank` is each node's position in
    /// the one-GPU order (a part without a cut keeps it); `sigma` the window of the sort by link
    /// count (SELL-C-sigma; 1: none) within each segment (see [`CutOrder`]).
    pub fn new(sys: &System, owner: Vec<u32>, parts: usize, rank: &[u32], sigma: usize) -> Split {
        let n = sys.nodes;
        assert_eq!(owner.len(), n, "one part per node");
        let (p, d) = (&sys.pattern, sys.dim);
        let neighbours =
            |i: usize| p.col[p.row_ptr[d * i] as usize..p.row_ptr[d * i + 1] as usize].iter().step_by(d).map(move |&c| c as usize / d);
        // Who reads each node outside its own part: the parts that hold a neighbour of it.
        let readers: Vec<Vec<u32>> = (0..n)
            .map(|i| {
                let mut r: Vec<u32> = neighbours(i).map(|j| owner[j]).filter(|&q| q != owner[i]).collect();
                r.sort_unstable();
                r.dedup();
                r
            })
            .collect();
        let by_rank = |v: &mut Vec<u32>| v.sort_by_key(|&i| rank[i as usize]);
        let mut interior: Vec<Vec<u32>> = vec![Vec::new(); parts];
        let mut sent: Vec<Vec<u32>> = vec![Vec::new(); parts];
        for i in 0..n {
            let list = if readers[i].is_empty() { &mut interior } else { &mut sent };
            list[owner[i] as usize].push(i as u32);
        }
        interior.iter_mut().chain(sent.iter_mut()).for_each(by_rank);
        let links = |i: u32| (p.row_ptr[d * i as usize + 1] - p.row_ptr[d * i as usize]) as usize / d;
        let mut seen = vec![false; n];
        for q in 0..parts {
            let order = CutOrder { owner: &owner, part: q as u32, rank, sigma, links: &links };
            order.apply(&mut interior[q], &mut sent[q], &neighbours, &mut seen);
        }
        // Part q's halo from part p: p's sent nodes that q reads, in p's order.
        let halo_from = |q: usize, from: usize| -> Vec<u32> {
            sent[from].iter().copied().filter(|&i| readers[i as usize].binary_search(&(q as u32)).is_ok()).collect()
        };
        // Each part's positions: interior, sent, then the halo grouped by owner.
        let layouts: Vec<(Vec<u32>, usize, Vec<Link>)> = (0..parts)
            .map(|q| {
                let mut node_at = interior[q].clone();
                node_at.extend(&sent[q]);
                let owned = node_at.len();
                let mut recvs = Vec::new();
                for from in (0..parts).filter(|&f| f != q) {
                    let halo = halo_from(q, from);
                    if !halo.is_empty() {
                        let start = node_at.len() as u32;
                        recvs.push(Link { peer: from, at: (start..start + halo.len() as u32).collect() });
                        node_at.extend(halo);
                    }
                }
                (node_at, owned, recvs)
            })
            .collect();
        // Sends mirror the receives: part p sends to q, in q's halo order, what q receives from
        // p. `local` maps a model node to its position in the part at hand.
        let mut local = vec![u32::MAX; n];
        let mut parts_out = Vec::with_capacity(parts);
        for (p_, (node_at, owned, recvs)) in layouts.iter().enumerate() {
            node_at.iter().enumerate().for_each(|(k, &i)| local[i as usize] = k as u32);
            let sends = (0..parts)
                .filter(|&q| q != p_)
                .filter_map(|q| {
                    let r = layouts[q].2.iter().find(|l| l.peer == p_)?;
                    Some(Link { peer: q, at: r.at.iter().map(|&h| local[layouts[q].0[h as usize] as usize]).collect() })
                })
                .collect();
            let (sys_local, rec_index) = local_system(sys, node_at, *owned, &local);
            parts_out.push(Part {
                node_at: node_at.clone(),
                interior: interior[p_].len(),
                owned: *owned,
                sends,
                recvs: recvs.clone(),
                sys: sys_local,
                rec_index,
            });
        }
        Split { parts: parts_out, owner }
    }

    /// One increment of every part on the host: each part steps its rows, then the new U of the
    /// sent nodes goes into the neighbours' halos. `u[p]` holds part p's (prev, curr, next).
    pub fn step(&self, u: &mut [[Vec<f64>; 3]], amp: f64) {
        let d = self.dim();
        for (part, [prev, curr, next]) in self.parts.iter().zip(u.iter_mut()) {
            part.sys.step(prev, curr, next, amp, false);
        }
        for (q, part) in self.parts.iter().enumerate() {
            for r in &part.recvs {
                let send = self.parts[r.peer].sends.iter().find(|l| l.peer == q).expect("a send for every receive");
                for (&h, &s) in r.at.iter().zip(&send.at) {
                    for a in 0..d {
                        let v = u[r.peer][2][d * s as usize + a];
                        u[q][2][d * h as usize + a] = v;
                    }
                }
            }
        }
        u.iter_mut().for_each(|v| v.rotate_left(1));
    }

    /// The model's U (dof order) from the parts' `curr` vectors (their owned nodes).
    pub fn gather(&self, curr: &[&[f64]]) -> Vec<f64> {
        let d = self.dim();
        let mut out = vec![0.0; d * self.owner.len()];
        for (part, u) in self.parts.iter().zip(curr) {
            for (k, &i) in part.node_at[..part.owned].iter().enumerate() {
                out[d * i as usize..d * i as usize + d].copy_from_slice(&u[d * k..d * k + d]);
            }
        }
        out
    }

    /// Dofs per node.
    pub fn dim(&self) -> usize {
        self.parts.first().map_or(2, |p| p.sys.dim)
    }

    /// Halo nodes over all parts: the nodes that cross a link each increment.
    pub fn halo_nodes(&self) -> usize {
        self.parts.iter().map(|p| p.len() - p.owned).sum()
    }

    /// The largest part's owned nodes over the mean (1: perfect balance).
    pub fn imbalance(&self) -> f64 {
        let max = self.parts.iter().map(|p| p.owned).max().unwrap_or(0) as f64;
        max * self.parts.len() as f64 / self.owner.len().max(1) as f64
    }
}

/// A part's owned nodes in the order its GPU steps them: reverse Cuthill-McKee grown from the
/// nodes it sends, so the interior comes first, farthest from the cut first, and the sent nodes
/// last. A node's links then reach at most about two cut lengths away (and the halo, numbered
/// after the sent nodes, as far), so 16-bit column offsets fit where a part is numbered in the
/// one-GPU order they do not. Each segment is then sorted by link count within windows of
/// `sigma` (SELL-C-sigma), as the one-GPU order is. A part that sends nothing keeps the one-GPU
/// order.
struct CutOrder<'a, L: Fn(u32) -> usize> {
    owner: &'a [u32],
    part: u32,
    rank: &'a [u32],
    sigma: usize,
    links: &'a L,
}

impl<L: Fn(u32) -> usize> CutOrder<'_, L> {
    fn apply<I: Iterator<Item = usize>>(
        &self,
        interior: &mut Vec<u32>,
        sent: &mut Vec<u32>,
        neighbours: &impl Fn(usize) -> I,
        seen: &mut [bool],
    ) {
        if sent.is_empty() {
            return;
        }
        let mut order = sent.clone();
        order.iter().for_each(|&i| seen[i as usize] = true);
        let mut head = 0;
        while head < order.len() {
            let i = order[head] as usize;
            head += 1;
            let mut next: Vec<u32> = neighbours(i).filter(|&j| self.owner[j] == self.part && !seen[j]).map(|j| j as u32).collect();
            next.sort_by_key(|&j| self.rank[j as usize]);
            next.dedup();
            next.iter().for_each(|&j| seen[j as usize] = true);
            order.extend(next);
        }
        // Interior nodes no path from the cut reaches (an island of the part) go first.
        let mut rest: Vec<u32> = interior.iter().copied().filter(|&i| !seen[i as usize]).collect();
        order.reverse();
        let cut = order.len() - sent.len();
        rest.extend_from_slice(&order[..cut]);
        *interior = rest;
        *sent = order[cut..].to_vec();
        for v in [&mut *interior, &mut *sent] {
            if self.sigma > 1 {
                v.chunks_mut(self.sigma).for_each(|w| w.sort_by_key(|&i| std::cmp::Reverse((self.links)(i))));
            }
        }
    }
}

/// A part's operators on its own numbering (`node_at`, its first `owned` positions its own;
/// `local` maps each of its nodes to its position), and its receivers' indices among the model's.
fn local_system(sys: &System, node_at: &[u32], owned: usize, local: &[u32]) -> (System, Vec<usize>) {
    let (p, d) = (&sys.pattern, sys.dim);
    let nodes = node_at.len();
    let mut row_ptr = Vec::with_capacity(d * nodes + 1);
    row_ptr.push(0u32);
    let (mut col, mut kp) = (Vec::new(), Vec::new());
    let mut cp = vec![0.0; d * nodes];
    for (k, &i) in node_at.iter().enumerate() {
        for a in 0..d {
            let r = d * i as usize + a;
            if k < owned {
                for q in p.row_ptr[r] as usize..p.row_ptr[r + 1] as usize {
                    let c = p.col[q] as usize;
                    col.push((d * local[c / d] as usize + c % d) as u32);
                    kp.push(sys.kp[q]);
                }
                cp[d * k + a] = sys.cp[r];
            }
            row_ptr.push(col.len() as u32);
        }
    }
    // A dof of a node this part owns (`local` holds stale positions of other parts' nodes, so
    // ownership is checked on the position's node).
    let owned_dof = |r: u32| {
        let k = local[r as usize / d];
        ((k as usize) < owned && node_at[k as usize] as usize == r as usize / d).then(|| (d * k as usize + r as usize % d) as u32)
    };
    let mut src: Vec<(u32, f64)> = sys.src_dof.iter().zip(&sys.src_coef).filter_map(|(&d, &c)| owned_dof(d).map(|l| (l, c))).collect();
    src.sort_by_key(|s| s.0);
    let (src_dof, src_coef) = src.into_iter().unzip();
    let (rec_dof, rec_index) = sys.rec_dof.iter().enumerate().filter_map(|(t, &d)| owned_dof(d).map(|l| (l, t))).unzip();
    let local = System { nodes, dim: d, pattern: Pattern { row_ptr, col }, kp, cp, src_dof, src_coef, rec_dof, row_bound: sys.row_bound };
    (local, rec_index)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fem::elements::Elements;
    use crate::fem::partition;
    use crate::pogo::model::weld;
    use crate::pogo::prepared::in_run_order;

    fn split_weld(parts: usize) -> (System, Split, crate::pogo::model::Model) {
        split_weld_at(parts, 1.2e-3)
    }

    fn split_weld_at(parts: usize, h: f64) -> (System, Split, crate::pogo::model::Model) {
        let model = in_run_order(weld(h));
        let sys = System::build(&model);
        let flat: Vec<u32> = model.mesh.tris.iter().flatten().copied().collect();
        let elements = Elements { nodes: &flat, per_element: 3, corners: 3, num_nodes: model.nodes() };
        let owner: Vec<u32> = partition::metis_nodes(elements, parts).unwrap().into_iter().map(|p| p as u32).collect();
        let rank: Vec<u32> = (0..model.nodes() as u32).collect();
        let split = Split::new(&sys, owner, parts, &rank, 64);
        (sys, split, model)
    }

    #[test]
    fn every_node_is_owned_once_and_the_halo_is_exactly_the_foreign_neighbours() {
        let (sys, split, _) = split_weld(3);
        let mut seen = vec![0; sys.nodes];
        let p = &sys.pattern;
        for (q, part) in split.parts.iter().enumerate() {
            part.node_at[..part.owned].iter().for_each(|&i| seen[i as usize] += 1);
            let owned: std::collections::HashSet<u32> = part.node_at[..part.owned].iter().copied().collect();
            let mut foreign: Vec<u32> = owned
                .iter()
                .flat_map(|&i| p.col[p.row_ptr[2 * i as usize] as usize..p.row_ptr[2 * i as usize + 1] as usize].iter().map(|&c| c / 2))
                .filter(|j| !owned.contains(j))
                .collect();
            foreign.sort_unstable();
            foreign.dedup();
            let mut halo = part.node_at[part.owned..].to_vec();
            halo.sort_unstable();
            assert_eq!(halo, foreign, "part {q}'s halo");
            // The sent nodes are exactly the owned nodes another part reads.
            for (k, &i) in part.node_at[..part.owned].iter().enumerate() {
                let read = split.parts.iter().enumerate().any(|(r, o)| r != q && o.node_at[o.owned..].contains(&i));
                assert_eq!(read, k >= part.interior, "node {i} of part {q}");
            }
        }
        assert!(seen.iter().all(|&s| s == 1));
        assert!(split.imbalance() < 1.1, "METIS balance: {}", split.imbalance());
    }

    #[test]
    fn a_part_numbered_from_its_cut_keeps_16_bit_column_offsets() {
        // Parts of about 70K nodes: numbered in the one-GPU order, a sent node would sit more
        // than 32K positions from its interior neighbours.
        let (_, split, _) = split_weld_at(2, 110e-6);
        assert!(split.parts.iter().all(|p| p.owned > 40_000));
        for part in &split.parts {
            let sell = crate::pogo::sell::SlicedEll::new(&part.sys, 1);
            assert!(sell.col16().is_some(), "a part of {} nodes", part.len());
        }
    }

    #[test]
    fn sends_mirror_the_receives() {
        let (_, split, _) = split_weld(4);
        for (q, part) in split.parts.iter().enumerate() {
            for r in &part.recvs {
                let from = &split.parts[r.peer];
                let s = from.sends.iter().find(|l| l.peer == q).unwrap();
                let sent: Vec<u32> = s.at.iter().map(|&k| from.node_at[k as usize]).collect();
                let got: Vec<u32> = r.at.iter().map(|&h| part.node_at[h as usize]).collect();
                assert_eq!(sent, got);
                assert!(r.contiguous().is_some());
                assert!(s.at.iter().all(|&k| (k as usize) >= from.interior && (k as usize) < from.owned));
            }
        }
    }

    #[test]
    fn a_split_step_equals_the_one_part_step_to_the_bit() {
        for parts in [1, 2, 3] {
            let (sys, split, model) = split_weld(parts);
            let n = 2 * sys.nodes;
            let mut one = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
            let mut many: Vec<[Vec<f64>; 3]> = split.parts.iter().map(|p| std::array::from_fn(|_| vec![0.0; 2 * p.len()])).collect();
            for k in 0..60 {
                let amp = model.source.signal.at(k as f64 * model.dt);
                let [a, b, c] = &mut one;
                sys.step(a, b, c, amp, false);
                one.rotate_left(1);
                split.step(&mut many, amp);
            }
            let curr: Vec<&[f64]> = many.iter().map(|u| u[1].as_slice()).collect();
            let got = split.gather(&curr);
            assert!(one[1].iter().any(|&v| v != 0.0), "the wave has started");
            assert_eq!(got, one[1], "{parts} parts");
        }
    }

    #[test]
    fn a_split_that_drops_the_exchange_is_caught() {
        let (sys, split, model) = split_weld(2);
        let n = 2 * sys.nodes;
        let mut one = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
        let mut many: Vec<[Vec<f64>; 3]> = split.parts.iter().map(|p| std::array::from_fn(|_| vec![0.0; 2 * p.len()])).collect();
        for k in 0..200 {
            let amp = model.source.signal.at(k as f64 * model.dt);
            let [a, b, c] = &mut one;
            sys.step(a, b, c, amp, false);
            one.rotate_left(1);
            for (part, [prev, curr, next]) in split.parts.iter().zip(many.iter_mut()) {
                part.sys.step(prev, curr, next, amp, false);
            }
            many.iter_mut().for_each(|v| v.rotate_left(1));
        }
        let curr: Vec<&[f64]> = many.iter().map(|u| u[1].as_slice()).collect();
        assert_ne!(split.gather(&curr), one[1], "without the halo the parts must drift apart");
    }
}
