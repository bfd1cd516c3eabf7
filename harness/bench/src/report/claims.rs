//! A paper's claims judged on a run's rows: the ledger. Each claim quotes the paper's sentence
//! with its section, states the rule that judges it, and gives the verdict, our figures and the
//! rows it rests on. Each paper's module holds its rules; this is the shared form: the quote,
//! the verdicts, the tie rule and the table.

use super::Table;

/// The paper's own sentence behind a claim, verbatim, and where the paper makes it; or one of
/// fembench's goals, which no paper makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quote {
    pub text: &'static str,
    /// Section, figure or table, e.g. "Sec. 6.3, Fig. 13"; [`GOAL`] for fembench's own targets.
    pub at: &'static str,
}

/// Where a goal of fembench's (not a paper's claim) says it comes from.
pub const GOAL: &str = "fembench goal, not the paper's";

impl Quote {
    pub const fn paper(text: &'static str, at: &'static str) -> Quote {
        Quote { text, at }
    }

    pub const fn goal(text: &'static str) -> Quote {
        Quote { text, at: GOAL }
    }

    pub fn is_goal(&self) -> bool {
        self.at == GOAL
    }

    /// As a table cell: the sentence in quotation marks, then where.
    pub fn cell(&self) -> String {
        if self.is_goal() {
            format!("{} ({})", self.text, self.at)
        } else {
            format!("\u{201c}{}\u{201d} ({})", self.text, self.at)
        }
    }
}

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

    pub fn of_bool(holds: bool) -> Verdict {
        if holds {
            Verdict::Holds
        } else {
            Verdict::Fails
        }
    }
}

/// What share of a claim's cases must agree for it to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    All,
    Most,
}

impl Need {
    /// The rule's words for it.
    pub fn words(self) -> &'static str {
        match self {
            Need::All => "holds if every case agrees, partly if some do, fails if none",
            Need::Most => "holds if more than half the cases agree ('usually', 'in most cases')",
        }
    }
}

/// A median time with its confidence interval (seconds). Where a row has no interval, the
/// median alone (a zero-width interval).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timed {
    pub median: f64,
    pub lo: f64,
    pub hi: f64,
}

impl Timed {
    pub fn new(median: f64, lo: f64, hi: f64) -> Timed {
        let (lo, hi) = if lo.is_finite() && hi.is_finite() && lo <= median && median <= hi { (lo, hi) } else { (median, median) };
        Timed { median, lo, hi }
    }

    /// Summed stages: medians and interval ends add (a conservative interval).
    pub fn plus(self, o: Timed) -> Timed {
        Timed { median: self.median + o.median, lo: self.lo + o.lo, hi: self.hi + o.hi }
    }

    /// Scaled (per element, per iteration): every end scales.
    pub fn scaled(self, k: f64) -> Timed {
        Timed { median: self.median * k, lo: self.lo * k, hi: self.hi * k }
    }
}

/// Which of two timed rows is faster. Overlapping confidence intervals are a tie: a difference
/// inside the two rows' intervals is no difference, not a win.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Faster,
    Tie,
    Slower,
}

impl Order {
    pub fn of(a: Timed, b: Timed) -> Order {
        if a.hi < b.lo {
            Order::Faster
        } else if a.lo > b.hi {
            Order::Slower
        } else {
            Order::Tie
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Order::Faster => "faster",
            Order::Tie => "tie",
            Order::Slower => "slower",
        }
    }
}

/// The rule every timed comparison follows, as a table note.
pub const TIE_RULE: &str = "A comparison of two timed rows is a win only where their confidence intervals (of the median) do not overlap; overlapping intervals are a tie, which counts as no difference, never as a win.";

/// One judged claim.
#[derive(Debug, Clone)]
pub struct Claim {
    /// The device, backend and precision it was judged on.
    pub on: String,
    /// The paper's sentence (or fembench's goal) and where.
    pub quote: Quote,
    /// The rule that turns the rows into the verdict.
    pub rule: String,
    pub verdict: Verdict,
    /// Our figures behind the verdict (and the paper's, labelled, where it gives them).
    pub measured: String,
    /// The rows the verdict rests on (experiment, method and parameter ranges, row count).
    pub rests_on: String,
}

