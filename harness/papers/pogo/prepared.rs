//! One model made ready for every method: built, renumbered for locality (reverse
//! Cuthill-McKee), checked against the CFL limit, its operators and sliced ELL built, the greedy
//! blocks of the paper's cost model counted, and the oracle's answer after the check's steps.

use std::time::Instant;

use super::arrange::arrange;
use super::blocked::BlockData;
use super::model::Model;
use super::sell::SlicedEll;
use super::spec::Blocker;
use super::system::{Oracle, System};
use crate::background::{Background, Job};
use crate::benchmark::Measured;
use crate::fem::elements::Elements;
use crate::fem::{ordering, partition};
use crate::prep_cache::{self, Recipe};

/// A model made ready ([`Built`], whose fields it shows) and the parts made later, when a method
/// first asks.
pub struct Prepared {
    built: Built,
    metis_reported: std::sync::atomic::AtomicBool,
    /// The CPU reference of the full runs' first steps (see [`Prepared::window`]).
    window: std::sync::Mutex<Option<std::sync::Arc<Window>>>,
    /// Whether a background thread was started on the window ([`Prepared::window_in_background`]).
    window_started: std::sync::atomic::AtomicBool,
    /// The blockers' memory arrangements (section 3.2) with the paper's kernel's data
    /// ([`Prepared::blocked`]).
    arranged: [std::sync::OnceLock<Result<Arranged, String>>; 2],
    /// The renumbered mesh's node graph (xadj, adj), made for the first arrangement and kept for
    /// the other.
    graph: std::sync::OnceLock<(Vec<usize>, Vec<u32>)>,
    /// The parameters of the model's prepared-problem cache entry (see [`Prepared::from_built`]).
    cached: Option<String>,
}

impl std::ops::Deref for Prepared {
    type Target = Built;
    fn deref(&self) -> &Built {
        &self.built
    }
}

/// A memory arrangement with the paper's kernel's data, and the host seconds it took.
pub struct Arranged {
    pub data: BlockData,
    pub seconds: f64,
}

/// The CPU f64 reference (Eq. (4) on K', rayon over every core) of a run from rest at t = 0:
/// U after `steps` steps and the receivers' values U_0..U_{steps-1} (x, y per receiver,
/// step-major), as the device kernels record them.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Window {
    pub steps: usize,
    pub field: Vec<f64>,
    pub trace: Vec<f64>,
    /// Host seconds the window took.
    pub seconds: f64,
}

/// The model in the node order every case runs it in (reverse Cuthill-McKee of its node graph):
/// the order the blockers partition, so that `harness export`'s Fig. 7 shows the run's blocks.
pub fn in_run_order(model: Model) -> Model {
    let flat: Vec<u32> = model.mesh.tris.iter().flatten().copied().collect();
    let elements = Elements { nodes: &flat, per_element: 3, corners: 3, num_nodes: model.nodes() };
    let (xadj, adj) = partition::node_graph(elements);
    let order = ordering::rcm(&xadj, &adj);
    drop((xadj, adj));
    renumbered(model, &order)
}

/// The model with its nodes renumbered: new node k is old node `order[k]`.
pub fn renumbered(mut model: Model, order: &[u32]) -> Model {
    let mut new_of = vec![0u32; order.len()];
    order.iter().enumerate().for_each(|(k, &v)| new_of[v as usize] = k as u32);
    let m = &mut model.mesh;
    m.points = order.iter().map(|&v| m.points[v as usize]).collect();
    m.tris.iter_mut().for_each(|t| t.iter_mut().for_each(|v| *v = new_of[*v as usize]));
    m.dirichlet.iter_mut().for_each(|(e, _)| e.iter_mut().for_each(|v| *v = new_of[*v as usize]));
    model.fixed = order.iter().flat_map(|&v| [model.fixed[2 * v as usize], model.fixed[2 * v as usize + 1]]).collect();
    model.source.nodes.iter_mut().for_each(|v| *v = new_of[*v as usize]);
    model.receivers.iter_mut().for_each(|v| *v = new_of[*v as usize]);
    model
}

