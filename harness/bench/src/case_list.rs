//! The cases of a run, in order (experiment, sweep point, backend, precision): listed from the
//! experiments, narrowed to the backends asked for and to the run's shard, and without those a
//! resumed run already finished. A case whose process ended inside it is recorded as failed.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::benchmark::{CaseError, Experiment, Upcoming};
use crate::case_rows::to_rows;
use crate::experiment::Params;
use crate::results::{CaseKey, RunDir, RunMeta};
use crate::run_options::{RunError, RunOptions, RunSummary};
use fembench_core::Precision;
use fembench_device::Backend;

/// One case of the run.
pub(crate) struct Case {
    /// Its experiment's index in the run's list.
    pub(crate) exp: usize,
    pub(crate) backend: Backend,
    pub(crate) precision: Precision,
    /// Its sweep point's index.
    pub(crate) point: usize,
    pub(crate) params: Params,
    pub(crate) id: String,
}

impl Case {
    /// What a benchmark sees of a case still to come.
    pub(crate) fn upcoming(&self) -> Upcoming {
        Upcoming { backend: self.backend, precision: self.precision, params: self.params.clone() }
    }
}

/// The backends the run may use: a resumed run keeps its own, and `--backend` narrows them
/// further (possibly to none); None: no restriction.
fn restriction(opts: &RunOptions, meta: &RunMeta) -> Option<Vec<Backend>> {
    let stored: Vec<Backend> = if opts.resume.is_some() { meta.backends.iter().filter_map(|b| b.parse().ok()).collect() } else { vec![] };
    match (stored.is_empty(), opts.backends.is_empty()) {
        (true, true) => None,
        (true, false) => Some(opts.backends.clone()),
        (false, true) => Some(stored),
        (false, false) => Some(stored.into_iter().filter(|b| opts.backends.contains(b)).collect()),
    }
}

/// The cases the run has still to run, in order; counts those already done in `summary` and
/// records the crashed ones as failed rows.
pub(crate) fn cases_to_run(
    experiments: &[Box<dyn Experiment>],
    run: &RunDir,
    meta: &RunMeta,
    opts: &RunOptions,
    summary: &mut RunSummary,
) -> Result<Vec<Case>, RunError> {
    let restrict = restriction(opts, meta);
    let mut cases = Vec::new();
    for (ei, e) in experiments.iter().enumerate() {
        if !opts.retry.is_empty() {
            let again: BTreeSet<String> =
                run.case_statuses(e.id())?.into_iter().filter(|(_, st)| opts.retry.contains(st)).map(|(id, _)| id).collect();
            run.remove_cases(e.id(), &again)?;
        }
        let mut done = run.finished_cases(e.id())?;
        record_crashed(e.as_ref(), run, meta, opts, (&mut done, summary))?;
        for (pi, params) in e.points(meta.quick).into_iter().enumerate() {
            for &backend in e.backends().iter().filter(|b| restrict.as_ref().is_none_or(|r| r.contains(b))) {
                for &precision in e.precisions().iter().filter(|&&p| e.case_exists(meta.quick, pi, backend, p)) {
                    let id = case_id(backend, precision, &params);
                    if done.contains(&id) {
                        summary.cases_skipped_as_done += 1;
                        continue;
                    }
                    cases.push(Case { exp: ei, backend, precision, point: pi, params: params.clone(), id });
                }
            }
        }
    }
    if let Some(shard) = opts.shard.or_else(|| meta.shard.as_deref().and_then(|s| s.parse().ok())) {
        let planned: Vec<((String, String), Option<String>)> = experiments
            .iter()
            .flat_map(|e| {
                planned_with_problems(e.as_ref(), meta.quick, restrict.as_deref()).into_iter().map(|(id, p)| ((e.id().to_string(), id), p))
            })
            .collect();
        let mine = shard_part(&planned, &opts.costs_from, shard);
        cases.retain(|c| mine.contains(&(experiments[c.exp].id().to_string(), c.id.clone())));
    }
    Ok(cases)
}