/// The ledger header.
pub const HEADER: [&str; 6] = ["device", "the paper says (where)", "rule", "verdict", "measured", "rests on"];

/// The claims as a report table named `<id>-claims`.
pub fn table(id: &str, claims: Vec<Claim>, notes: Vec<String>) -> Table {
    Table {
        name: format!("{id}-claims"),
        title: "The paper's claims on this run".into(),
        header: HEADER.map(String::from).to_vec(),
        rows: claims.into_iter().map(|c| vec![c.on, c.quote.cell(), c.rule, c.verdict.as_str().into(), c.measured, c.rests_on]).collect(),
        notes: [
            "Generated from this run's rows by the rules in the paper's module, not written by hand: it changes when the measurements do.",
            "Quoted sentences are the paper's, verbatim; rows marked 'fembench goal' are our targets, not the paper's claims.",
            TIE_RULE,
        ]
        .map(String::from)
        .into_iter()
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

/// Least-squares slope of log y against log x (a power law's exponent); NaN with fewer than
/// two positive points.
pub fn loglog_slope(pts: &[(f64, f64)]) -> f64 {
    let p: Vec<(f64, f64)> = pts.iter().filter(|p| p.0 > 0.0 && p.1 > 0.0).map(|p| (p.0.ln(), p.1.ln())).collect();
    if p.len() < 2 {
        return f64::NAN;
    }
    let n = p.len() as f64;
    let (mx, my) = (p.iter().map(|q| q.0).sum::<f64>() / n, p.iter().map(|q| q.1).sum::<f64>() / n);
    let sxy: f64 = p.iter().map(|q| (q.0 - mx) * (q.1 - my)).sum();
    let sxx: f64 = p.iter().map(|q| (q.0 - mx).powi(2)).sum();
    sxy / sxx
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

    #[test]
    fn overlapping_intervals_are_a_tie_and_apart_ones_a_win() {
        let t = |m: f64, w: f64| Timed::new(m, m - w, m + w);
        assert_eq!(Order::of(t(1.0, 0.01), t(1.1, 0.01)), Order::Faster);
        assert_eq!(Order::of(t(1.1, 0.01), t(1.0, 0.01)), Order::Slower);
        // 1% apart with 1% intervals: inside the noise, no winner.
        assert_eq!(Order::of(t(1.00, 0.01), t(1.01, 0.01)), Order::Tie);
        // Without intervals only exact equality ties.
        assert_eq!(Order::of(Timed::new(1.0, f64::NAN, f64::NAN), Timed::new(1.0, f64::NAN, f64::NAN)), Order::Tie);
        assert_eq!(Order::of(Timed::new(1.0, f64::NAN, f64::NAN), Timed::new(1.01, f64::NAN, f64::NAN)), Order::Faster);
        // An interval that does not hold its median is ignored.
        assert_eq!(Timed::new(1.0, 2.0, 3.0), Timed { median: 1.0, lo: 1.0, hi: 1.0 });
    }

    #[test]
    fn a_quote_is_quoted_and_a_goal_says_it_is_ours() {
        assert_eq!(Quote::paper("A is fast.", "Sec. 1").cell(), "\u{201c}A is fast.\u{201d} (Sec. 1)");
        assert!(Quote::goal("beat the peer").cell().contains("not the paper's"));
    }

    #[test]
    fn the_slope_of_a_power_law_is_its_exponent() {
        let pts: Vec<(f64, f64)> = (1..6).map(|i| (i as f64, 3.0 * (i as f64).powf(0.5))).collect();
        assert!((loglog_slope(&pts) - 0.5).abs() < 1e-12);
        assert!(loglog_slope(&pts[..1]).is_nan());
    }
}
