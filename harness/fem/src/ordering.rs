//! Node orderings for locality: reverse Cuthill-McKee on a node graph in CSR form (`xadj`,
//! `adj`, as [`crate::partition::node_graph`] gives it). A kernel with one thread per node then
//! reads its neighbours' values from nearby addresses, and a sliced format's slices hold nodes of
//! similar degree.

/// The reverse Cuthill-McKee order: `order[k]` is the node placed k-th. Each connected component
/// starts from a pseudo-peripheral node (the last node of a breadth-first search from its
/// lowest-degree node); neighbours are queued by increasing degree.
pub fn rcm(xadj: &[usize], adj: &[u32]) -> Vec<u32> {
    let n = xadj.len() - 1;
    let degree = |v: usize| xadj[v + 1] - xadj[v];
    let mut placed = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut by_degree: Vec<u32> = (0..n as u32).collect();
    by_degree.sort_by_key(|&v| (degree(v as usize), v));
    let mut scratch = Vec::new();
    let bfs = |start: usize, placed: &mut Vec<bool>, out: &mut Vec<u32>, scratch: &mut Vec<u32>| {
        let first = out.len();
        placed[start] = true;
        out.push(start as u32);
        let mut head = first;
        while head < out.len() {
            let v = out[head] as usize;
            head += 1;
            scratch.clear();
            scratch.extend(adj[xadj[v]..xadj[v + 1]].iter().copied().filter(|&w| !placed[w as usize]));
            scratch.sort_by_key(|&w| (degree(w as usize), w));
            for &w in scratch.iter() {
                placed[w as usize] = true;
                out.push(w);
            }
        }
    };
    for &s in &by_degree {
        if placed[s as usize] {
            continue;
        }
        // A trial search from s finds a far node; the component is ordered from there.
        let mut trial = Vec::new();
        let mut seen = placed.clone();
        bfs(s as usize, &mut seen, &mut trial, &mut scratch);
        let far = *trial.last().expect("the start itself") as usize;
        bfs(far, &mut placed, &mut order, &mut scratch);
    }
    order.reverse();
    order
}

/// The bandwidth of a graph under an order: the largest |pos(v) - pos(w)| over its edges.
pub fn bandwidth(xadj: &[usize], adj: &[u32], order: &[u32]) -> usize {
    let mut pos = vec![0usize; order.len()];
    order.iter().enumerate().for_each(|(k, &v)| pos[v as usize] = k);
    (0..order.len())
        .flat_map(|v| adj[xadj[v]..xadj[v + 1]].iter().map(move |&w| (v, w as usize)))
        .map(|(v, w)| pos[v].abs_diff(pos[w]))
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rcm_is_a_permutation_and_narrows_a_shuffled_grid() {
        // A 30 x 30 grid graph whose nodes are numbered in a scrambled order, plus an isolated node.
        let n = 30;
        let scramble = |i: usize| ((i * 7919) % (n * n)) as u32;
        let mut lists = vec![Vec::new(); n * n + 1];
        for j in 0..n {
            for i in 0..n {
                let v = scramble(j * n + i) as usize;
                if i + 1 < n {
                    lists[v].push(scramble(j * n + i + 1));
                }
                if i > 0 {
                    lists[v].push(scramble(j * n + i - 1));
                }
                if j + 1 < n {
                    lists[v].push(scramble((j + 1) * n + i));
                }
                if j > 0 {
                    lists[v].push(scramble((j - 1) * n + i));
                }
            }
        }
        let mut xadj = vec![0];
        let mut adj = Vec::new();
        for l in &lists {
            adj.extend(l);
            xadj.push(adj.len());
        }
        let order = rcm(&xadj, &adj);
        let mut seen = order.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..(n * n + 1) as u32).collect::<Vec<_>>());
        let identity: Vec<u32> = (0..(n * n + 1) as u32).collect();
        assert!(bandwidth(&xadj, &adj, &identity) > 500);
        // A grid's RCM bandwidth is about its width (diagonal fronts: at most 2n).
        assert!(bandwidth(&xadj, &adj, &order) <= 2 * n, "{}", bandwidth(&xadj, &adj, &order));
    }
}
