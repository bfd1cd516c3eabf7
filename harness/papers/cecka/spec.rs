//! The Cecka et al. experiment files' own types: methods, sweep, problem, tables and figures,
//! and a case's sweep point.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::experiment::NonEmpty;

/// A method, by its registered name (`registry::METHODS`): a full method's, or its dummy
/// variant's (the paper's "dummy" element subroutine, `<name>-dummy`). What the name stands for
/// (its type, role, where it runs) is the registry's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Method(pub(crate) &'static str);

impl Method {
    pub const fn as_str(self) -> &'static str {
        self.0
    }
    /// A dummy variant, by its name: every `*-dummy` method and only those (a hand list once
    /// forgot SharedAtomicDummy, which then ran the full kernel).
    pub fn dummy(self) -> bool {
        self.0.ends_with("-dummy")
    }
    /// The full method a dummy stands beside (itself for a full method).
    pub fn full(self) -> Method {
        Method(self.0.strip_suffix("-dummy").unwrap_or(self.0))
    }
}

impl Serialize for Method {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

/// The work-group and block defaults a GPU method takes (each method's best on the H200).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    Elem,
    GlobalNz,
    SharedNz,
    LocalNz,
    SharedAtomic,
}

crate::axes! {
    pub struct Sweep =>
    #[derive(Copy)]
    pub struct Point {
        method: Method,
        /// Uniform refinements of the coarse plate mesh: level 0 has about 290 P1 elements, each
        /// level four times more (level 7: about 4.8M, Table VI's largest).
        level: u32,
        /// Lagrange order, 1..6.
        order: u32,
        /// Minimum number of colors for the colored methods (0: as few as greedy coloring
        /// finds); `colors` in the file, where it may be left out (0). Other methods run once,
        /// at 0.
        #[serde(rename = "colors", default = "fewest_colors")]
        min_colors: u32,
    }
}

crate::named_axis!(Method);

/// The `colors` axis left out: as few colors as greedy coloring finds.
fn fewest_colors() -> NonEmpty<u32> {
    NonEmpty(vec![0])
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Problem_ {
    /// Work-group size of every kernel (and the lanes of the packed arrays). Default: 256 for
    /// GlobalNZ and SharedNZ, 128 for the others.
    pub group_size: Option<u32>,
    /// GlobalNZ and SharedAtomic: elements per METIS part (thread block) to aim for. Default:
    /// 512 (GlobalNZ), 1024 (SharedAtomic).
    pub elements_per_block: Option<u32>,
    /// GlobalNZ and LocalNZ: non-zeros (reduction lists) per thread block, per thread. Default 4.
    pub targets_per_thread: Option<u32>,
    /// Shared memory a block may use, in bytes; default and ceiling: the device's own limit
    /// (the paper's SharedNZ fails at order 5 on 16 KiB).
    pub shared_bytes: Option<u64>,
    /// SharedAtomic through CUDA: blocks per multiprocessor the compiler must fit in registers
    /// (`__launch_bounds__`); default: the compiler's choice.
    pub min_blocks_per_sm: Option<u32>,
    /// A Gmsh mesh instead of the plate with holes; `level` then counts uniform refinements of it.
    pub mesh: Option<MeshFile>,
    /// SharedAtomic: loop iterations whose global loads a thread issues together before it uses
    /// them (the kernel is latency-bound); default 8 (H200, P1, f32: 0.235, 0.224, 0.213 ms for 2, 4, 8).
    pub load_batch: Option<u32>,
}

/// A user's own domain: an ASCII Gmsh mesh of 3-node triangles and its Dirichlet groups.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeshFile {
    /// Path of the `.msh` file (format 4.1 or 2.2), relative to the working directory.
    pub gmsh: std::path::PathBuf,
    /// Physical group of boundary lines (its name, or its number) -> prescribed value g.
    pub dirichlet: BTreeMap<String, f64>,
}

impl MeshFile {
    pub(crate) fn read(&self) -> Result<super::problem::mesh::TriMesh, fembench_fem::gmsh::GmshError> {
        fembench_fem::gmsh::read(&self.gmsh, &self.dirichlet)
    }
}

impl Problem_ {
    /// The experiment's group size, else each method's best found on an H200 (CUDA, f32, P1 at 2.4M nodes):
    /// 256 for GlobalNZ and SharedNZ, 128 for the others.
    pub(crate) fn group_size(&self, family: Family) -> usize {
        let default = if matches!(family, Family::GlobalNz | Family::SharedNz) { 256 } else { 128 };
        self.group_size.map_or(default, |g| g as usize)
    }
    /// The experiment's choice, else 512 for GlobalNZ and 1024 for SharedAtomic.
    pub(crate) fn elements_per_block(&self, family: Family) -> usize {
        let default = if family == Family::GlobalNz { 512 } else { 1024 };
        self.elements_per_block.map_or(default, |e| e as usize)
    }
    pub(crate) fn targets_per_block(&self, family: Family) -> usize {
        self.group_size(family) * self.targets_per_thread.unwrap_or(4) as usize
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableName {
    /// Table VI: average relative error of the f32 device system against the f64 host system.
    Table6,
    /// Time, effective bandwidth and speed-up over the serial CPU baseline per method and size.
    Timings,
    /// The fastest of the paper's four methods and the fastest overall, per order, beside the
    /// paper's finding (SharedNZ up to order 3, GlobalNZ from order 4).
    Winners,
    /// The paper's claims this experiment's rows can judge, each with a verdict (claims.rs).
    Claims,
    /// Table IV: storage per element by order (nodal input and element output), the paper's
    /// formulas and values beside what our kernels keep (computed, not measured).
    Table4,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FigureName {
    /// Fig. 12: time per element against mesh size.
    TimeVsSize,
    /// Fig. 13/14: time per element against order, full and dummy kernels.
    TimeVsOrder,
    /// Fig. 3: ElemColor time against the number of colors.
    TimeVsColors,
    /// Fig. 13c/14c: full time over dummy time against order, per method (how much of the
    /// time is the element arithmetic).
    DummySpeedup,
}

/// The tables and figures an experiment file may ask for.
pub type Outputs = crate::experiment::Outputs<TableName, FigureName>;

/// The extra columns the rows carry beyond the row's own, the runner's and the parameters:
/// the run side writes each name, and a report reads an optional column only if it is here.
pub const COLUMNS: &[&str] = &[
    "blocks",
    "colors_used",
    "element_calls_per_element",
    "elements",
    "entries_over_bound",
    "max_block_elements",
    "max_block_nodes",
    "min_colors",
    "nnz",
    "nodes",
    "reduction_padding",
    "setup_s",
    "shared_bytes",
    "sort_workspace_bytes",
    "table6_error",
    "threads",
    "triplets",
    "unknowns",
];
