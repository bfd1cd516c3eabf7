//! Pogo's memory arrangement (section 3.2) and the data its kernel reads (section 2.3).
//!
//! A block is 32 x 16 threads, one node each. Node data lies in global memory with the block's
//! x fastest, the block number in the middle and its y slowest, so the node in row r, column c
//! of block b is at `r (32 n_blocks) + 32 b + c`. A block's kernel loads its own 16 rows into
//! shared memory. It then fills 20 more banks from other blocks' first four rows: 2 loads of
//! 32 nodes, 10 of 16 and 8 of 8, 800 shared slots in all. The 20-entry linked-data pointer
//! table says where each load comes from. An entry holds 24 bits of block, then 4 bits of row
//! (two used) and 4 bits of start section (two used, times 8 nodes). Each node has L = 12 link
//! pointers (16 bits: a shared slot, or `NONE`). K' is stored in four vectors of L x 512 x
//! n_blocks terms.
//!
//! The arrangement, per block:
//! 1. The boundary nodes (those linked to another block) are ordered around the block. We sort
//!    them by angle about their centroid. The start is rotated to a join between two
//!    neighbouring blocks, where consecutive nodes share no neighbour block.
//! 2. They take the first positions (at most 128: four rows), and the interior nodes follow.
//! 3. The 8-node sections of other blocks that the block's links need are listed. Loads are
//!    then allocated to them:
//!    - the two 32-node loads by priority (Fig. 5(d)). The figure is not in our text, so the
//!      order is ours: a row with all four sections needed, then three, then two sections
//!      that are not adjacent, then two adjacent, then one;
//!    - the ten 16-node loads: pairs of adjacent sections first, then single sections;
//!    - the eight 8-node loads: single sections.
//!
//! A block fails when it has more than 128 boundary nodes or sections are left over. Each
//! failed block is split in two: a breadth-first search from one end of the block takes the
//! first half. Then every block is arranged again, until all pass.

use rayon::prelude::*;
use std::collections::{BTreeMap, VecDeque};

/// Threads (nodes) of a block: 32 x 16.
pub const WIDTH: usize = 32;
pub const ROWS: usize = 16;
pub const BLOCK: usize = WIDTH * ROWS;
/// Rows other blocks may load from.
pub const EDGE_ROWS: usize = 4;
/// The paper's L: link pointers per node (more where a node has more links; see
/// [`Arrangement::links`]).
pub const PAPER_LINKS: usize = 12;
/// The 20 loads' sizes, in the order of the table and of shared memory.
pub const LOAD_SIZES: [usize; 20] = [32, 32, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 8, 8, 8, 8, 8, 8, 8, 8];
/// Shared slots: the block's own 512, then the loads' 288.
pub const SHARED: usize = 800;
/// An unused link pointer.
pub const NONE: u16 = u16::MAX;
/// An unused table entry.
pub const UNUSED: u32 = u32::MAX;

/// The shared slot where load `q` starts.
pub fn load_base(q: usize) -> usize {
    BLOCK + LOAD_SIZES[..q].iter().sum::<usize>()
}

/// A mesh arranged in Pogo's blocks.
#[derive(Debug, Clone)]
pub struct Arrangement {
    pub blocks: usize,
    /// Blocks of the partition given, and the splits made to serve every link.
    pub initial_blocks: usize,
    pub splits: usize,
    /// Arrangement passes (one more than the rounds of splits).
    pub passes: usize,
    /// Link pointers per node: the paper's 12, or the mesh's largest link count (the node
    /// itself included) where that is more.
    pub links: usize,
    /// Each node's slot, b 512 + r 32 + c.
    pub slot: Vec<u32>,
    /// The node at each slot (`u32::MAX`: empty).
    pub node_at: Vec<u32>,
    /// 20 entries a block.
    pub table: Vec<u32>,
    /// `links` per slot: slot s's link l at `s links + l`; its shared slot and the node it
    /// refers to (the node itself first, then its neighbours in adjacency order).
    pub link_ptr: Vec<u16>,
    pub link_node: Vec<u32>,
    /// Table entries used, summed over the blocks, per load size (32, 16, 8).
    pub loads_used: [usize; 3],
}

