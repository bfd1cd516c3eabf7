//! Host-side plans of the assembly-by-non-zero methods (sections 4.2-4.4 of the paper): METIS
//! partitions of elements (GlobalNZ) and of nodes (SharedNZ), block element matrices, and the
//! scatter and reduction arrays packed by LPT.
//!
//! Entry codes, as in the paper: a source index s is stored as s + 1, a target index t as
//! -t - 1 (all bits inverted), 0 is padding. A reduction list is `sources.., target` (sum the
//! sources, store at the target); a scatter list is `source, targets..` (read once, copy to
//! every target). Target space of every plan: CSR values 0..nnz, then the right-hand side at
//! nnz + free dof.
//!
//! Element data entry m of an element: A^e(i, j) at m = i*en + j, F^e(i) at m = en*en + i.

use rayon::prelude::*;

use super::search::{floor_or, reachable, reachable_before_retry, vertex_count};
pub use fembench_fem::lpt::Packed;
use fembench_fem::lpt::{pack_lpt, pack_reduction, pack_scatter, Lists};
use fembench_fem::partition::{metis_elements, metis_nodes, partition_until};

use crate::cecka::problem::system::Problem;

pub use fembench_fem::lpt::{run_reduction, source, target};

/// Entries per element of the element data (A^e and F^e).
pub fn element_entries(en: usize) -> usize {
    en * en + en
}

/// Where entry m of element e goes: a CSR slot, nnz + dof for F^e rows, or nowhere (rows or
/// columns of prescribed nodes).
pub fn entry_target(p: &Problem, e: usize, m: usize) -> Option<usize> {
    let en = p.en();
    if m < en * en {
        let s = p.slots[e * en * en + m];
        (s >= 0).then_some(s as usize)
    } else {
        let d = p.dof[p.mesh.element(e)[m - en * en] as usize];
        (d >= 0).then(|| p.nnz() + d as usize)
    }
}

pub fn num_targets(p: &Problem) -> usize {
    p.nnz() + p.n_free
}

/// Reduction lists over all targets, blocked `targets_per_block` consecutive targets at a time
/// and packed for `lanes` threads; `src(e, m)` numbers element entries in the source array.
pub fn reduction_over_targets(
    p: &Problem,
    lanes: usize,
    targets_per_block: usize,
    src: &(dyn Fn(usize, usize) -> usize + Sync),
) -> Result<Packed, String> {
    let ee = element_entries(p.en());
    let nt = num_targets(p);
    if (p.ne() * ee) as u64 >= i32::MAX as u64 || nt as u64 >= i32::MAX as u64 {
        return Err("element data too large for 32-bit source indices".into());
    }
    // (target, source) pairs sorted by target: each target's sources in a deterministic order.
    let mut pairs: Vec<u64> = (0..p.ne())
        .into_par_iter()
        .flat_map_iter(|e| (0..ee).filter_map(move |m| entry_target(p, e, m).map(|t| ((t as u64) << 32) | src(e, m) as u64)))
        .collect();
    pairs.par_sort_unstable();
    let mut start = vec![0u32; nt + 1];
    for &q in &pairs {
        start[(q >> 32) as usize + 1] += 1;
    }
    for t in 0..nt {
        start[t + 1] += start[t];
    }
    let blocks: Vec<Vec<i32>> = (0..nt.div_ceil(targets_per_block))
        .into_par_iter()
        .map(|b| {
            let (t0, t1) = (b * targets_per_block, ((b + 1) * targets_per_block).min(nt));
            let mut offsets = vec![0u32];
            let mut entries = Vec::new();
            for t in t0..t1 {
                entries.extend(pairs[start[t] as usize..start[t + 1] as usize].iter().map(|&q| source((q & 0xffff_ffff) as usize)));
                entries.push(target(t));
                offsets.push(entries.len() as u32);
            }
            pack_lpt(&Lists { offsets: &offsets, entries: &entries }, lanes)
        })
        .collect();
    Packed::from_blocks(lanes, blocks)
}

