//! The Sanfui-Sharma experiment files' own types: methods (format x race strategy, and the
//! baselines), sweep, problem, tables and figures.

use serde::{Deserialize, Serialize};

use crate::Backend;

/// The paper's five storage formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Format {
    Coo,
    Csr,
    Ell,
    Coom,
    Ellm,
}

impl Format {
    pub const ALL: [Format; 5] = [Format::Coo, Format::Csr, Format::Ell, Format::Coom, Format::Ellm];
    pub fn as_str(self) -> &'static str {
        ["COO", "CSR", "ELL", "COOM", "ELLM"][self.code()]
    }
    /// The kernels' `FORMAT` define.
    pub fn code(self) -> usize {
        self as usize
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Symbolic kernel, then the numeric kernel over 8 element colors (Algorithm 6).
    CooColor,
    CooAtomic,
    CsrColor,
    CsrAtomic,
    EllColor,
    EllAtomic,
    CoomColor,
    CoomAtomic,
    EllmColor,
    EllmAtomic,
    /// Baseline: one thread per element, atomic adds into precomputed CSR slots (Cecka's
    /// ElemAtomic); its slots are host pre-processing.
    ElemAtomic,
    /// Beyond the paper: ELLM with the race avoided by gathering instead of scattering. A
    /// second symbolic kernel lists, per 3x3 block of ELLM, the element blocks that land there;
    /// the numeric kernel (one thread per block) sums them and writes each value once, with
    /// neither colors nor atomics nor a zeroing pass.
    EllmGather,
    /// The paper's GPU baseline: Cecka et al.'s SharedNZ for hex8 ([`super::shared_nz`]): node
    /// bricks, K^e computed in shared memory, reduction lists into CSR values (the CSR symbolic
    /// kernel writes the indices).
    SharedNz,
    /// What most users do (beyond the paper, CUDA only): every element writes its 576 unsorted
    /// (row, column, value) triplets; cuSPARSE sorts them (`coosortByRow`, `coo2csr`,
    /// `csrsort`) and our kernels sum the duplicates into CSR (head flags, the shared scan, a
    /// segmented sum).
    CooCusparse,
    /// The same COO route sorted by the shared device radix sort (what CuPy's `tocsr` runs, CUB's
    /// algorithm; beyond the paper, both GPU APIs).
    CooRadix,
    /// Algorithm 2 (`addto`), serial f64 into CSR: the paper's CPU baseline.
    CpuSerial,
    /// The same over the 8 colors with rayon's threads.
    CpuParallel,
}

impl Method {
    pub const ALL: [Method; 17] = [
        Method::CooColor,
        Method::CooAtomic,
        Method::CsrColor,
        Method::CsrAtomic,
        Method::EllColor,
        Method::EllAtomic,
        Method::CoomColor,
        Method::CoomAtomic,
        Method::EllmColor,
        Method::EllmAtomic,
        Method::ElemAtomic,
        Method::EllmGather,
        Method::SharedNz,
        Method::CooCusparse,
        Method::CooRadix,
        Method::CpuSerial,
        Method::CpuParallel,
    ];
    pub fn as_str(self) -> &'static str {
        [
            "coo-color",
            "coo-atomic",
            "csr-color",
            "csr-atomic",
            "ell-color",
            "ell-atomic",
            "coom-color",
            "coom-atomic",
            "ellm-color",
            "ellm-atomic",
            "elem-atomic",
            "ellm-gather",
            "shared-nz",
            "coo-cusparse",
            "coo-radix",
            "cpu-serial",
            "cpu-parallel",
        ][self as usize]
    }
    /// The method of a row's `method` value.
    pub fn named(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.as_str() == name)
    }
    /// The format a paper method assembles into (the baselines: CSR).
    pub fn format(self) -> Format {
        match self {
            Method::CooColor | Method::CooAtomic => Format::Coo,
            Method::EllColor | Method::EllAtomic => Format::Ell,
            Method::CoomColor | Method::CoomAtomic => Format::Coom,
            Method::EllmColor | Method::EllmAtomic | Method::EllmGather => Format::Ellm,
            _ => Format::Csr,
        }
    }
    /// One of the paper's ten symbolic + numeric combinations.
    pub fn is_paper(self) -> bool {
        (self as usize) < 10
    }
    /// Atomic adds rather than colors.
    pub fn atomic(self) -> bool {
        matches!(self, Method::ElemAtomic) || (self.is_paper() && (self as usize) % 2 == 1)
    }
    /// Element coloring (Algorithm 6): a paper method that is not atomic.
    pub fn colored(self) -> bool {
        self.is_paper() && !self.atomic()
    }
    pub fn on_cpu(self) -> bool {
        matches!(self, Method::CpuSerial | Method::CpuParallel)
    }
    /// The peers, what a GPU-library user runs instead: the COO routes and the slot-map scatter
    /// (elem-atomic: K^e written, then added through CSR slots built once, PyTorch's index_add_).
    pub const PEERS: [Method; 3] = [Method::CooRadix, Method::ElemAtomic, Method::CooCusparse];
    /// A COO route (element triplets sorted into CSR, duplicates summed).
    pub fn coo_route(self) -> bool {
        matches!(self, Method::CooCusparse | Method::CooRadix)
    }
    pub fn runs_on(self, backend: Backend) -> bool {
        match self {
            Method::CooCusparse => backend == Backend::Cuda,
            _ => self.on_cpu() == (backend == Backend::Cpu),
        }
    }
}