impl Arrangement {
    /// The paper's efficiency: nodes / (blocks x 512).
    pub fn eta(&self) -> f64 {
        self.slot.len() as f64 / (self.blocks * BLOCK).max(1) as f64
    }
    /// Where slot s lies in global memory: row-major over (row, block, column).
    pub fn global(&self, s: usize) -> usize {
        let (b, p) = (s / BLOCK, s % BLOCK);
        (p / WIDTH) * (self.blocks * WIDTH) + b * WIDTH + p % WIDTH
    }
    /// Shared slots the loads of one step fill, summed over the blocks (Table A.5's
    /// "U_curr (linked)" counts all 288 of each block).
    pub fn loaded_slots(&self) -> usize {
        self.loads_used[0] * 32 + self.loads_used[1] * 16 + self.loads_used[2] * 8
    }
}

/// Arranges the nodes of a graph (`xadj`, `adj`, neighbours without the node itself) partitioned
/// into `block` (at most 512 nodes a block), as section 3.2 does. `points` orders each block's
/// boundary. Fails where splitting does not make every block pass within `max_passes`.
pub fn arrange(xadj: &[usize], adj: &[u32], points: &[[f64; 2]], block: &[u32], max_passes: usize) -> Result<Arrangement, String> {
    let n = block.len();
    let mut block = block.to_vec();
    let initial_blocks = block.iter().map(|&b| b as usize + 1).max().unwrap_or(0);
    let links = (0..n).map(|i| xadj[i + 1] - xadj[i] + 1).max().unwrap_or(1).max(PAPER_LINKS);
    let mut blocks = initial_blocks;
    let mut splits = 0;
    for pass in 1..=max_passes {
        let mut members: Vec<Vec<u32>> = vec![Vec::new(); blocks];
        for (i, &b) in block.iter().enumerate() {
            members[b as usize].push(i as u32);
        }
        if let Some(b) = members.iter().position(|m| m.len() > BLOCK) {
            return Err(format!("block {b} holds {} nodes, more than {BLOCK}", members[b].len()));
        }
        // Steps 1-2: each block's order; None where its boundary exceeds four rows.
        let ordered: Vec<Option<Vec<u32>>> =
            members.par_iter().enumerate().map(|(b, m)| order_block(b as u32, m, xadj, adj, points, &block)).collect();
        let mut slot = vec![u32::MAX; n];
        for (b, o) in ordered.iter().enumerate() {
            for (p, &i) in o.iter().flatten().enumerate() {
                slot[i as usize] = (b * BLOCK + p) as u32;
            }
        }
        // Step 3 once every block has its order: each block's loads, None where they do not
        // suffice.
        let mut failed: Vec<usize> = (0..blocks).filter(|&b| ordered[b].is_none()).collect();
        if failed.is_empty() {
            let tables: Vec<Option<Table>> = (0..blocks)
                .into_par_iter()
                .map(|b| ordered[b].as_ref().and_then(|o| allocate(b as u32, o, xadj, adj, &block, &slot)))
                .collect();
            failed = (0..blocks).filter(|&b| tables[b].is_none()).collect();
            if failed.is_empty() {
                let settled = Settled { blocks, initial_blocks, splits, passes: pass, links, slot };
                return Ok(finish(settled, &tables, xadj, adj));
            }
        }
        for &b in &failed {
            split(&members[b], blocks as u32, xadj, adj, &mut block);
            blocks += 1;
            splits += 1;
        }
    }
    Err(format!("the memory arrangement did not serve every link after {max_passes} passes ({splits} splits)"))
}

/// A block's 20 entries and where each needed section of another block lands in shared memory.
struct Table {
    entries: [u32; 20],
    /// (block, row, section) -> shared slot of the section's first node.
    at: BTreeMap<(u32, u8, u8), u16>,
}

