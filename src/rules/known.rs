//! Known issues: a rule whose pattern file has a `[known_issue]` table is a bug of some
//! KubeRay or Ray releases, reported in a tracker, with the release that fixed it. Its signature
//! is the rule's own signals and clauses; what the table adds is who reported it and the
//! versions it affects, which decide whether the finding is claimed:
//!
//! - the bundle states a version of each product the issue names, in its range: claimed
//!   ("this is ray-project/kuberay#1234, fixed in KubeRay 1.1.0: upgrade, or …");
//! - the bundle states versions of a product the issue names, none in its range: not
//!   claimed, the finding is dropped (the signature alone is some other failure's);
//! - the bundle states no version of it: offered, at lower confidence, and the summary says
//!   that the version is unknown.

use crate::versions::{Product, Stated, Version};

/// A known issue of some releases: the `[known_issue]` table of a pattern file.
#[derive(Clone, Debug)]
pub struct KnownIssue {
    /// The repository whose tracker holds it: `ray-project/kuberay`.
    pub tracker: String,
    pub number: u32,
    /// The affected versions, by product (KubeRay, Ray, or both).
    pub affects: Vec<(Product, Range)>,
    /// The first release without the bug: `KubeRay 1.1.0`.
    pub fixed_in: String,
    /// What to do on an affected release when upgrading is not an option.
    pub workaround: String,
}

/// What the bundle's versions say of a known issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Claim {
    /// A version of a product it names is stated, and none is in its range.
    OutOfRange,
    /// No version of some product it names is stated.
    VersionUnknown,
    /// Every product it names has a stated version in its range.
    InRange,
}

impl Claim {
    /// As the JSON says it.
    pub fn as_str(self) -> &'static str {
        match self {
            Claim::OutOfRange => "out_of_range",
            Claim::VersionUnknown => "version_unknown",
            Claim::InRange => "in_range",
        }
    }
}

/// How much of its confidence a known issue keeps when the bundle states no version of what
/// it affects: offered, never ranked above what the bundle shows for sure.
pub const UNKNOWN_VERSION_FACTOR: f64 = 0.7;

/// What a claimed known issue adds to its confidence: it names the cause more precisely than
/// the general rule that shares its id.
pub const IN_RANGE_BOOST: f64 = 0.05;

impl KnownIssue {
    /// What the bundle's stated versions say of this issue.
    pub fn claim(&self, stated: &[Stated]) -> Claim {
        self.affects
            .iter()
            .map(|(product, range)| {
                let mut versions = stated
                    .iter()
                    .filter(|s| s.product == *product)
                    .filter_map(|s| s.version)
                    .peekable();
                if versions.peek().is_none() {
                    Claim::VersionUnknown
                } else if versions.any(|v| range.contains(v)) {
                    Claim::InRange
                } else {
                    Claim::OutOfRange
                }
            })
            .min()
            .unwrap_or(Claim::VersionUnknown)
    }

    /// `ray-project/kuberay#1234`.
    pub fn reference(&self) -> String {
        format!("{}#{}", self.tracker, self.number)
    }

    /// The affected versions: `KubeRay >=0.5.0, <1.0.0`.
    pub fn affects_text(&self) -> String {
        let each: Vec<String> = self
            .affects
            .iter()
            .map(|(p, r)| format!("{} {}", p.name(), r.text))
            .collect();
        each.join(" and ")
    }

    /// The sentence a cause's summary opens with.
    pub fn sentence(&self, claim: Claim) -> String {
        let fix = format!(
            "fixed in {}: upgrade, or {}",
            self.fixed_in,
            self.workaround.trim_end_matches('.')
        );
        match claim {
            Claim::InRange => format!("This is {}, {fix}.", self.reference()),
            _ => format!(
                "This may be {} (it affects {}; the bundle states no version of it), {fix}.",
                self.reference(),
                self.affects_text()
            ),
        }
    }
}

/// A range of versions: comparisons that must all hold (`>=1.1.0, <1.1.2`).
#[derive(Clone, Debug)]
pub struct Range {
    bounds: Vec<(Op, Version)>,
    /// As the file writes it.
    pub text: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
}

impl Range {
    /// `>=1.1.0, <1.1.2`: comparisons (`<`, `<=`, `>`, `>=`, `=`) joined by commas.
    pub fn parse(text: &str) -> Result<Range, String> {
        let mut bounds = Vec::new();
        for part in text.split(',').map(str::trim) {
            let (op, rest) = [
                ("<=", Op::Le),
                (">=", Op::Ge),
                ("<", Op::Lt),
                (">", Op::Gt),
                ("=", Op::Eq),
            ]
            .iter()
            .find_map(|(s, op)| part.strip_prefix(s).map(|r| (*op, r)))
            .ok_or_else(|| format!("{part:?} does not start with <, <=, >, >= or ="))?;
            let v = Version::parse(rest)
                .ok_or_else(|| format!("{rest:?} is not a version like 1.1.0"))?;
            bounds.push((op, v));
        }
        Ok(Range {
            bounds,
            text: text.trim().to_string(),
        })
    }

    pub fn contains(&self, v: Version) -> bool {
        self.bounds.iter().all(|(op, b)| match op {
            Op::Lt => v < *b,
            Op::Le => v <= *b,
            Op::Gt => v > *b,
            Op::Ge => v >= *b,
            Op::Eq => v == *b,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn stated(product: Product, v: &str) -> Stated {
        Stated {
            product,
            value: v.to_string(),
            version: Version::parse(v),
            event: 0,
        }
    }

    fn issue(kuberay: &str) -> KnownIssue {
        KnownIssue {
            tracker: "ray-project/kuberay".into(),
            number: 1234,
            affects: vec![(Product::Kuberay, Range::parse(kuberay).unwrap())],
            fixed_in: "KubeRay 1.1.2".into(),
            workaround: "set X.".into(),
        }
    }

    #[test]
    fn ranges_hold_every_comparison() {
        let r = Range::parse(">=1.1.0, <1.1.2").unwrap();
        let holds = |v: &str| r.contains(Version::parse(v).unwrap());
        assert!(holds("1.1.0") && holds("1.1.1"));
        assert!(!holds("1.0.9") && !holds("1.1.2"));
        assert!(Range::parse("<=0.6.1").unwrap().contains(Version(0, 6, 1)));
        assert!(Range::parse("~1.0").is_err());
        assert!(Range::parse(">=1.x").is_err());
    }

    #[test]
    fn a_version_in_range_claims_one_outside_does_not_none_offers() {
        let ki = issue(">=1.1.0, <1.1.2");
        let claim = |vs: &[&str]| {
            let s: Vec<Stated> = vs.iter().map(|v| stated(Product::Kuberay, v)).collect();
            ki.claim(&s)
        };
        assert_eq!(claim(&["1.1.1"]), Claim::InRange);
        assert_eq!(claim(&["1.0.0", "1.1.0"]), Claim::InRange);
        assert_eq!(claim(&["1.2.2"]), Claim::OutOfRange);
        assert_eq!(claim(&[]), Claim::VersionUnknown);
        let ray_only = vec![stated(Product::Ray, "1.1.1")];
        assert_eq!(ki.claim(&ray_only), Claim::VersionUnknown);
        assert_eq!(
            ki.sentence(Claim::InRange),
            "This is ray-project/kuberay#1234, fixed in KubeRay 1.1.2: upgrade, or set X."
        );
        assert!(ki
            .sentence(Claim::VersionUnknown)
            .contains("it affects KubeRay >=1.1.0, <1.1.2; the bundle states no version"));
    }
}
