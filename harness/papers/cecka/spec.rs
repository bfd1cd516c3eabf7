//! The Cecka et al. experiment files' own types: methods, sweep, problem, tables and figures,
//! and a case's sweep point.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::experiment::NonEmpty;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Algorithm 1, serial, f64 (the paper's CPU baseline). CPU backend.
    CpuSerial,
    /// Algorithm 1 over colors with rayon. CPU backend.
    CpuParallel,
    /// 4.1: one thread per element, one launch per color.
    ElemColor,
    ElemColorDummy,
    /// 4.2: METIS element partitions with shared-memory prefetch, element data to global
    /// memory, then the LPT-packed reduction array.
    GlobalNz,
    GlobalNzDummy,
    /// 4.3: METIS node partitions, scatter array into shared memory, element data and
    /// reduction in shared memory.
    SharedNz,
    SharedNzDummy,
    /// 4.4: one thread per non-zero, the element subroutine recomputed for every contribution.
    LocalNz,
    LocalNzDummy,
    /// Beyond the paper: one thread per element, atomic adds into precomputed CSR slots.
    ElemAtomic,
    ElemAtomicDummy,
    /// Beyond the paper: SharedNZ's node partitions, element entries added by shared-memory
    /// atomics into the block's own rows (16-bit slots), each target written once.
    SharedAtomic,
    SharedAtomicDummy,
    /// Beyond the paper, the peer (CUDA only): the COO route a user of CuPy or SciPy takes.
    /// Element matrices as triplets, cuSPARSE's sort into CSR order, duplicates summed.
    CooCusparse,
    /// Beyond the paper, a peer: the same COO route sorted by the shared device radix sort (what
    /// CuPy's `tocsr` runs, CUB's algorithm). Both GPU APIs.
    CooRadix,
    /// Beyond the paper, a peer: PyTorch's `index_add_` route; a plain kernel writes the element
    /// matrices, then they are added atomically into CSR slots through a map built once. Both
    /// GPU APIs.
    SlotScatter,
    /// Beyond the paper, an external peer (CUDA, through Python): CuPy's `coo_matrix(...).tocsr()`
    /// after vectorized element matrices (`peers/cecka_assembly.py`).
    CupyTocsr,
    /// Beyond the paper, an external peer (CUDA, through Python): PyTorch's `index_add_` into CSR
    /// slots after vectorized element matrices.
    TorchIndexAdd,
    /// Beyond the paper, an external peer on the host (f64): SciPy's `coo_matrix(...).tocsr()`
    /// after vectorized NumPy element matrices, as scikit-fem assembles.
    ScipyTocsr,
}

/// How a GPU method assembles; each has a full and a dummy variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    Cpu,
    Elem,
    GlobalNz,
    SharedNz,
    LocalNz,
    SharedAtomic,
    Coo,
    /// A GPU route run by a Python script (the `external` peer kind).
    Python,
}

impl Method {
    pub const ALL: [Method; 20] = [
        Method::CpuSerial,
        Method::CpuParallel,
        Method::ElemColor,
        Method::ElemColorDummy,
        Method::GlobalNz,
        Method::GlobalNzDummy,
        Method::SharedNz,
        Method::SharedNzDummy,
        Method::LocalNz,
        Method::LocalNzDummy,
        Method::ElemAtomic,
        Method::ElemAtomicDummy,
        Method::SharedAtomic,
        Method::SharedAtomicDummy,
        Method::CooCusparse,
        Method::CooRadix,
        Method::SlotScatter,
        Method::CupyTocsr,
        Method::TorchIndexAdd,
        Method::ScipyTocsr,
    ];

    /// The paper's four GPU methods (Sec. 4), in its order.
    pub const PAPER: [Method; 4] = [Method::ElemColor, Method::GlobalNz, Method::SharedNz, Method::LocalNz];

