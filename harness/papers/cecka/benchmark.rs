//! The Cecka et al. experiments: cases and their runs on each backend (the GPU methods are in
//! `gpu`, the reports in `report`).

use super::gpu::shared_limit;
use super::kernel::CECKA;
use std::marker::PhantomData;

use super::method::{CeckaMethod, Runs};
use super::plans::warm;
use super::problem::prepared::prepared;
use super::registry::{twice_registered, unknown_method, MethodList, Shipped};
use super::spec::{Method, Outputs, Point, Problem_, Sweep};
use crate::benchmark::{Benchmark, CaseCtx, CaseError, Measured, MemoryEstimate, Spec, Target};
use crate::device::Backend;
use crate::experiment::Params;
use crate::kernels::KernelSource;
use crate::Precision;

/// The Cecka experiments over the methods of `L`.
pub struct Assembly<L = Shipped>(PhantomData<L>);

/// The benchmark every build registers: the shipped methods.
pub type CeckaAssembly = Assembly<Shipped>;

/// A sweep point's method in `L` (none for a name `check` refuses).
fn entry<L: MethodList>(point: &Point) -> Option<&'static dyn CeckaMethod> {
    L::entry(point.method)
}

fn colored<L: MethodList>(m: Method) -> bool {
    L::entry(m).is_some_and(|e| e.colored())
}

