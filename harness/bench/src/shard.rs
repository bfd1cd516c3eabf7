//! Shards: the K-th of N parts of a run's case list, so that N processes (the GPUs of one node,
//! the tasks of a Slurm array) share one run and `harness merge` joins their folders.
//!
//! Every shard computes the same assignment from the same case list and costs: the cases are
//! taken longest first, each given to the part with the least cost so far (LPT). A case's cost
//! is its wall time in a stored run of the same experiment where one has it (a published run),
//! else the mean of the known costs, else 1.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::results::RunDir;

/// `K/N`: part K (1-based) of N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("a shard is K/N with 1 <= K <= N, e.g. 2/4 (got `{s}`)");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (usize, usize) = (k.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The part (0-based) of each item, balancing the parts' summed costs: longest first, each to
/// the least-loaded part (ties: the lower part; equal costs: the earlier item).
pub fn assign(costs: &[f64], parts: usize) -> Vec<usize> {
    let parts = parts.max(1);
    let mut order: Vec<usize> = (0..costs.len()).collect();
    order.sort_by(|&a, &b| costs[b].total_cmp(&costs[a]).then(a.cmp(&b)));
    let mut load = vec![0.0f64; parts];
    let mut part = vec![0; costs.len()];
    for i in order {
        let p = (0..parts).min_by(|&a, &b| load[a].total_cmp(&load[b]).then(a.cmp(&b))).unwrap_or(0);
        part[i] = p;
        load[p] += costs[i].max(0.0);
    }
    part
}

/// The part (0-based) of each item, as [`assign`] balances them, where the items of one group
/// (`Some` name: the cases of one prepared problem) go to one part together: each group is one
/// item of its summed cost, so no two parts build the same problem.
pub fn assign_groups(costs: &[f64], groups: &[Option<&str>], parts: usize) -> Vec<usize> {
    let mut unit_of: Vec<usize> = Vec::with_capacity(costs.len());
    let mut unit_cost: Vec<f64> = Vec::new();
    let mut named: HashMap<&str, usize> = HashMap::new();
    for (i, g) in groups.iter().enumerate() {
        let u = match g {
            Some(name) => *named.entry(name).or_insert_with(|| {
                unit_cost.push(0.0);
                unit_cost.len() - 1
            }),
            None => {
                unit_cost.push(0.0);
                unit_cost.len() - 1
            }
        };
        unit_cost[u] += costs[i].max(0.0);
        unit_of.push(u);
    }
    let unit_part = assign(&unit_cost, parts);
    unit_of.iter().map(|&u| unit_part[u]).collect()
}

/// Known wall times of cases, by (experiment, case id): each case's largest `case_wall_s` in
/// the stored runs under `roots` (run folders, or folders of them).
pub fn known_costs(roots: &[PathBuf]) -> HashMap<(String, String), f64> {
    let mut out: HashMap<(String, String), f64> = HashMap::new();
    for dir in roots.iter().flat_map(|r| run_folders(r)) {
        let Ok(run) = RunDir::open(&dir) else { continue };
        let Ok(meta) = run.read_meta() else { continue };
        for e in &meta.experiments {
            let Ok(Some(df)) = run.read_experiment(&e.id) else { continue };
            let (Ok(ids), Ok(walls)) = (df.column("case_id"), df.column("case_wall_s")) else { continue };
            let (Ok(ids), Ok(walls)) = (ids.str(), walls.f64()) else { continue };
            for (id, w) in ids.iter().zip(walls.iter()) {
                if let (Some(id), Some(w)) = (id, w) {
                    let slot = out.entry((e.id.clone(), id.to_string())).or_insert(0.0);
                    *slot = slot.max(w);
                }
            }
        }
    }
    out
}

fn run_folders(root: &Path) -> Vec<PathBuf> {
    if root.join("meta.json").is_file() {
        return vec![root.to_path_buf()];
    }
    let mut v: Vec<PathBuf> = std::fs::read_dir(root)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.join("meta.json").is_file()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// The costs of `cases` ((experiment, case id)) from `known`: unknown cases cost the mean of the
/// known ones, or 1 where none is known.
pub fn costs_of(cases: &[(String, String)], known: &HashMap<(String, String), f64>) -> Vec<f64> {
    let fill = if known.is_empty() { 1.0 } else { known.values().sum::<f64>() / known.len() as f64 };
    cases.iter().map(|c| known.get(c).copied().unwrap_or(fill)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_one_based() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        for bad in ["0/4", "5/4", "x/4", "2", "2/0"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    /// Every case lands in exactly one part, for any number of parts, and the parts balance.
    #[test]
    fn every_case_in_exactly_one_part_and_the_parts_balance() {
        let mut rng = fembench_core::stats::SplitMix64::new(7);
        let costs: Vec<f64> = (0..300).map(|_| 0.1 + 10.0 * rng.unit() * rng.unit()).collect();
        for parts in 1..=9 {
            let a = assign(&costs, parts);
            assert_eq!(a.len(), costs.len());
            assert!(a.iter().all(|&p| p < parts));
            let mut load = vec![0.0; parts];
            for (i, &p) in a.iter().enumerate() {
                load[p] += costs[i];
            }
            let (lo, hi) = load.iter().fold((f64::MAX, 0.0f64), |(l, h), &v| (l.min(v), h.max(v)));
            let longest = costs.iter().cloned().fold(0.0, f64::max);
            assert!(hi - lo <= longest + 1e-9, "{parts} parts: {load:?}");
            assert_eq!(assign(&costs, parts), a, "the same assignment every time");
        }
        assert!(assign(&[], 3).is_empty());
    }

    /// The cases of one prepared problem share a part, and the parts still balance.
    #[test]
    fn the_cases_of_one_problem_go_to_one_part() {
        let costs = [5.0, 1.0, 1.0, 4.0, 2.0, 2.0, 3.0];
        let groups = [Some("pogo/weld"), Some("cecka/3"), Some("pogo/weld"), None, Some("cecka/3"), None, Some("pogo/gear")];
        for parts in 1..=4 {
            let a = assign_groups(&costs, &groups, parts);
            assert_eq!(a[0], a[2], "{parts} parts: pogo/weld split");
            assert_eq!(a[1], a[4], "{parts} parts: cecka/3 split");
            let mut load = vec![0.0; parts];
            a.iter().zip(costs).for_each(|(&p, c)| load[p] += c);
            let (lo, hi) = load.iter().fold((f64::MAX, 0.0f64), |(l, h), &v| (l.min(v), h.max(v)));
            // The largest unit is pogo/weld (6): no part is more than that above another.
            assert!(hi - lo <= 6.0 + 1e-9, "{parts} parts: {load:?}");
        }
        assert_eq!(assign_groups(&costs, &[None; 7], 3), assign(&costs, 3), "without groups, as assign");
    }

    #[test]
    fn unknown_cases_cost_the_mean_of_the_known() {
        let known: HashMap<(String, String), f64> =
            [(("e".to_string(), "a".to_string()), 4.0), (("e".to_string(), "b".to_string()), 2.0)].into();
        let cases = [("e", "a"), ("e", "c")].map(|(x, y)| (x.to_string(), y.to_string()));
        assert_eq!(costs_of(&cases, &known), vec![4.0, 3.0]);
        assert_eq!(costs_of(&cases, &HashMap::new()), vec![1.0, 1.0]);
    }
}
