//! Staged timing, for stage tables like Banaś et al.'s Tables 5-7 (prepare, allocate, upload,
//! kernel, download): one pass runs every stage once, each stage timed by its own clock (host
//! wall time or device events), and whole passes repeat, the first `warmup` untimed, until one
//! decisive stage's samples meet the policy. Every stage keeps every pass's time, and their sum
//! per pass is the total ([`Timer::StageSum`]).

use std::time::Instant;

use fembench_device::{Device, DeviceResult};

use crate::{repeat, CacheMode, MeasurePolicy, Timer, Timing};

/// The stage times of one pass, filled by the pass body.
pub struct Pass<'a> {
    names: &'a [(&'static str, Timer)],
    times: Vec<f64>,
    index: usize,
}

impl Pass<'_> {
    /// The pass number, warm-up passes included (a salt for cache flushes).
    pub fn index(&self) -> usize {
        self.index
    }

    fn index_of(&self, name: &str) -> usize {
        self.names.iter().position(|(n, _)| *n == name).unwrap_or_else(|| panic!("stage `{name}` is not declared"))
    }

    fn set(&mut self, name: &str, t: f64) {
        let i = self.index_of(name);
        self.times[i] = t;
    }

    /// Adds `seconds` to stage `name` of this pass (a stage timed in several device bodies,
    /// with host work between them that is not the stage's).
    pub fn record(&mut self, name: &str, seconds: f64) {
        let i = self.index_of(name);
        self.times[i] = if self.times[i].is_nan() { seconds } else { self.times[i] + seconds };
    }

    /// Runs host work as stage `name`, timed by the wall clock.
    pub fn host<R>(&mut self, name: &str, work: impl FnOnce() -> R) -> R {
        let t0 = Instant::now();
        let r = work();
        self.set(name, t0.elapsed().as_secs_f64());
        r
    }

    /// Runs device work as stage `name`, timed by device events (see [`Device::time_events`]).
    pub fn device(&mut self, dev: &dyn Device, name: &str, body: &mut dyn FnMut() -> DeviceResult<()>) -> DeviceResult<()> {
        let t = dev.time_events(body)?;
        self.set(name, t);
        Ok(())
    }

    /// As [`Pass::device`], for a body whose library calls wait on the stream
    /// ([`Device::time_events_open`]).
    pub fn device_open(&mut self, dev: &dyn Device, name: &str, body: &mut dyn FnMut() -> DeviceResult<()>) -> DeviceResult<()> {
        let t = dev.time_events_open(body)?;
        self.set(name, t);
        Ok(())
    }
}

