//! Published constants of Cecka, Lew and Darve 2011, shown beside our figures and labelled as
//! the paper's.

/// Table VI of the paper: (nodes, elements) and the average relative error, the same for all
/// four methods.
pub const PAPER_TABLE6: [(&str, f64); 8] = [
    ("184, 292", 1.6e-7),
    ("664, 1168", 3.0e-7),
    ("2.5K, 4.7K", 6.2e-7),
    ("9.7K, 18.7K", 1.2e-6),
    ("38K, 75K", 2.6e-6),
    ("150K, 299K", 5.2e-6),
    ("600K, 1.2M", 1.1e-5),
    ("2.4M, 4.8M", 2.1e-5),
];

/// The paper's fastest method per order (section 6.3, Figs. 13-14).
pub(crate) fn paper_winner(order: i64) -> &'static str {
    if order <= 3 {
        "shared-nz"
    } else {
        "global-nz"
    }
}
