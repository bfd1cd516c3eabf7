//! Reporting: stored rows in, tables (terminal and Markdown, via tabled) and figures (SVG and PNG,
//! via plotters) out. Reporting never measures; each benchmark module decides what its tables and
//! figures hold, and this module only renders them ([`crate::publish`] writes a run's report).

pub mod bars;
pub mod claims;
pub mod figure;
pub mod frame;
pub mod physics;
pub mod style;

use std::fmt::Write as _;
use std::path::PathBuf;

use tabled::builder::Builder;
use tabled::settings::Style;

use crate::results::{ResultsError, RunMeta};

/// A table as a benchmark builds it: title, header, string cells, and notes under it.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// File-name stem, e.g. `device-bandwidth-attainable`.
    pub name: String,
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub notes: Vec<String>,
}

impl Table {
    fn build(&self) -> tabled::Table {
        let mut b = Builder::default();
        b.push_record(self.header.clone());
        for r in &self.rows {
            b.push_record(r.clone());
        }
        b.build()
    }

    pub fn to_terminal(&self) -> String {
        let mut t = self.build();
        t.with(Style::rounded());
        let mut s = format!("{}\n{t}\n", self.title);
        for n in &self.notes {
            let _ = writeln!(s, "  {n}");
        }
        s
    }

    pub fn to_markdown(&self) -> String {
        // A '|' inside a cell would end it: escaped, as Markdown tables require.
        let escape = |r: &Vec<String>| r.iter().map(|c| c.replace('|', "\\|")).collect::<Vec<_>>();
        let mut b = Builder::default();
        b.push_record(escape(&self.header));
        for r in &self.rows {
            b.push_record(escape(r));
        }
        let mut t = b.build();
        t.with(Style::markdown());
        let mut s = format!("### {}\n\n{t}\n", self.title);
        if !self.notes.is_empty() {
            s.push('\n');
            for n in &self.notes {
                let _ = writeln!(s, "- {n}");
            }
        }
        s
    }
}

/// One line of a figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Drawn dashed-looking (points only), e.g. a paper's published values.
    pub reference: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub name: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub log_y: bool,
    pub series: Vec<Series>,
}

/// Grouped bars: one group per label, one bar per series.
#[derive(Debug, Clone)]
pub struct Bars {
    pub name: String,
    pub title: String,
    pub y_label: String,
    pub groups: Vec<String>,
    pub series: Vec<(String, Vec<f64>)>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ReportItem {
    Table(Table),
    Figure(Figure),
}

/// What a benchmark's report function may read besides its rows.
pub struct ReportCtx {
    pub meta: RunMeta,
    /// The run's own measured ceiling, where it ran `device-bandwidth`: per (device, backend,
    /// precision), the copy kernel's GB/s at its largest array.
    pub copy_gbs: Vec<(String, String, String, f64)>,
}

impl ReportCtx {
    /// The copy bandwidth this run measured on a device, backend and precision.
    pub fn copy_gbs(&self, device: &str, backend: &str, precision: &str) -> Option<f64> {
        self.copy_gbs.iter().find(|c| c.0 == device && c.1 == backend && c.2 == precision).map(|c| c.3)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error("results table lacks column `{column}`: {detail}")]
    Column { column: String, detail: String },
    #[error("drawing {path}: {detail}")]
    Draw { path: PathBuf, detail: String },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{0}")]
    Experiment(String),
}

/// Formats a number with a sensible number of significant digits for tables.
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.01 {
        format!("{v:.3}")
    } else if a == 0.0 {
        "0".into()
    } else {
        format!("{v:.3e}")
    }
}
