//! How a comparison is shown: a report table (terminal or Markdown) and Bencher Metric Format.

use super::{noise, Comparison, Entry, Side, Verdict};
use crate::report::Table;

impl Comparison {
    /// The rows worth a reader's attention (every row with `all`), as a report table.
    pub fn table(&self, all: bool) -> Table {
        let fmt_t = |s: &Option<Side>| match s.as_ref().and_then(|s| s.median_s) {
            Some(t) => crate::report::fmt_num(t * 1e6),
            None => s.as_ref().map(|s| s.status.clone()).unwrap_or_else(|| "-".into()),
        };
        let mut entries: Vec<&Entry> = self.entries.iter().filter(|e| all || e.verdict != Verdict::Same).collect();
        entries.sort_by(|a, b| a.verdict.cmp(&b.verdict).then_with(|| a.name().cmp(&b.name())));
        Table {
            name: "compare".into(),
            title: format!("Comparison: {} -> {}", self.base.run_id, self.new.run_id),
            header: ["verdict", "row", "class", "base µs", "new µs", "new/base", "95% interval", "envelope"].map(String::from).to_vec(),
            rows: entries
                .iter()
                .map(|e| {
                    vec![
                        e.verdict.to_string(),
                        e.name(),
                        e.class.as_str().to_string(),
                        fmt_t(&e.base),
                        fmt_t(&e.new),
                        e.ratio.map(|r| format!("{r:.3}")).unwrap_or_else(|| e.note.clone().unwrap_or_default()),
                        e.interval.filter(|i| !i.low.is_nan()).map(|i| format!("[{:.3}, {:.3}]", i.low, i.high)).unwrap_or_default(),
                        format!("±{:.0}%", 100.0 * e.envelope),
                    ]
                })
                .collect(),
            notes: {
                let mut n = vec![
                    self.summary(),
                    "Ratio of medians with a 95% bootstrap interval from both runs' stored samples; slower/faster: the interval excludes 1 and the change exceeds the row's between-run envelope (its class's floor, or its own spread over earlier runs) and the threshold; noisy: the interval is too wide to tell.".into(),
                ];
                let unjudged = self.count(Verdict::NotJudged);
                if unjudged > 0 {
                    n.push(format!(
                        "{unjudged} rows are not judged on this runner: host-timed rows (CPU rows, host stages, open regions) without at least {} earlier runs of their device (--history), and CPU rows whose envelope from them exceeds ±{:.0}%; their times are listed, never called slower or faster.",
                        noise::CPU_HISTORY_MIN,
                        100.0 * noise::CPU_GATE_LIMIT
                    ));
                }
                n.extend(self.warnings.iter().map(|w| format!("warning: {w}")));
                if !all {
                    n.push(format!("{} rows with the verdict `same` are not listed (--all lists them).", self.count(Verdict::Same)));
                }
                n
            },
        }
    }

    /// Bencher Metric Format: `{"<benchmark>": {"latency": {"value", "lower_value",
    /// "upper_value"}}}` in nanoseconds, from the new run's median and its interval.
    pub fn to_bmf(&self) -> serde_json::Value {
        let mut out = serde_json::Map::new();
        for e in &self.entries {
            // Every row NEW has, or lost, carries `verified` (1: checked and ok, 0: failed or
            // missing), so a dashboard shows a failure as a drop, not as a gap.
            let verified = e.new.as_ref().is_some_and(|s| s.ok()) as u8 as f64;
            if e.new.is_none() && e.verdict != Verdict::Regression {
                continue;
            }
            let mut measures = serde_json::Map::new();
            measures.insert("verified".into(), serde_json::json!({ "value": verified }));
            let timed = e.new.as_ref().filter(|s| s.ok()).and_then(|s| s.median_s.map(|m| (s, m)));
            let Some((new, m)) = timed else {
                out.insert(e.name(), serde_json::Value::Object(measures));
                continue;
            };
            let ns = |v: f64| serde_json::json!(v * 1e9);
            let mut latency = serde_json::Map::new();
            latency.insert("value".into(), ns(m));
            if let (Some(lo), Some(hi)) = (new.ci_low_s, new.ci_high_s) {
                latency.insert("lower_value".into(), ns(lo));
                latency.insert("upper_value".into(), ns(hi));
            }
            measures.insert("latency".into(), serde_json::Value::Object(latency));
            out.insert(e.name(), serde_json::Value::Object(measures));
        }
        serde_json::Value::Object(out)
    }
}
