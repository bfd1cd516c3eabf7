//! `harness export`: its options, and which paper's writer they call.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::commands;

/// What `harness export` writes (see its help).
#[derive(clap::Args)]
pub struct ExportArgs {
    /// Whose system: Cecka's heat problem (--level, --order), a-COO's capacitor (--level),
    /// Sanfui's hexahedral box (--nodes) or Banaś' prism element matrices (--degree,
    /// --elements).
    #[arg(long, default_value = "cecka", value_parser = ["cecka", "acoo", "sanfui", "banas"])]
    pub paper: String,
    /// A Pogo model instead: weld, gear or geophysical.
    #[arg(long, value_name = "weld|gear|geophysical")]
    pub model: Option<String>,
    /// With --paper sanfui: the box's nodes along x, y and z.
    #[arg(long, value_name = "NX,NY,NZ", value_delimiter = ',', default_values_t = [20usize, 10, 10])]
    pub nodes: Vec<usize>,
    /// With --paper banas: the polynomial degree, 1..7.
    #[arg(long, default_value_t = 2)]
    pub degree: usize,
    /// With --paper banas: how many prisms of the paper's box.
    #[arg(long, default_value_t = 8)]
    pub elements: usize,
    /// With --model: the element size over the paper's (1: the paper's size, 1.9-2.0M DOFs).
    #[arg(long, default_value_t = 1.0)]
    pub coarsen: f64,
    /// Uniform refinement level of the plate mesh (0: 288 P1 elements, 7: 4.7M).
    #[arg(long, default_value_t = 2)]
    pub level: u32,
    /// Lagrange order, 1..6.
    #[arg(long, default_value_t = 1)]
    pub order: u32,
    /// Output folder.
    #[arg(long, default_value = "export")]
    pub out: PathBuf,
}

impl ExportArgs {
    pub fn run(self) -> ExitCode {
        if let Some(name) = &self.model {
            return commands::export_pogo(name, self.coarsen, &self.out);
        }
        match self.paper.as_str() {
            "acoo" => commands::export_acoo(self.level, &self.out),
            "sanfui" => commands::export_sanfui(&self.nodes, &self.out),
            "banas" => commands::export_banas(self.degree, self.elements, &self.out),
            _ => commands::export(self.level, self.order, &self.out),
        }
    }
}
