//! The search for a node partition that fits a block's shared memory: the one-vertex floor no
//! partition can beat, checked only when a first partition does not fit.

use crate::cecka::problem::system::Problem;
use fembench_fem::partition::vertex_parts;

/// Number of distinct element vertices (the most parts a node partition can have).
pub fn vertex_count(p: &Problem) -> usize {
    let en = p.en();
    p.mesh.elems.chunks(en).flat_map(|c| c[..3].iter()).collect::<std::collections::HashSet<_>>().len()
}

/// Refuses a cap that no node partition can meet (checked before a second METIS call): every part
/// of [`metis_nodes`](fembench_fem::partition::metis_nodes) is a union of the one-vertex parts of [`vertex_parts`], and a block's
/// elements and words only grow with its nodes, so the one-vertex partition's largest block is
/// the least any partition can give.
pub fn reachable(p: &Problem, cap: usize, what: &str, worst: &dyn Fn(&[i32], usize) -> usize) -> Result<(), String> {
    let (part, k) = vertex_parts(p.mesh.elements());
    match worst(&part, k) {
        floor if floor > cap => Err(format!(
            "{}: {what} at most {cap}, while a block of one vertex (and the nodes that go with it) already needs {floor}",
            fembench_fem::partition::NO_FIT
        )),
        _ => Ok(()),
    }
}

/// A node partitioner that checks [`reachable`] before its second try: most plans fit at the
/// first part count, and the check (the one-vertex partition's blocks, about three partitions'
/// work) then costs nothing; a cap no partition can meet still stops before a second METIS call.
pub fn reachable_before_retry<'a>(
    checked: &'a std::cell::Cell<bool>,
    check: &'a dyn Fn() -> Result<(), String>,
    partition: &'a dyn Fn(usize) -> Result<Vec<i32>, String>,
) -> impl Fn(usize) -> Result<Vec<i32>, String> + 'a {
    let calls = std::cell::Cell::new(0usize);
    move |k| {
        calls.set(calls.get() + 1);
        if calls.get() == 2 {
            checked.set(true);
            check()?;
        }
        partition(k)
    }
}

/// A failed search's error, or the floor's where the floor refuses the cap: the search may end
/// after its first try (at the most parts) before the floor was `checked`.
pub fn floor_or(search: String, checked: &std::cell::Cell<bool>, floor: &dyn Fn() -> Result<(), String>) -> String {
    if checked.get() {
        return search;
    }
    floor().err().unwrap_or(search)
}
