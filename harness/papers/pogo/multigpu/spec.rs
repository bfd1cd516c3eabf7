//! The multi-GPU study's experiment-file types: methods, studies, GPU counts, the problem and
//! the outputs (see [`super`]).

use serde::Deserialize;

use crate::pogo::spec::{Method, ModelName};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Study {
    Strong,
    /// Strong scaling on the 3D hexahedral box ([`crate::pogo::hexbox`]), beyond the paper.
    #[serde(rename = "strong-3d")]
    Strong3d,
    Weak,
    Arrival,
}

impl Study {
    pub fn as_str(self) -> &'static str {
        match self {
            Study::Strong => "strong",
            Study::Strong3d => "strong-3d",
            Study::Weak => "weak",
            Study::Arrival => "arrival",
        }
    }
}

crate::axes! {
    pub struct Sweep =>
    #[derive(Copy)]
    pub struct Point {
        /// Ours (`sell`, `sell-kf32`) or the paper's kernel on each part's aligned blocks
        /// (`pogo-aligned`, `pogo-aligned-kf32`).
        method: Method,
        study: Study,
        /// GPUs of the node (1, 2, 4, ...): a case needing more than the node has is skipped.
        gpus: usize,
    }
}

crate::named_axis!(Study);

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Problem_ {
    pub model: ModelName,
    /// The strong study's model: its DOFs over the paper's model's (8: about 15M for the weld).
    pub strong_scale: f64,
    /// The weak study's DOFs per GPU over the paper's model's.
    pub weak_scale: f64,
    /// The arrival study's element size over the paper's (4: the weld at 120K DOFs).
    pub arrival_coarsen: f64,
    /// Increments of the arrival study (None: all of the model's).
    pub arrival_steps: Option<usize>,
    /// Increments in one timed repetition (its time is divided by them).
    pub timed_steps: usize,
    /// Increments of the checked pass from rest, against the CPU f64 reference.
    pub check_steps: usize,
    /// The one-GPU order's sort by link count (SELL-C-sigma) before the split.
    pub sell_sigma: usize,
    /// The `strong-3d` study's box: nodes a side (3 n^3 DOFs; 190: 20.6M).
    pub box_nodes: usize,
}

impl Default for Problem_ {
    fn default() -> Self {
        Problem_ {
            model: ModelName::Weld,
            strong_scale: 8.0,
            weak_scale: 4.0,
            arrival_coarsen: 4.0,
            arrival_steps: None,
            timed_steps: 100,
            check_steps: 100,
            sell_sigma: 512,
            box_nodes: 190,
        }
    }
}

/// The model a case steps: one of Pogo's plane models at an element size over the paper's (its
/// f64 bits: a cache key), or the 3D box of `nodes` a side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StudyModel {
    Plane { model: ModelName, coarsen_bits: u64 },
    Box { nodes: usize },
}

impl Problem_ {
    /// A case's model.
    pub fn model_for(&self, study: Study, gpus: usize) -> StudyModel {
        let coarsen = match study {
            Study::Strong => 1.0 / self.strong_scale.sqrt(),
            Study::Strong3d => return StudyModel::Box { nodes: self.box_nodes },
            Study::Weak => 1.0 / (self.weak_scale * gpus as f64).sqrt(),
            Study::Arrival => self.arrival_coarsen,
        };
        StudyModel::Plane { model: self.model, coarsen_bits: coarsen.to_bits() }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableName {
    /// Time per increment, speed-up and efficiency against one GPU, halo and exchange.
    Scaling,
    /// The arrival study's checks: P GPUs against one and against the CPU.
    Arrival,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FigureName {
    /// Time per increment against GPUs, with the ideal line.
    Time,
    /// Parallel efficiency against GPUs, strong and weak.
    Efficiency,
}

pub type Outputs = crate::experiment::Outputs<TableName, FigureName>;

/// The extra columns the rows carry beyond the row's own, the runner's and the parameters:
/// the run side writes each name, and a report reads an optional column only if it is here.
pub const COLUMNS: &[&str] = &[
    "build_s",
    "check_steps",
    "col16",
    "compute_s",
    "cpu_reference_s",
    "dofs",
    "dofs_per_gpu",
    "dt",
    "element_size",
    "exchange_s",
    "halo_bytes",
    "halo_nodes",
    "host_s",
    "imbalance",
    "increments",
    "interior_share",
    "nccl_version",
    "nodes",
    "row_bound",
    "timed_steps",
    "trace_error",
    "vs_one_gpu",
];