/// GlobalNZ (4.2): element partitions, each block's nodes prefetched to shared memory, element
/// data written to global memory, then reduced by the reduction array.
pub struct GlobalPlan {
    pub parts: usize,
    /// Position of the element data (and of the thread) -> element: elements grouped by part.
    pub elem_order: Vec<u32>,
    /// Part k computes positions `elem_ptr[k]..elem_ptr[k+1]`.
    pub elem_ptr: Vec<u32>,
    /// N_k: the nodes part k prefetches, `nodes[node_ptr[k]..node_ptr[k+1]]`.
    pub node_ptr: Vec<u32>,
    pub nodes: Vec<u32>,
    /// Block element matrix E_k, column-major over positions: `local_conn[a * ne + pos]` is the
    /// index of the element's node a in its block's N_k.
    pub local_conn: Vec<u32>,
    pub max_nodes: usize,
    /// Sources are element data indices `m * ne + pos`.
    pub reduction: Packed,
}

pub fn global_plan(
    p: &Problem,
    elements_per_block: usize,
    max_nodes: usize,
    lanes: usize,
    targets_per_block: usize,
) -> Result<GlobalPlan, String> {
    let ne = p.ne();
    let en = p.en();
    let nodes_of_parts = |part: &[i32], nparts: usize| -> Vec<Vec<u32>> {
        let mut members: Vec<Vec<u32>> = vec![Vec::new(); nparts];
        for (e, &k) in part.iter().enumerate() {
            members[k as usize].push(e as u32);
        }
        members
            .par_iter()
            .map(|els| {
                let mut ns: Vec<u32> = els.iter().flat_map(|&e| p.mesh.element(e as usize).iter().copied()).collect();
                ns.sort_unstable();
                ns.dedup();
                ns
            })
            .collect()
    };
    let worst = |part: &[i32], nparts: usize| nodes_of_parts(part, nparts).iter().map(Vec::len).max().unwrap_or(0);
    let (part, parts, max_n) = partition_until(
        ne.div_ceil(elements_per_block.max(1)),
        ne,
        max_nodes,
        "nodes per block",
        &|k| metis_elements(p.mesh.elements(), k, 2),
        &worst,
    )?;
    let mut elem_order: Vec<u32> = (0..ne as u32).collect();
    elem_order.sort_by_key(|&e| (part[e as usize], e));
    let mut elem_ptr = vec![0u32; parts + 1];
    for &k in &part {
        elem_ptr[k as usize + 1] += 1;
    }
    for k in 0..parts {
        elem_ptr[k + 1] += elem_ptr[k];
    }
    let node_sets = nodes_of_parts(&part, parts);
    let mut node_ptr = vec![0u32];
    for s in &node_sets {
        node_ptr.push(node_ptr.last().copied().unwrap_or(0) + s.len() as u32);
    }
    let mut pos_of = vec![0u32; ne];
    for (pos, &e) in elem_order.iter().enumerate() {
        pos_of[e as usize] = pos as u32;
    }
    let local_conn: Vec<u32> = (0..en * ne)
        .into_par_iter()
        .map(|idx| {
            let (a, pos) = (idx / ne, idx % ne);
            let e = elem_order[pos] as usize;
            let set = &node_sets[part[e] as usize];
            set.binary_search(&p.mesh.element(e)[a]).unwrap_or(0) as u32
        })
        .collect();
    let reduction = reduction_over_targets(p, lanes, targets_per_block, &|e, m| m * ne + pos_of[e] as usize)?;
    Ok(GlobalPlan { parts, elem_order, elem_ptr, node_ptr, nodes: node_sets.concat(), local_conn, max_nodes: max_n, reduction })
}

/// SharedNZ (4.3): node partitions N_k; block k computes every element adjacent to N_k (E_k) in
/// shared memory and reduces the rows of N_k from there. Shared memory holds `stride` element
/// columns: entry m of local element le at `m * stride + le`; nodal data (x, y, g of the
/// element's node a) at `a`, `en + a`, `2 en + a` before the element overwrites it. Scatter lists
/// are `node, element slots..` (Algorithm 7), targets `a * stride + le`; reduction lists are
/// `shared indices.., CSR or rhs target` (Algorithm 6 from shared memory).
pub use fembench_fem::lpt::SharedPlan;

/// The elements around each node, in CSR form: node v's are `n2e[ptr[v]..ptr[v + 1]]`.
fn elements_of_nodes(p: &Problem) -> (Vec<u32>, Vec<u32>) {
    let n = p.mesh.num_nodes();
    let mut ptr = vec![0u32; n + 1];
    for &v in &p.mesh.elems {
        ptr[v as usize + 1] += 1;
    }
    for i in 0..n {
        ptr[i + 1] += ptr[i];
    }
    let mut fill = ptr.clone();
    let mut n2e = vec![0u32; p.mesh.elems.len()];
    for e in 0..p.ne() {
        for &v in p.mesh.element(e) {
            n2e[fill[v as usize] as usize] = e as u32;
            fill[v as usize] += 1;
        }
    }
    (ptr, n2e)
}