/// The block's nodes in slot order: the boundary around the block (at most 128), then the
/// interior in node order.
fn order_block(b: u32, m: &[u32], xadj: &[usize], adj: &[u32], points: &[[f64; 2]], block: &[u32]) -> Option<Vec<u32>> {
    let others = |i: u32| {
        let mut v: Vec<u32> = adj[xadj[i as usize]..xadj[i as usize + 1]].iter().map(|&j| block[j as usize]).filter(|&c| c != b).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    // Each boundary node with the other blocks it links to (computed once).
    let (mut edge, mut inner) = (Vec::new(), Vec::new());
    for &i in m {
        match others(i) {
            o if o.is_empty() => inner.push(i),
            o => edge.push((i, o)),
        }
    }
    if edge.len() > EDGE_ROWS * WIDTH {
        return None;
    }
    let k = edge.len().max(1) as f64;
    let (cx, cy) = edge.iter().fold((0.0, 0.0), |(x, y), &(i, _)| (x + points[i as usize][0] / k, y + points[i as usize][1] / k));
    let angle = |i: u32| (points[i as usize][1] - cy).atan2(points[i as usize][0] - cx);
    edge.sort_by(|(a, _), (c, _)| angle(*a).total_cmp(&angle(*c)).then(a.cmp(c)));
    // Rotate the loop's start to a join: the first place where consecutive nodes share no
    // neighbour block (else where their sets differ).
    let e = edge.len();
    let set = |p: usize| &edge[p % e].1;
    let disjoint = |p: usize| !set(p + e - 1).iter().any(|x| set(p).contains(x));
    if let Some(start) = (0..e).find(|&p| disjoint(p)).or_else(|| (0..e).find(|&p| set(p + e - 1) != set(p))) {
        edge.rotate_left(start);
    }
    inner.sort_unstable();
    Some(edge.into_iter().map(|(i, _)| i).chain(inner).collect())
}

/// Section 3.2's load allocation for block `b`; None where the 20 loads cannot serve its links.
fn allocate(b: u32, order: &[u32], xadj: &[usize], adj: &[u32], block: &[u32], slot: &[u32]) -> Option<Table> {
    // Needed sections: (block, row) -> 4-bit mask of sections.
    let mut need: BTreeMap<(u32, u8), u8> = BTreeMap::new();
    for &i in order {
        for &j in &adj[xadj[i as usize]..xadj[i as usize + 1]] {
            let c = block[j as usize];
            if c == b {
                continue;
            }
            let p = slot[j as usize] as usize % BLOCK;
            debug_assert!(p < EDGE_ROWS * WIDTH, "a boundary node lies past the first four rows");
            *need.entry((c, (p / WIDTH) as u8)).or_default() |= 1 << ((p % WIDTH) / 8);
        }
    }
    let mut entries = [UNUSED; 20];
    let mut at = BTreeMap::new();
    let mut q = 0;
    let mut take = |q: usize, key: (u32, u8), start: u8, need: &mut BTreeMap<(u32, u8), u8>| {
        let sections = (LOAD_SIZES[q] / 8) as u8;
        entries[q] = (key.0 << 8) | ((key.1 as u32) << 4) | start as u32;
        let mask = need.get_mut(&key).expect("a needed row");
        for s in start..start + sections {
            if *mask & (1 << s) != 0 {
                at.insert((key.0, key.1, s), (load_base(q) + 8 * (s - start) as usize) as u16);
            }
            *mask &= !(1 << s);
        }
    };
    // The 32-node loads, by priority.
    let priority = |m: u8| match m.count_ones() {
        4 => 1,
        3 => 2,
        2 if m & (m >> 1) == 0 => 3,
        2 => 4,
        1 => 5,
        _ => 9,
    };
    while q < 2 {
        let Some((&key, _)) = (1..=5).find_map(|p| need.iter().find(|(_, &m)| priority(m) == p)) else { break };
        take(q, key, 0, &mut need);
        q += 1;
    }
    q = 2;
    // The 16-node loads: adjacent pairs first, then single sections.
    let pair = |m: u8| (0..3u8).find(|&s| m & (3 << s) == 3 << s);
    while q < 12 {
        let Some((&key, s)) = need.iter().find_map(|(k, &m)| pair(m).map(|s| (k, s))) else { break };
        take(q, key, s, &mut need);
        q += 1;
    }
    while q < 12 {
        let Some((&key, &m)) = need.iter().find(|(_, &m)| m != 0) else { break };
        take(q, key, (m.trailing_zeros() as u8).min(2), &mut need);
        q += 1;
    }
    q = 12;
    while q < 20 {
        let Some((&key, &m)) = need.iter().find(|(_, &m)| m != 0) else { break };
        take(q, key, m.trailing_zeros() as u8, &mut need);
        q += 1;
    }
    need.values().all(|&m| m == 0).then_some(Table { entries, at })
}

/// Splits block `m` in two: breadth-first from one end of the block (the last node a search
/// from its first node reaches), the first half of the nodes reached go to block `new`.
fn split(m: &[u32], new: u32, xadj: &[usize], adj: &[u32], block: &mut [u32]) {
    let b = block[m[0] as usize];
    let bfs = |from: u32, block: &[u32]| {
        let mut seen: std::collections::HashSet<u32> = [from].into();
        let mut queue = VecDeque::from([from]);
        let mut out = Vec::with_capacity(m.len());
        while let Some(i) = queue.pop_front() {
            out.push(i);
            for &j in &adj[xadj[i as usize]..xadj[i as usize + 1]] {
                if block[j as usize] == b && seen.insert(j) {
                    queue.push_back(j);
                }
            }
        }
        out
    };
    let far = *bfs(m[0], block).last().expect("a block has a node");
    let mut reached = bfs(far, block);
    // Nodes the search did not reach (a block in pieces) go with the second half.
    let half = m.len() / 2;
    reached.truncate(half.max(1));
    for i in reached {
        block[i as usize] = new;
    }
}

/// What the search settled on: the blocks (after its splits), its counts, the link pointers per
/// node, and each node's slot.
struct Settled {
    blocks: usize,
    initial_blocks: usize,
    splits: usize,
    passes: usize,
    links: usize,
    slot: Vec<u32>,
}

/// The arrangement of a settled search: node at each slot, the load tables and each slot's
/// link pointers.
fn finish(settled: Settled, tables: &[Option<Table>], xadj: &[usize], adj: &[u32]) -> Arrangement {
    let Settled { blocks, initial_blocks, splits, passes, links, slot } = settled;
    let mut node_at = vec![u32::MAX; blocks * BLOCK];
    for (i, &s) in slot.iter().enumerate() {
        node_at[s as usize] = i as u32;
    }
    let mut link_ptr = vec![NONE; blocks * BLOCK * links];
    let mut link_node = vec![u32::MAX; blocks * BLOCK * links];
    let shared_of = |b: usize, j: usize| {
        let s = slot[j] as usize;
        if s / BLOCK == b {
            (s % BLOCK) as u16
        } else {
            let p = s % BLOCK;
            let t = tables[b].as_ref().expect("every block passed");
            t.at[&((s / BLOCK) as u32, (p / WIDTH) as u8, ((p % WIDTH) / 8) as u8)] + (p % 8) as u16
        }
    };
    link_ptr.par_chunks_mut(BLOCK * links).zip(link_node.par_chunks_mut(BLOCK * links)).enumerate().for_each(|(b, (ptr, node))| {
        for p in 0..BLOCK {
            let i = node_at[b * BLOCK + p];
            if i == u32::MAX {
                continue;
            }
            let i = i as usize;
            let list = std::iter::once(i as u32).chain(adj[xadj[i]..xadj[i + 1]].iter().copied());
            for (l, j) in list.enumerate() {
                ptr[p * links + l] = shared_of(b, j as usize);
                node[p * links + l] = j;
            }
        }
    });
    let table: Vec<u32> = tables.iter().flat_map(|t| t.as_ref().expect("every block passed").entries).collect();
    let mut loads_used = [0; 3];
    for t in table.chunks(20) {
        for (q, &e) in t.iter().enumerate() {
            if e != UNUSED {
                loads_used[[32, 16, 8].iter().position(|&n| n == LOAD_SIZES[q]).expect("a load size")] += 1;
            }
        }
    }
    Arrangement { blocks, initial_blocks, splits, passes, links, slot, node_at, table, link_ptr, link_node, loads_used }
}