crate::axes! {
    pub struct Sweep =>
    #[derive(Copy)]
    pub struct Point {
        method: Method,
        /// Boxes of nx x ny x nz nodes.
        nodes: BoxNodes,
    }
}

crate::named_axis!(Method);

/// A box of nx x ny x nz nodes: one sweep axis, three parameter columns (nx, ny, nz).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct BoxNodes(pub [usize; 3]);

impl crate::axes::AxisValue for BoxNodes {
    fn param(&self) -> crate::experiment::ParamValue {
        let [x, y, z] = self.0;
        crate::experiment::ParamValue::Str(format!("{x}x{y}x{z}"))
    }
    fn columns(&self, _: &str, params: crate::experiment::Params) -> crate::experiment::Params {
        use crate::experiment::ParamValue::Int;
        let [x, y, z] = self.0.map(|v| v as i64);
        params.push("nx", Int(x)).push("ny", Int(y)).push("nz", Int(z))
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Problem_ {
    /// Young's modulus (Pa) and Poisson's ratio of the beam (steel by default).
    pub young: f64,
    pub poisson: f64,
    /// Edge of the cubic elements (m).
    pub spacing: f64,
    /// Shared memory (bytes) SharedNZ's blocks may use; default: the device's limit per block
    /// (48 KB of static shared memory on CUDA, Cecka's setting). It sizes the node bricks.
    pub shared_bytes: Option<u64>,
}

impl Default for Problem_ {
    fn default() -> Self {
        Problem_ { young: 200e9, poisson: 0.3, spacing: 1e-3, shared_bytes: None }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableName {
    /// Eq. 6 and Table 1 beside our counts, per box.
    Counts,
    /// Every combination at the largest box: stage times, GB/s, storage, ratios.
    Largest,
    /// The paper's findings, each marked as holding or not in this run.
    Claims,
    /// Where each method stops fitting: the largest box that ran and its device bytes, the
    /// first that did not and why, and where the bytes per node would fill the device.
    MemoryLimit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FigureName {
    /// Fig. 7: storage against nodes, per format (ours and Table 1's).
    Storage,
    /// Fig. 8: storage against DOFs per node (1 to 6) at the largest box, per format.
    StorageDof,
    /// Fig. 10: assembly time against nodes, coloring.
    TimeColoring,
    /// Fig. 11: assembly time against nodes, atomics.
    TimeAtomics,
    /// Fig. 12: speed-up over SharedNZ.
    SpeedupSharedNz,
    /// Fig. 13: speed-up over the serial CPU.
    SpeedupCpu,
    /// Fig. 14: GFLOP/s of the numeric kernels.
    Gflops,
    /// Fig. 15: the symbolic and numeric kernels' share of the assembly time.
    Shares,
}

pub type Outputs = crate::experiment::Outputs<TableName, FigureName>;

/// The extra columns the rows carry beyond the row's own, the runner's and the parameters:
/// the run side writes each name, and a report reads an optional column only if it is here.
pub const COLUMNS: &[&str] = &[
    "blocks",
    "brick_nodes",
    "coloring_s",
    "colors",
    "device_bytes",
    "dofs",
    "element_calls_per_element",
    "elements",
    "eq6_nnz",
    "max_block_elements",
    "neighbours_s",
    "nnz",
    "nodes",
    "nx",
    "ny",
    "nz",
    "reduction_padding",
    "setup_s",
    "shared_bytes",
    "storage_bytes",
    "table1_bytes",
    "vendor_version",
];