/// For node parts: the elements adjacent to each part's nodes (E_k), sorted and unique.
fn elements_of_parts(part: &[i32], nparts: usize, n2e_ptr: &[u32], n2e: &[u32]) -> Vec<Vec<u32>> {
    let mut owned: Vec<Vec<u32>> = vec![Vec::new(); nparts];
    for (v, &k) in part.iter().enumerate() {
        if k >= 0 {
            owned[k as usize].push(v as u32);
        }
    }
    owned
        .par_iter()
        .map(|ns| {
            let mut es: Vec<u32> =
                ns.iter().flat_map(|&v| n2e[n2e_ptr[v as usize] as usize..n2e_ptr[v as usize + 1] as usize].iter().copied()).collect();
            es.sort_unstable();
            es.dedup();
            es
        })
        .collect()
}

/// Shared-memory entries per element: nodal data in, then element data in place.
pub fn shared_slot(en: usize) -> usize {
    (3 * en).max(element_entries(en))
}

pub fn shared_plan(p: &Problem, max_elements: usize, lanes: usize) -> Result<SharedPlan, String> {
    let ne = p.ne();
    let en = p.en();
    let ee = element_entries(en);
    if max_elements == 0 {
        return Err(format!("not even one element's data ({ee} entries) fits the shared memory"));
    }
    let (n2e_ptr, n2e) = elements_of_nodes(p);
    let blocks_of = |part: &[i32], nparts: usize| elements_of_parts(part, nparts, &n2e_ptr, &n2e);
    let worst = |part: &[i32], nparts: usize| blocks_of(part, nparts).iter().map(Vec::len).max().unwrap_or(0);
    let nverts = vertex_count(p);
    let checked = std::cell::Cell::new(false);
    let floor = || reachable(p, max_elements, "elements per block", &worst);
    let (part, parts, stride) = partition_until(
        (ne as f64 / (0.6 * max_elements as f64)).ceil() as usize,
        nverts,
        max_elements,
        "elements per block",
        &reachable_before_retry(&checked, &floor, &|k| metis_nodes(p.mesh.elements(), k)),
        &worst,
    )
    .map_err(|e| floor_or(e, &checked, &floor))?;
    let blocks = blocks_of(&part, parts);
    if (stride * shared_slot(en)) as u64 >= i32::MAX as u64 {
        return Err("shared memory indices overflow".into());
    }
    let per_block: Vec<(Vec<i32>, Vec<i32>, usize)> = blocks
        .par_iter()
        .enumerate()
        .map(|(k, es)| {
            // Scatter lists: node -> (element slot a*stride + le).
            let mut uses: Vec<(u32, u32)> = Vec::new();
            let mut red: Vec<(u32, u32)> = Vec::new();
            for (le, &e) in es.iter().enumerate() {
                let e = e as usize;
                let nodes = p.mesh.element(e);
                for (a, &v) in nodes.iter().enumerate() {
                    uses.push((v, (a * stride + le) as u32));
                }
                for m in 0..ee {
                    let row_node = nodes[if m < en * en { m / en } else { m - en * en }];
                    if part[row_node as usize] != k as i32 {
                        continue;
                    }
                    if let Some(t) = entry_target(p, e, m) {
                        red.push((t as u32, (m * stride + le) as u32));
                    }
                }
            }
            uses.sort_unstable();
            red.sort_unstable();
            let (scatter, fetched) = pack_scatter(&uses, lanes);
            let reduction = pack_reduction(&red, lanes);
            (scatter, reduction, fetched)
        })
        .collect();
    let node_fetches = per_block.iter().map(|b| b.2).sum();
    let (scatter, reduction): (Vec<Vec<i32>>, Vec<Vec<i32>>) = per_block.into_iter().map(|(s, r, _)| (s, r)).unzip();
    Ok(SharedPlan {
        parts,
        block_elements: blocks.iter().map(|b| b.len() as u32).collect(),
        stride,
        element_calls: blocks.iter().map(Vec::len).sum(),
        node_fetches,
        scatter: Packed::from_blocks(lanes, scatter)?,
        reduction: Packed::from_blocks(lanes, reduction)?,
    })
}