/// A case that was started but never finished killed the process (out of memory, say): it is
/// recorded as failed rather than crash again, unless failed cases are retried; either way its
/// started marker goes.
fn record_crashed(
    e: &dyn Experiment,
    run: &RunDir,
    meta: &RunMeta,
    opts: &RunOptions,
    (done, summary): (&mut BTreeSet<String>, &mut RunSummary),
) -> Result<(), RunError> {
    for (id, started) in run.crashed_cases(e.id())? {
        if !done.contains(&id) && !opts.retry.iter().any(|r| r == "failed") {
            let (backend, precision, params) = case_identity(e, meta.quick, &id);
            let key = CaseKey {
                run_id: &meta.run_id,
                experiment: e.id(),
                case_id: &id,
                backend: backend.as_str(),
                device: "-",
                precision: precision.as_str(),
                params: &params,
            };
            let rows = to_rows(
                &key,
                Err(CaseError::Failed(format!(
                    "the harness process ended inside this case (started {started}): killed, out of memory or crashed; `--retry failed` runs it again"
                ))),
            );
            run.write_case(e.id(), &rows)?;
            summary.rows_failed += rows.len();
            done.insert(id.clone());
        }
        run.clear_started(e.id(), &id)?;
    }
    Ok(())
}

/// The case ids an experiment plans, in run order (sweep point, backend, precision), on the
/// backends of `restrict` where given.
pub fn planned_case_ids(e: &dyn Experiment, quick: bool, restrict: Option<&[Backend]>) -> Vec<String> {
    let mut out = Vec::new();
    for (pi, params) in e.points(quick).into_iter().enumerate() {
        for &backend in e.backends() {
            if restrict.is_some_and(|r| !r.contains(&backend)) {
                continue;
            }
            for &precision in e.precisions() {
                if e.case_exists(quick, pi, backend, precision) {
                    out.push(case_id(backend, precision, &params));
                }
            }
        }
    }
    out
}

/// [`planned_case_ids`] with each case's prepared problem ([`Experiment::problem_key`]).
fn planned_with_problems(e: &dyn Experiment, quick: bool, restrict: Option<&[Backend]>) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for (pi, params) in e.points(quick).into_iter().enumerate() {
        let problem = e.problem_key(quick, pi);
        for &backend in e.backends().iter().filter(|b| restrict.is_none_or(|r| r.contains(b))) {
            for &precision in e.precisions().iter().filter(|&&p| e.case_exists(quick, pi, backend, p)) {
                out.push((case_id(backend, precision, &params), problem.clone()));
            }
        }
    }
    out
}

/// Case identity within an experiment: what `--resume` matches on.
pub fn case_id(backend: Backend, precision: Precision, params: &Params) -> String {
    format!("{backend}/{precision}/{}", params.key())
}

/// The cases of `planned` ((experiment, case id), prepared problem) that shard `shard` holds.
/// The cases of one prepared problem go together ([`crate::shard::assign_groups`]). The
/// assignment is made over every planned case, done or not, so a resumed shard keeps its part.
fn shard_part(
    planned: &[((String, String), Option<String>)],
    costs_from: &[PathBuf],
    shard: crate::shard::Shard,
) -> BTreeSet<(String, String)> {
    let known = crate::shard::known_costs(costs_from);
    let ids: Vec<(String, String)> = planned.iter().map(|(k, _)| k.clone()).collect();
    let costs = crate::shard::costs_of(&ids, &known);
    let problems: Vec<Option<&str>> = planned.iter().map(|(_, p)| p.as_deref()).collect();
    let parts = crate::shard::assign_groups(&costs, &problems, shard.count);
    ids.into_iter().zip(parts).filter(|(_, p)| p + 1 == shard.index).map(|(k, _)| k).collect()
}

/// For each case (given by its experiment's index, cases grouped by experiment), the index one
/// past its experiment's last case.
pub(crate) fn experiment_ends(exp: &[usize]) -> Vec<usize> {
    let mut end = vec![exp.len(); exp.len()];
    for i in (0..exp.len().saturating_sub(1)).rev() {
        end[i] = if exp[i + 1] == exp[i] { end[i + 1] } else { i + 1 };
    }
    end
}

/// Backend, precision and parameters of a case id (`backend/precision/k=v,...`) of an experiment.
fn case_identity(e: &dyn Experiment, quick: bool, id: &str) -> (Backend, Precision, Params) {
    let mut parts = id.splitn(3, '/');
    let backend = parts.next().and_then(|b| b.parse().ok()).unwrap_or(Backend::Cpu);
    let precision = match parts.next() {
        Some("f32") => Precision::F32,
        _ => Precision::F64,
    };
    let key = parts.next().unwrap_or("");
    let params = e.points(quick).into_iter().find(|p| p.key() == key).unwrap_or_default();
    (backend, precision, params)
}
