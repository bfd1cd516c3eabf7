//! The host CPU, as `harness devices` and result metadata describe it.

use crate::api::{Backend, DeviceInfo};

fn cpuinfo_field(field: &str) -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines().find(|l| l.starts_with(field)).and_then(|l| l.split_once(':')).map(|(_, v)| v.trim().to_string())
}

fn total_memory_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines().find(|l| l.starts_with("MemTotal:")).and_then(|l| l.split_whitespace().nth(1).and_then(|kb| kb.parse::<u64>().ok()))
        })
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

/// Model name of the host CPU, for result metadata.
pub fn model() -> String {
    cpuinfo_field("model name").unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

pub fn info() -> DeviceInfo {
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let cache_kb = cpuinfo_field("cache size").and_then(|s| s.split_whitespace().next().and_then(|n| n.parse::<u64>().ok())).unwrap_or(0);
    DeviceInfo {
        backend: Some(Backend::Cpu),
        index: 0,
        name: model(),
        platform: "host".into(),
        driver_version: String::new(),
        runtime_version: format!("rayon, {threads} threads"),
        memory_bytes: total_memory_bytes(),
        compute_units: threads as u32,
        fp64: true,
        cache_bytes: cache_kb * 1024,
        local_mem_bytes: 0,
        max_work_group: 1,
        compute_capability: None,
        clock_mhz: 0,
        max_alloc_bytes: 0,
        pci_bus_id: None,
        uuid: None,
    }
}
