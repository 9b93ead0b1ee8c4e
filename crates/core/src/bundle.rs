//! Signature bundle v1: what a venue keeps for one protected copy and later loads in the detector.
//!
//! The JSON Schema in `schema/bundle-v1.schema.json` describes the same structure; a test keeps
//! the two in step. Minor versions (1.x) may add optional fields; a different major is refused.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::params;

/// Value of the `format` field of every bundle.
pub const BUNDLE_FORMAT: &str = "semtrace-bundle";
/// The version this crate writes.
/// 1.1 added the optional `carrier` record, 1.2 the optional `selection`.
pub const BUNDLE_VERSION: &str = "1.2";
/// Value of `selection` when the selected side of each position is an independent fair bit
/// from the venue secret, drawn after pairing and slots were fixed
/// ([`crate::codeword::selection_bits`]).
pub const SELECTION_KEYED: &str = "keyed-v1";
/// The major version this crate reads.
pub const BUNDLE_MAJOR: u64 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bundle {
    /// Always [`BUNDLE_FORMAT`].
    pub format: String,
    /// "MAJOR.MINOR"; only major 1 is understood.
    pub format_version: String,
    pub document: Document,
    /// Number of binary positions.
    pub k: usize,
    pub positions: Vec<Position>,
    /// The codeword assigned to this copy: one 0/1 per position, balanced.
    pub codeword: Vec<u8>,
    pub decoding: DecodingParams,
    pub model: ModelIdentity,
    /// The carrier embedded in the protected copy (format 1.1; absent until the copy is protected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carrier: Option<crate::carrier::CarrierRecord>,
    /// How the selected side of each position was chosen (format 1.2): [`SELECTION_KEYED`].
    /// Absent in older bundles, where the optimiser chose it, so the p-value's fair-coin
    /// assumption was not guaranteed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<String>,
    /// Per-reviewer copies (format 1.2): same pairs and slots, each selection from the
    /// recipient's own keyed draw. Recipients are named by a keyed digest, not by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recipients: Vec<Recipient>,
    /// Free-form provenance (tool version, creation time, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recipient {
    /// [`crate::codeword::recipient_digest`] of the recipient's name (32 hex digits).
    pub digest: String,
    /// The labels of the facts this recipient's copy asks for: `positions[j].facts[codeword[j]]`.
    /// A fair coin per position, so not balanced.
    pub codeword: Vec<u8>,
    /// The carrier embedded in this recipient's protected copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carrier: Option<crate::carrier::CarrierRecord>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    pub title: String,
    /// SHA-256 (hex) of the original, unprotected PDF (or of the source text when built from text).
    pub sha256: String,
    /// Page count of the original (0 when built from plain text).
    pub pages: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Position {
    /// 0-based position index j.
    pub index: usize,
    /// Review slot the selected fact is asked to appear in (e.g. "summary-1", "strength-1").
    pub slot: String,
    /// `facts[b]` is f^b_j, the fact that stands for bit b.
    pub facts: [Fact; 2],
}

impl Position {
    /// Maps a side in the secret-free order of the pair (fact ids sorted) to its stored label,
    /// and back: the map is its own inverse.
    pub fn flip_secret_free_order(&self, side: u8) -> u8 {
        let swapped = self.facts[1].id < self.facts[0].id;
        u8::from((side == 1) != swapped)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fact {
    /// Stable fact id within the bundle's fact pool.
    pub id: String,
    /// The atomic proposition (12–35 words).
    pub text: String,
    /// Exact supporting quotation from the source.
    pub quote: String,
    /// 1-based page of the quotation (None for text sources).
    pub page: Option<u32>,
    /// Evidence-unit id the quotation comes from.
    pub unit: String,
}

/// Frozen decoding parameters (appendix "Detection Details" of the paper).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecodingParams {
    pub tau_min: f64,
    pub margin: f64,
    pub tau_both: f64,
    pub o_min: usize,
    /// Score given to ineligible reviews; must lie below every eligible score (−K).
    pub ineligible_score: i64,
    pub window_sentences: usize,
    pub max_windows: usize,
    /// One-sided binomial p-value at or below which an eligible review is called exposed.
    #[serde(default = "default_alpha")]
    pub alpha: f64,
}

fn default_alpha() -> f64 {
    params::ALPHA
}

impl DecodingParams {
    /// The Exact-12 defaults of the paper.
    pub fn exact12() -> Self {
        DecodingParams {
            tau_min: params::TAU_MIN,
            margin: params::MARGIN,
            tau_both: params::TAU_BOTH,
            o_min: params::O_MIN,
            ineligible_score: params::INELIGIBLE_SCORE,
            window_sentences: params::WINDOW_SENTENCES,
            max_windows: params::MAX_WINDOWS,
            alpha: default_alpha(),
        }
    }
}

/// Which NLI model the bundle's thresholds were frozen for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelIdentity {
    pub name: String,
    /// SHA-256 (hex) of the ONNX file.
    pub sha256: String,
    pub entailment_index: usize,
    pub max_length: usize,
}

impl Bundle {
    /// Whether each observed position matches by chance with probability exactly ½ under H0,
    /// which makes the binomial p-value exact.
    pub fn p_value_exact(&self) -> bool {
        self.selection.as_deref() == Some(SELECTION_KEYED) || !self.recipients.is_empty()
    }

    /// The labels of the facts a selection asks for, with each pair's sides in a secret-free
    /// order (fact ids sorted; stored order on a tie): selection bit 1 = the larger id.
    pub fn labels_for_selection(&self, selection: &[u8]) -> Vec<u8> {
        self.positions
            .iter()
            .zip(selection)
            .map(|(p, &s)| p.flip_secret_free_order(s))
            .collect()
    }

    /// The recipient with this digest (any case).
    pub fn recipient(&self, digest: &str) -> Option<&Recipient> {
        self.recipients
            .iter()
            .find(|r| r.digest.eq_ignore_ascii_case(digest))
    }

    /// Parse and validate a bundle from JSON text.
    pub fn from_json(text: &str) -> Result<Bundle> {
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| Error::bundle(format!("not valid JSON: {e}")))?;
        // Check format and version before the structure, so a v2 bundle gets a version error
        // rather than a confusing "missing field".
        let format = value.get("format").and_then(|v| v.as_str());
        if format != Some(BUNDLE_FORMAT) {
            return Err(Error::bundle(format!(
                "field \"format\" must be \"{BUNDLE_FORMAT}\" (found {})",
                format
                    .map(|f| format!("\"{f}\""))
                    .unwrap_or_else(|| "nothing".into())
            )));
        }
        let version = value
            .get("format_version")
            .and_then(|v| v.as_str())
            .ok_or_else(|| Error::bundle("missing string field \"format_version\""))?;
        let major = parse_major(version)?;
        if major != BUNDLE_MAJOR {
            return Err(Error::bundle(format!(
                "unsupported bundle version {version}: this semtrace reads version {BUNDLE_MAJOR}.x"
            )));
        }
        let bundle: Bundle = serde_json::from_value(value)
            .map_err(|e| Error::bundle(format!("bad structure: {e}")))?;
        bundle.validate()?;
        Ok(bundle)
    }

    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("bundle serialises")
    }

    /// Semantic checks the schema cannot express.
    pub fn validate(&self) -> Result<()> {
        let k = self.k;
        if k == 0 {
            return Err(Error::bundle("k must be at least 1"));
        }
        if self.positions.len() != k {
            return Err(Error::bundle(format!(
                "k is {k} but {} positions are listed",
                self.positions.len()
            )));
        }
        if self.codeword.len() != k {
            return Err(Error::bundle(format!(
                "k is {k} but the codeword has {} bits",
                self.codeword.len()
            )));
        }
        if let Some(bad) = self.codeword.iter().find(|&&b| b > 1) {
            return Err(Error::bundle(format!("codeword bit {bad} is not 0 or 1")));
        }
        let ones = self.codeword.iter().filter(|&&b| b == 1).count();
        let zeros = k - ones;
        if ones.abs_diff(zeros) > 1 {
            return Err(Error::bundle(format!(
                "codeword is not balanced: {zeros} zeros and {ones} ones"
            )));
        }
        for (j, p) in self.positions.iter().enumerate() {
            if p.index != j {
                return Err(Error::bundle(format!(
                    "position {j} has index {} (positions must be listed in order 0..k)",
                    p.index
                )));
            }
            for (b, f) in p.facts.iter().enumerate() {
                if f.text.trim().is_empty() {
                    return Err(Error::bundle(format!(
                        "position {j} fact {b} has empty text"
                    )));
                }
            }
        }
        let mut digests = std::collections::HashSet::new();
        for r in &self.recipients {
            if r.digest.len() != 32 || !r.digest.bytes().all(|c| c.is_ascii_hexdigit()) {
                return Err(Error::bundle(format!(
                    "recipient digest \"{}\" is not 32 hex digits",
                    r.digest
                )));
            }
            if !digests.insert(r.digest.to_ascii_lowercase()) {
                return Err(Error::bundle(format!(
                    "recipient {} is listed twice",
                    r.digest
                )));
            }
            if r.codeword.len() != k || r.codeword.iter().any(|&b| b > 1) {
                return Err(Error::bundle(format!(
                    "recipient {}: codeword must be {k} bits of 0 or 1",
                    r.digest
                )));
            }
        }
        let d = &self.decoding;
        for (name, v) in [
            ("tau_min", d.tau_min),
            ("margin", d.margin),
            ("tau_both", d.tau_both),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(Error::bundle(format!(
                    "decoding.{name} = {v} is outside [0, 1]"
                )));
            }
        }
        if !(d.alpha > 0.0 && d.alpha <= 1.0) {
            return Err(Error::bundle(format!(
                "decoding.alpha = {} is outside (0, 1]",
                d.alpha
            )));
        }
        if d.o_min > k {
            return Err(Error::bundle(format!(
                "decoding.o_min = {} exceeds k = {k}",
                d.o_min
            )));
        }
        if d.ineligible_score >= -(k as i64) {
            return Err(Error::bundle(format!(
                "decoding.ineligible_score = {} must be below the lowest eligible score −{k}",
                d.ineligible_score
            )));
        }
        if d.window_sentences == 0 || d.max_windows == 0 {
            return Err(Error::bundle(
                "decoding.window_sentences and max_windows must be ≥ 1",
            ));
        }
        let m = &self.model;
        if m.sha256.len() != 64 || !m.sha256.bytes().all(|c| c.is_ascii_hexdigit()) {
            return Err(Error::bundle("model.sha256 must be 64 hex digits"));
        }
        if m.max_length < 8 {
            return Err(Error::bundle("model.max_length must be at least 8"));
        }
        Ok(())
    }
}

