//! The Sanfui-Sharma experiment files' own types: methods (format x race strategy, and the
//! baselines), sweep, problem, tables and figures.

use serde::Deserialize;

/// A method, by its registered name (`registry::METHODS`, where each method is a type and its
/// line says what it is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Method(pub(crate) &'static str);

crate::axes! {
    pub struct Sweep =>
    #[derive(Copy)]
    pub struct Point {
        method: Method,
        /// Boxes of nx x ny x nz nodes.
        nodes: BoxNodes,
    }
}

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