    /// The paper's four GPU methods' names, in its order.
    pub const PAPER_NAMES: [&'static str; 4] =
        [Method::PAPER[0].as_str(), Method::PAPER[1].as_str(), Method::PAPER[2].as_str(), Method::PAPER[3].as_str()];

    /// The peers: what a user of a library runs instead of the paper's methods. Each is compared
    /// on its own device and backend only, so SciPy's host route is the CPU baselines' peer.
    pub const PEERS: [Method; 6] =
        [Method::CooRadix, Method::SlotScatter, Method::CooCusparse, Method::CupyTocsr, Method::TorchIndexAdd, Method::ScipyTocsr];

    pub const fn as_str(self) -> &'static str {
        match self {
            Method::CpuSerial => "cpu-serial",
            Method::CpuParallel => "cpu-parallel",
            Method::ElemColor => "elem-color",
            Method::ElemColorDummy => "elem-color-dummy",
            Method::GlobalNz => "global-nz",
            Method::GlobalNzDummy => "global-nz-dummy",
            Method::SharedNz => "shared-nz",
            Method::SharedNzDummy => "shared-nz-dummy",
            Method::LocalNz => "local-nz",
            Method::LocalNzDummy => "local-nz-dummy",
            Method::ElemAtomic => "elem-atomic",
            Method::ElemAtomicDummy => "elem-atomic-dummy",
            Method::SharedAtomic => "shared-atomic",
            Method::SharedAtomicDummy => "shared-atomic-dummy",
            Method::CooCusparse => "coo-cusparse",
            Method::CooRadix => "coo-radix",
            Method::SlotScatter => "slot-scatter",
            Method::CupyTocsr => "cupy-tocsr",
            Method::TorchIndexAdd => "torch-index-add",
            Method::ScipyTocsr => "scipy-tocsr",
        }
    }
    pub(crate) fn family(self) -> Family {
        match self {
            Method::CpuSerial | Method::CpuParallel | Method::ScipyTocsr => Family::Cpu,
            Method::ElemColor | Method::ElemColorDummy | Method::ElemAtomic | Method::ElemAtomicDummy => Family::Elem,
            Method::GlobalNz | Method::GlobalNzDummy => Family::GlobalNz,
            Method::SharedNz | Method::SharedNzDummy => Family::SharedNz,
            Method::LocalNz | Method::LocalNzDummy => Family::LocalNz,
            Method::SharedAtomic | Method::SharedAtomicDummy => Family::SharedAtomic,
            Method::CooCusparse | Method::CooRadix | Method::SlotScatter => Family::Coo,
            Method::CupyTocsr | Method::TorchIndexAdd => Family::Python,
        }
    }
    /// A route a Python script runs (`peers/cecka_assembly.py`), on a CUDA device or the host.
    pub fn external(self) -> bool {
        matches!(self, Method::CupyTocsr | Method::TorchIndexAdd | Method::ScipyTocsr)
    }
    pub(crate) fn on_cpu(self) -> bool {
        self.family() == Family::Cpu
    }
    /// A dummy variant, by its name: every `*-dummy` method and only those (a hand list once
    /// forgot SharedAtomicDummy, which then ran the full kernel).
    pub fn dummy(self) -> bool {
        self.as_str().ends_with("-dummy")
    }
    /// The full method a dummy stands beside (itself for a full method).
    pub fn full(self) -> Method {
        let name = self.as_str().strip_suffix("-dummy").unwrap_or(self.as_str());
        Method::ALL.into_iter().find(|m| m.as_str() == name).unwrap_or(self)
    }
    pub(crate) fn colored(self) -> bool {
        matches!(self, Method::ElemColor | Method::ElemColorDummy | Method::CpuParallel)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    pub method: NonEmpty<Method>,
    /// Uniform refinements of the coarse plate mesh: level 0 has about 290 P1 elements, each
    /// level four times more (level 7: about 4.8M, Table VI's largest).
    pub level: NonEmpty<u32>,
    /// Lagrange order, 1..6.
    pub order: NonEmpty<u32>,
    /// Minimum number of colors for the colored methods (0: as few as greedy coloring finds).
    #[serde(default)]
    pub colors: Option<NonEmpty<u32>>,
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
    pub(crate) fn read(&self) -> Result<super::mesh::TriMesh, fembench_fem::gmsh::GmshError> {
        fembench_fem::gmsh::read(&self.gmsh, &self.dirichlet)
    }
}

impl Problem_ {
    /// The experiment's group size, else each method's best on the H200 (docs/performance-notes.md):
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

#[derive(Debug, Clone, Copy)]
pub struct Point {
    pub method: Method,
    pub level: u32,
    pub order: u32,
    pub colors: u32,
}

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