/// Bundles for tests elsewhere in the crate.
#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;
    use crate::slots::Slot;

    /// A valid bundle with one position per slot; fact b of position j reads "Fact j-b ...".
    pub(crate) fn bundle_with_slots(slots: &[Slot], codeword: &[u8]) -> Bundle {
        let mut b = super::tests::tiny_bundle();
        b.k = slots.len();
        b.codeword = codeword.to_vec();
        b.decoding.o_min = 1;
        b.decoding.ineligible_score = -(slots.len() as i64) - 1;
        b.positions = slots
            .iter()
            .enumerate()
            .map(|(j, s)| Position {
                index: j,
                slot: s.id.clone(),
                facts: [0, 1].map(|side| Fact {
                    id: format!("f{j}{side}"),
                    text: format!("Fact {j}-{side} says that method M{j} reaches {side}{j}.5 points on data set D{j}."),
                    quote: "q".into(),
                    page: Some(1),
                    unit: "p1.u1".into(),
                }),
            })
            .collect();
        b
    }
}

fn parse_major(version: &str) -> Result<u64> {
    version
        .split('.')
        .next()
        .and_then(|m| m.parse::<u64>().ok())
        .ok_or_else(|| Error::bundle(format!("format_version \"{version}\" is not MAJOR.MINOR")))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn tiny_bundle() -> Bundle {
        let fact = |id: &str| Fact {
            id: id.into(),
            text: format!("Fact {id} is a statement."),
            quote: "a statement".into(),
            page: Some(1),
            unit: "p1-u1".into(),
        };
        Bundle {
            format: BUNDLE_FORMAT.into(),
            format_version: BUNDLE_VERSION.into(),
            document: Document {
                title: "T".into(),
                sha256: "0".repeat(64),
                pages: 1,
            },
            k: 2,
            positions: (0..2)
                .map(|j| Position {
                    index: j,
                    slot: format!("summary-{}", j + 1),
                    facts: [fact(&format!("{j}a")), fact(&format!("{j}b"))],
                })
                .collect(),
            codeword: vec![0, 1],
            decoding: DecodingParams {
                o_min: 1,
                ineligible_score: -3,
                ..DecodingParams::exact12()
            },
            model: ModelIdentity {
                name: "m".into(),
                sha256: "a".repeat(64),
                entailment_index: 0,
                max_length: 256,
            },
            carrier: None,
            selection: None,
            recipients: Vec::new(),
            provenance: None,
        }
    }

    #[test]
    fn round_trips_and_validates() {
        let b = tiny_bundle();
        let back = Bundle::from_json(&b.to_json_pretty()).unwrap();
        assert_eq!(b, back);
    }

    #[test]
    fn unknown_major_is_refused_with_version_in_message() {
        let mut v: serde_json::Value = serde_json::to_value(tiny_bundle()).unwrap();
        v["format_version"] = "2.0".into();
        v.as_object_mut().unwrap().remove("positions");
        let e = Bundle::from_json(&v.to_string()).unwrap_err();
        assert!(e.message.contains("unsupported bundle version 2.0"), "{e}");
    }

    #[test]
    fn minor_version_is_accepted() {
        let mut b = tiny_bundle();
        b.format_version = "1.7".into();
        assert!(Bundle::from_json(&b.to_json_pretty()).is_ok());
    }

    #[test]
    fn unbalanced_codeword_is_refused() {
        let mut b = tiny_bundle();
        b.codeword = vec![1, 1];
        let e = Bundle::from_json(&b.to_json_pretty()).unwrap_err();
        assert!(e.message.contains("not balanced"), "{e}");
    }

    #[test]
    fn structural_errors_are_reported() {
        let mut b = tiny_bundle();
        b.codeword = vec![0, 1, 0];
        assert!(Bundle::from_json(&b.to_json_pretty())
            .unwrap_err()
            .message
            .contains("codeword has 3"));
        let mut b = tiny_bundle();
        b.decoding.ineligible_score = -2;
        assert!(Bundle::from_json(&b.to_json_pretty())
            .unwrap_err()
            .message
            .contains("ineligible"));
        let mut b = tiny_bundle();
        b.codeword = vec![0, 2];
        assert!(Bundle::from_json(&b.to_json_pretty()).is_err());
        assert!(Bundle::from_json("{")
            .unwrap_err()
            .message
            .contains("not valid JSON"));
        assert!(Bundle::from_json("{\"format\":\"x\"}")
            .unwrap_err()
            .message
            .contains("format"));
    }
}
