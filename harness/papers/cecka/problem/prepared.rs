//! Built problems, their f64 references and the methods' plans, shared by consecutive cases
//! (one process-wide cache; a plan's set-up time is kept beside it).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use super::system::{assemble_dummy, assemble_serial, color_elements, error_bounds, quadrature_bounds, Bounds, Problem, System};
use crate::benchmark::CaseError;
use crate::cache::ProblemCache;
use crate::cecka::nz::plans::{GlobalPlan, Packed, SharedAtomicPlan, SharedPlan};
use crate::cecka::spec::MeshFile;
use crate::context::RunContext;
use crate::prep_cache::{self, Recipe};

/// A plan (or why it could not be made) and the host seconds it took to make: the method's
/// set-up, reported beside its assembly time.
pub(crate) type Timed<V> = Arc<(Result<V, String>, f64)>;

/// Built problems and their f64 reference systems, shared by consecutive cases.
pub struct Prepared {
    /// What the problem is made from, as its prepared-problem cache entries name it.
    params: String,
    pub(crate) problem: Problem,
    pub(crate) reference: OnceLock<System>,
    /// The dummy subroutine's system, and the per-entry error bounds of both (in units of u).
    pub(crate) dummy_reference: OnceLock<System>,
    pub(crate) bounds: OnceLock<Bounds>,
    pub(crate) dummy_bounds: OnceLock<Bounds>,
    /// The bounds of a route that integrates by quadrature ([`quadrature_bounds`]).
    pub(crate) quadrature_bounds: OnceLock<Bounds>,
    pub(crate) colors: Mutex<BTreeMap<u32, Timed<Arc<Vec<Vec<u32>>>>>>,
    /// Plans by their parameters; failures are kept too (a partition that does not fit is
    /// not retried for the next precision or backend with the same limits).
    pub(crate) global: Mutex<BTreeMap<[usize; 4], Timed<GlobalPlan>>>,
    pub(crate) shared: Mutex<BTreeMap<[usize; 2], Timed<SharedPlan>>>,
    pub(crate) local: Mutex<BTreeMap<[usize; 2], Timed<Packed>>>,
    pub(crate) shared_atomic: Mutex<BTreeMap<[usize; 2], Timed<SharedAtomicPlan>>>,
    /// The backends whose cases have had their plans built ahead ([`crate::cecka::plans::warm`]).
    pub(crate) warmed: Mutex<std::collections::BTreeSet<Option<crate::device::Backend>>>,
}

/// A cache entry, made if missing. The lock is not held while `make` runs, and a panic inside
/// `make` inserts nothing, so neither leaves the cache unusable for later cases.
pub(crate) fn cached<K: Ord + Clone, V>(map: &Mutex<BTreeMap<K, Timed<V>>>, key: K, make: impl FnOnce() -> Result<V, String>) -> Timed<V> {
    if let Some(v) = map.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return v.clone();
    }
    let t0 = Instant::now();
    let made = make();
    let v = Arc::new((made, t0.elapsed().as_secs_f64()));
    map.lock().unwrap_or_else(|e| e.into_inner()).entry(key).or_insert(v).clone()
}

impl Prepared {
    /// `kind` of this problem through the prepared-problem cache.
    fn cached<T: serde::Serialize + serde::de::DeserializeOwned>(&self, kind: &str, make: impl FnOnce() -> T) -> T {
        prep_cache::cached(Recipe { kind, code: crate::prep_code::CECKA, params: &self.params }, make)
    }
    pub(crate) fn reference(&self) -> &System {
        self.reference.get_or_init(|| self.cached("cecka-reference", || assemble_serial(&self.problem)))
    }
    pub(crate) fn dummy_reference(&self) -> &System {
        self.dummy_reference.get_or_init(|| self.cached("cecka-dummy-reference", || assemble_dummy(&self.problem)))
    }
    pub(crate) fn bounds(&self, dummy: bool) -> &Bounds {
        if dummy {
            self.dummy_bounds.get_or_init(|| self.cached("cecka-dummy-bounds", || error_bounds(&self.problem, true)))
        } else {
            self.bounds.get_or_init(|| self.cached("cecka-bounds", || error_bounds(&self.problem, false)))
        }
    }
    /// The bounds of a route that integrates by quadrature: [`Self::bounds`] and its rounding.
    pub(crate) fn quadrature_bounds(&self) -> &Bounds {
        self.quadrature_bounds.get_or_init(|| quadrature_bounds(&self.problem, self.bounds(false)))
    }
    /// The element coloring with at least `min` colors, and the seconds it took.
    pub(crate) fn colors(&self, min: u32) -> Result<(Arc<Vec<Vec<u32>>>, f64), CaseError> {
        let c = cached(&self.colors, min, || color_elements(&self.problem.mesh, min as usize).map(Arc::new));
        match &c.0 {
            Ok(groups) => Ok((groups.clone(), c.1)),
            Err(e) => Err(CaseError::Failed(e.clone())),
        }
    }
}

pub(crate) type ProblemKey = (Option<MeshFile>, u32, u32);
/// The run's built problems, two at most: the largest P1 mesh holds about a gigabyte of host
/// arrays.
fn problems(run: &RunContext) -> Arc<ProblemCache<ProblemKey, Prepared>> {
    run.state("cecka problems", || ProblemCache::new(2))
}

/// Whether the problem of `key` is built.
pub(crate) fn is_cached(run: &RunContext, key: &ProblemKey) -> bool {
    problems(run).contains(key)
}

pub(crate) fn prepared(run: &RunContext, mesh: Option<&MeshFile>, level: u32, order: u32) -> Result<Arc<Prepared>, CaseError> {
    problems(run).get_or_build((mesh.cloned(), level, order), || build(mesh, level, order))
}

fn build(mesh: Option<&MeshFile>, level: u32, order: u32) -> Result<Prepared, CaseError> {
    let file = match mesh {
        None => "none".to_string(),
        Some(m) => {
            let sha = prep_cache::file_fingerprint(&m.gmsh).map_err(|e| CaseError::Failed(format!("{}: {e}", m.gmsh.display())))?;
            format!("{sha} dirichlet={:?}", m.dirichlet)
        }
    };
    let params = format!("level={level} order={order} mesh={file}");
    let recipe = Recipe { kind: "cecka-problem", code: crate::prep_code::CECKA, params: &params };
    let (problem, _) = prep_cache::get_or_build(recipe, || match mesh {
        None => Ok::<_, CaseError>(Problem::new(level as usize, order as usize)),
        Some(m) => {
            let p1 = m.read().map_err(|e| CaseError::Failed(e.to_string()))?;
            Ok(Problem::from_p1(&super::mesh::refined(p1, level as usize), level as usize, order as usize))
        }
    })?;
    let p = Prepared {
        params,
        problem,
        reference: OnceLock::new(),
        dummy_reference: OnceLock::new(),
        bounds: OnceLock::new(),
        dummy_bounds: OnceLock::new(),
        quadrature_bounds: OnceLock::new(),
        colors: Mutex::new(BTreeMap::new()),
        global: Mutex::new(BTreeMap::new()),
        shared: Mutex::new(BTreeMap::new()),
        local: Mutex::new(BTreeMap::new()),
        shared_atomic: Mutex::new(BTreeMap::new()),
        warmed: Mutex::new(Default::default()),
    };
    Ok(p)
}
