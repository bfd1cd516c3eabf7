//! Whether a stored run may be resumed by this harness: the same version, commit and devices.

use crate::meta::RunMeta;
use fembench_device::{self as device, Backend};

/// Refuses to resume a run made by another harness version or commit, or on other devices,
/// (`commit`: this build's) unless `force`: its rows would not be comparable with the new ones.
pub(crate) fn check_resumable(meta: &RunMeta, force: bool, commit: &str) -> Result<(), String> {
    if force {
        return Ok(());
    }
    let mut differs = Vec::new();
    if meta.harness_version != env!("CARGO_PKG_VERSION") {
        differs.push(format!("harness version {} (now {})", meta.harness_version, env!("CARGO_PKG_VERSION")));
    }
    if meta.git_commit != commit {
        differs.push(format!("commit {} (now {commit})", meta.git_commit));
    }
    for d in &meta.devices {
        let Some(backend) = d.backend else { continue };
        let now = match backend {
            Backend::Cpu => Some(device::cpu::model()),
            b => device::list(b).ok().and_then(|l| l.into_iter().nth(d.index)).map(|i| i.name),
        };
        if now.as_deref() != Some(d.name.as_str()) {
            differs.push(format!("{backend} device {} was {} (now {})", d.index, d.name, now.as_deref().unwrap_or("absent")));
        }
    }
    if differs.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "run {} was made with {}; its rows would not compare with new ones (--force resumes anyway)",
            meta.run_id,
            differs.join(", ")
        ))
    }
}
