//! A model made ready for the multi-GPU study: its operators, the one-GPU order, its splits,
//! the CPU f64 references and the one-GPU runs' results (see [`super::scaling`]).

use std::collections::HashMap;

use rayon::prelude::*;
use std::sync::{Arc, Mutex};

use super::model::Model;
use super::prepared::in_run_order;
use super::scaling_spec::Problem_;
use super::sell::SlicedEll;
use super::spec::{Method, ModelName};
use super::split::Split;
use super::split_blocks::{arrange_part, PartBlocks};
use super::system::System;
use crate::cache::ProblemCache;
use crate::context::RunContext;
use crate::fem::elements::Elements;
use crate::fem::partition;
use crate::Precision;

/// A model made ready for splitting: its operators, the one-GPU order, the CPU reference of the
/// checked pass, and the one-GPU runs' results (for the P-GPU cases to equal).
pub struct Ready {
    pub model: Model,
    pub sys: System,
    /// Each node's position in the one-GPU sliced ELL (what orders a part's nodes).
    pub rank: Vec<u32>,
    pub build_s: f64,
    /// The window of the sort by link count, in the one-GPU order and in each part's.
    pub sigma: usize,
    /// Splits made so far, by part count.
    splits: Mutex<HashMap<usize, Arc<Result<Split, String>>>>,
    /// Each model node's block of the aligned blocker (the paper's kernel's one-GPU blocks),
    /// made when the paper's kernel first asks.
    aligned: std::sync::OnceLock<Vec<u32>>,
    /// Each split's parts arranged for the paper's kernel, by part count.
    arranged: Mutex<HashMap<usize, Arc<Result<Vec<PartBlocks>, String>>>>,
    /// The CPU f64 references made so far, by length and start (rest or [`super::scaling_gpu::start_state`]).
    reference: Mutex<HashMap<(usize, bool), Arc<Reference>>>,
    /// The one-GPU run of each method and precision: U and traces, for the P-GPU runs.
    pub one_gpu: Mutex<HashMap<(Method, Precision, usize), Arc<Outcome>>>,
}

/// U (dof order) and the receivers' traces (x, y per receiver, step-major) after a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub u: Vec<f64>,
    pub trace: Vec<f64>,
}

pub struct Reference {
    pub outcome: Outcome,
    pub seconds: f64,
}

impl Ready {
    pub fn new(model: Model, sigma: usize) -> Ready {
        let t = std::time::Instant::now();
        let model = in_run_order(model);
        let sys = System::build(&model);
        let sell = SlicedEll::new(&sys, sigma);
        let mut rank = vec![0u32; sys.nodes];
        sell.node_at.iter().enumerate().for_each(|(q, &i)| rank[i as usize] = q as u32);
        let build_s = t.elapsed().as_secs_f64();
        Ready {
            model,
            sys,
            rank,
            build_s,
            sigma,
            splits: Default::default(),
            aligned: Default::default(),
            arranged: Default::default(),
            reference: Default::default(),
            one_gpu: Default::default(),
        }
    }

    /// The model split into `parts` by METIS (made once per count).
    pub fn split(&self, parts: usize) -> Arc<Result<Split, String>> {
        let mut splits = self.splits.lock().unwrap_or_else(|e| e.into_inner());
        splits
            .entry(parts)
            .or_insert_with(|| {
                let flat: Vec<u32> = self.model.mesh.tris.iter().flatten().copied().collect();
                let elements = Elements { nodes: &flat, per_element: 3, corners: 3, num_nodes: self.model.nodes() };
                Arc::new(partition::metis_nodes(elements, parts).map(|owner| {
                    let owner = owner.into_iter().map(|p| p as u32).collect();
                    Split::new(&self.sys, owner, parts, &self.rank, self.sigma)
                }))
            })
            .clone()
    }

    /// The split into `parts` with each part arranged for the paper's kernel: the aligned
    /// blocker's blocks of the whole model cut by the parts ([`arrange_part`]); made once per
    /// count.
    pub fn arranged(&self, parts: usize) -> Arc<Result<Vec<PartBlocks>, String>> {
        let split = self.split(parts);
        let mut arranged = self.arranged.lock().unwrap_or_else(|e| e.into_inner());
        arranged
            .entry(parts)
            .or_insert_with(|| {
                Arc::new(split.as_ref().as_ref().map_err(Clone::clone).and_then(|s| {
                    let block = self.aligned.get_or_init(|| {
                        let flat: Vec<u32> = self.model.mesh.tris.iter().flatten().copied().collect();
                        let elements = Elements { nodes: &flat, per_element: 3, corners: 3, num_nodes: self.model.nodes() };
                        crate::fem::aligned::aligned_nodes(elements, &self.model.mesh.points, &Default::default()).block
                    });
                    s.parts.par_iter().map(|p| arrange_part(p, block, &self.model.mesh.points)).collect()
                }))
            })
            .clone()
    }

    /// The parts' arrangements for `method` split into `parts`: the paper's kernel's (see
    /// [`Ready::arranged`]), None for the sliced ELL.
    pub fn arranged_for(&self, method: Method, parts: usize) -> Option<Arc<Result<Vec<PartBlocks>, String>>> {
        method.blocker().map(|_| self.arranged(parts))
    }

    /// The CPU f64 reference of `steps` increments from `start` (U_prev = U_curr; rest where
    /// None) at t = 0: Eq. (4) on K' in CSR, on every core, the receivers recorded before each
    /// increment as the kernels record them. Made once per length and start.
    pub fn reference(&self, steps: usize, start: Option<&[f64]>) -> Arc<Reference> {
        let mut refs = self.reference.lock().unwrap_or_else(|e| e.into_inner());
        refs.entry((steps, start.is_some()))
            .or_insert_with(|| {
                let t = std::time::Instant::now();
                let first = start.map_or_else(|| vec![0.0; 2 * self.sys.nodes], <[f64]>::to_vec);
                let (dt, signal) = (self.model.dt, self.model.source.signal);
                let (curr, trace) = self.sys.run_from(first, steps, |k| signal.at(k as f64 * dt));
                Arc::new(Reference { outcome: Outcome { u: curr, trace }, seconds: t.elapsed().as_secs_f64() })
            })
            .clone()
    }
}

/// The part arrangements that [`Ready::arranged_for`] gave, as the stepper takes them: None for
/// the sliced ELL, or why the arrangement failed.
pub fn part_blocks(arranged: &Option<Arc<Result<Vec<PartBlocks>, String>>>) -> Result<Option<&[PartBlocks]>, String> {
    arranged.as_ref().map(|a| a.as_ref().as_ref().map(Vec::as_slice).map_err(Clone::clone)).transpose()
}

type Key = (ModelName, u64, usize);

/// The model made ready, from the run's two most recent.
pub fn ready(run: &RunContext, problem: &Problem_, coarsen: f64) -> Arc<Ready> {
    let key = (problem.model, coarsen.to_bits(), problem.sell_sigma);
    run.state("pogo split models", || ProblemCache::<Key, Ready>::new(2))
        .get_or_build::<std::convert::Infallible>(key, || Ok(Ready::new(problem.model.build(coarsen), problem.sell_sigma)))
        .unwrap_or_else(|e| match e {})
}
