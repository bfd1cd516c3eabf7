//! A paper's claims judged on a run's rows: each claim with our measurement, a verdict and the
//! rows it rests on. Each paper's module holds the rules; this is the shared form of the table.

use super::Table;

/// How a claim fares on the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Holds,
    Partly,
    Fails,
    NotMeasured,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Partly => "partly",
            Verdict::Fails => "fails",
            Verdict::NotMeasured => "not measured",
        }
    }

    /// A claim made of `of` cases, `held` of which agree. `All`: it holds only if every case
    /// agrees; `Most` (the paper says "usually", "in most cases"): if more than half do.
    pub fn of_cases(held: usize, of: usize, need: Need) -> Verdict {
        match (held, of, need) {
            (_, 0, _) => Verdict::NotMeasured,
            (h, n, Need::All) if h == n => Verdict::Holds,
            (h, n, Need::Most) if 2 * h > n => Verdict::Holds,
            (0, _, _) => Verdict::Fails,
            _ => Verdict::Partly,
        }
    }
}

/// What share of a claim's cases must agree for it to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    All,
    Most,
}

/// One judged claim.
#[derive(Debug, Clone)]
pub struct Claim {
    /// The device, backend and precision it was judged on.
    pub on: String,
    /// The claim, with where the paper makes it.
    pub claim: String,
    pub verdict: Verdict,
    /// Our figures behind the verdict.
    pub measured: String,
    /// The rows the verdict rests on (experiment, method and parameter ranges, row count).
    pub rests_on: String,
}

/// The claims as a report table named `<id>-claims`.
pub fn table(id: &str, claims: Vec<Claim>, notes: Vec<String>) -> Table {
    Table {
        name: format!("{id}-claims"),
        title: "The paper's claims on this run".into(),
        header: ["device", "claim (where the paper makes it)", "verdict", "measured", "rests on"].map(String::from).to_vec(),
        rows: claims.into_iter().map(|c| vec![c.on, c.claim, c.verdict.as_str().into(), c.measured, c.rests_on]).collect(),
        notes: std::iter::once(
            "Generated from this run's rows by the rules in the paper's module (claims.rs), not written by hand: it changes when the measurements do."
                .to_string(),
        )
        .chain(notes)
        .collect(),
    }
}

/// A range of integers as "a-b" (or "a" when one value).
pub fn span(v: &[i64]) -> String {
    match (v.first(), v.last()) {
        (Some(a), Some(b)) if a != b => format!("{a}-{b}"),
        (Some(a), _) => a.to_string(),
        _ => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_needs_every_case_and_most_needs_a_majority() {
        assert_eq!(Verdict::of_cases(3, 3, Need::All), Verdict::Holds);
        assert_eq!(Verdict::of_cases(2, 3, Need::All), Verdict::Partly);
        assert_eq!(Verdict::of_cases(0, 3, Need::All), Verdict::Fails);
        assert_eq!(Verdict::of_cases(2, 3, Need::Most), Verdict::Holds);
        assert_eq!(Verdict::of_cases(1, 2, Need::Most), Verdict::Partly);
        assert_eq!(Verdict::of_cases(0, 0, Need::Most), Verdict::NotMeasured);
    }
}
