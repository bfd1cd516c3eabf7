//! fembench-core: the vocabulary every other crate shares: backends, precisions, the named
//! parameters of a case, the scalar types kernels run in ([`real`]) and the statistics of stored
//! samples ([`stats`]). It depends on no other fembench crate.

pub mod real;
pub mod stats;

use std::fmt;

use serde::de::Deserializer;
use serde::{Deserialize, Serialize};

/// Floating-point precision of a case's device data and arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    F32,
    F64,
}

impl Precision {
    pub fn as_str(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }
    /// The unit roundoff u (half the machine epsilon) of round-to-nearest arithmetic.
    pub fn unit_roundoff(self) -> f64 {
        match self {
            Precision::F32 => f32::EPSILON as f64 / 2.0,
            Precision::F64 => f64::EPSILON / 2.0,
        }
    }
    /// Bytes of one real.
    pub fn bytes(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::F64 => 8,
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a case runs. `cpu` is the host reference implementation, not a kernel backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    Cuda,
    #[serde(rename = "opencl")]
    OpenCl,
    Cpu,
}

impl Backend {
    pub const ALL: [Backend; 3] = [Backend::Cuda, Backend::OpenCl, Backend::Cpu];

    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Cuda => "cuda",
            Backend::OpenCl => "opencl",
            Backend::Cpu => "cpu",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "cuda" => Ok(Backend::Cuda),
            "opencl" => Ok(Backend::OpenCl),
            "cpu" => Ok(Backend::Cpu),
            _ => Err(format!("unknown backend `{s}`; valid: cuda, opencl, cpu")),
        }
    }
}

/// A list that must hold at least one value (an empty sweep axis would give no cases).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct NonEmpty<T>(pub Vec<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for NonEmpty<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Vec::<T>::deserialize(d)?;
        if v.is_empty() {
            return Err(serde::de::Error::invalid_length(0, &"a list with at least one value"));
        }
        Ok(NonEmpty(v))
    }
}

impl<T> std::ops::Deref for NonEmpty<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.0
    }
}

/// A parameter value of one case, as it appears in result columns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParamValue {
    Int(i64),
    Float(f64),
    Str(String),
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Int(v) => write!(f, "{v}"),
            ParamValue::Float(v) => write!(f, "{v}"),
            ParamValue::Str(v) => f.write_str(v),
        }
    }
}

/// The named parameters of one case, in sweep order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Params(pub Vec<(String, ParamValue)>);

impl Params {
    pub fn push(mut self, name: &str, value: ParamValue) -> Self {
        self.0.push((name.to_string(), value));
        self
    }
    pub fn key(&self) -> String {
        self.0.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")
    }
    /// The value of the parameter `name`, if the case has one.
    pub fn get(&self, name: &str) -> Option<&ParamValue> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

/// Cartesian product of sweep axes, first axis outermost.
pub fn cartesian<T: Clone>(axes: &[Vec<T>]) -> Vec<Vec<T>> {
    axes.iter().fold(vec![Vec::new()], |acc, axis| {
        acc.iter()
            .flat_map(|prefix| {
                axis.iter().map(move |v| {
                    let mut p = prefix.clone();
                    p.push(v.clone());
                    p
                })
            })
            .collect()
    })
}
