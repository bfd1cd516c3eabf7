//! Run metadata (`meta.json`): what ran, where, from which commit, and how long each
//! experiment took.

use serde::{Deserialize, Serialize};

use fembench_device::DeviceInfo;

/// Run metadata (`meta.json`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunMeta {
    pub run_id: String,
    pub harness_version: String,
    /// The commit the harness binary was built from, with `-dirty` if the tree had changes.
    pub git_commit: String,
    pub host: String,
    pub cpu_model: String,
    pub started: String,
    pub finished: Option<String>,
    pub quick: bool,
    /// Backends the command line restricted the run to (empty: each experiment's own list).
    pub backends: Vec<String>,
    pub device_index: usize,
    pub experiments: Vec<ExperimentRecord>,
    pub devices: Vec<DeviceInfo>,
    /// Backends that were asked for but could not be opened, with the reason.
    pub unavailable: Vec<(String, String)>,
    /// Wall seconds each experiment's cases took in this process (and earlier ones, on
    /// `--resume`), from the start of its first case to the end of its last, writing included:
    /// where `make reproduce`'s minutes go.
    #[serde(default)]
    pub experiment_wall_s: std::collections::BTreeMap<String, f64>,
    /// Set when the kernels were read from this folder (FEMBENCH_KERNEL_DIR) rather than the
    /// ones built into the binary: the commit alone does not say what ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_dir: Option<String>,
    /// The part of the case list this run holds (`harness run --shard K/N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// The shards a merged run was joined from (`harness merge`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ExperimentRecord {
    pub id: String,
    pub file: String,
    pub sha256: String,
}

/// The date and time as run folders are named (`20261126-113909`).
pub fn stamp() -> String {
    chrono::Local::now().format("%Y%m%d-%H%M%S").to_string()
}

pub fn now_string() -> String {
    chrono::Local::now().format("%Y-%m-%dT%H:%M:%S%z").to_string()
}