/// A scoped thread's result, its panic passed on to the caller (the case's guard reports it).
fn joined<T>(r: std::thread::Result<T>) -> T {
    r.unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// What [`Built::new`] makes of a model: everything a case reads but the parts made later,
/// as the prepared-problem cache keeps it.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Built {
    pub model: Model,
    pub sys: System,
    pub sell: SlicedEll,
    /// Steps of the checked pass, and the oracle's U and receiver traces after them.
    pub check_steps: usize,
    pub reference: Vec<f64>,
    pub ref_trace: Vec<f64>,
    /// dt over the CFL limit.
    pub cfl_margin: f64,
    /// Greedy blocks of 512 nodes (Klöckner et al.), the paper's Table A.5 count is per block.
    pub greedy_blocks: usize,
    /// Aligned blocks of 512 nodes (the paper's section 3.1), and the blocker's seconds.
    pub aligned: Aligned,
    /// METIS blocks of at most 512 nodes (a modern baseline; 0 where METIS failed) and seconds.
    pub metis_blocks: usize,
    pub metis_s: f64,
    /// Why METIS gave no blocks, reported once as a failed `metis-blocks` row
    /// ([`Prepared::metis_row`]).
    pub metis_error: Option<String>,
    /// Host seconds of the build's steps (of the build that made the cache entry).
    pub mesh_s: f64,
    pub order_s: f64,
    pub greedy_s: f64,
    pub operators_s: f64,
    pub oracle_s: f64,
    /// Each node's aligned and greedy block.
    pub aligned_block: Vec<u32>,
    pub greedy_block: Vec<u32>,
}

impl Built {
    /// `sigma`: the sliced ELL's window of the sort by link count ([`SlicedEll`]; 1: none).
    pub fn new(build: impl FnOnce() -> Model, check_steps: usize, sigma: usize) -> Result<Built, String> {
        let t = Instant::now();
        let model = build();
        let mesh_s = t.elapsed().as_secs_f64();
        let cfl_margin = model.check_dt()?;
        let t = Instant::now();
        let model = in_run_order(model);
        let order_s = t.elapsed().as_secs_f64();
        let flat: Vec<u32> = model.mesh.tris.iter().flatten().copied().collect();
        let elements = Elements { nodes: &flat, per_element: 3, corners: 3, num_nodes: model.nodes() };
        // The three blockers (one host thread each) run beside the operators and the oracle:
        // none reads what another makes, and each is timed on its own thread.
        let (blockers, metis, rest) = std::thread::scope(|scope| {
            let blockers = scope.spawn(|| {
                let t = Instant::now();
                let greedy_block = partition::greedy_nodes(elements, 512);
                let greedy_s = t.elapsed().as_secs_f64();
                let t = Instant::now();
                let b = crate::fem::aligned::aligned_nodes(elements, &model.mesh.points, &Default::default());
                (greedy_block, greedy_s, b, t.elapsed().as_secs_f64())
            });
            let metis = scope.spawn(|| {
                let t = Instant::now();
                let k = partition::metis_blocks(elements, 512);
                (k, t.elapsed().as_secs_f64())
            });
            let t = Instant::now();
            let sys = System::build(&model);
            let sell = SlicedEll::new(&sys, sigma);
            let operators_s = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let (reference, ref_trace) = Oracle::new(&model).run(check_steps);
            let rest = (sys, sell, operators_s, reference, ref_trace, t.elapsed().as_secs_f64());
            (joined(blockers.join()), joined(metis.join()), rest)
        });
        let (greedy_block, greedy_s, b, aligned_s) = blockers;
        let greedy_blocks = greedy_block.iter().max().map_or(0, |&b| b as usize + 1);
        let aligned = Aligned { blocks: b.blocks, layers: b.layers, joins: b.joins, splits: b.splits, seconds: aligned_s };
        let (metis_blocks, metis_error) = match metis.0 {
            Ok((_, k)) => (k, None),
            Err(e) => (0, Some(e)),
        };
        let (sys, sell, operators_s, reference, ref_trace, oracle_s) = rest;
        #[rustfmt::skip]
        let built = Built {
            model, sys, sell, check_steps, reference, ref_trace, cfl_margin, greedy_blocks, aligned, metis_blocks,
            metis_s: metis.1, metis_error, mesh_s, order_s, greedy_s, operators_s, oracle_s, aligned_block: b.block, greedy_block,
        };
        Ok(built)
    }
}

impl Prepared {
    /// `sigma`: the sliced ELL's window of the sort by link count ([`SlicedEll`]; 1: none).
    pub fn new(build: impl FnOnce() -> Model, check_steps: usize, sigma: usize) -> Result<Prepared, String> {
        Built::new(build, check_steps, sigma).map(|b| Prepared::from_built(b, None))
    }

