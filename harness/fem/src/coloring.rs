//! Element coloring: elements grouped so that no two in a group share a node, the race-free
//! schedule of element-by-element assembly (Cecka et al. 4.1, Sanfui and Sharma's Algorithm 6,
//! the EbE methods of a-COO).

use crate::elements::Elements;

/// Greedy balanced coloring. `min_colors` forces at least that many colors; each element takes
/// the least-used color it may have, which keeps colors balanced. At most 64 colors.
pub fn balanced(m: Elements, min_colors: usize) -> Result<Vec<Vec<u32>>, String> {
    // A first pass finds how many colors greedy coloring needs; the second starts with all of
    // them open, so the least-used choice spreads elements evenly from the first element on.
    let first = pass(m, min_colors)?;
    pass(m, min_colors.max(first.len()))
}

fn pass(m: Elements, min_colors: usize) -> Result<Vec<Vec<u32>>, String> {
    let ne = m.len();
    let mut node_mask = vec![0u64; m.num_nodes];
    let mut counts: Vec<usize> = vec![0; min_colors.max(1)];
    let mut color = vec![0u8; ne];
    for e in 0..ne {
        let verts = m.corners_of(e);
        let forbidden = verts.iter().fold(0u64, |acc, &v| acc | node_mask[v as usize]);
        let best = (0..counts.len()).filter(|&c| forbidden & (1 << c) == 0).min_by_key(|&c| counts[c]);
        let c = match best {
            Some(c) => c,
            None => {
                if counts.len() == 64 {
                    return Err("more than 64 colors needed".into());
                }
                counts.push(0);
                counts.len() - 1
            }
        };
        counts[c] += 1;
        color[e] = c as u8;
        for &v in verts {
            node_mask[v as usize] |= 1 << c;
        }
    }
    let mut groups = vec![Vec::new(); counts.len()];
    for (e, &c) in color.iter().enumerate() {
        groups[c as usize].push(e as u32);
    }
    Ok(groups.into_iter().filter(|g| !g.is_empty()).collect())
}

/// Whether `groups` is a valid coloring of `m`: every element exactly once, and no two elements
/// of a group sharing a node.
pub fn is_valid(m: Elements, groups: &[Vec<u32>]) -> bool {
    let mut seen = vec![false; m.len()];
    let mut owner = vec![u32::MAX; m.num_nodes];
    for (g, group) in groups.iter().enumerate() {
        for &e in group {
            let e = e as usize;
            if e >= seen.len() || std::mem::replace(&mut seen[e], true) {
                return false;
            }
            for &v in m.element(e) {
                if owner[v as usize] == g as u32 {
                    return false;
                }
                owner[v as usize] = g as u32;
            }
        }
    }
    seen.iter().all(|&s| s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A structured grid of n x n quadrilaterals (4 corners each): 4 colors suffice and are
    /// needed (the four elements around an interior node are pairwise adjacent).
    fn quads(n: usize) -> (Vec<u32>, usize) {
        let id = |i: usize, j: usize| (j * (n + 1) + i) as u32;
        let nodes = (0..n).flat_map(|j| (0..n).flat_map(move |i| [id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1)])).collect();
        (nodes, (n + 1) * (n + 1))
    }

    #[test]
    fn a_quad_grid_gets_four_balanced_colors() {
        let (nodes, nn) = quads(8);
        let m = Elements { nodes: &nodes, per_element: 4, corners: 4, num_nodes: nn };
        let c = balanced(m, 0).unwrap();
        assert_eq!(c.len(), 4);
        assert!(is_valid(m, &c));
        assert!(c.iter().all(|g| g.len() == 16), "{:?}", c.iter().map(Vec::len).collect::<Vec<_>>());
        let forced = balanced(m, 6).unwrap();
        assert_eq!(forced.len(), 6);
        assert!(is_valid(m, &forced));
    }

    #[test]
    fn an_invalid_coloring_is_refused() {
        let (nodes, nn) = quads(2);
        let m = Elements { nodes: &nodes, per_element: 4, corners: 4, num_nodes: nn };
        assert!(!is_valid(m, &[vec![0, 1], vec![2, 3]]), "neighbours in one color");
        assert!(!is_valid(m, &[vec![0], vec![1], vec![2]]), "an element left out");
    }
}
