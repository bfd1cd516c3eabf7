//! The a-COO experiment files' own types: methods, sweep, problem, tables and figures.

use serde::Deserialize;

/// A method, by its registered name (`registry::METHODS`, where each method is a type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Method(pub(crate) &'static str);

crate::axes! {
    pub struct Sweep =>
    #[derive(Copy)]
    pub struct Point {
        method: Method,
        /// Uniform refinement levels of the capacitor mesh (level 0: 7.6K triangles, x4 each).
        level: u32,
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Problem_ {
    /// CG stops at ||r|| <= tolerance ||b||.
    pub tolerance: f64,
    pub max_iterations: usize,
    /// Largest relative L2 error of a solution against the f64 reference (the paper's 1e-5).
    pub max_error: f64,
    /// How far a method's CG iteration count may be from the reference CG's to the same
    /// tolerance: this fraction of it, and at least 2 (the paper: one or two iterations; the EbE
    /// products sum in another order, 1585 against 1588 iterations at 480K triangles).
    pub iteration_slack: f64,
    /// The f32 cases' own stopping tolerance and error bound: an f32 CG cannot reach 1e-10, and
    /// its solution is as good as f32 and the matrix's condition allow. Without this block, f32
    /// cases use the f64 settings (and fail honestly where f32 cannot meet them).
    pub f32: Option<PrecisionSettings>,
    /// Our CSR CG (a-fem, csr-atomic, csr-color) in Chronopoulos and Gear's single-reduction form,
    /// two launches an iteration; else the direction update inside the product, four.
    pub cg_single_reduction: bool,
}

/// A precision's CG stopping tolerance and its error bound against the f64 reference.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrecisionSettings {
    pub tolerance: f64,
    pub max_error: f64,
    /// As `Problem_::iteration_slack`; f32 rounding delays CG's convergence more.
    pub iteration_slack: Option<f64>,
}

impl Default for Problem_ {
    fn default() -> Self {
        Problem_ {
            tolerance: 1e-10,
            max_iterations: 100_000,
            max_error: 1e-5,
            iteration_slack: 0.005,
            f32: None,
            cg_single_reduction: false,
        }
    }
}

impl Problem_ {
    /// The settings a case of this precision runs and is checked with.
    pub fn at(&self, precision: crate::Precision) -> Problem_ {
        match (precision, self.f32) {
            (crate::Precision::F32, Some(s)) => Problem_ {
                tolerance: s.tolerance,
                max_error: s.max_error,
                iteration_slack: s.iteration_slack.unwrap_or(self.iteration_slack),
                ..self.clone()
            },
            _ => self.clone(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableName {
    /// Per method at the largest size: stage times, CG iterations, time per iteration, memory.
    Largest,
    /// The paper's claims, each marked as holding or not in this run.
    Claims,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FigureName {
    /// Fig. 8: stage times against mesh size, per method.
    Stages,
    /// Fig. 9: totals with and without the coloring counted.
    Totals,
    /// Fig. 10: device bytes against triangles, and per element beside the paper's.
    Memory,
    /// Fig. 5: host pre-processing times (mesh generation, adjacency, coloring) against size.
    Preprocessing,
}

pub type Outputs = crate::experiment::Outputs<TableName, FigureName>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Precision;

    #[test]
    fn f32_cases_take_their_own_settings_and_f64_cases_keep_theirs() {
        let mut p = Problem_::default();
        assert_eq!(p.at(Precision::F32).tolerance, 1e-10, "without an f32 block, f32 uses the f64 settings");
        p.f32 = Some(PrecisionSettings { tolerance: 1e-6, max_error: 1e-3, iteration_slack: None });
        let (f32, f64) = (p.at(Precision::F32), p.at(Precision::F64));
        assert_eq!((f32.tolerance, f32.max_error, f32.iteration_slack), (1e-6, 1e-3, 0.005));
        assert_eq!((f64.tolerance, f64.max_error), (1e-10, 1e-5));
        p.f32.as_mut().unwrap().iteration_slack = Some(0.25);
        assert_eq!(p.at(Precision::F32).iteration_slack, 0.25);
        assert_eq!(p.at(Precision::F64).iteration_slack, 0.005);
    }
}
