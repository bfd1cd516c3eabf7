//! fembench-bench: the pipeline every benchmark module plugs into. [`experiment`] (YAML) ->
//! [`benchmark`] cases -> [`runner`] (measured through `fembench-measure`) -> [`results`]
//! (Parquet rows) -> [`report`] and [`publish`] (tables and figures) and [`compare`] (two runs).
//! Which benchmark modules exist is the [`registry`], filled in by the harness crate.
//!
//! Module dependencies run one way: experiment <- benchmark <- registry <- publish, with
//! results and report below benchmark; runner and compare sit on top.

pub mod axes;
pub mod background;
pub mod benchmark;
pub mod cache;
mod case_list;
mod case_rows;
pub mod compare;
pub mod context;
pub mod experiment;
pub mod external;
pub mod hardware;
pub mod history;
pub mod interrupt;
pub mod lifecycle;
mod measured;
pub mod merge;
pub mod meta;
pub mod methods;
pub mod peer_worker;
pub mod precompile;
pub mod prep_cache;
pub mod publish;
pub mod registry;
pub mod report;
pub mod results;
mod resume;
mod run_options;
pub mod runner;
pub mod shard;