/// SharedAtomic (beyond the paper): SharedNZ's node partitions, but instead of reduction lists
/// the block adds element entries into accumulators in shared memory with shared-memory atomics,
/// then writes each accumulator to its targets once.
/// - Diagonal entries A(r, r) and loads F(r) are accumulated per node of N̄_k, found from the
///   element's local node numbers: no index data.
/// - A^e is symmetric, so one accumulator serves A(r, c) and A(c, r) (the paper's "save the
///   reduced result in more than one target index", section 4.3.3): each element adds its
///   off-diagonal upper triangle i < j through a 16-bit slot number.
/// Shared memory: nodal data (x, y, g) and two accumulators per node of N̄_k, then the pair
/// accumulators.
pub struct SharedAtomicPlan {
    pub parts: usize,
    /// N̄_k per block (global node numbers), prefetched into shared memory.
    pub node_ptr: Vec<u32>,
    pub nodes: Vec<u32>,
    /// Per node of `nodes`: the targets of its diagonal and of its load, `u32::MAX` where the
    /// node is not owned by the block or not an unknown.
    pub node_targets: Vec<u32>,
    /// Element calls (elements of E_k) of block k: `call_ptr[k]..call_ptr[k+1]`, ordered by
    /// element color so that a warp's elements rarely share a node (fewer atomic collisions).
    pub call_ptr: Vec<u32>,
    /// Column-major over calls: `local_conn[a * calls + c]` is the element's node a in N̄_k.
    pub local_conn: Vec<u16>,
    /// Column-major over calls: `local_slot[q * calls + c]` is the pair accumulator of the
    /// element's off-diagonal pair q (see [`off_diagonal_pairs`]), or `u16::MAX` where the pair
    /// feeds no target of this block.
    pub local_slot: Vec<u16>,
    /// Pair accumulators of block k: `slot_ptr[k]..slot_ptr[k+1]`; accumulator s goes to
    /// targets `targets[2s]` and `targets[2s + 1]` (CSR indices; `u32::MAX`: none).
    pub slot_ptr: Vec<u32>,
    pub targets: Vec<u32>,
    /// The largest block: max |N̄_k| and max pair accumulators (they size the shared arrays).
    pub max_nodes: usize,
    pub max_slots: usize,
}

impl SharedAtomicPlan {
    pub fn calls(&self) -> usize {
        self.call_ptr.last().copied().unwrap_or(0) as usize
    }
}

/// Off-diagonal upper-triangle pairs (i, j), i < j, in the kernel's order:
/// q = i*en - i(i+1)/2 + (j - i - 1).
pub fn off_diagonal_pairs(en: usize) -> Vec<(usize, usize)> {
    (0..en).flat_map(|i| (i + 1..en).map(move |j| (i, j))).collect()
}

/// `shared_words`: reals of shared memory per block; `elements_per_block`: the block size to
/// aim for; `color`: a color per element (elements of one color share no node).
pub fn shared_atomic_plan(p: &Problem, shared_words: usize, elements_per_block: usize, color: &[u8]) -> Result<SharedAtomicPlan, String> {
    let pairs = off_diagonal_pairs(p.en());
    let n2e = elements_of_nodes(p);
    let blocks_of = |part: &[i32], nparts: usize| atomic_blocks(p, &pairs, (part, nparts), &n2e, color);
    // The kernel sizes its shared arrays by the largest block's nodes and the largest block's
    // accumulators, which may be two different blocks: that sum must fit (the largest sum over
    // single blocks can fit while the arrays do not; ptxas then refuses the kernel).
    let words = |blocks: &[AtomicBlock]| {
        let (nodes, slots) = blocks.iter().fold((0, 0), |(n, s), b| (n.max(b.nodes.len()), s.max(b.slots.len())));
        slots + 5 * nodes
    };
    let worst = |part: &[i32], nparts: usize| words(&blocks_of(part, nparts));
    // The blocks of the last partition measured: the one partition_until returns, so they are
    // not made a second time.
    let last: std::sync::Mutex<Option<Vec<AtomicBlock>>> = std::sync::Mutex::new(None);
    let worst_kept = |part: &[i32], nparts: usize| {
        let blocks = blocks_of(part, nparts);
        let w = words(&blocks);
        *last.lock().unwrap_or_else(|e| e.into_inner()) = Some(blocks);
        w
    };
    let cap = shared_words.min(u16::MAX as usize - 1);
    let what = "shared words (largest accumulators + 5 x largest nodes) per block";
    let checked = std::cell::Cell::new(false);
    let floor = || reachable(p, cap, what, &worst);
    let (part, parts, _) = partition_until(
        p.ne().div_ceil(elements_per_block.max(1)),
        vertex_count(p),
        cap,
        what,
        &reachable_before_retry(&checked, &floor, &|k| metis_nodes(p.mesh.elements(), k)),
        &worst_kept,
    )
    .map_err(|e| floor_or(e, &checked, &floor))?;
    let blocks = last.into_inner().unwrap_or_else(|e| e.into_inner()).unwrap_or_else(|| blocks_of(&part, parts));
    Ok(atomic_plan_of(p, &pairs, &part, blocks))
}