impl<L: MethodList> Benchmark for Assembly<L> {
    const NAME: &'static str = "cecka-assembly";
    const COLUMNS: &'static [&'static str] = super::spec::COLUMNS;
    const KERNELS: &'static [KernelSource] = &[CECKA];
    const KERNEL_ARGS: &'static [crate::device::args::Declared] = super::kernel::CECKA_ARGS;
    /// The shipped kernels' structs, and those each method of `L` declares for a kernel of its
    /// own (`GpuMethod::ARGS`).
    fn kernel_args() -> Vec<crate::device::args::Declared> {
        let own = L::METHODS.iter().flat_map(|m| m.kernel_args().iter().copied());
        Self::KERNEL_ARGS.iter().copied().chain(own).collect()
    }
    type Sweep = Sweep;
    type Problem = Problem_;
    type Outputs = Outputs;
    type Point = Point;

    fn points(s: &Sweep) -> Vec<Point> {
        // Level by level, then order, then color count, the methods inside; the color count
        // only matters to colored methods: the others run once, at 0.
        let at = |list: &[u32], v: u32| list.iter().position(|&x| x == v);
        let first = s.min_colors[0];
        let mut out: Vec<Point> = s
            .product()
            .into_iter()
            .filter(|p| colored::<L>(p.method) || p.min_colors == first)
            .map(|p| Point { min_colors: if colored::<L>(p.method) { p.min_colors } else { 0 }, ..p })
            .collect();
        out.sort_by_key(|p| {
            (at(&s.level, p.level), at(&s.order, p.order), if colored::<L>(p.method) { at(&s.min_colors, p.min_colors) } else { Some(0) })
        });
        out
    }

    fn params(p: &Point) -> Params {
        p.params()
    }

    fn check(spec: &Spec<Self>) -> Result<(), (String, String)> {
        let quick = spec.quick.as_ref().and_then(|q| q.sweep.as_ref());
        for (at, sweep) in [("sweep", Some(&spec.sweep)), ("quick.sweep", quick)] {
            let Some(sweep) = sweep else { continue };
            if let Some(m) = twice_registered::<L>().or_else(|| unknown_method::<L>(&sweep.method)) {
                return Err((format!("{at}.method"), format!("{at}.method: {m}")));
            }
            if let Some(o) = sweep.order.iter().find(|&&o| !(1..=6).contains(&o)) {
                return Err((format!("{at}.order"), format!("{at}.order: {o} is outside 1..6")));
            }
            if let Some(l) = sweep.level.iter().find(|&&l| l > 8) {
                return Err((format!("{at}.level"), format!("{at}.level: {l} is above 8 (level 7 is already 4.8M elements)")));
            }
            // Colors are bits of a 64-bit mask in the greedy coloring.
            if let Some(c) = sweep.min_colors.iter().find(|&&c| c > 64) {
                return Err((format!("{at}.colors"), format!("{at}.colors: {c} is above 64, the most the element coloring supports")));
            }
        }
        let problems = [("problem", Some(&spec.problem)), ("quick.problem", spec.quick.as_ref().and_then(|q| q.problem.as_ref()))];
        for (at, p) in problems {
            let Some(p) = p else { continue };
            for (name, v) in
                [("group_size", p.group_size), ("elements_per_block", p.elements_per_block), ("targets_per_thread", p.targets_per_thread)]
            {
                if v == Some(0) {
                    return Err((format!("{at}.{name}"), format!("{at}.{name} must be at least 1")));
                }
            }
            if p.group_size.is_some_and(|g| g > 1024) {
                return Err((format!("{at}.group_size"), format!("{at}.group_size must be at most 1024")));
            }
            // An imported mesh is read here, so that `harness validate` names its file and line.
            if let Some(m) = &p.mesh {
                m.read().map_err(|e| (format!("{at}.mesh"), format!("{at}.mesh: {e}")))?;
            }
        }
        Ok(())
    }

    fn memory_estimate(problem: &Problem_, point: &Point) -> Option<MemoryEstimate> {
        // The plate has 288 P1 elements at level 0 (an imported mesh: its own count, unknown
        // here; estimate as the plate). Per element: slots (en^2 x 4 B) and, bounding nnz by
        // ne x en^2, the CSR columns, reference, abs-sum and result arrays (4 + 3 x 8 B), the
        // packed plans (2 x 4 B) and one device copy of the outputs; two problems are cached.
        let _ = problem;
        let ne = 288.0 * 4f64.powi(point.level as i32);
        let en = ((point.order + 1) * (point.order + 2) / 2) as f64;
        let per_element = en * en * (4.0 + 28.0 + 8.0) + en * 40.0;
        Some(MemoryEstimate { host_bytes: ne * per_element, device_bytes: ne * en * en * 16.0 })
    }

    /// The CPU methods run on the cpu backend in f64 (the paper's baseline); the GPU methods on
    /// CUDA and OpenCL in f32 and f64.
    fn case_exists(point: &Point, backend: Backend, precision: Precision) -> bool {
        let Some(runs) = entry::<L>(point).map(|m| m.runs()) else { return false };
        match (backend, runs) {
            (Backend::Cpu, runs) => runs == Runs::Host && precision == Precision::F64,
            // The vendor-library peer needs cuSPARSE; the Python GPU routes run CuPy or PyTorch.
            (Backend::OpenCl, runs) => runs == Runs::Gpu,
            (_, runs) => runs != Runs::Host,
        }
    }

    fn problem_key(point: &Point) -> Option<String> {
        Some(format!("level={}/order={}", point.level, point.order))
    }
    fn run(ctx: &mut CaseCtx, problem: &Problem_, point: &Point) -> Result<Vec<Measured>, CaseError> {
        let method =
            entry::<L>(point).ok_or_else(|| CaseError::Failed(format!("{} is not a method of this build", point.method.as_str())))?;
        let gpu = matches!(ctx.target, Target::Gpu(_));
        if gpu == (method.runs() == Runs::Host) {
            return Err(CaseError::Skipped(format!(
                "{} runs on {}",
                point.method.as_str(),
                if gpu { "the cpu backend" } else { "GPU backends" }
            )));
        }
        if !gpu && ctx.precision == Precision::F32 {
            return Err(CaseError::Skipped("the CPU reference runs in f64, as the paper's baseline".into()));
        }
        let prep = prepared(ctx.run, problem.mesh.as_ref(), point.level, point.order)?;
        if let Target::Gpu(dev) = ctx.target {
            // This problem's plans, and the next problem's, built or under way.
            warm(ctx, problem, &prep, point, dev.info().backend, shared_limit(dev, problem)?, !dev.info().runs_on_host());
        }
        method.run(ctx, problem, &prep, point)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    use super::super::cost::element_flops;
    use super::super::problem::prepared::{cached, Timed};
    use super::super::spec::Method;

    #[test]
    fn every_dummy_method_is_a_dummy_of_a_full_method() {
        let dummies: Vec<Method> = Method::all().into_iter().filter(|m| m.as_str().ends_with("-dummy")).collect();
        // One dummy for every registered method that names one (its second name): counted from
        // the registry, so a new method with a dummy changes nothing here.
        let with_dummy = super::super::registry::METHODS.iter().filter(|m| m.names().len() == 2).count();
        assert!(with_dummy > 0 && super::super::registry::METHODS.iter().all(|m| m.names().len() <= 2));
        assert_eq!(dummies.len(), with_dummy);
        for m in Method::all() {
            assert_eq!(m.dummy(), m.as_str().ends_with("-dummy"), "{m:?}");
            if m.dummy() {
                let full = m.full();
                assert!(!full.dummy() && full != m && std::ptr::addr_eq(full.entry(), m.entry()), "{m:?} -> {full:?}");
                assert_eq!(full.as_str(), m.as_str().strip_suffix("-dummy").unwrap());
            } else {
                assert_eq!(m.full(), m);
            }
        }
        assert!(Method::named("shared-atomic-dummy").unwrap().dummy(), "the method a hand list once forgot");
    }

    #[test]
    fn every_name_is_registered_once() {
        let all = Method::all();
        let names: std::collections::BTreeSet<&str> = all.iter().map(|m| m.as_str()).collect();
        assert_eq!(names.len(), all.len(), "a name registered twice");
        assert!(all.iter().all(|&m| Method::named(m.as_str()) == Some(m) && m.entry().names().contains(&m.as_str())));
        assert_eq!(Method::paper_names(), ["elem-color", "global-nz", "shared-nz", "local-nz"]);
    }

    #[test]
    fn dummy_flops_are_not_the_full_count() {
        for en in [3.0, 6.0, 28.0] {
            assert!(element_flops(en, true) < 0.5 * element_flops(en, false));
        }
    }

    #[test]
    fn a_panic_while_a_plan_is_made_leaves_the_cache_usable() {
        let map: Mutex<BTreeMap<u32, Timed<u32>>> = Mutex::new(BTreeMap::new());
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cached(&map, 1, || panic!("bug while partitioning"))));
        assert!(r.is_err());
        let v = cached(&map, 1, || Ok(7));
        assert_eq!(v.0, Ok(7));
        assert_eq!(cached(&map, 1, || Ok(8)).0, Ok(7), "made once");
    }
}
