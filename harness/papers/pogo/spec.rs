//! The Pogo experiment files' own types: methods, models, sweep, problem, tables and figures.

use serde::{Deserialize, Serialize};

/// A stepping method, by its registered name (`registry::METHODS`, where each method is a type
/// and its line says what it is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Method(pub(crate) &'static str);

/// Which blocker's partition the paper's kernel runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blocker {
    Aligned,
    Greedy,
}

/// The paper's models (section 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModelName {
    Weld,
    Gear,
    Geophysical,
}

impl ModelName {
    pub fn as_str(self) -> &'static str {
        match self {
            ModelName::Weld => "weld",
            ModelName::Gear => "gear",
            ModelName::Geophysical => "geophysical",
        }
    }
    pub const ALL: [ModelName; 3] = [ModelName::Weld, ModelName::Gear, ModelName::Geophysical];
    /// The model at `coarsen` times Table 1's element size.
    pub fn build(self, coarsen: f64) -> super::model::Model {
        let h = self.paper_element_size() * coarsen;
        match self {
            ModelName::Weld => super::model::weld(h),
            ModelName::Gear => super::gear::gear(h),
            ModelName::Geophysical => super::model::geophysical(h),
        }
    }
    /// Table 1's element size (m).
    pub fn paper_element_size(self) -> f64 {
        match self {
            ModelName::Weld => 40e-6,
            ModelName::Gear => 80e-6,
            ModelName::Geophysical => 5.0,
        }
    }
}

crate::axes! {
    pub struct Sweep =>
    #[derive(Copy)]
    pub struct Point {
        method: Method,
        model: ModelName,
        /// Element size over the paper's (1: Table 1's size; 2: four times fewer nodes).
        coarsen: f64,
    }
}

crate::named_axis!(ModelName);

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Problem_ {
    /// Steps in one timed repetition (its time is divided by them).
    pub timed_steps: usize,
    /// Steps from rest of the checked pass, against the oracle.
    pub check_steps: usize,
    /// Steps in one timed repetition of the host methods (a serial step of the weld takes about
    /// 50 ms, so 100 of them would spend half a minute of `make reproduce` on one row).
    pub cpu_timed_steps: usize,
    /// A full-length run (all of the model's increments, from rest, or `steps` of them) of our
    /// device methods at one element size, checked against the CPU reference's first `window`
    /// steps.
    pub full_run: Option<FullRunSpec>,
    /// A full run at a coarser element size that the CPU f64 reference checks over every
    /// increment (or its first `steps`): the check over the main arrival that the paper-size
    /// run's window cannot afford.
    pub arrival: Option<ArrivalSpec>,
    /// The sliced ELL's window (nodes of the RCM order) within which nodes are sorted by link
    /// count, so each slice of 32 pads little (SELL-C-sigma); 1: no sort.
    pub sell_sigma: usize,
    /// A Gmsh `.msh` file (relative to the working directory) whose mesh replaces our mesher's
    /// for the sweep's one model (its groups as `harness export` writes them: see
    /// [`super::io::import`]); the sweep's coarsen must then be [1].
    pub msh: Option<std::path::PathBuf>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FullRunSpec {
    /// The sweep's element-size factor to run it at (1: the paper's size).
    pub coarsen: f64,
    /// Steps of the CPU f64 reference (the window the CPU can afford).
    pub window: usize,
    /// Increments to run where the model's are more than the budget allows (the gear's
    /// 500,000): the full-runs table extrapolates the time to the model's increments linearly
    /// and marks it. Absent: all of the model's increments.
    #[serde(default)]
    pub steps: Option<usize>,
    /// Runs that go through every increment although `steps` stops the others (the f64 run
    /// that Table 2 and the budget ask for, while the rest are extrapolated).
    #[serde(default)]
    pub every_increment: Vec<RunOf>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArrivalSpec {
    /// The sweep's element-size factor to run it at (another than the full run's).
    pub coarsen: f64,
    /// Increments to run and check where the model's are more than the CPU can afford (the
    /// gear's 500,000). Absent: all of them.
    #[serde(default)]
    pub steps: Option<usize>,
}

impl ArrivalSpec {
    /// The increments run and checked for a model of `increments`.
    pub fn steps_of(&self, increments: usize) -> usize {
        self.steps.map_or(increments, |s| s.min(increments))
    }
}

/// One method in one precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunOf {
    pub method: Method,
    pub precision: crate::Precision,
}

impl FullRunSpec {
    /// The increments a full run of `method` in `precision` stops after (`usize::MAX`: all).
    pub fn cap(&self, method: Method, precision: crate::Precision) -> usize {
        if self.every_increment.contains(&RunOf { method, precision }) {
            usize::MAX
        } else {
            self.steps.unwrap_or(usize::MAX)
        }
    }
}

impl Default for Problem_ {
    fn default() -> Self {
        Problem_ { timed_steps: 100, check_steps: 100, cpu_timed_steps: 100, full_run: None, arrival: None, sell_sigma: 512, msh: None }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableName {
    /// Table 1: each model as built (element size, DOFs, dt, increments, CFL margin).
    Models,
    /// Time per step of every method, f64 and f32, with GB/s, share of copy and ratios.
    Steps,
    /// Table 2 measured: the full runs' stepping times, with their checks.
    FullRuns,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FigureName {
    /// Time per step against degrees of freedom, one line per method and precision.
    StepTime,
    /// Figs 8 and 13: the receivers' displacements from the full run, with the CPU window.
    Traces,
    /// Figs 9 and 11(c): the discrepancy at the receivers, f64 against the CPU and f32 against
    /// f64.
    Discrepancy,
}

pub type Outputs = crate::experiment::Outputs<TableName, FigureName>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Precision;

    #[test]
    fn only_the_named_runs_go_through_every_increment() {
        let f = FullRunSpec {
            coarsen: 1.0,
            window: 1500,
            steps: Some(25_000),
            every_increment: vec![RunOf { method: Method::SELL, precision: Precision::F64 }],
        };
        assert_eq!(f.cap(Method::SELL, Precision::F64), usize::MAX);
        assert_eq!(f.cap(Method::SELL, Precision::F32), 25_000);
        assert_eq!(f.cap(Method::POGO_ALIGNED, Precision::F64), 25_000);
        let all = FullRunSpec { steps: None, every_increment: vec![], ..f };
        assert_eq!(all.cap(Method::POGO_ALIGNED, Precision::F32), usize::MAX);
    }
}

/// The extra columns the rows carry beyond the row's own, the runner's and the parameters:
/// the run side writes each name, and a report reads an optional column only if it is here.
pub const COLUMNS: &[&str] = &[
    "aligned_blocks",
    "aligned_eta",
    "aligned_layers",
    "aligned_s",
    "arrange_passes",
    "arrange_s",
    "arrange_splits",
    "arranged_blocks",
    "arranged_eta",
    "cfl_margin",
    "check_steps",
    "col16",
    "dofs",
    "dt",
    "element_size",
    "elements",
    "greedy_blocks",
    "greedy_eta",
    "greedy_s",
    "increments",
    "l_av",
    "link_pointers",
    "links",
    "mean_edge",
    "mesh_s",
    "metis_blocks",
    "metis_eta",
    "metis_s",
    "nnz",
    "nodes",
    "operators_s",
    "oracle_s",
    "order_s",
    "padded_bytes",
    "paper_bytes",
    "receivers",
    "reference_trace",
    "row_bound",
    "sell_padding",
    "sell_sigma",
    "step_graph",
    "timed_steps",
    "trace",
    "trace_error",
    "trace_stride",
    "vendor_version",
    "window_cpu_s",
    "window_steps",
];
