//! A model made ready for the multi-GPU study: its operators, the one-GPU order, its splits,
//! the CPU f64 references and the one-GPU runs' results (see [`super`]).

use std::collections::HashMap;

use rayon::prelude::*;
use std::sync::{Arc, Mutex};

use super::spec::{Problem_, StudyModel};
use super::split::Split;
use super::split_blocks::{arrange_part, PartBlocks};
use crate::cache::ProblemCache;
use crate::context::RunContext;
use crate::fem::elements::Elements;
use crate::fem::partition;
use crate::pogo::hexbox::HexBox;
use crate::pogo::model::{Model, Signal};
use crate::pogo::prepared::in_run_order;
use crate::pogo::sell::SlicedEll;
use crate::pogo::spec::Method;
use crate::pogo::system::System;
use crate::Precision;

/// A model made ready for splitting: its operators, the one-GPU order, the CPU reference of the
/// checked pass, and the one-GPU runs' results (for the P-GPU cases to equal).
pub struct Ready {
    pub model: Stepped,
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
    /// The CPU f64 references made so far, by length and start (rest or [`super::gpu::start_state`]).
    reference: Mutex<HashMap<(usize, bool), Arc<Reference>>>,
    /// The one-GPU run of each method and precision: U and traces, for the P-GPU runs.
    pub one_gpu: Mutex<HashMap<(Method, Precision, usize), Arc<Outcome>>>,
}

/// What the study steps: one of Pogo's plane models (in its run order), or the 3D box.
pub enum Stepped {
    Plane(Model),
    Box(HexBox),
}

impl Stepped {
    pub fn nodes(&self) -> usize {
        match self {
            Stepped::Plane(m) => m.nodes(),
            Stepped::Box(b) => b.nodes(),
        }
    }
    pub fn dofs(&self) -> usize {
        match self {
            Stepped::Plane(m) => m.dofs(),
            Stepped::Box(b) => b.dofs(),
        }
    }
    pub fn element_size(&self) -> f64 {
        match self {
            Stepped::Plane(m) => m.element_size,
            Stepped::Box(b) => b.element_size,
        }
    }
    pub fn dt(&self) -> f64 {
        match self {
            Stepped::Plane(m) => m.dt,
            Stepped::Box(b) => b.dt,
        }
    }
    /// The model's increments (a full run).
    pub fn increments(&self) -> usize {
        match self {
            Stepped::Plane(m) => m.increments,
            Stepped::Box(b) => b.increments,
        }
    }
    pub fn signal(&self) -> Signal {
        match self {
            Stepped::Plane(m) => m.source.signal,
            Stepped::Box(b) => b.signal,
        }
    }
    /// Each element's nodes, end to end, and the nodes an element has (all of them corners).
    fn element_nodes(&self) -> (std::borrow::Cow<'_, [u32]>, usize) {
        match self {
            Stepped::Plane(m) => (m.mesh.tris.iter().flatten().copied().collect::<Vec<u32>>().into(), 3),
            Stepped::Box(b) => (b.mesh.elems.as_slice().into(), 8),
        }
    }
    fn operators(&self) -> System {
        match self {
            Stepped::Plane(m) => System::build(m),
            Stepped::Box(b) => b.system(),
        }
    }
}

/// U (dof order) and the receivers' traces (a value per receiver dof, step-major) after a run.
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
    pub fn new(model: Stepped, sigma: usize) -> Ready {
        let t = std::time::Instant::now();
        let model = match model {
            Stepped::Plane(m) => Stepped::Plane(in_run_order(m)),
            b => b,
        };
        let sys = model.operators();
        let mut rank = vec![0u32; sys.nodes];
        SlicedEll::order(&sys, sigma).iter().enumerate().for_each(|(q, &i)| rank[i as usize] = q as u32);
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
                let (flat, per) = self.model.element_nodes();
                let elements = Elements { nodes: &flat, per_element: per, corners: per, num_nodes: self.model.nodes() };
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
                    let Stepped::Plane(model) = &self.model else { return Err(PAPER_KERNEL_IS_2D.into()) };
                    let block = self.aligned.get_or_init(|| {
                        let flat: Vec<u32> = model.mesh.tris.iter().flatten().copied().collect();
                        let elements = Elements { nodes: &flat, per_element: 3, corners: 3, num_nodes: model.nodes() };
                        crate::fem::aligned::aligned_nodes(elements, &model.mesh.points, &Default::default()).block
                    });
                    s.parts.par_iter().map(|p| arrange_part(p, block, &model.mesh.points)).collect()
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
                let first = start.map_or_else(|| vec![0.0; self.sys.dofs()], <[f64]>::to_vec);
                let (dt, signal) = (self.model.dt(), self.model.signal());
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

/// Why the paper's kernel does not run the 3D box.
pub const PAPER_KERNEL_IS_2D: &str =
    "the paper's kernel and its memory arrangement (section 3.2) are written for triangles in a plane with two DOFs a node: the 3D box runs on the sliced ELL only";

type Key = (StudyModel, usize);

/// The model made ready, from the run's two most recent.
pub fn ready(run: &RunContext, problem: &Problem_, which: StudyModel) -> Arc<Ready> {
    let key = (which, problem.sell_sigma);
    let build = || match which {
        StudyModel::Plane { model, coarsen_bits } => Stepped::Plane(model.build(f64::from_bits(coarsen_bits))),
        StudyModel::Box { nodes } => Stepped::Box(HexBox::new(nodes)),
    };
    run.state("pogo split models", || ProblemCache::<Key, Ready>::new(2))
        .get_or_build::<std::convert::Infallible>(key, || Ok(Ready::new(build(), problem.sell_sigma)))
        .unwrap_or_else(|e| match e {})
}
