//! The GPU's state at each case, read through NVML (nvml-wrapper, loaded at run time): SM and
//! memory clocks, temperature, power and the clock-throttle reasons. A case measured while the
//! GPU throttled is then visible in its rows instead of hiding in a slow median.

use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use nvml_wrapper::Nvml;

/// The columns a case's row gets from the GPU's telemetry right after it.
pub const COLUMNS: [&str; 5] = ["gpu_sm_clock_mhz", "gpu_mem_clock_mhz", "gpu_temperature_c", "gpu_power_w", "gpu_throttle_reasons"];
use crate::DeviceInfo;

/// An NVML handle, or why there is none (no NVIDIA driver: CPU and PoCL runs).
pub struct Telemetry {
    nvml: Result<Nvml, String>,
}

impl Default for Telemetry {
    fn default() -> Self {
        Self::open()
    }
}

impl Telemetry {
    pub fn open() -> Self {
        Telemetry { nvml: Nvml::init().map_err(|e| e.to_string()) }
    }

    /// Why no readings are taken, if none are.
    pub fn unavailable(&self) -> Option<&str> {
        self.nvml.as_ref().err().map(|s| s.as_str())
    }

    /// Readings for the device a case ran on, as (column, value): empty where NVML is absent or
    /// the device is not an NVIDIA GPU it can find (by PCI address, else the only GPU there is).
    pub fn read(&self, info: &DeviceInfo) -> Vec<(String, f64)> {
        let Ok(nvml) = &self.nvml else { return vec![] };
        let by_bus = info.pci_bus_id.as_ref().and_then(|id| nvml.device_by_pci_bus_id(id.as_str()).ok());
        let dev = match by_bus {
            Some(d) => d,
            None if info.name.contains("NVIDIA") || info.platform.contains("NVIDIA") || info.platform == "CUDA" => {
                match (nvml.device_count(), nvml.device_by_index(0)) {
                    (Ok(1), Ok(d)) => d,
                    _ => return vec![],
                }
            }
            None => return vec![],
        };
        let mut out = Vec::new();
        let mut put = |name: &str, v: Option<f64>| {
            if let Some(v) = v {
                out.push((name.to_string(), v));
            }
        };
        put("gpu_sm_clock_mhz", dev.clock_info(Clock::SM).ok().map(f64::from));
        put("gpu_mem_clock_mhz", dev.clock_info(Clock::Memory).ok().map(f64::from));
        put("gpu_temperature_c", dev.temperature(TemperatureSensor::Gpu).ok().map(f64::from));
        put("gpu_power_w", dev.power_usage().ok().map(|mw| mw as f64 / 1e3));
        // NVML's bit mask (idle, applications clocks, power cap, thermal slowdown, ...).
        put("gpu_throttle_reasons", dev.current_throttle_reasons().ok().map(|r| r.bits() as f64));
        out
    }
}