/// Every stage's timing and the per-pass total.
#[derive(Debug, Clone)]
pub struct Staged {
    pub stages: Vec<(&'static str, Timing)>,
    pub total: Timing,
    /// Passes run, warm-up included.
    pub passes: usize,
}

/// Runs `body` as whole passes under `policy` until stage `decisive` meets it. `stages` names
/// each stage and its clock, in table order. A stage a pass did not time is NaN in that pass
/// (and so in the total): it shows, it is not silently zero.
pub fn run_staged<E>(
    policy: &MeasurePolicy,
    mode: CacheMode,
    stages: &[(&'static str, Timer)],
    decisive: &str,
    mut body: impl FnMut(&mut Pass) -> Result<(), E>,
) -> Result<Staged, E> {
    let d = stages.iter().position(|(n, _)| *n == decisive).unwrap_or_else(|| panic!("decisive stage `{decisive}` is not declared"));
    let mut passes = 0usize;
    let mut run_pass = |passes: &mut usize| -> Result<Vec<f64>, E> {
        let mut pass = Pass { names: stages, times: vec![f64::NAN; stages.len()], index: *passes };
        body(&mut pass)?;
        *passes += 1;
        Ok(pass.times)
    };
    for _ in 0..policy.warmup {
        run_pass(&mut passes)?;
    }
    let mut per_stage: Vec<Vec<f64>> = vec![Vec::new(); stages.len()];
    repeat(policy, |_| {
        let times = run_pass(&mut passes)?;
        for (s, t) in per_stage.iter_mut().zip(&times) {
            s.push(*t);
        }
        Ok(times[d])
    })?;
    let n = per_stage[d].len();
    let total: Vec<f64> = (0..n).map(|i| per_stage.iter().map(|s| s[i]).sum()).collect();
    Ok(Staged {
        stages: stages.iter().zip(per_stage).map(|(&(name, timer), samples)| (name, Timing { samples, timer, mode, batch: 1 })).collect(),
        total: Timing { samples: total, timer: Timer::StageSum, mode, batch: 1 },
        passes,
    })
}

/// One device body timed on its own under the policy (warm; `warmup` untimed runs first), as a
/// one-stage pass: a product or a kernel measured beside a method, outside its stages and total.
pub fn time_device(
    policy: &MeasurePolicy,
    dev: &dyn Device,
    name: &'static str,
    body: &mut dyn FnMut() -> DeviceResult<()>,
) -> DeviceResult<Timing> {
    let stages = [(name, Timer::DeviceEvent)];
    let staged = run_staged(policy, CacheMode::Warm, &stages, name, |pass| pass.device(dev, name, body))?;
    Ok(staged.stages.into_iter().next().map(|(_, t)| t).expect("one stage"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAGES: [(&str, Timer); 2] = [("prepare", Timer::HostWall), ("work", Timer::HostWall)];

    #[test]
    fn passes_repeat_until_the_decisive_stage_is_done_and_totals_add_up() {
        let policy = MeasurePolicy { warmup: 2, min_reps: 4, min_time_s: 0.0, max_reps: 50, target_rel_ci: 0.0, ..Default::default() };
        let mut seen = Vec::new();
        let s = run_staged::<()>(&policy, CacheMode::Warm, &STAGES, "work", |p| {
            seen.push(p.index());
            p.host("prepare", || std::hint::black_box(0));
            p.host("work", || std::thread::sleep(std::time::Duration::from_micros(50)));
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, (0..6).collect::<Vec<_>>(), "two warm-up passes, then four timed");
        assert_eq!(s.passes, 6);
        let (work, prep) = (&s.stages[1].1, &s.stages[0].1);
        assert_eq!((work.samples.len(), prep.samples.len(), s.total.samples.len()), (4, 4, 4));
        assert!(work.samples.iter().all(|&t| t >= 50e-6));
        for i in 0..4 {
            assert_eq!(s.total.samples[i], prep.samples[i] + work.samples[i]);
        }
        assert_eq!(s.total.timer, Timer::StageSum);
    }

    #[test]
    fn a_stage_left_out_is_nan_not_zero_and_errors_stop_the_passes() {
        let policy = MeasurePolicy { warmup: 0, min_reps: 2, min_time_s: 0.0, max_reps: 2, target_rel_ci: 0.0, ..Default::default() };
        let s = run_staged::<()>(&policy, CacheMode::Warm, &STAGES, "work", |p| {
            p.host("work", || ());
            Ok(())
        })
        .unwrap();
        assert!(s.stages[0].1.samples.iter().all(|t| t.is_nan()) && s.total.samples.iter().all(|t| t.is_nan()));
        let s = run_staged::<()>(&policy, CacheMode::Warm, &STAGES, "work", |p| {
            p.record("prepare", 1.0);
            p.record("prepare", 2.0);
            p.record("work", 0.5);
            Ok(())
        })
        .unwrap();
        assert_eq!((s.stages[0].1.samples.clone(), s.total.samples.clone()), (vec![3.0, 3.0], vec![3.5, 3.5]), "records add up");
        let mut calls = 0;
        let r = run_staged(&policy, CacheMode::Warm, &STAGES, "work", |_| {
            calls += 1;
            Err("device lost")
        });
        assert_eq!((r.unwrap_err(), calls), ("device lost", 1));
    }
}