/// A SharedAtomic block: its elements (by color), the nodes they touch, and its accumulators.
struct AtomicBlock {
    elements: Vec<u32>,
    nodes: Vec<u32>,
    /// Sorted pair accumulator keys with their two targets.
    slots: Vec<(u32, u32, u32)>,
}

/// Off-diagonal pair q (`pairs`) of element e, seen from the block owning `owns`: (accumulator
/// key, target if row i is owned, target if row j is owned), or None where it owns neither.
fn pair_slot(p: &Problem, pairs: &[(usize, usize)], (e, q): (usize, usize), owns: &dyn Fn(u32) -> bool) -> Option<(u32, u32, u32)> {
    let (en, nodes) = (p.en(), p.mesh.element(e));
    let (i, j) = pairs[q];
    let tij = entry_target(p, e, i * en + j)? as u32;
    let tji = entry_target(p, e, j * en + i)? as u32;
    let a = if owns(nodes[i]) { tij } else { u32::MAX };
    let b = if owns(nodes[j]) { tji } else { u32::MAX };
    (a != u32::MAX || b != u32::MAX).then_some((tij.min(tji), a, b))
}

/// The blocks of a node partition (`part`, `nparts` parts): each part's elements, sorted by
/// color, the nodes they touch and one accumulator per pair key.
fn atomic_blocks(
    p: &Problem,
    pairs: &[(usize, usize)],
    (part, nparts): (&[i32], usize),
    n2e: &(Vec<u32>, Vec<u32>),
    color: &[u8],
) -> Vec<AtomicBlock> {
    elements_of_parts(part, nparts, &n2e.0, &n2e.1)
        .into_par_iter()
        .enumerate()
        .map(|(k, mut es)| {
            es.sort_unstable_by_key(|&e| (color[e as usize], e));
            let mut nodes: Vec<u32> = es.iter().flat_map(|&e| p.mesh.element(e as usize).iter().copied()).collect();
            nodes.sort_unstable();
            nodes.dedup();
            let owns = |v: u32| part[v as usize] == k as i32;
            let mut slots: Vec<(u32, u32, u32)> = Vec::with_capacity(es.len() * pairs.len());
            slots.extend(es.iter().flat_map(|&e| (0..pairs.len()).filter_map(move |q| pair_slot(p, pairs, (e as usize, q), &owns))));
            AtomicBlock { elements: es, nodes, slots: merge_targets(slots) }
        })
        .collect()
}

/// One accumulator per key; its targets: the two smallest distinct owned targets any element
/// named (kept in place: this runs for every pair of every element, at every part count tried).
fn merge_targets(mut slots: Vec<(u32, u32, u32)>) -> Vec<(u32, u32, u32)> {
    slots.sort_unstable();
    let mut merged: Vec<(u32, u32, u32)> = Vec::with_capacity(slots.len() / 2);
    for (key, a, b) in slots {
        if !matches!(merged.last(), Some(last) if last.0 == key) {
            merged.push((key, u32::MAX, u32::MAX));
        }
        let last = merged.last_mut().expect("pushed above");
        for t in [a, b] {
            if t == last.1 || t == last.2 {
                continue;
            }
            if t < last.1 {
                last.2 = last.1;
                last.1 = t;
            } else if t < last.2 {
                last.2 = t;
            }
        }
    }
    merged
}