    /// The prepared model of `b`. `cached`: the parameters its entry in the prepared-problem
    /// cache was made from, under which the full runs' CPU windows are kept too (None: not
    /// kept).
    pub fn from_built(built: Built, cached: Option<String>) -> Prepared {
        Prepared {
            built,
            cached,
            metis_reported: Default::default(),
            window: Default::default(),
            window_started: Default::default(),
            arranged: Default::default(),
            graph: Default::default(),
        }
    }

    /// The blocker's partition arranged in memory as section 3.2 does (blocks that cannot be
    /// served are split), with the paper's kernel's data; made once.
    pub fn blocked(&self, blocker: Blocker) -> &Result<Arranged, String> {
        self.arranged[blocker as usize].get_or_init(|| {
            let (xadj, adj) = self.graph.get_or_init(|| {
                let flat: Vec<u32> = self.model.mesh.tris.iter().flatten().copied().collect();
                partition::node_graph(Elements { nodes: &flat, per_element: 3, corners: 3, num_nodes: self.model.nodes() })
            });
            // Timed from here, so both blockers' seconds cover the same work.
            let t = Instant::now();
            let block = match blocker {
                Blocker::Aligned => &self.aligned_block,
                Blocker::Greedy => &self.greedy_block,
            };
            let arr = arrange(xadj, adj, &self.model.mesh.points, block, 200)?;
            let data = BlockData::new(&self.sys, arr);
            Ok(Arranged { data, seconds: t.elapsed().as_secs_f64() })
        })
    }

    /// Starts the window of `steps` steps on a thread of its own, once: the full runs of a model
    /// wait for it (in [`Prepared::window`]), and the GPU cases before them overlap it. Its
    /// `seconds` then count host cores shared with those cases.
    pub fn window_in_background(this: &std::sync::Arc<Result<Prepared, String>>, steps: usize, jobs: &std::sync::Arc<Background>) {
        let Ok(p) = this.as_ref() else { return };
        if p.window_started.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let this = this.clone();
        // Counted before the thread starts, so that a host-timed case cannot slip in before it.
        let running = Job::start(jobs);
        std::thread::spawn(move || {
            let _running = running;
            if let Ok(p) = this.as_ref() {
                p.window(steps);
            }
        });
    }

    /// The CPU reference of the first `steps` steps of the full run, made once per length.
    pub fn window(&self, steps: usize) -> std::sync::Arc<Window> {
        let mut slot = self.window.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(w) = slot.as_ref().filter(|w| w.steps == steps) {
            return w.clone();
        }
        let make = || {
            let t = Instant::now();
            let (dt, signal) = (self.model.dt, self.model.source.signal);
            let (curr, trace) = self.sys.run_from(vec![0.0; 2 * self.sys.nodes], steps, |k| signal.at(k as f64 * dt));
            Window { steps, field: curr, trace, seconds: t.elapsed().as_secs_f64() }
        };
        let w = std::sync::Arc::new(match &self.cached {
            Some(params) => {
                let params = format!("{params} window_steps={steps}");
                prep_cache::cached(Recipe { kind: "pogo-window", code: crate::prep_code::POGO, params: &params }, make)
            }
            None => make(),
        });
        *slot = Some(w.clone());
        w
    }

    /// The aligned blocker's efficiency eta = nodes / (blocks x 512).
    pub fn aligned_eta(&self) -> f64 {
        self.model.nodes() as f64 / (self.aligned.blocks * 512).max(1) as f64
    }

    /// Where METIS failed on this model: a failed `metis-blocks` row with its reason, for the
    /// first case that asks (the step rows carry a NaN `metis_eta`).
    pub fn metis_row(&self) -> Option<Measured> {
        let e = self.metis_error.as_ref()?;
        (!self.metis_reported.swap(true, std::sync::atomic::Ordering::Relaxed))
            .then(|| Measured::failed("metis-blocks", format!("METIS could not block the mesh into 512-node blocks: {e}")))
    }

    /// METIS' efficiency eta = nodes / (blocks x 512) (NaN where METIS failed).
    pub fn metis_eta(&self) -> f64 {
        match self.metis_blocks {
            0 => f64::NAN,
            k => self.model.nodes() as f64 / (k * 512) as f64,
        }
    }

    /// The greedy blocker's efficiency eta = nodes / (blocks x 512).
    pub fn greedy_eta(&self) -> f64 {
        self.model.nodes() as f64 / (self.greedy_blocks * 512).max(1) as f64
    }
}

/// What the aligned blocker made: blocks, layers, the joins and splits of its step 5, seconds.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct Aligned {
    pub blocks: usize,
    pub layers: usize,
    pub joins: usize,
    pub splits: usize,
    pub seconds: f64,
}