/// Block k's lists: each element's nodes as 16-bit local indices, each element pair's local
/// accumulator (u16::MAX: none), and each node's (diagonal, right-hand side) targets where the
/// block owns it.
fn block_lists(p: &Problem, pairs: &[(usize, usize)], part: &[i32], (k, b): (usize, &AtomicBlock)) -> (Vec<u16>, Vec<u16>, Vec<u32>) {
    let (en, nq) = (p.en(), pairs.len());
    let owns = |v: u32| part[v as usize] == k as i32;
    let mut lc = Vec::with_capacity(b.elements.len() * en);
    let mut ls = Vec::with_capacity(b.elements.len() * nq);
    for &e in &b.elements {
        let e = e as usize;
        lc.extend(p.mesh.element(e).iter().map(|v| b.nodes.binary_search(v).unwrap_or(0) as u16));
        for q in 0..nq {
            ls.push(match pair_slot(p, pairs, (e, q), &owns) {
                Some((key, _, _)) => b.slots.binary_search_by_key(&key, |s| s.0).map(|i| i as u16).unwrap_or(u16::MAX),
                None => u16::MAX,
            });
        }
    }
    let nt: Vec<u32> = b
        .nodes
        .iter()
        .flat_map(|&v| {
            let d = p.dof[v as usize];
            if !owns(v) || d < 0 {
                return [u32::MAX, u32::MAX];
            }
            let d = d as usize;
            let row = &p.col[p.row_ptr[d] as usize..p.row_ptr[d + 1] as usize];
            let diag = row.binary_search(&(d as u32)).map(|i| p.row_ptr[d] + i as u32).unwrap_or(u32::MAX);
            [diag, (p.nnz() + d) as u32]
        })
        .collect();
    (lc, ls, nt)
}

/// The plan of the chosen blocks: offsets, nodes, targets, and the per-call lists laid out
/// call-major (entry a of call c at a calls + c) for coalesced reads.
fn atomic_plan_of(p: &Problem, pairs: &[(usize, usize)], part: &[i32], blocks: Vec<AtomicBlock>) -> SharedAtomicPlan {
    let (en, nq) = (p.en(), pairs.len());
    let mut call_ptr = vec![0u32];
    let mut node_ptr = vec![0u32];
    let mut slot_ptr = vec![0u32];
    for b in &blocks {
        call_ptr.push(call_ptr.last().copied().unwrap_or(0) + b.elements.len() as u32);
        node_ptr.push(node_ptr.last().copied().unwrap_or(0) + b.nodes.len() as u32);
        slot_ptr.push(slot_ptr.last().copied().unwrap_or(0) + b.slots.len() as u32);
    }
    let calls = call_ptr[blocks.len()] as usize;
    let per_block: Vec<(Vec<u16>, Vec<u16>, Vec<u32>)> = blocks.par_iter().enumerate().map(|kb| block_lists(p, pairs, part, kb)).collect();
    let mut local_conn = vec![0u16; en * calls];
    let mut local_slot = vec![u16::MAX; nq * calls];
    for (k, (lc, ls, _)) in per_block.iter().enumerate() {
        let c0 = call_ptr[k] as usize;
        for i in 0..blocks[k].elements.len() {
            for a in 0..en {
                local_conn[a * calls + c0 + i] = lc[i * en + a];
            }
            for q in 0..nq {
                local_slot[q * calls + c0 + i] = ls[i * nq + q];
            }
        }
    }
    SharedAtomicPlan {
        parts: blocks.len(),
        max_nodes: blocks.iter().map(|b| b.nodes.len()).max().unwrap_or(0),
        max_slots: blocks.iter().map(|b| b.slots.len()).max().unwrap_or(0),
        node_ptr,
        nodes: blocks.iter().flat_map(|b| b.nodes.iter().copied()).collect(),
        node_targets: per_block.iter().flat_map(|b| b.2.iter().copied()).collect(),
        call_ptr,
        local_conn,
        local_slot,
        slot_ptr,
        targets: blocks.iter().flat_map(|b| b.slots.iter().flat_map(|s| [s.1, s.2])).collect(),
    }
}

/// LocalNZ (4.4): one thread per NZ at a time; sources are element entries `e * ee + m`, each
/// computed by calling the element subroutine for element e.
pub fn local_plan(p: &Problem, lanes: usize, targets_per_block: usize) -> Result<Packed, String> {
    let ee = element_entries(p.en());
    reduction_over_targets(p, lanes, targets_per_block, &|e, m| e * ee + m)
}

#[cfg(test)]
#[path = "plans_tests.rs"]
mod tests;
