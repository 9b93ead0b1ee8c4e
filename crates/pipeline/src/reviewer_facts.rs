//! Would a reviewer state this? Exclusion rules run before every other gate, on offline and LLM
//! candidates alike (gate `reviewer-fact`).
//!
//! A fact is worth carrying only if a reviewer would naturally say it about the paper, alone,
//! in a review. Measured on real papers, the other gates let through acknowledgements, author
//! footnotes, reference-list fragments, figure debris, definitions in the paper's own voice and
//! sentences that lean on the previous one. One function per rule; each returns the words that
//! triggered it, and the build report records `rule: evidence` as the drop reason.
//!
//! What the rules see: the fact text (for offline candidates already in the reviewer's voice, see
//! `voice`), and for the rules about what the source is (acknowledgement, front matter, author
//! contributions) also the quotation and the cited unit's section heading. Rules about how the
//! fact is phrased (directives, questions, context) look at the fact text only: an LLM may
//! rephrase "It achieves 28.4 BLEU" into a self-contained fact.
//!
//! Deliberately kept: "The paper proposes X" (the voice rewrite of "This paper proposes X" / "In
//! this paper, we propose X"): "the paper" is what a reviewer says. "Thanks to X, ..." (causal),
//! "supported by experiments", "There are six layers" (existential "there"), in-sentence
//! pronouns ("the recommendations they produce"), and comparative "those of".

use serde::Serialize;

use super::voice::split_word;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// Thanks, funding, grants.
    Acknowledgement,
    /// Author and affiliation lines, licences and copyright, code URLs, e-mail addresses.
    FrontMatter,
    /// "Jakob proposed ...", "Equal contribution".
    AuthorContribution,
    /// Reference-list fragments: venue, publisher, year, pages, without a verb.
    CitationFragment,
    /// Caption labels, axis ticks and table cells, text glued by the layout.
    FigureDebris,
    /// "Let", "Suppose", "Note that", "Consider" ..., or the reader addressed as "you".
    AuthorialDirective,
    Question,
    /// A demonstrative or pronoun subject whose antecedent is in an earlier sentence.
    NeedsContext,
    /// A one-letter symbol ("N previous words", "s(t)") that the fact does not define.
    UndefinedSymbol,
    /// A pointer or roadmap sentence ("is shown in Alg. 2", "Now the authors describe ...").
    Pointer,
    /// The field's background, not the paper's work ("Several methods have been proposed to
    /// ...", "GEC has attracted widespread attention"), with no word tying it to the paper.
    Background,
}

impl Rule {
    pub const ALL: [Rule; 11] = [
        Rule::Acknowledgement,
        Rule::FrontMatter,
        Rule::AuthorContribution,
        Rule::CitationFragment,
        Rule::FigureDebris,
        Rule::AuthorialDirective,
        Rule::Question,
        Rule::NeedsContext,
        Rule::UndefinedSymbol,
        Rule::Pointer,
        Rule::Background,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Rule::Acknowledgement => "acknowledgement",
            Rule::FrontMatter => "front-matter",
            Rule::AuthorContribution => "author-contribution",
            Rule::CitationFragment => "citation-fragment",
            Rule::FigureDebris => "figure-debris",
            Rule::AuthorialDirective => "authorial-directive",
            Rule::Question => "question",
            Rule::NeedsContext => "needs-context",
            Rule::UndefinedSymbol => "undefined-symbol",
            Rule::Pointer => "pointer",
            Rule::Background => "background",
        }
    }
}

/// Why a candidate is not a fact a reviewer would state.
#[derive(Debug, Clone, PartialEq)]
pub struct Exclusion {
    pub rule: Rule,
    /// What triggered the rule, quoted from the text.
    pub evidence: String,
}

impl Exclusion {
    /// The drop reason as the build report shows it: `rule: evidence`.
    pub fn reason(&self) -> String {
        format!("{}: {}", self.rule.name(), self.evidence)
    }
}

/// The first rule that excludes the candidate, if any. `section` is the cited unit's heading.
pub fn check(text: &str, quote: &str, section: Option<&str>) -> Option<Exclusion> {
    let hit = |rule: Rule, evidence: Option<String>| {
        evidence.map(|evidence| Exclusion { rule, evidence })
    };
    let both = |f: fn(&str) -> Option<String>| f(text).or_else(|| f(quote));
    hit(
        Rule::Acknowledgement,
        section.and_then(acknowledgement_section),
    )
    .or_else(|| hit(Rule::Acknowledgement, both(acknowledgement)))
    .or_else(|| hit(Rule::FrontMatter, both(front_matter)))
    .or_else(|| hit(Rule::AuthorContribution, both(author_contribution)))
    .or_else(|| hit(Rule::CitationFragment, citation_fragment(text)))
    .or_else(|| hit(Rule::FigureDebris, figure_debris(text)))
    .or_else(|| hit(Rule::AuthorialDirective, authorial_directive(text)))
    .or_else(|| hit(Rule::Question, question(text)))
    .or_else(|| hit(Rule::NeedsContext, needs_context(text)))
    .or_else(|| hit(Rule::UndefinedSymbol, undefined_symbol(text)))
    .or_else(|| hit(Rule::Pointer, pointer(text)))
    .or_else(|| hit(Rule::Background, background(text)))
    .or_else(|| hit(Rule::Background, conventional(text)))
    // Only a source that differs from the fact tells whose "the authors" they are (tests and the
    // judged replay pass the fact as its own quotation).
    .or_else(|| {
        hit(
            Rule::Background,
            (quote != text).then(|| cited_authors(quote)).flatten(),
        )
    })
}

/// Rules whose hits fail the rubric more often than not but too rarely, or in papers too short,
/// to drop the fact: a fact they hit stays approved and enters selection only to make up 2K, like
/// one under the quality floor (`stages::select`). Each is a judged failure of the corpus that a
/// dropping rule could not take without a short paper (003 has 26 approved facts) falling under
/// 24 (docs/evaluation.md, fact-rubric round 12). Offline facts only; on the fact text.
pub fn fill_only(text: &str) -> Option<Exclusion> {
    let hit = |rule: Rule, evidence: Option<String>| {
        evidence.map(|evidence| Exclusion { rule, evidence })
    };
    hit(Rule::NeedsContext, restatement_opener(text))
        .or_else(|| hit(Rule::Pointer, table_position(text)))
        .or_else(|| hit(Rule::UndefinedSymbol, subscripted_symbol(text)))
        .or_else(|| hit(Rule::NeedsContext, hypothetical_opener(text)))
        .or_else(|| hit(Rule::NeedsContext, ordinal_subset(text)))
        .or_else(|| hit(Rule::NeedsContext, comparative_without_than(text)))
        .or_else(|| hit(Rule::NeedsContext, bare_subject_gaps(text)))
        .or_else(|| hit(Rule::UndefinedSymbol, undefined_complexity(text)))
        .or_else(|| hit(Rule::Background, unanchored_claim(text)))
        .or_else(|| hit(Rule::Background, protocol_boilerplate(text)))
        .or_else(|| hit(Rule::FrontMatter, availability_note(text)))
        .or_else(|| hit(Rule::UndefinedSymbol, lettered_labels(text)))
        .or_else(|| hit(Rule::NeedsContext, believed_pronoun(text)))
}

/// "The authors believe that it has the capability to replace ...": the belief's subject is a
/// pronoun whose referent is the previous sentence's (both round-15 panels failed both such
/// facts). "it is"/"it was" may be a dummy subject ("believe it is hard to ..."), so they stay.
fn believed_pronoun(s: &str) -> Option<String> {
    let w = words(s);
    (0..w.len()).find_map(|i| {
        if !matches!(
            w[i].lower.as_str(),
            "believe" | "believes" | "think" | "thinks"
        ) {
            return None;
        }
        let j = i + 1 + usize::from(w.get(i + 1).is_some_and(|x| x.lower == "that"));
        let pronoun = w.get(j).filter(|x| {
            matches!(x.lower.as_str(), "it" | "this" | "they" | "these") && x.tail.is_empty()
        })?;
        let next = w.get(j + 1).map(|x| x.lower.as_str());
        (!matches!(next, Some("is" | "was" | "would" | "will")))
            .then(|| format!("pronoun after \"{}\": {}", w[i].core, quoted(pronoun.core)))
    })
}

/// "Some of the resulting word vectors were made available for future research": a release
/// note, which both round-15 panels failed (one flagged it front matter). "open-sourced" and URLs
/// are `front_matter`'s.
fn availability_note(s: &str) -> Option<String> {
    let lower = s.to_lowercase();
    ["made available", "made publicly available", "made public"]
        .iter()
        .find(|p| lower.contains(*p))
        .map(|p| format!("availability note {}", quoted(p)))
}

/// "for task m is the output of LSMT at step T": letters that a label noun carries ("task m",
/// "step T") read as defined to `undefined_symbol` ("Table 2", "Task A" are names), but two of
/// them in a sentence are the paper's notation (round 15b flagged this one a definition).
fn lettered_labels(s: &str) -> Option<String> {
    let w = words(s);
    let labels: Vec<String> = (1..w.len())
        .filter(|&i| {
            let letter = w[i].core.chars().count() == 1
                && w[i].core.chars().all(|c| c.is_ascii_alphabetic())
                && !matches!(w[i].core, "a" | "A" | "I");
            letter
                && w[i].raw == w[i].core.to_string() + w[i].tail
                && LABEL_NOUNS.contains(&w[i - 1].lower.as_str())
        })
        .map(|i| format!("{} {}", w[i - 1].core, w[i].core))
        .collect();
    (labels.len() >= 2)
        .then(|| format!("letters carried by labels: {}", quoted(&labels.join(", "))))
}

/// "The hyperparameters which achieve the best performance on the development set will be
/// chosen ...": the protocol every paper follows, in the future tense of a recipe (round 14: 2
/// facts, both failed in both panels).
fn protocol_boilerplate(s: &str) -> Option<String> {
    let lower = s.to_lowercase();
    let recipe = first_phrase(
        &lower,
        &[
            "will be chosen",
            "will be selected",
            "will be trained",
            "will be tuned",
        ],
    )?;
    let split = first_phrase(
        &lower,
        &[
            "development set",
            "validation set",
            "dev set",
            "training set",
        ],
    )
    .is_some();
    split.then(|| format!("{} on a data split: protocol boilerplate", quoted(recipe)))
}

/// "If a customer buys X, the system might ...", "If at least some examples ...": a
/// hypothetical or worked example, not a finding (fact-rubric round 14: 3 of 3 failed in both
/// panels). "If" with a named subject ("If BERT is frozen, ...") states a result and is kept.
fn hypothetical_opener(s: &str) -> Option<String> {
    let w = words(s);
    let (first, second) = (w.first()?, w.get(1)?);
    let third = w.get(2).map(|x| x.lower.as_str()).unwrap_or("");
    let hypothetical = first.lower == "if"
        && (matches!(second.lower.as_str(), "a" | "an")
            || (second.lower == "at" && third == "least")
            || (second.lower == "the" && third == "authors"));
    hypothetical.then(|| {
        format!(
            "opens with a hypothetical {}",
            quoted(&format!("If {}", second.core))
        )
    })
}

/// "The first three datasets are ...", "for the first 4 datasets", "the last dataset": a subset
/// of a list the reader has not seen (round 14). "the first 6 days" is a plain span of time and
/// "the first three layers of the network" names its whole.
fn ordinal_subset(s: &str) -> Option<String> {
    const SETS: &[&str] = &[
        "datasets",
        "tasks",
        "models",
        "methods",
        "baselines",
        "experiments",
        "settings",
        "languages",
        "benchmarks",
    ];
    const COUNTS: &[&str] = &[
        "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    let w = words(s);
    w.windows(3).enumerate().find_map(|(i, t)| {
        let ordinal = t[0].lower == "the" && matches!(t[1].lower.as_str(), "first" | "last");
        if !ordinal {
            return None;
        }
        let count =
            COUNTS.contains(&t[2].lower.as_str()) || t[2].core.chars().all(|c| c.is_ascii_digit());
        let set = w.get(i + 3).filter(|n| SETS.contains(&n.lower.as_str()));
        let of_whole = w.get(i + 4).is_some_and(|n| n.lower == "of");
        match set {
            Some(n) if count && t[2].tail.is_empty() && !of_whole => Some(quoted(&format!(
                "{} {} {} {}",
                t[0].core, t[1].core, t[2].core, n.core
            ))),
            _ if t[1].lower == "last"
                && matches!(t[2].lower.as_str(), "dataset" | "task" | "one" | "ones")
                && w.get(i + 3).is_none_or(|n| n.lower != "of") =>
            {
                Some(quoted(&format!(
                    "{} {} {}",
                    t[0].core, t[1].core, t[2].core
                )))
            }
            _ => None,
        }
        .map(|p| format!("{p} is a subset of a list given earlier"))
    })
}

/// "Because of the much lower computational complexity, ...": lower than what, the sentence
/// does not say (round 14).
fn comparative_without_than(s: &str) -> Option<String> {
    let w = words(s);
    if w.iter()
        .any(|x| matches!(x.lower.as_str(), "than" | "compared" | "versus" | "vs"))
    {
        return None;
    }
    w.windows(3).find_map(|t| {
        let hit = t[0].lower == "the"
            && matches!(t[1].lower.as_str(), "much" | "far" | "significantly")
            && matches!(
                t[2].lower.as_str(),
                "lower" | "higher" | "better" | "smaller" | "larger" | "faster" | "worse"
            );
        hit.then(|| {
            format!(
                "{} compares with nothing named",
                quoted(&format!("{} {} {}", t[0].core, t[1].core, t[2].core))
            )
        })
    })
}

/// Bare definite subjects the dropping rule leaves alone: the heads "images", "subphrase(s)" and
/// "performance" ("The good performance demonstrates ..."), and a "which one?" head after
/// "once" or a connective inside the sentence ("Once the algorithm generates ...", "and thus the
/// approach is inefficient"). Round 14: 6 facts, all failed in both panels; demoted, not dropped,
/// because 017, one of the short papers, holds two of them.
fn bare_subject_gaps(s: &str) -> Option<String> {
    const MORE_HEADS: &[&str] = &["images", "subphrase", "subphrases", "performance"];
    let w = words(s);
    if let Some(e) = bare_subject(&w, 0, MORE_HEADS) {
        return Some(e);
    }
    (1..w.len()).find_map(|i| {
        let after_connective =
            matches!(
                w[i - 1].lower.as_str(),
                "once" | "thus" | "hence" | "therefore"
            ) && (i == 1 || w[i - 2].lower == "and" || w[i - 2].tail.starts_with(','));
        (after_connective && w[i].lower == "the")
            .then(|| bare_subject(&w, i, GENERIC_HEADS))
            .flatten()
    })
}

/// "approximately O(M), not O(MN)": complexity in capital letters the sentence does not define
/// (round 14); "O(d) extra parameters" reads as the model's dimension.
fn undefined_complexity(s: &str) -> Option<String> {
    let w = words(s);
    w.iter().find_map(|x| {
        let raw = x.raw.trim_end_matches([',', '.', ';', ':']);
        let inside = raw.strip_prefix("O(")?.strip_suffix(')')?;
        let capitals: Vec<char> = inside.chars().filter(char::is_ascii_uppercase).collect();
        let defined = |c: char| {
            w.windows(2).any(|p| {
                p[0].core == c.to_string().as_str()
                    && matches!(p[1].lower.as_str(), "is" | "=" | "denotes" | "represents")
            })
        };
        (!capitals.is_empty() && !capitals.iter().all(|&c| defined(c))).then(|| quoted(raw))
    })
}

/// A general claim with no word tying it to the paper: "Recommendations should help a customer
/// ...", "RNNs are capable of encoding ...", "a technique of central importance", "many neural
/// building blocks can be integrated". Round 14: 5 facts, all failed in both panels; two facts
/// of earlier rounds that it hits passed ("The recommendation system should be responsive
/// ..."), so it demotes.
fn unanchored_claim(s: &str) -> Option<String> {
    const PHRASES: &[&str] = &[
        " should ",
        " are capable of ",
        " is capable of ",
        " of central importance",
        " can be integrated",
        " can be intergrated",
        " learning will happen",
    ];
    let w = words(s);
    if anchored_words(&w) {
        return None;
    }
    let lower = format!(" {} ", s.to_lowercase());
    PHRASES
        .iter()
        .find(|p| {
            lower.contains(*p) && !(p.trim() == "should" && lower.contains("should be possible"))
        })
        .map(|p| format!("{} with no tie to the paper", quoted(p.trim())))
}

/// "Precisely, each current word is used as ...", "More precisely, ...": the sentence restates
/// the previous one, whose subject it leaves out.
fn restatement_opener(s: &str) -> Option<String> {
    let lower = s.trim_start().to_lowercase();
    [
        "precisely,",
        "more precisely,",
        "more specifically,",
        "specifically,",
    ]
    .iter()
    .find(|o| lower.starts_with(*o))
    // Lowercasing can change byte lengths elsewhere, never of these ASCII openers' matches.
    .map(|o| quoted(s.trim_start().get(..o.len()).unwrap_or(o)))
}

/// "The last row shows the average performance ...": a place in a table the reader cannot see.
fn table_position(s: &str) -> Option<String> {
    let w = words(s);
    w.windows(3).find_map(|t| {
        let place = matches!(
            t[1].lower.as_str(),
            "first" | "last" | "second" | "third" | "top" | "bottom" | "leftmost" | "rightmost"
        );
        let cell = matches!(
            t[2].core.to_lowercase().as_str(),
            "row" | "rows" | "column" | "columns"
        );
        (t[0].lower == "the" && place && cell)
            .then(|| quoted(&format!("{} {} {}", t[0].raw, t[1].raw, t[2].core)))
    })
}

/// Symbols whose subscript or accent the text layer flattened: "Cˆ", "pˆ", "x˜j", "Σ∗k" (a hat,
/// tilde, bar or star in a token of at most three letters), "Vw2v", "Vrnn" (a consonant capital and a vowel-less
/// subscript), or a sentence that opens on one ("CRi express
/// ..."; `undefined_symbol` skips the first word, which is capitalised anyway).
fn subscripted_symbol(s: &str) -> Option<String> {
    let w = words(s);
    // A short token: "Guimara˜es" is a name whose "ã" the text layer split.
    let accented = w.iter().find(|x| {
        x.core.contains(['ˆ', '˜', '¯', '∗'])
            && x.core.chars().filter(|c| c.is_alphanumeric()).count() <= 3
    });
    if let Some(x) = accented {
        return Some(quoted(x.core));
    }
    let vowel_less = |t: &str| {
        let c: Vec<char> = t.chars().collect();
        (3..=5).contains(&c.len())
            && c[0].is_ascii_uppercase()
            && c[1..]
                .iter()
                .all(|x| x.is_ascii_lowercase() || x.is_ascii_digit())
            && !c.iter().any(|x| "AEIOUYaeiouy".contains(*x))
            && c[1..].iter().filter(|x| x.is_ascii_lowercase()).count() >= 2
    };
    let opener = w.first().is_some_and(|x| {
        let c: Vec<char> = x.core.chars().collect();
        matches!(c.as_slice(), [a, b, d] if a.is_ascii_uppercase() && b.is_ascii_uppercase()
            && d.is_ascii_lowercase() && *d != 's')
    });
    if opener {
        return Some(quoted(w[0].core));
    }
    // "hT", "xN": a lowercase letter with a capital subscript the text layer flattened (round 16:
    // "The output at the last moment hT can be regarded as ...").
    let letter_subscript = |t: &str| {
        let c: Vec<char> = t.chars().collect();
        matches!(c.as_slice(), [a, b] if a.is_ascii_lowercase() && b.is_ascii_uppercase())
    };
    w.iter()
        .find(|x| vowel_less(x.core) || letter_subscript(x.core))
        .map(|x| quoted(x.core))
}

/// "... the authors proposed a general Bayesian deep learning framework [161] ...": a source
/// sentence that itself says "the authors" speaks of a cited work's authors (a survey's usual
/// voice); its fact would credit them to the paper. Not when the sentence also speaks of this
/// paper ("we", "our", "this paper"), whose own third-person voice it may be.
pub fn cited_authors(source: &str) -> Option<String> {
    let w = words(source);
    let at = w
        .windows(2)
        .position(|p| p[0].lower == "the" && p[1].lower == "authors")?;
    let own = w
        .iter()
        .any(|x| matches!(x.lower.as_str(), "we" | "our" | "us"))
        || w.windows(2).any(|p| {
            matches!(p[0].lower.as_str(), "this" | "present")
                && matches!(p[1].lower.as_str(), "paper" | "work" | "article" | "study")
        })
        || w.get(at + 2).is_some_and(|x| x.lower == "of");
    (!own).then(|| "\"the authors\" in the source are a cited work's authors".to_string())
}

/// A word of the text: its core (punctuation stripped at both ends) and what follows it.
struct Word<'a> {
    raw: &'a str,
    core: &'a str,
    lower: String,
    tail: &'a str,
}

fn words(s: &str) -> Vec<Word<'_>> {
    s.split_whitespace()
        .map(|raw| {
            let (_, core, tail) = split_word(raw);
            Word {
                raw,
                core,
                lower: core.to_lowercase(),
                tail,
            }
        })
        .collect()
}

/// The first of `phrases` that the lowercased text contains.
fn first_phrase<'a>(lower: &str, phrases: &[&'a str]) -> Option<&'a str> {
    phrases.iter().copied().find(|p| lower.contains(p))
}

/// The first of `phrases` that the lowercased text opens with, as whole words.
fn opening_phrase<'a>(lower: &str, phrases: &[&'a str]) -> Option<&'a str> {
    phrases
        .iter()
        .copied()
        .find(|p| lower.starts_with(p) && lower[p.len()..].starts_with([' ', ',']))
}

fn quoted(s: &str) -> String {
    format!("\"{s}\"")
}

fn is_capitalised(w: &str) -> bool {
    w.chars().next().is_some_and(char::is_uppercase)
}

fn is_number(core: &str) -> bool {
    let t = core.trim_start_matches(['±', '+', '-', '−', '~', '≈']);
    !t.is_empty()
        && t.chars().any(|c| c.is_ascii_digit())
        && t.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | ',' | '%' | 'x' | '×'))
}

fn is_year(core: &str) -> bool {
    let digits: String = core.chars().take_while(char::is_ascii_digit).collect();
    digits.len() == 4
        && (digits.starts_with("19") || digits.starts_with("20"))
        && core[4..].chars().all(|c| c.is_ascii_lowercase())
        && core.len() <= 5
}

/// Funding and thanks. "Thanks to X" (causal) and "supported by experiments" are kept.
pub fn acknowledgement(s: &str) -> Option<String> {
    let w = words(s);
    let lower = s.to_lowercase();
    for (i, x) in w.iter().enumerate() {
        let next = w.get(i + 1).map(|n| n.lower.as_str()).unwrap_or("");
        match x.lower.as_str() {
            "thank" | "thanked" | "thankful" | "grateful" | "gratitude" | "funded" | "funding"
            | "fellowship" | "scholarship" | "acknowledgements" | "acknowledgments" => {
                return Some(quoted(x.core))
            }
            "thanks" if next != "to" => return Some(quoted(x.core)),
            // "Grant" capitalised is also a surname ("Grant et al."): only with a number.
            "grant" | "grants"
                if x.core.starts_with('g')
                    || next.chars().any(|c| c.is_ascii_digit())
                    || matches!(next, "no" | "number" | "nos") =>
            {
                return Some(quoted(x.core))
            }
            _ => {}
        }
        if x.lower.starts_with("acknowledg")
            && [
                "support",
                "funding",
                "help",
                "assistance",
                "resources",
                "grant",
            ]
            .iter()
            .any(|k| lower.contains(k))
        {
            return Some(quoted(x.core));
        }
    }
    for p in [
        "anonymous reviewers",
        "helpful comments",
        "insightful comments",
        "valuable comments",
        "constructive comments",
        "helpful discussions",
        "fruitful discussions",
        "useful discussions",
        "valuable feedback",
        "helpful feedback",
        "financial support",
        "financially supported",
    ] {
        if lower.contains(p) {
            return Some(quoted(p));
        }
    }
    // "This work was supported (in part) by NSF ...": a funder, not evidence.
    const FUNDERS: &[&str] = &[
        "grant",
        "foundation",
        "council",
        "agency",
        "program",
        "programme",
        "fund",
        "ministry",
        "award",
        "commission",
        "contract",
        "nsf",
        "darpa",
        "nih",
        "erc",
    ];
    const SUBJECTS: &[&str] = &[
        "work", "research", "project", "author", "authors", "we", "i", "study", "paper", "he",
        "she",
    ];
    for (i, x) in w.iter().enumerate() {
        if !matches!(x.lower.as_str(), "supported" | "sponsored" | "financed") {
            continue;
        }
        let by = w[i + 1..]
            .iter()
            .take(3)
            .position(|n| n.lower == "by")
            .map(|p| i + 1 + p);
        let Some(by) = by else { continue };
        let after = &w[by + 1..w.len().min(by + 7)];
        let funder = after.iter().any(|n| FUNDERS.contains(&n.lower.as_str()));
        let named = after.iter().take(3).any(|n| is_capitalised(n.core));
        let subject = w[i.saturating_sub(5)..i]
            .iter()
            .any(|n| SUBJECTS.contains(&n.lower.as_str()));
        if funder || (named && subject) {
            return Some(quoted(&format!("{} by", x.core)));
        }
    }
    None
}

/// A unit under an acknowledgements or funding heading.
pub fn acknowledgement_section(section: &str) -> Option<String> {
    let l = section.to_lowercase();
    (l.contains("acknowledg") || l.contains("funding"))
        .then(|| format!("in section {}", quoted(section)))
}

/// E-mail addresses, URLs, code availability, licences, author and affiliation lines.
pub fn front_matter(s: &str) -> Option<String> {
    let lower = s.to_lowercase();
    let w = words(s);
    if let Some(x) = w.iter().find(|x| {
        x.raw
            .split_once('@')
            .is_some_and(|(a, b)| !a.is_empty() && b.contains('.'))
    }) {
        return Some(format!("e-mail address {}", quoted(x.raw)));
    }
    if let Some(m) = first_phrase(&lower, &["open-sourced", "added as an author"]) {
        return Some(format!("code or authorship note ({})", quoted(m)));
    }
    if let Some(m) = first_phrase(
        &lower,
        &[
            "http", "www.", "github", "gitlab", ".com/", ".org/", ".io/", ".edu",
        ],
    ) {
        return Some(format!("URL ({})", quoted(m)));
    }
    let code = w.iter().any(|x| {
        matches!(
            x.lower.as_str(),
            // Not "implementation": "wrote a GPU implementation ..., which they make available"
            // is about the implementation.
            "code" | "codes" | "software" | "repository"
        )
    });
    let released = w.iter().any(|x| {
        x.lower.starts_with("available")
            || x.lower.starts_with("release")
            || x.lower == "open-source"
            || x.lower == "publicly"
    });
    if code && released {
        return Some("code availability".into());
    }
    if let Some(m) = first_phrase(
        &lower,
        &[
            "license",
            "licence",
            "licensed",
            "copyright",
            "©",
            "all rights reserved",
            "creative commons",
            "permission to make",
        ],
    ) {
        return Some(format!("licence or copyright ({})", quoted(m)));
    }
    if let Some(m) = first_phrase(
        &lower,
        &[
            "corresponding author",
            "work done while",
            "work performed while",
            "work was done while",
            "during an internship",
            "published as a conference paper",
            "under review",
            "camera-ready",
            "index terms",
            "keywords:",
        ],
    ) {
        return Some(format!("author or affiliation line ({})", quoted(m)));
    }
    const AFFILIATIONS: &[&str] = &[
        "university",
        "universität",
        "université",
        "universidad",
        "institute",
        "department",
        "dept",
        "laboratory",
        "laboratories",
        "labs",
        "school",
        "college",
        "inc",
        "corporation",
        "ltd",
        "gmbh",
    ];
    if let Some(x) = w.iter().find(|x| AFFILIATIONS.contains(&x.lower.as_str())) {
        if title_like(&w) && !has_verb(&w) {
            return Some(format!("affiliation line ({})", quoted(x.core)));
        }
        // "Hsu and Ye Wang are with the department of Computer Science, ...": the IEEE footnote.
        // An affiliation with an e-mail note ("..., SG, 117417, e-mail.").
        if let Some(m) = first_phrase(&lower, &[" are with the ", " is with the ", "e-mail"]) {
            return Some(format!("affiliation line ({})", quoted(m.trim())));
        }
    }
    None
}

/// Past-tense verbs of an author-contribution footnote ("Noam proposed ...").
const CONTRIBUTION_VERBS: &[&str] = &[
    "proposed",
    "designed",
    "implemented",
    "developed",
    "wrote",
    "ran",
    "conducted",
    "contributed",
    "initiated",
    "led",
    "built",
    "spent",
    "performed",
    "created",
    "worked",
    "tuned",
    "evaluated",
    "carried",
    "came",
    "did",
    "helped",
    "managed",
    "supervised",
    "crafted",
    "invented",
    "trained",
    "started",
    "experimented",
    "prepared",
    "collected",
    "annotated",
    "analyzed",
    "analysed",
];

/// Capitalised words that open sentences without being a person's name.
const NOT_NAMES: &[&str] = &[
    "The",
    "A",
    "An",
    "We",
    "Our",
    "This",
    "These",
    "Those",
    "That",
    "It",
    "Its",
    "They",
    "Their",
    "In",
    "On",
    "For",
    "To",
    "As",
    "At",
    "By",
    "With",
    "From",
    "Each",
    "Every",
    "All",
    "Both",
    "Some",
    "Many",
    "Most",
    "Such",
    "Here",
    "There",
    "Then",
    "Thus",
    "Hence",
    "Finally",
    "First",
    "Second",
    "Previous",
    "Prior",
    "Recent",
    "Later",
    "Earlier",
    "Researchers",
    "Authors",
    "Others",
    "Several",
    "One",
    "Two",
    "No",
    "Later",
    "Previously",
    "Recently",
];

fn name_like(x: &Word<'_>) -> bool {
    x.core.len() >= 2
        && x.core.chars().all(char::is_alphabetic)
        && is_capitalised(x.core)
        && x.core.chars().skip(1).all(char::is_lowercase)
        && !NOT_NAMES.contains(&x.core)
}

/// "Jakob proposed ...", "Ashish, with Illia, designed ...", "Lukasz and Aidan spent ...",
/// "Equal contribution", "Listing order is random".
pub fn author_contribution(s: &str) -> Option<String> {
    let lower = s.to_lowercase();
    if let Some(m) = first_phrase(
        &lower,
        &[
            "equal contribution",
            "contributed equally",
            "listing order is random",
            "author order",
        ],
    ) {
        return Some(quoted(m));
    }
    let w = words(s);
    // Names joined by "," / "and" / "with", then (after at most one adverb) a contribution verb.
    let mut i = 0;
    let mut names = Vec::new();
    while let Some(x) = w.get(i) {
        let joiner = matches!(x.lower.as_str(), "and" | "with") && !names.is_empty();
        if name_like(x) {
            names.push(x.core);
        } else if !joiner {
            break;
        }
        i += 1;
    }
    if names.is_empty() {
        return None;
    }
    let mut verb = w.get(i)?;
    if matches!(verb.lower.as_str(), "also" | "then" | "further" | "first") {
        verb = w.get(i + 1)?;
    }
    CONTRIBUTION_VERBS
        .contains(&verb.lower.as_str())
        .then(|| quoted(&format!("{} {}", names.join(", "), verb.core)))
}

const FUNCTION_WORDS: &[&str] = &[
    "of", "on", "for", "and", "in", "the", "a", "an", "to", "with", "from", "by", "at", "via", "&",
];

/// Mostly capitalised, like a title or a venue: at most one lowercase content word among three or
/// more.
fn title_like(w: &[Word<'_>]) -> bool {
    let content: Vec<&Word<'_>> = w
        .iter()
        .filter(|x| x.core.chars().any(char::is_alphabetic))
        .filter(|x| !FUNCTION_WORDS.contains(&x.lower.as_str()))
        .collect();
    let lowercase = content
        .iter()
        .filter(|x| !x.core.chars().any(char::is_uppercase))
        .count();
    content.len() >= 3 && lowercase <= 1
}

/// A finite verb, approximately: an auxiliary, a past form in "-ed", or a common verb of
/// scientific prose.
fn has_verb(w: &[Word<'_>]) -> bool {
    w.iter().any(|x| {
        VERBS.contains(&x.lower.as_str())
            || (x.lower.len() > 4
                && x.lower.ends_with("ed")
                && x.core.chars().all(|c| c.is_lowercase()))
    })
}

/// The verbs `has_verb` knows by name.
const VERBS: &[&str] = &[
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "has",
    "have",
    "had",
    "can",
    "could",
    "will",
    "would",
    "may",
    "might",
    "shall",
    "should",
    "must",
    "does",
    "do",
    "did",
    "achieves",
    "achieve",
    "uses",
    "use",
    "outperforms",
    "outperform",
    "shows",
    "show",
    "learns",
    "learn",
    "improves",
    "improve",
    "requires",
    "require",
    "reaches",
    "gives",
    "takes",
    "makes",
    "provides",
    "performs",
    "produces",
    "computes",
    "consists",
    "contains",
    "depends",
    "leads",
    "allows",
    "enables",
    "yields",
    "obtains",
    "reduces",
    "increases",
    "predicts",
    "maps",
    "treats",
    "applies",
    "trains",
    "generates",
    "represents",
    "captures",
    "includes",
    "extends",
    "combines",
    "works",
    "scales",
    "exhibits",
    "needs",
    "becomes",
    "remains",
    "describes",
    "proposes",
    "introduces",
    "presents",
    "demonstrates",
    "found",
    "made",
    "built",
    "ran",
    "took",
    "gave",
    "led",
    "wrote",
    "used",
];

/// As `has_verb`, without infinitives: "To learn user preferences," has no subject of its own.
fn has_finite_verb(w: &[Word<'_>]) -> bool {
    (0..w.len()).any(|i| (i == 0 || w[i - 1].lower != "to") && has_verb(&w[i..=i]))
}

/// Whether the text has one of the verbs the rules here know by name (auxiliaries and common
/// verbs of scientific prose), not counting "-ed" words and "be"/"been"/"being"/"used"/"made"/
/// "built"/"found"/"led", which are as often infinitives or participles ("representations used
/// by X"): the clause splitter of `offline` asks it of each part it would make a statement of.
pub fn named_verb(s: &str) -> bool {
    const NON_FINITE: &[&str] = &[
        "be", "been", "being", "used", "made", "built", "found", "led",
    ];
    words(s)
        .iter()
        .any(|x| VERBS.contains(&x.lower.as_str()) && !NON_FINITE.contains(&x.lower.as_str()))
}

/// Reference-list fragments and venue footers ("KDD Workshop on Web Mining for e-Commerce
/// (WebKDD), ACM Press, 2000"; "31st Conference on Neural Information Processing Systems (NIPS
/// 2017), Long Beach, CA, USA").
pub fn citation_fragment(s: &str) -> Option<String> {
    let lower = s.to_lowercase();
    if let Some(m) = first_phrase(
        &lower,
        &[
            "in proceedings",
            "proceedings of",
            "proc. ",
            "arxiv preprint",
            "arxiv:",
            "isbn",
            "doi:",
            "pp. ",
            "vol. ",
            "in advances in",
        ],
    ) {
        return Some(quoted(m.trim()));
    }
    let w = words(s);
    // What a removed citation leaves: "provided in.", "Inspired by, which ...", "Follow, the
    // authors use ...", "described in detail in (320M words)".
    const GOVERNING: &[&str] = &[
        "in",
        "by",
        "of",
        "from",
        "as",
        "than",
        "following",
        "follow",
        "like",
        "see",
        "with",
        "to",
    ];
    // A preposition may end a clause ("the contexts they occur in, has ..."); after a participle
    // ("provided in.", "Inspired by,"), at the start ("Follow,") or after "similar" it governed a
    // citation.
    if let Some((_, x)) = w.iter().enumerate().find(|(i, x)| {
        GOVERNING.contains(&x.lower.as_str())
            && x.raw.starts_with(x.core)
            && x.tail.starts_with([',', '.', ';', ')'])
            && (*i == 0
                || w[i - 1].lower.ends_with("ed")
                || matches!(w[i - 1].lower.as_str(), "similar" | "see" | "detail" | "al"))
    }) {
        return Some(format!(
            "{} governs nothing",
            quoted(&format!("{}{}", x.core, &x.tail[..1]))
        ));
    }
    if let Some(p) = w
        .windows(2)
        .find(|p| p[0].lower == "in" && p[0].raw == p[0].core && p[1].raw.starts_with('('))
    {
        return Some(format!(
            "{} governs nothing",
            quoted(&format!("in {}", p[1].raw))
        ));
    }
    // An author list: several initials ("Mikolov, T., Chen, K.").
    let initials = w
        .iter()
        .filter(|x| {
            x.core.chars().count() == 1 && is_capitalised(x.core) && x.tail.starts_with('.')
        })
        .count();
    if initials >= 2 && s.contains(',') {
        return Some("author list with initials".into());
    }
    if has_verb(&w) {
        return None;
    }
    const VENUES: &[&str] = &[
        "conference",
        "workshop",
        "symposium",
        "journal",
        "transactions",
        "proceedings",
        "press",
        "acm",
        "ieee",
        "springer",
        "elsevier",
        "association",
        "meeting",
        "nips",
        "neurips",
        "icml",
        "iclr",
        "acl",
        "emnlp",
        "naacl",
        "eacl",
        "coling",
        "kdd",
        "www",
        "sigir",
        "cvpr",
        "iccv",
        "eccv",
        "aaai",
        "ijcai",
        "wsdm",
        "recsys",
        "cikm",
        "interspeech",
        "icassp",
        "lrec",
    ];
    let year = w.iter().find(|x| is_year(x.core));
    let pages = w.iter().find(|x| {
        x.core
            .split_once(['-', '–'])
            .is_some_and(|(a, b)| is_number(a) && is_number(b))
    });
    let venue = w.iter().find(|x| VENUES.contains(&x.lower.as_str()));
    let et_al = lower.contains("et al");
    let dated = year.or(pages);
    match (dated, venue) {
        (Some(d), Some(v)) => Some(format!("{} … {} without a verb", quoted(v.core), d.core)),
        (Some(d), None) if et_al || title_like(&w) => Some(format!(
            "title-like text with {} and no verb",
            quoted(d.core)
        )),
        _ => None,
    }
}

/// Axis ticks and table cells (runs of numbers), caption labels, text glued by the layout, a
/// heading fused into the sentence.
pub fn figure_debris(s: &str) -> Option<String> {
    const ABBREVIATIONS: &[&str] = &[
        "etc", "vs", "approx", "resp", "cf", "viz", "al", "eq", "fig",
    ];
    let w = words(s);
    // "R words from the future ...": the sentence starts inside a formula.
    if let Some(x) = w.first().filter(|x| {
        x.core.chars().count() == 1
            && x.core.chars().all(char::is_uppercase)
            && !matches!(x.core, "A" | "I")
    }) {
        return Some(format!("opens with a lone symbol {}", quoted(x.core)));
    }
    // Ticks and cells stand bare; "512, 1024 and 2048" is a list in a sentence.
    let numeric: Vec<bool> = w
        .iter()
        .map(|x| is_number(x.core) && matches!(x.tail, "" | "%"))
        .collect();
    let mut run = 0;
    for (i, &n) in numeric.iter().enumerate() {
        run = if n { run + 1 } else { 0 };
        if run >= 3 {
            let cells: Vec<&str> = w[i + 1 - run..=i].iter().map(|x| x.raw).collect();
            return Some(format!("run of numbers {}", quoted(&cells.join(" "))));
        }
    }
    let n_num = numeric.iter().filter(|&&n| n).count();
    if n_num >= 5 && n_num * 5 >= w.len() * 2 {
        return Some(format!("{n_num} of {} words are numbers", w.len()));
    }
    for (i, x) in w.iter().enumerate() {
        let label = matches!(x.lower.as_str(), "figure" | "fig" | "table" | "tab");
        if label {
            if let Some(n) = w.get(i + 1) {
                let numbered = n.core.chars().next().is_some_and(|c| c.is_ascii_digit());
                if numbered && (n.tail.starts_with(':') || (i == 0 && n.tail.starts_with('.'))) {
                    return Some(format!(
                        "caption label {}",
                        quoted(&format!("{} {}", x.raw, n.raw))
                    ));
                }
            }
        }
    }
    // "Colors indicate which components share parameters. ⟨eos⟩ is the end of sentence token.":
    // a caption whose sentences the segmenter could not split. A fact is one sentence.
    for pair in w.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let ends = a.tail.starts_with('.')
            && a.core.chars().count() >= 3
            && a.core.chars().all(char::is_lowercase)
            && !ABBREVIATIONS.contains(&a.lower.as_str());
        if ends && !b.raw.starts_with(char::is_lowercase) {
            return Some(format!(
                "two sentences run together {}",
                quoted(&format!("{} {}", a.raw, b.raw))
            ));
        }
    }
    // "homepage.Using", "feature,customers": words glued across a line or column break.
    let chars: Vec<char> = s.chars().collect();
    for i in 2..chars.len().saturating_sub(2) {
        let (a, b, p, c, d) = (
            chars[i - 2],
            chars[i - 1],
            chars[i],
            chars[i + 1],
            chars[i + 2],
        );
        let glued = (p == '.'
            && a.is_lowercase()
            && b.is_lowercase()
            && c.is_uppercase()
            && d.is_lowercase())
            || (matches!(p, ',' | ';') && b.is_alphabetic() && c.is_alphabetic());
        if glued {
            let from = i.saturating_sub(8);
            let to = (i + 9).min(chars.len());
            return Some(format!(
                "glued text {}",
                quoted(chars[from..to].iter().collect::<String>().trim())
            ));
        }
    }
    // Glyphs a text layer yields for ligatures it could not map ("o›en" for "often"), and
    // list bullets: the text is not what the page shows.
    if let Some(c) = s.chars().find(|&c| {
        matches!(c, '›' | '‹' | '\u{FFFD}' | '•' | '▪' | '■' | '□' | '∎')
            || ('\u{E000}'..='\u{F8FF}').contains(&c)
    }) {
        return Some(format!("glyph {}", quoted(&c.to_string())));
    }
    // "a−ention", "„e former": a minus sign or low quote standing for a ligature ("tt", "Th").
    if let Some(x) = w.iter().find(|x| {
        let c: Vec<char> = x.raw.chars().collect();
        c.first() == Some(&'„')
            || c.windows(3)
                .any(|t| t[1] == '−' && t[0].is_alphabetic() && t[2].is_alphabetic())
    }) {
        return Some(format!("ligature glyph in {}", quoted(x.raw)));
    }
    // "alternatives to tradithan an equivalent network ... tional neuron models": a word broken
    // at a line end with other text (a caption) in between; its tail stands alone.
    const WORD_TAILS: &[&str] = &[
        "tional", "tionally", "tion", "tions", "ment", "ments", "ness", "ization", "izations",
        "ities", "ically", "ences", "ances", "ibility",
    ];
    if let Some(x) = w
        .iter()
        .find(|x| x.raw == x.core && WORD_TAILS.contains(&x.core))
    {
        return Some(format!("word broken by a line end {}", quoted(x.raw)));
    }
    // "regularities1,", "quality is low.1 Cluster": a footnote or citation number fused to a
    // word. Long lowercase words only: "conv5", "layer4" and "word2vec" are names.
    for x in &w {
        let fused_word = footnote_stem(x.core).is_some();
        // "low.1": the number after a full stop, before the next sentence.
        let after_stop = x.tail.is_empty()
            && x.core.split_once('.').is_some_and(|(a, b)| {
                a.chars().count() >= 2
                    && a.chars().all(|c| c.is_ascii_lowercase())
                    && !ABBREVIATIONS.contains(&a)
                    && (1..=2).contains(&b.len())
                    && b.chars().all(|c| c.is_ascii_digit())
            });
        if fused_word || after_stop {
            return Some(format!("footnote number fused {}", quoted(x.raw)));
        }
    }
    // "SUBJ Subjectivity data set where ...", "RNTN Recursive Neural Tensor Network with ...": a
    // glossary or table entry, an acronym followed by its expansion.
    if let (Some(a), Some(b)) = (w.first(), w.get(1)) {
        let acronym = a.core.chars().filter(|c| c.is_uppercase()).count() >= 2
            && a.core
                .chars()
                .all(|c| c.is_uppercase() || c.is_ascii_digit() || c == '-');
        let expansion = is_capitalised(b.core)
            && b.core.chars().skip(1).all(char::is_lowercase)
            && a.core.chars().next() == b.core.chars().next();
        if acronym && expansion && a.tail.is_empty() {
            return Some(format!(
                "glossary entry {}",
                quoted(&format!("{} {}", a.raw, b.raw))
            ));
        }
    }
    // "... between the two vectors: 4.": an equation number left at the end.
    if let [.., a, b] = w.as_slice() {
        if a.tail.starts_with(':') && is_number(b.core) && b.core.len() <= 2 {
            return Some(format!(
                "equation number {}",
                quoted(&format!("{} {}", a.raw, b.raw))
            ));
        }
    }
    if let Some(e) = unbalanced_bracket(s) {
        return Some(e);
    }
    // "... machine learning in general Granted, deep learning may ...": two sentences run
    // together, the full stop lost between a lowercase word and a capitalised sentence adverb.
    const SENTENCE_ADVERBS: &[&str] = &[
        "Granted",
        "However",
        "Moreover",
        "Furthermore",
        "Therefore",
        "Thus",
        "Hence",
        "Additionally",
        "Nevertheless",
        "Indeed",
        "Finally",
        "Specifically",
    ];
    if let Some(p) = w.windows(2).find(|p| {
        p[0].tail.is_empty()
            && p[0].raw == p[0].core
            && p[0].core.chars().all(char::is_lowercase)
            && SENTENCE_ADVERBS.contains(&p[1].core)
            && p[1].tail.starts_with(',')
    }) {
        return Some(format!(
            "two sentences run together at {}",
            quoted(&format!("{} {}", p[0].core, p[1].core))
        ));
    }
    // "deeper syn- source is text boxes ...": a word hyphenated at a line end, its rest lost and
    // the other column's text after it. "pre- and post-training", "first- to third-order" are
    // words shared by a pair.
    if let Some(p) = w.windows(2).find(|p| {
        let stem = p[0].raw.strip_suffix('-').unwrap_or("");
        stem.chars().count() >= 3
            && stem.chars().all(char::is_lowercase)
            && p[1].raw.starts_with(char::is_lowercase)
            && !matches!(
                p[1].lower.as_str(),
                "and" | "or" | "to" | "vs" | "versus" | "as" | "nor"
            )
    }) {
        return Some(format!(
            "a hyphenated line end joined to other text {}",
            quoted(&format!("{} {}", p[0].raw, p[1].raw))
        ));
    }
    // "... capacity of each GPU 5.": a footnote number after a name at the end.
    if let [.., a, b] = w.as_slice() {
        let digit = b.core.chars().count() == 1 && b.core.chars().all(|c| c.is_ascii_digit());
        // "Table 5.", "Section 3.", "Task 2.": a label and its number.
        let name = a.core.chars().next().is_some_and(char::is_uppercase)
            && a.tail.is_empty()
            && !LABEL_NOUNS.contains(&a.lower.as_str())
            && !matches!(
                a.lower.as_str(),
                "eq" | "equation" | "algorithm" | "stage" | "round"
            );
        if digit && name && b.raw.ends_with('.') {
            return Some(format!(
                "a footnote number at the end {}",
                quoted(&format!("{} {}", a.raw, b.raw))
            ));
        }
    }
    // "... driven by a man 5 4.9 There is no man ...": table cells run together.
    if let Some(p) = w.windows(3).find(|p| {
        is_number(p[0].core)
            && is_number(p[1].core)
            && p[0].raw == p[0].core
            && p[1].raw == p[1].core
            && is_capitalised(p[2].core)
    }) {
        return Some(format!(
            "table cells run together {}",
            quoted(&format!("{} {} {}", p[0].raw, p[1].raw, p[2].raw))
        ));
    }
    // "... directed by John M.": a name cut at its initial, the sentence split after it.
    if let [.., a, b] = w.as_slice() {
        let initial = b.core.chars().count() == 1
            && b.core.chars().all(|c| c.is_ascii_uppercase())
            && b.raw.ends_with('.');
        if initial && is_capitalised(a.core) && a.tail.is_empty() {
            return Some(format!(
                "cut at an initial {}",
                quoted(&format!("{} {}", a.raw, b.raw))
            ));
        }
    }
    if let Some(k) = run_in_heading(&w) {
        let heading: Vec<&str> = w[..k].iter().map(|x| x.raw).collect();
        return Some(format!(
            "run-in heading {} fused into the sentence",
            quoted(&heading.join(" "))
        ));
    }
    if let Some(i) = fused_heading(&w) {
        return Some(format!(
            "heading fused into the sentence {}",
            quoted(&format!("{} {}", w[i - 1].raw, w[i].raw))
        ));
    }
    None
}

/// "(OpenAI,." or "... identical results).": a bracket opened and never closed, or closed and
/// never opened, is a citation or a parenthesis cut by extraction. Enumerators ("1)", "(ii)",
/// "a)") close without opening and are not counted.
fn unbalanced_bracket(s: &str) -> Option<String> {
    let mut open = 0i32;
    let mut unopened = false;
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '(' | '[' => open += 1,
            ')' | ']' if open > 0 => open -= 1,
            ')' | ']' => {
                // "1)", "ii)", "a)": the word before the bracket is a short enumerator.
                let word: String = chars[..i]
                    .iter()
                    .rev()
                    .take_while(|c| c.is_alphanumeric())
                    .collect();
                let enumerator = !word.is_empty()
                    && word.chars().count() <= 3
                    && (word.chars().all(|c| c.is_ascii_digit())
                        || word.chars().all(|c| c.is_ascii_lowercase()));
                let starts_word =
                    i < word.len() + 1 || !chars[i - word.chars().count() - 1].is_alphanumeric();
                if !(enumerator && starts_word) {
                    unopened = true;
                }
            }
            _ => {}
        }
    }
    // A closing curly quote with none opened: the quotation was cut ("... comedies.” is positive").
    if s.matches('\u{201D}').count() > s.matches('\u{201C}').count() {
        return Some("a quotation closed and never opened".to_string());
    }
    if open > 0 {
        Some("a bracket opened and never closed".to_string())
    } else if unopened {
        Some("a bracket closed and never opened".to_string())
    } else {
        None
    }
}

/// Last words of the run-in paragraph headings of experimental sections.
const RUN_IN_HEADS: &[&str] = &[
    "experiments",
    "details",
    "results",
    "settings",
    "setup",
    "datasets",
    "baselines",
    "metrics",
    "analysis",
    "study",
    "studies",
    "evaluation",
    "comparison",
    "comparisons",
];

/// "Ablation experiments CIFAR-10 is a small dataset ... several ablation experiments ...",
/// "Search-Based Methods Search- or content-based methods ...": a run-in paragraph heading of
/// two or three words, no punctuation after it, a capitalised word next, and the heading's first
/// word named again in the sentence it heads. The heading's length.
fn run_in_heading(w: &[Word<'_>]) -> Option<usize> {
    for k in 2..=3 {
        let (Some(last), Some(next)) = (w.get(k - 1), w.get(k)) else {
            return None;
        };
        let heading = &w[..k];
        // Content words only: "Compared to the", "Generation via the" open sentences.
        let plain = heading.iter().all(|x| {
            x.raw == x.core
                && x.core.chars().all(|c| c.is_alphabetic() || c == '-')
                && !PHRASE_OPENERS.contains(&x.lower.as_str())
                && !matches!(x.lower.as_str(), "and" | "or" | "via" | "of")
        });
        // "Success rate (SR) represents ...": a term being introduced, not a heading.
        if !plain || !last.tail.is_empty() || has_verb(heading) || next.raw.starts_with('(') {
            continue;
        }
        // A heading is not all capitals ("BERT GLUE"): one word in it reads as a word.
        let wordlike = heading
            .iter()
            .any(|x| x.core.chars().skip(1).any(char::is_lowercase));
        // "Ablation experiments CIFAR-10 is ...", "Implementation details PyTorch is ...": a
        // heading noun of a paper's run-in paragraphs, then a capitalised word and a verb.
        let heading_noun = RUN_IN_HEADS.contains(&last.lower.as_str())
            && last.core.chars().all(char::is_lowercase)
            && w.get(k + 1)
                .is_some_and(|v| VERBS.contains(&v.lower.as_str()));
        if is_capitalised(heading[0].core) && is_capitalised(next.core) && heading_noun {
            return Some(k);
        }
        let first = stem5(&heading[0].lower);
        if is_capitalised(heading[0].core)
            && is_capitalised(next.core)
            && wordlike
            && first.chars().count() >= 4
            && w[k..].iter().any(|x| x.lower.starts_with(&first))
        {
            return Some(k);
        }
    }
    None
}

/// A word's first five characters: enough to match "Ablation" with "ablations", "Search-Based"
/// with "Search-".
fn stem5(s: &str) -> String {
    s.chars().take(5).collect()
}

/// Byte offset in `s` where the sentence proper starts after a run-in paragraph heading
/// ("Search-Based Methods Search- or content-based methods ..." → "Search- or content-based
/// ..."), if the words after the heading open a sentence on their own: a function word or a
/// name ("In order to ...", "CIFAR-10 is ...") or the heading's first word again. A term being
/// introduced ("Convolution Neural Networks are ...") matches `run_in_heading` but leaves "Networks
/// are ...", which is not a sentence, so it is not cut.
pub fn run_in_heading_offset(s: &str) -> Option<usize> {
    const OPENS: &[&str] = &[
        "the", "a", "an", "in", "for", "to", "on", "by", "with", "as", "we", "our", "this",
        "these", "given", "since", "because", "when", "while", "unlike", "using", "inspired",
    ];
    let w = words(s);
    let k = run_in_heading(&w)?;
    let next = w.get(k)?;
    let repeats = stem5(&next.lower) == stem5(&w[0].lower);
    let name = next.core.chars().any(|c| c.is_ascii_digit())
        || next.core.chars().filter(char::is_ascii_uppercase).count() >= 2;
    let heading_noun = RUN_IN_HEADS.contains(&w[k - 1].lower.as_str());
    (OPENS.contains(&next.lower.as_str()) || repeats || (name && heading_noun))
        .then(|| next.raw.as_ptr() as usize - s.as_ptr() as usize)
}

/// Byte offset in `s` where the sentence proper starts after a heading or label fused into it
/// ("Cluster Models To find customers ..." → "To find customers ..."), if there is one.
pub fn fused_heading_offset(s: &str) -> Option<usize> {
    let w = words(s);
    let i = fused_heading(&w)?;
    // `raw` is a slice of `s`.
    Some(w[i].raw.as_ptr() as usize - s.as_ptr() as usize)
}

/// "Cluster Models To find customers ...": a capitalised function word inside the sentence, not
/// after punctuation, is where a heading or label ran into the text. The index of that word.
fn fused_heading(w: &[Word<'_>]) -> Option<usize> {
    const OPENERS: &[&str] = &[
        "The", "To", "We", "Our", "In", "This", "These", "For", "It", "Its", "Using", "Here",
        "Although", "While", "Since", "Because", "Unlike", "When",
    ];
    let mut in_quotes = false;
    for (i, x) in w.iter().enumerate() {
        if x.raw.starts_with(['"', '“']) {
            in_quotes = true;
        }
        // A lowercase word must follow: "The Pile" or "In Context" is a name, not a heading.
        let lower_next = w
            .get(i + 1)
            .is_some_and(|n| n.core.chars().next().is_some_and(char::is_lowercase));
        // "Traditional Collaborative Filtering A traditional ...": an article after a
        // capitalised heading word.
        let article = matches!(x.core, "A" | "An")
            && i > 0
            && is_capitalised(w[i - 1].core)
            && w[i - 1].core.chars().skip(1).all(char::is_lowercase)
            && w[i - 1].core.chars().count() >= 4
            && !LABEL_NOUNS.contains(&w[i - 1].lower.as_str());
        // "IMDB The IMDB dataset ...": the heading repeated right after the opener.
        let repeated = i > 0 && w.get(i + 1).is_some_and(|n| n.core == w[i - 1].core);
        if i > 0
            && !in_quotes
            && (lower_next || repeated)
            && (OPENERS.contains(&x.core) || article)
            && x.raw.starts_with(x.core)
        {
            let prev = &w[i - 1];
            let after_punct = prev.raw.ends_with(|c: char| !c.is_alphanumeric())
                || !prev.core.chars().any(char::is_alphanumeric);
            if !after_punct {
                return Some(i);
            }
        }
        if x.raw.ends_with(['"', '”']) || x.tail.contains(['"', '”']) {
            in_quotes = false;
        }
    }
    None
}

/// Definitions and instructions in the paper's own voice ("Let ...", "Suppose that you are
/// given ...", "Note that ..."), and any sentence that addresses the reader as "you".
pub fn authorial_directive(s: &str) -> Option<String> {
    const DIRECTIVES: &[&str] = &[
        "let", "let's", "suppose", "note", "notice", "see", "consider", "recall", "assume",
        "assuming", "define", "denote", "observe", "remember", "imagine", "refer", "cf",
    ];
    let w = words(s);
    let first = w.first()?;
    if DIRECTIVES.contains(&first.lower.as_str()) {
        return Some(format!("opens with {}", quoted(first.core)));
    }
    // The voice rewrite of "we denote/write/define ..." ("The authors denote X by x").
    if let (Some(a), Some(b)) = (w.first(), w.get(1)) {
        // An adverb may stand between ("The authors further denote ..."). Fact-rubric round 5:
        // the judges flag every "The authors define ..." as the paper's own definition, with or
        // without notation.
        let skip = usize::from(w.get(2).is_some_and(|x| {
            matches!(
                x.lower.as_str(),
                "further" | "also" | "first" | "then" | "here" | "formally" | "now" | "simply"
            )
        }));
        if let Some(c) = w.get(2 + skip) {
            if a.lower == "the"
                && b.lower == "authors"
                && matches!(
                    c.lower.as_str(),
                    "denote" | "write" | "let" | "define" | "call" | "term" | "refer"
                )
            {
                return Some(format!(
                    "definition {}",
                    quoted(&format!("the authors {}", c.core))
                ));
            }
        }
    }
    // Naming conventions: "The authors will refer to the former as ...", "is denoted as".
    let lower = s.to_lowercase();
    if let Some(m) = first_phrase(
        &lower,
        &[
            "will refer to",
            "is denoted as",
            "are denoted as",
            "is referred to as",
            "can be loosely defined as",
            "define that",
            "can be described as",
            "is defined as",
            "are defined as",
        ],
    ) {
        return Some(format!("naming convention ({})", quoted(m)));
    }
    // "... then the authors consider the positive impression's watch time to be mispredicted":
    // a definition by stipulation; "An example of a univalent feature is ...": an illustration.
    if let Some(at) = lower.find("the authors consider ") {
        if lower[at..].contains(" to be ") {
            return Some("definition (\"the authors consider ... to be\")".into());
        }
    }
    if lower.starts_with("an example of ") || lower.starts_with("examples of ") {
        return Some(format!("illustration ({})", quoted(&s[..s.len().min(13)])));
    }
    w.iter()
        .find(|x| matches!(x.lower.as_str(), "you" | "your" | "yourself"))
        .map(|x| format!("addresses the reader ({})", quoted(x.core)))
}

/// Nouns that name a symbol they are followed by ("size N", "dimensionality V", "rate α", "top
/// k"): the symbol is defined where it stands.
const SYMBOL_NOUNS: &[&str] = &[
    "size",
    "sizes",
    "dimension",
    "dimensionality",
    "number",
    "parameter",
    "hyperparameter",
    "constant",
    "coefficient",
    "factor",
    "threshold",
    "rate",
    "length",
    "width",
    "depth",
    "variable",
    "top",
    "order",
    "degree",
    "temperature",
    "weight",
    "margin",
    "budget",
    "matrix",
    "coefficients",
    "score",
    "statistic",
];

/// Words a letter may follow as a name ("Table A", "Appendix B", "Type I", "Model C").
const LABEL_NOUNS: &[&str] = &[
    "table",
    "figure",
    "fig",
    "section",
    "appendix",
    "type",
    "part",
    "phase",
    "step",
    "plan",
    "class",
    "group",
    "model",
    "setting",
    "option",
    "case",
    "version",
    "level",
    "task",
    "vitamin",
    "grade",
    "set",
    "team",
    "track",
    "category",
    "scenario",
    "condition",
    "experiment",
];

/// "N previous words are encoded", "the hidden layer maintains ... in s(t)", "turn D into a
/// prediction": a one-letter symbol (or a short function symbol such as "s(t)") that the fact
/// does not define carries meaning a reader of the fact alone cannot recover. Defined in place
/// ("size N", "where V is the vocabulary size", "N = 4", "p < 0.05") or a label ("Table A") is
/// fine.
pub fn undefined_symbol(s: &str) -> Option<String> {
    // "three operations on multisets: intersection (∩), union (∪), and difference (\)": the
    // paper defining its notation.
    let notation = s
        .split('(')
        .skip(1)
        .filter_map(|rest| rest.split_once(')'))
        .filter(|(inside, _)| {
            let inside = inside.trim();
            (1..=2).contains(&inside.chars().count()) && !inside.chars().any(char::is_alphanumeric)
        })
        .count();
    if notation >= 2 {
        return Some("notation defined in brackets".to_string());
    }
    let w = words(s);
    for (i, x) in w.iter().enumerate() {
        let prev = if i > 0 { w[i - 1].lower.as_str() } else { "" };
        let next = w.get(i + 1).map(|n| n.raw).unwrap_or("");
        let letter = x.core.chars().count() == 1
            && x.core.chars().all(char::is_alphabetic)
            // "I" counts: facts are in the third person, so a bare "I" is a symbol ("on I
            // training tasks"); "Table I", "Type I" are named below.
            && !matches!(x.core, "a" | "A");
        let raw = x.raw.trim_end_matches([',', '.', ';', ':']);
        let function = {
            // "s(t)", "dint(p)": a short name applied to an argument.
            let (name, arg) = raw.split_once('(').unwrap_or(("", ""));
            !name.is_empty()
                && name.chars().count() <= 4
                && name.chars().all(char::is_alphabetic)
                && arg.ends_with(')')
                && arg.len() <= 4
                && arg[..arg.len() - 1]
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == ',')
                && !arg[..arg.len() - 1].is_empty()
        };
        // "O(d)" is complexity notation, not a symbol of the paper.
        let symbol = letter
            || (function && !raw.starts_with("O("))
            || (i > 0 && short_symbol(x.core) && !surname(&w, i));
        if !symbol {
            continue;
        }
        // "(a)" list markers, "2 x 3" products, letters in quotes.
        let bracketed = letter && (x.raw.starts_with('(') || raw.ends_with(')'));
        // "t- SNE": a word hyphenated across a line.
        if letter && (x.raw.ends_with('-') || next.starts_with('-')) && x.raw.len() <= 3 {
            continue;
        }
        if bracketed || x.raw.starts_with(['"', '“', '\'']) {
            continue;
        }
        let numeric = |t: &str| t.chars().next().is_some_and(|c| c.is_ascii_digit());
        if x.lower == "x" && i > 0 && numeric(w[i - 1].core) {
            continue;
        }
        // "Spearman ρ", "F -score", "F (x; q)", "ρ values of 10−5".
        let named = i > 0 && is_capitalised(w[i - 1].core) && w[i - 1].core.chars().count() > 2;
        let defined = prev == "where"
            || named
            || next.starts_with(['-', '('])
            || matches!(next, "values" | "value")
            || SYMBOL_NOUNS.contains(&prev)
            || LABEL_NOUNS.contains(&prev)
            || x.raw.contains('=')
            || matches!(
                next,
                "=" | "<" | ">" | "≤" | "≥" | "≈" | "denotes" | "represents" | "stands"
            )
            || next.starts_with('=');
        if !defined {
            return Some(quoted(raw));
        }
    }
    None
}

/// Phrases of a field's background ("Several methods have been proposed", "has attracted
/// widespread attention", "in recent years").
const BACKGROUND_PHRASES: &[&str] = &[
    "have been proposed",
    "has been proposed",
    "have been widely used",
    "has been widely used",
    "has attracted",
    "have attracted",
    "has received",
    "have received",
    "has emerged",
    "have emerged",
    "is commonly used",
    "are commonly used",
    "recent studies",
    "recent advances",
    "recent advancements",
    "recent progress",
    "an integral part of",
    "has been revolutionizing",
    "has been revolutionising",
    "in recent years",
    "a handful of works",
    "several prior works",
    "remains an open",
    "remains a daunting",
    "plays an important role",
    "plays a crucial role",
    "has been recently introduced",
    "were previously applied",
    "key characteristic of",
    "is a key challenge",
    "numerous efforts",
    // Surveyed work (round 7): "Many different types of models were proposed", "Several
    // practical solutions were proposed", "A variety of approaches have been developed".
    "were proposed",
    "have been developed",
    "has been developed",
    "have been introduced",
    "have shown promise",
    "have shown promising",
    "have shown great",
    "have shown remarkable",
    "have shown impressive",
    "there are several",
    "there are numerous",
    "there are many",
    "have obtained great progress",
    "has made great progress",
    "have made great progress",
    "with the advent of",
    "has been used successfully",
    "have been used successfully",
    // Round 14: "... an annual competition called ILSVRC has been held", "... over the previous
    // best result" (another paper's result).
    "has been held",
    "have been held",
    "previous best result",
];

/// Openers of surveyed work ("Some works also study ...", "Traditionally, a simple strategy ...",
/// "More recently, several networks were proposed ...", "An alternative approach, ...", "A third
/// approach has been ...").
const BACKGROUND_OPENERS: &[&str] = &[
    "recently",
    "more recently",
    "previously",
    "traditionally",
    "some works",
    "many works",
    "other works",
    "an alternative approach",
    "a second approach",
    "a third approach",
    "another approach",
];

/// Whether a statement speaks of the paper's own work: "the authors", "the paper", "novel",
/// "we"/"our", "propose(s)", or "proposed" as the paper's own ("the proposed model", not "has been
/// proposed").
fn anchored_words(w: &[Word<'_>]) -> bool {
    w.iter().enumerate().any(|(i, x)| match x.lower.as_str() {
        "authors" | "paper" | "novel" | "we" | "our" | "propose" | "proposes" => true,
        // "were proposed", "were also proposed": others' work, not the paper's.
        "proposed" => !w[i.saturating_sub(2)..i].iter().any(|p| {
            matches!(
                p.lower.as_str(),
                "been" | "was" | "were" | "be" | "is" | "are"
            )
        }),
        _ => false,
    })
}

/// The field's background, not the paper's work: a background phrase or opener ("Recently,")
/// in a sentence with no word tying it to the paper ("the authors", "the paper", "proposed" as
/// the paper's own, "novel"). Such sentences come from introductions and related work; a
/// reviewer does not restate them as what the paper did.
pub fn background(s: &str) -> Option<String> {
    let w = words(s);
    if anchored_words(&w) {
        return None;
    }
    let lower: String = w
        .iter()
        .map(|x| x.lower.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    if let Some(p) = first_phrase(&lower, BACKGROUND_PHRASES) {
        return Some(format!("{} with no tie to the paper", quoted(p)));
    }
    // "Vulic and Moens learn bilingual vector spaces ...": cited authors as the subject.
    if let [a, and, b, verb, ..] = w.as_slice() {
        let name = |x: &Word<'_>| {
            // "Vulic´": an accent the extraction split from its letter.
            x.raw.trim_end_matches('´') == x.core
                && is_capitalised(x.core)
                && x.core
                    .chars()
                    .skip(1)
                    .all(|c| c.is_lowercase() || "´'’-".contains(c))
                && x.core.chars().count() >= 3
        };
        if name(a)
            && matches!(and.raw, "and" | "&")
            && name(b)
            && verb.raw == verb.core
            && verb.core.chars().all(|c| c.is_ascii_lowercase())
            && !NOT_NAMES.contains(&a.core)
        {
            return Some(format!(
                "cited authors {} as the subject",
                quoted(&format!("{} and {}", a.core, b.core))
            ));
        }
    }
    if let Some(p) = opening_phrase(&lower, BACKGROUND_OPENERS) {
        return Some(format!("opens with {} with no tie to the paper", quoted(p)));
    }
    None
}

/// A component the paper calls standard in so many words ("the usual learned linear
/// transformation and softmax"): boilerplate that fits any paper.
pub fn conventional(s: &str) -> Option<String> {
    const PHRASES: &[&str] = &[
        "the usual ",
        "as usual",
        "as is standard",
        "as is common",
        "as is customary",
        "standard practice",
        "common practice",
    ];
    first_phrase(&s.to_lowercase(), PHRASES).map(|p| format!("{} component", quoted(p.trim())))
}

/// Two-letter words and units that are not symbols.
const TWO_LETTER_WORDS: &[&str] = &[
    "of", "to", "in", "is", "it", "on", "at", "as", "by", "be", "or", "an", "we", "us", "no", "so",
    "up", "do", "go", "if", "me", "my", "he", "vs", "ie", "eg", "et", "al", "am", "ok", "ms", "kg",
    "km", "cm", "mm", "nm", "db", "hz", "id", "pp", "nd", "rd", "th", "st", "ii", "iv", "vi", "ix",
    "xi", "pc",
];

/// A subscripted symbol as the text layer flattens it: "ci" (c_i), "ht" (h_t), "Uc" (U_c),
/// "CRi" (C_{R_i}). Plurals of acronyms ("LMs") are words.
fn short_symbol(core: &str) -> bool {
    let c: Vec<char> = core.chars().collect();
    let two_letter_word = |t: &str| TWO_LETTER_WORDS.contains(&t.to_lowercase().as_str());
    match c.as_slice() {
        [a, b] if a.is_ascii_lowercase() && b.is_ascii_lowercase() => !two_letter_word(core),
        [a, b] if a.is_ascii_uppercase() && b.is_ascii_lowercase() => !two_letter_word(core),
        [a, b, d] => {
            a.is_ascii_uppercase() && b.is_ascii_uppercase() && d.is_ascii_lowercase() && *d != 's'
        }
        _ => false,
    }
}

/// "Coates and Ng", "De Meulder": a short capitalised word inside a name.
fn surname(w: &[Word<'_>], i: usize) -> bool {
    let capitalised_word = |j: usize| w.get(j).is_some_and(|x| is_capitalised(x.core));
    is_capitalised(w[i].core)
        && (capitalised_word(i - 1)
            || capitalised_word(i + 1)
            || (i >= 2 && matches!(w[i - 1].core, "and" | "&") && capitalised_word(i - 2)))
}

/// "The algorithm of ARML is shown in Alg. 2", "Now the authors are ready to describe ...":
/// the sentence points at the paper's layout instead of saying something about the work.
pub fn pointer(s: &str) -> Option<String> {
    const PLACES: &[&str] = &[
        "alg",
        "algorithm",
        "fig",
        "figure",
        "figures",
        "table",
        "tables",
        "tab",
        "section",
        "sec",
        "appendix",
        "eq",
        "equation",
        "line",
        "lines",
        "supplementary",
    ];
    const SHOWN: &[&str] = &[
        "shown",
        "illustrated",
        "depicted",
        "given",
        "presented",
        "summarized",
        "summarised",
        "listed",
        "reported",
        "described",
        "provided",
        "detailed",
        "found",
        "outlined",
        "plotted",
        "visualized",
    ];
    let w = words(s);
    for (i, x) in w.iter().enumerate() {
        if SHOWN.contains(&x.lower.as_str()) && w.get(i + 1).is_some_and(|n| n.lower == "in") {
            let place = w[i + 2..].iter().take(2).find(|p| {
                PLACES.contains(&p.lower.as_str()) && p.core.chars().any(char::is_alphabetic)
            });
            if let Some(p) = place {
                return Some(quoted(&format!("{} in {}", x.core, p.core)));
            }
        }
        // "in rows (C) and (D)": rows of a table the fact does not show.
        if matches!(x.lower.as_str(), "row" | "rows" | "column" | "columns")
            && w.get(i + 1).is_some_and(|n| {
                n.raw.starts_with('(')
                    && n.core.chars().count() <= 2
                    && n.core
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
            })
        {
            return Some(quoted(&format!("{} {}", x.core, w[i + 1].raw)));
        }
        // "(Lines 4–9)": a pointer into an algorithm listing.
        if x.raw.starts_with('(') && matches!(x.lower.as_str(), "line" | "lines") {
            return Some(quoted(x.raw));
        }
    }
    let lower = s.to_lowercase();
    const ROADMAP: &[&str] = &[
        "ready to",
        "brief overview",
        "in this section",
        "in the next section",
        "in the following section",
        "in the following, ",
        "the remainder of",
        "the rest of the paper",
        "the rest of this paper",
        "organized as follows",
        "organised as follows",
        "is structured as follows",
        "later in the paper",
        "later in this paper",
        "in the supplementary material",
        "in the supplemental material",
        "will be published",
        "further in the paper",
        "the paper first discusses",
        "the paper is split",
        "the value shown",
        "the values shown",
        "the numbers shown",
        // What the text is about to do, and the space it had (fact-rubric round 8: "The authors
        // will use paragraph vectors and compute ...", "Due to the space limit, ...").
        "the authors will present",
        "the authors will describe",
        "the authors will discuss",
        "the authors will introduce",
        "the authors will use",
        "the authors will show",
        "due to the space limit",
        "due to space limit",
        "due to the page limit",
        "due to page limit",
        "due to limited space",
        "due to space constraints",
    ];
    ROADMAP
        .iter()
        .find(|p| lower.contains(*p))
        .map(|p| quoted(p.trim_end_matches([',', ' '])))
}

/// The word without a footnote mark fused to it ("regularities1" → "regularities", "rate4" →
/// "rate", "17.0%5" → "17.0%", "text,1" → "text,"): one or two digits after four or more lowercase
/// letters, a percent sign or a comma. Names stay: "word2vec", "log2", and layer or stage names
/// such as "conv5", "layer4", "fold3".
pub fn footnote_stem(core: &str) -> Option<&str> {
    const NAMES: &[&str] = &[
        "conv", "pool", "relu", "norm", "layer", "block", "stage", "level", "phase", "round",
        "epoch", "step", "task", "head", "fold", "split", "dense", "group", "class", "batch",
        "model", "type", "case", "part", "setting", "table", "figure", "section", "page",
    ];
    let digits = core.chars().rev().take_while(char::is_ascii_digit).count();
    let letters = &core[..core.len() - digits];
    if !(1..=2).contains(&digits) {
        return None;
    }
    // "17.0%5": after a number's percent sign; "text,1": after a word's comma ("1,2" is a list).
    let before = |c: char| {
        letters[..letters.len() - 1]
            .chars()
            .last()
            .is_some_and(|p| match c {
                '%' => p.is_ascii_digit(),
                _ => p.is_ascii_lowercase(),
            })
    };
    if (letters.ends_with('%') && before('%')) || (letters.ends_with(',') && before(',')) {
        return Some(letters);
    }
    (letters.chars().count() >= 4
        && letters.chars().all(|c| c.is_ascii_lowercase())
        && !NAMES.contains(&letters))
    .then_some(letters)
}

/// A question is not a statement about the paper.
pub fn question(s: &str) -> Option<String> {
    s.contains('?').then(|| "contains \"?\"".to_string())
}

/// Openers that hand the subject over to an earlier sentence.
const CONTEXT_OPENERS: &[&str] = &[
    "this",
    "these",
    "those",
    "that",
    "such",
    "it",
    "its",
    "they",
    "their",
    "them",
    "he",
    "she",
    "his",
    "her",
    "here",
    "similarly",
    // "Similarity," is how a typo of "Similarly," reaches the text.
    "similarity",
    "likewise",
    // "Effectively, the concatenated embedding is ...": a restatement of what the previous
    // sentence said. ("Precisely, ..." too, but 003 has exactly 24 approved facts without it.)
    "effectively",
    "conversely",
    "instead",
    "otherwise",
    "again",
    "latter",
    "former",
];

/// Connectives that, followed by a pronoun or demonstrative, still need the previous sentence.
const CONNECTIVES: &[&str] = &[
    "thus",
    "hence",
    "therefore",
    "consequently",
    "accordingly",
    "so",
    "then",
    "also",
    "however",
    "moreover",
    "furthermore",
    "additionally",
    "besides",
    "still",
    "yet",
    "and",
    "but",
    "clearly",
    "surprisingly",
    "interestingly",
    "importantly",
    "notably",
    "overall",
];

/// Multi-word openers that point back ("In this case", "The former", "On the other hand").
const CONTEXT_PHRASES: &[&str] = &[
    "in this case",
    "in that case",
    "even so",
    "on the one hand",
    "one the one hand",
    "in such cases",
    "in this way",
    "in this setting",
    "in contrast",
    "by contrast",
    "on the other hand",
    "as a result",
    "for this reason",
    "for these reasons",
    "the former",
    "the latter",
    "the same",
    "the above",
    "the following",
    "the previous",
    "at the same time",
    "in addition to this",
    "apart from this",
    "other than this",
    "unlike this",
    // "The first is ...", "One is ...", "The reason is that ...": the thing was named before.
    "the first is",
    "the second is",
    "the third is",
    "the other is",
    "the first one",
    "the second one",
    "one is",
    "the downside",
    "the upside",
    "the drawback is",
    "the reason is",
    "the reason for this",
    // An explanation of a result the previous sentence gave: "One possible reason is that ...".
    "the reason the",
    "one reason",
    "one possible reason",
    "one potential reason",
    "a possible reason",
    "another reason",
    "an explanation",
    "one explanation",
    "a possible explanation",
    "one possible explanation",
    "the resulting",
    "the difference is",
    "among them",
    "among these",
    "among those",
    "similar to",
    "in the same way",
    "as before",
    "as mentioned",
    "as discussed",
    "as described above",
    "as shown above",
    "as noted",
    // An objection raised in passing: "One could argue that it is still required ...".
    "one could argue",
    "one might argue",
    "one may argue",
    "one can argue",
];

/// Heads of a bare definite subject that, without a name or "proposed", could be any of the
/// paper's models, baselines or steps ("The algorithm can select ...", "The hidden layer
/// maintains ...", "Each event consists of ...").
const GENERIC_HEADS: &[&str] = &[
    "algorithm",
    "algorithms",
    "method",
    "methods",
    "approach",
    "model",
    "models",
    "network",
    "output",
    "outputs",
    "input",
    "inputs",
    "result",
    "results",
    "recommendations",
    "problem",
    "calculation",
    "computation",
    "layer",
    "numbers",
    "procedure",
    "process",
    "stage",
    "observation",
    "difference",
    "estimate",
    "technique",
    "scheme",
    "event",
    "events",
    "variant",
    "variants",
    "values",
    "vectors",
    "embeddings",
    "framework",
    "feature",
    "features",
    "segments",
    "dataset",
    "data",
    "set",
    "representation",
    "system",
    "effect",
    "filters",
    "checkpoint",
    "technology",
    "store",
    "paradigm",
    "architecture",
    "vector",
    "scores",
    "accuracy",
];

/// Words between a determiner and its head that do not name anything.
const PLAIN_MODIFIERS: &[&str] = &[
    "hidden",
    "output",
    "input",
    "alignment",
    "final",
    "resulting",
    "overall",
    "whole",
    "entire",
    "same",
    "above",
    "original",
    "basic",
    "simple",
    "standard",
    "main",
    "underlying",
    "training",
    "test",
    "net",
    "new",
    "good",
];

fn is_pronoun_subject(lower: &str) -> bool {
    matches!(
        lower,
        "this"
            | "these"
            | "those"
            | "that"
            | "such"
            | "it"
            | "its"
            | "they"
            | "their"
            | "he"
            | "she"
    )
}

/// Expletive "it" ("it is possible to", "it was found that") stands for nothing earlier.
fn expletive_it(w: &[Word<'_>], at: usize) -> bool {
    const PREDICATES: &[&str] = &[
        "possible",
        "impossible",
        "common",
        "necessary",
        "important",
        "difficult",
        "easy",
        "hard",
        "straightforward",
        "clear",
        "known",
        "shown",
        "observed",
        "found",
        "noted",
        "worth",
        "unclear",
        "natural",
        "intuitive",
        "interesting",
        "feasible",
        "crucial",
        "essential",
        "beneficial",
        "reasonable",
        "standard",
        "customary",
        "likely",
        "unlikely",
        "expected",
        "argued",
        "believed",
        "assumed",
        "reported",
    ];
    w[at].lower == "it"
        && w[at + 1..]
            .iter()
            .take(4)
            .any(|x| PREDICATES.contains(&x.lower.as_str()))
}

/// Subordinators: an introductory clause that has its own subject, which a later pronoun may
/// refer to ("Since ERRANT uses ..., it does not match ...").
const SUBORDINATORS: &[&str] = &[
    "since", "because", "although", "though", "while", "whereas", "if", "as", "once", "after",
    "before", "unless", "when", "whenever",
];

/// "these actions" after "user actions": the antecedent is in the same sentence.
fn antecedent_in_sentence(w: &[Word<'_>], at: usize) -> bool {
    let Some(noun) = w.get(at + 1) else {
        return false;
    };
    let stem = |s: &str| {
        let s = s.trim_end_matches(|c: char| c.is_ascii_digit());
        s.strip_suffix('s').unwrap_or(s).to_string()
    };
    let target = stem(&noun.lower);
    target.len() >= 3 && w[..at].iter().any(|x| stem(&x.lower) == target)
}

/// A subject that needs the previous sentence: "It achieves 28.4 BLEU", "These questions ...",
/// "Thus, it ...", "At the same time, it improved ...", "To this end, ...", or a demonstrative
/// determiner anywhere ("using these techniques", "on this task", "such representations") unless
/// its noun already occurred in the sentence. "the paper" (from the voice rewrite of "this
/// paper") is self-contained; "such as" / "such that" and expletive "it" ("it is possible to")
/// are not anaphoric.
/// A bare definite subject at `at` ("the algorithm can", "each event consists", "the
/// technology's conversion rates"): a generic head with no name, that could be any of the
/// paper's models, baselines or steps. ("The components of the vector are ..." fails the judges
/// too, but without it the short 017 keeps 24 approved facts.)
fn bare_subject(w: &[Word<'_>], at: usize, heads: &[&str]) -> Option<String> {
    const NP_CONTINUES: &[&str] = &[
        "of",
        "for",
        "in",
        "on",
        "with",
        "from",
        "by",
        "to",
        "and",
        "or",
        "that",
        "which",
        "between",
        "over",
        "under",
        "across",
        "at",
        "proposed",
        "introduced",
        "presented",
        "described",
        "developed",
        "called",
        "named",
        "known",
        // "The accuracy obtained by Item2Vec was 68%": the participle names whose.
        "obtained",
        "achieved",
        "reported",
        "measured",
    ];
    let first = w.get(at)?;
    let determiners: &[&str] = if at == 0 {
        &["the", "each", "all", "every"]
    } else {
        &["the"]
    };
    if !determiners.contains(&first.lower.as_str()) {
        return None;
    }
    // After an introductory phrase only the heads that ask "which one?" ("the algorithm", "the
    // system"); "After replacing the last layer, the network was trained ..." is clear enough.
    const WHICH_ONE: &[&str] = &["algorithm", "approach", "method", "system", "technology"];
    let mut j = at + 1;
    // "The output is computed ...": "output" is the head, not a modifier.
    while w
        .get(j)
        .is_some_and(|x| PLAIN_MODIFIERS.contains(&x.lower.as_str()))
        && w.get(j + 1)
            .is_some_and(|n| !VERBS.contains(&n.lower.as_str()))
        && j < at + 3
    {
        j += 1;
    }
    let (head, after) = (w.get(j)?, w.get(j + 1)?);
    let ends = |x: &Word<'_>, next: &Word<'_>| {
        x.tail.is_empty()
            && next.raw.starts_with(char::is_lowercase)
            && !NP_CONTINUES.contains(&next.lower.as_str())
    };
    let possessive = head.raw.ends_with("’s") || head.raw.ends_with("'s");
    let which_one = at == 0
        || (WHICH_ONE.contains(&head.lower.as_str())
            && !w[j + 1..].iter().any(|x| is_capitalised(x.core)));
    // A possessive keeps its "'s" in the core ("technology’s"), so the head is matched without it.
    let generic = heads.contains(&head.lower.trim_end_matches("’s").trim_end_matches("'s"))
        && head.raw == head.core
        && head
            .core
            .chars()
            .all(|c| c.is_lowercase() || c == '’' || c == '\'');
    if generic && which_one && (ends(head, after) || possessive) {
        let subject: Vec<&str> = w[at..=j].iter().map(|x| x.core).collect();
        return Some(format!(
            "bare subject {} names no model or method",
            quoted(&subject.join(" "))
        ));
    }
    None
}

pub fn needs_context(s: &str) -> Option<String> {
    let w = words(s);
    let first = w.first()?;
    if CONTEXT_OPENERS.contains(&first.lower.as_str()) && !expletive_it(&w, 0) {
        return Some(format!("opens with {}", quoted(first.core)));
    }
    // "Both models" points back; "Both the encoder and the decoder" names its subjects.
    if first.lower == "both"
        && w.get(1)
            .is_some_and(|n| !matches!(n.lower.as_str(), "the" | "of") && !is_capitalised(n.core))
    {
        return Some(format!(
            "opens with {}",
            quoted(&format!("Both {}", w[1].core))
        ));
    }
    let lower: String = w
        .iter()
        .map(|x| x.lower.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    if let Some(p) = opening_phrase(&lower, CONTEXT_PHRASES) {
        return Some(format!("opens with {}", quoted(p)));
    }
    // A connective and then a pronoun: "Thus it ...", "Hence, they ...".
    if CONNECTIVES.contains(&first.lower.as_str())
        && w.get(1).is_some_and(|n| is_pronoun_subject(&n.lower))
        && !expletive_it(&w, 1)
    {
        return Some(format!(
            "opens with {}",
            quoted(&format!("{} {}", first.raw, w[1].core))
        ));
    }
    // An introductory phrase without a subject of its own (up to 10 words, ending in a comma),
    // then a pronoun subject: "At the same time, it improved ...".
    let second = w.get(1).map(|x| x.lower.as_str()).unwrap_or("");
    let subordinate = SUBORDINATORS.contains(&first.lower.as_str())
        || (first.lower == "even" && matches!(second, "though" | "if" | "when"));
    if !subordinate {
        if let Some(comma) = w.iter().take(10).position(|x| x.tail.starts_with(',')) {
            let subject = comma + 1;
            let after = w.get(subject + 1).map(|x| x.lower.as_str()).unwrap_or("");
            // A clause with its own verb before the comma ("The vectors have length 80, they
            // are ...") has its own subject; "such as" is an example list.
            let pronoun = w.get(subject).is_some_and(|n| is_pronoun_subject(&n.lower));
            let such_as = pronoun && w[subject].lower == "such" && after == "as";
            let own_subject = has_finite_verb(&w[..=comma]);
            if pronoun && !such_as && !own_subject && !expletive_it(&w, subject) {
                return Some(format!(
                    "subject {} after {}",
                    quoted(w[subject].core),
                    quoted(
                        &w[..=comma]
                            .iter()
                            .map(|x| x.raw)
                            .collect::<Vec<_>>()
                            .join(" ")
                    )
                ));
            }
        }
    }
    // "The second observation is ...", "The third stage is to ...": one of a list begun earlier.
    if first.lower == "the"
        && w.get(1).is_some_and(|n| {
            matches!(
                n.lower.as_str(),
                "second" | "third" | "fourth" | "fifth" | "next" | "remaining" | "other"
            )
        })
        && w.get(2)
            .is_some_and(|n| n.raw.starts_with(char::is_lowercase) && n.lower != "and")
        && w.get(3).is_none_or(|n| n.lower != "of")
    {
        return Some(format!(
            "opens with {}",
            quoted(&format!("{} {} {}", first.core, w[1].core, w[2].core))
        ));
    }
    // A bare definite subject: "The algorithm can ...", "The hidden layer maintains ...",
    // "All numbers are reported ...". "The proposed model", "The Transformer" are named.
    if let Some(e) = bare_subject(&w, 0, GENERIC_HEADS) {
        return Some(e);
    }
    // The same after an introductory phrase or clause: "Given the user's purchased items, the
    // algorithm constructs ...", "If a customer buys X, for example, the system might ...".
    if let Some(comma) = w
        .iter()
        .take(20)
        .rposition(|x| x.tail.starts_with(','))
        .filter(|&c| c + 1 < w.len() && w[c + 1].lower == "the")
    {
        if let Some(e) = bare_subject(&w, comma + 1, GENERIC_HEADS) {
            return Some(e);
        }
    }
    // "between the two vectors", "another type of relationship",
    // "those dictionaries of patches": a set or an alternative introduced earlier.
    for (i, x) in w.iter().enumerate() {
        let next = w.get(i + 1);
        let next_lower = next.map(|n| n.lower.as_str()).unwrap_or("");
        let next_plain = next.is_some_and(|n| n.raw.starts_with(char::is_lowercase));
        // "X and Y", "X is better than Y": the two things are named in the sentence.
        let named_list = w[..i].iter().any(|y| {
            matches!(
                y.lower.as_str(),
                "and" | "than" | "versus" | "vs" | "against" | "compared"
            )
        }) || w[i + 1..].iter().any(|y| y.lower == "and");
        let phrase = match x.lower.as_str() {
            "two"
                if i > 0
                    && w[i - 1].lower == "the"
                    && next_plain
                    && !VERBS.contains(&next_lower)
                    && !named_list =>
            {
                Some(format!("the two {}", next_lower))
            }
            // "While the two are similar, ...": no noun at all, and nothing named before it
            // (an "and" after it belongs to the rest of the sentence).
            "two"
                if (1..=3).contains(&i)
                    && w[i - 1].lower == "the"
                    && VERBS.contains(&next_lower)
                    && !w[..i].iter().any(|y| {
                        matches!(
                            y.lower.as_str(),
                            "and" | "than" | "versus" | "vs" | "against"
                        )
                    }) =>
            {
                Some(format!("the two {}", next_lower))
            }
            // "which of the three paragraphs are ...": a set given earlier.
            "three" | "four"
                if i > 0
                    && w[i - 1].lower == "the"
                    && next_plain
                    && next_lower.ends_with('s')
                    && !VERBS.contains(&next_lower)
                    && !named_list =>
            {
                Some(format!("the {} {}", x.lower, next_lower))
            }
            // "The differences among them are ...": a pronoun object before anything it could
            // stand for.
            "them"
                if (2..=4).contains(&i)
                    && matches!(w[i - 1].lower.as_str(), "among" | "between") =>
            {
                Some(format!("{} them", w[i - 1].lower))
            }
            // "The experimental results have demonstrated its superiority": whose, no name says.
            "its"
                if matches!(
                    next_lower,
                    "superiority"
                        | "effectiveness"
                        | "efficacy"
                        | "advantages"
                        | "merits"
                        | "usefulness"
                ) && i > 1
                    && !w[..i].iter().skip(1).any(|y| is_capitalised(y.core))
                    && !anchored_words(&w) =>
            {
                Some(format!("its {}", next_lower))
            }
            // "the previous three depend on ...": a list given earlier.
            "previous"
                if i > 0
                    && w[i - 1].lower == "the"
                    && matches!(next_lower, "two" | "three" | "four" | "one" | "ones") =>
            {
                Some(format!("the previous {}", next_lower))
            }
            // "have the same effect by ...": the same as what was said before; "the same
            // effect as X" names it.
            "same"
                if i > 0
                    && w[i - 1].lower == "the"
                    && matches!(
                        next_lower,
                        "effect"
                            | "way"
                            | "result"
                            | "trend"
                            | "behavior"
                            | "behaviour"
                            | "pattern"
                    )
                    && w.get(i + 2).is_none_or(|n| n.lower != "as") =>
            {
                Some(format!("the same {}", next_lower))
            }
            // "another type of relationship", "another 1% group"; "adding another factor" and
            // "yet another form of representation learning" are plain English.
            "another"
                if matches!(
                    next_lower,
                    "type" | "kind" | "example" | "group" | "set" | "variant"
                ) || next.is_some_and(|n| n.raw.starts_with(|c: char| c.is_ascii_digit())) =>
            {
                Some(format!("another {}", next_lower))
            }
            "those"
                if next_plain
                    && !matches!(
                        next_lower,
                        "of" | "that" | "which" | "who" | "with" | "in" | "for" | "from" | "at"
                            | "on" | "by" | "where" | "whose" | "without" | "trained"
                    )
                    && !next_lower.ends_with("ed")
                    // "those kernel maps in layer 3 which reside ...": defined right after.
                    && !w[i + 1..]
                        .iter()
                        .take(6)
                        .any(|y| matches!(y.lower.as_str(), "which" | "that" | "who")) =>
            {
                Some(format!("those {}", next_lower))
            }
            _ => None,
        };
        if let Some(p) = phrase {
            return Some(format!("{} refers to an earlier sentence", quoted(&p)));
        }
    }
    if let Some(e) = dangling_reference(&w) {
        return Some(e);
    }
    if let Some(e) = headless_opening(&w) {
        return Some(e);
    }
    if let Some(e) = purpose_clause_only(&w) {
        return Some(e);
    }
    // A demonstrative determiner anywhere: "this task", "these questions", "such
    // representations", "To this end".
    for (i, x) in w.iter().enumerate() {
        let next = w.get(i + 1).map(|n| n.lower.as_str()).unwrap_or("");
        let anaphoric = match x.lower.as_str() {
            "this" | "these" => next != "paper",
            "such" => !matches!(next, "as" | "that" | ""),
            _ => false,
        };
        if anaphoric && !antecedent_in_sentence(&w, i) {
            let phrase = format!("{} {}", x.core, w.get(i + 1).map(|n| n.core).unwrap_or(""));
            return Some(format!(
                "{} refers to an earlier sentence",
                quoted(phrase.trim())
            ));
        }
    }
    None
}

/// Words that open an introductory phrase ("In", "For", "Unlike", "Given", ...).
const PHRASE_OPENERS: &[&str] = &[
    "in",
    "for",
    "to",
    "with",
    "by",
    "on",
    "at",
    "from",
    "during",
    "after",
    "before",
    "unlike",
    "like",
    "given",
    "as",
    "when",
    "while",
    "since",
    "because",
    "although",
    "though",
    "if",
    "once",
    "throughout",
    "across",
    "among",
    "amongst",
    "under",
    "over",
    "beyond",
    "despite",
    "without",
    "within",
    "through",
    "via",
    "upon",
    "into",
    "towards",
    "toward",
    "against",
    "except",
    "besides",
    "regarding",
    "per",
    "unless",
    "whereas",
    "where",
    "here",
    "there",
    "now",
    "then",
    "thus",
    "hence",
    "therefore",
    "however",
    "moreover",
    "furthermore",
    "finally",
    "first",
    "second",
    "third",
    "next",
    "last",
    "lastly",
    "overall",
    "also",
    "still",
    "yet",
    "again",
    "further",
    "instead",
    "indeed",
    "even",
    "most",
    "more",
    "of",
    "so",
    "not",
    "all",
    "both",
    "each",
    "every",
    "our",
    "the",
    "a",
    "an",
    "this",
    "these",
    "that",
    "in-",
    "note",
    "accordingly",
    "consequently",
    "additionally",
    "specifically",
    "empirically",
    "practically",
    "theoretically",
    "intuitively",
    "similarly",
    "formally",
    "informally",
    "concretely",
];

/// "Texture synthesis or image inpainting, the authors have ...", "Factual QA, self-cognition,
/// and translation, the authors adopt ...": a bare noun phrase, then a comma and the subject.
/// The sentence lost its opening ("For tasks like ...") to a split or a column break.
fn headless_opening(w: &[Word<'_>]) -> Option<String> {
    let first = w.first()?;
    if !is_capitalised(first.core)
        || PHRASE_OPENERS.contains(&first.lower.as_str())
        || SUBORDINATORS.contains(&first.lower.as_str())
        || first.lower.ends_with("ly")
        || first.lower.ends_with("ing")
        || first.lower.ends_with("ed")
        || first.lower.ends_with("en")
    {
        return None;
    }
    // The last comma before "the authors" / "the algorithm" / a pronoun subject, within 10 words.
    let at = (1..w.len().min(11)).find(|&i| {
        w[i - 1].tail.starts_with(',')
            && (matches!(w[i].lower.as_str(), "we" | "they")
                || (w[i].lower == "the"
                    && w.get(i + 1).is_some_and(|n| {
                        matches!(n.lower.as_str(), "authors" | "algorithm" | "system")
                    })))
    })?;
    let prefix = &w[..at];
    // Two words at least ("Overall," is an adverb), no verb of its own, no number ("In 2019,").
    if prefix.len() < 2
        || has_finite_verb(prefix)
        || has_verb(prefix)
        || prefix.iter().any(|x| {
            x.core.chars().any(|c| c.is_ascii_digit())
                || PHRASE_OPENERS.contains(&x.lower.as_str()) && x.lower != "and"
        })
    {
        return None;
    }
    let shown: Vec<&str> = prefix.iter().map(|x| x.raw).collect();
    Some(format!(
        "opens with a bare phrase {} (the sentence lost its start)",
        quoted(&shown.join(" "))
    ))
}

/// "To get more insights into how the shared structures influences the specific task.": a
/// purpose clause and nothing else. With no comma, a main clause would follow the infinitive's
/// object directly ("To reduce overfitting the authors employed ..."), so a sentence with no
/// subject a reviewer could name is a fragment split off its main clause.
fn purpose_clause_only(w: &[Word<'_>]) -> Option<String> {
    let (first, verb) = (w.first()?, w.get(1)?);
    if first.core != "To"
        || !verb.core.chars().all(|c| c.is_ascii_lowercase())
        || w.iter()
            .any(|x| !x.tail.is_empty() && x.tail.starts_with([',', ';', ':']))
    {
        return None;
    }
    let subject = w.iter().any(|x| {
        matches!(
            x.lower.as_str(),
            "authors" | "paper" | "we" | "they" | "it" | "model" | "method" | "approach" | "system"
        )
    });
    (!subject).then(|| "a purpose clause with no main clause".to_string())
}

/// Nouns that "both" and "the previous" / "the remaining" point back with. Not "model" ("the
/// previous model" is often the production system a paper replaces, "the previous methods" are
/// the field's) nor "datasets" (judges
/// pass "on both datasets" where a paper has two).
const BACK_NOUNS: &[&str] = &[
    "models",
    "type",
    "types",
    "kinds",
    "task",
    "case",
    "cases",
    "setting",
    "approach",
    "approaches",
    "variant",
    "variants",
    "version",
    "versions",
    "section",
    "experiment",
    "step",
    "one",
    "ones",
];

/// A reference back that no rule on the opening sees: "with the aforementioned five CNNs",
/// "in the previous model", "both models", "the only difference", "as explained in §6",
/// "two conclusions: First, ..." (a list announced and cut after its first item).
fn dangling_reference(w: &[Word<'_>]) -> Option<String> {
    let found = |p: String| Some(format!("{} refers to an earlier sentence", quoted(&p)));
    for (i, x) in w.iter().enumerate() {
        let next = w.get(i + 1).map(|n| n.lower.as_str()).unwrap_or("");
        let prev = if i > 0 { w[i - 1].lower.as_str() } else { "" };
        match x.lower.as_str() {
            "aforementioned" | "above-mentioned" | "abovementioned" => {
                return found(x.lower.clone())
            }
            "mentioned"
                if matches!(prev, "previously" | "earlier")
                    || matches!(next, "above" | "earlier" | "previously") =>
            {
                return found(format!("{} {}", x.lower, next));
            }
            // "the remaining layers": whatever was not yet named.
            "remaining"
                if prev == "the"
                    && next.len() > 3
                    && next.ends_with('s')
                    && w[i + 1].raw.starts_with(char::is_lowercase)
                    && w.get(i + 2).is_none_or(|n| n.lower != "of") =>
            {
                return found(format!("the remaining {next}"));
            }
            "previous" | "remaining"
                if prev == "the"
                    && BACK_NOUNS.contains(&next)
                    && w.get(i + 2).is_none_or(|n| n.lower != "of") =>
            {
                return found(format!("the {} {}", x.lower, next));
            }
            // "both models"; "both the encoder and the decoder", "both X and Y" name them.
            "both"
                if i > 0
                    && (BACK_NOUNS.contains(&next) || next == "methods")
                    && !w[i + 1..].iter().take(6).any(|y| y.lower == "and") =>
            {
                return found(format!("both {next}"));
            }
            "only" if prev == "the" && matches!(next, "difference" | "change") => {
                return found(format!("the only {next}"));
            }
            "other" if prev == "the" && matches!(next, "axis" | "direction" | "half") => {
                return found(format!("the other {next}"));
            }
            _ => {}
        }
        // "obtained in §3 of ...", "as explained in §6 which ...": the claim leans on a section
        // the review's reader does not have. A trailing "(§6)." only points and may stay.
        if x.raw.contains('§') && i + 4 < w.len() {
            return Some(format!("section reference {}", quoted(x.raw)));
        }
        // "Cross features, on the other hand, have ...": the contrast is with a sentence before.
        if i > 0
            && w[i - 1].tail.starts_with(',')
            && x.lower == "on"
            && w.get(i + 3).is_some_and(|h| h.lower == "hand")
            && matches!(next, "the" | "one")
        {
            return found("on the other hand".to_string());
        }
        // "contributions are three-fold: (1) it ...": the list was cut after its first item.
        if x.tail.starts_with(':')
            && w.get(i + 1)
                .is_some_and(|n| matches!(n.raw, "(1)" | "1)" | "(i)" | "i)"))
            && !w[i + 2..]
                .iter()
                .any(|y| matches!(y.raw, "(2)" | "2)" | "(ii)" | "ii)"))
        {
            return Some(format!(
                "{} announces a list the sentence does not give",
                quoted(&format!("{} {}", x.raw, w[i + 1].raw))
            ));
        }
        // "... two conclusions: First, ...": the list was cut after its first item.
        if x.tail.starts_with(':')
            && next == "first"
            && !w[i + 1..]
                .iter()
                .any(|y| matches!(y.lower.as_str(), "second" | "secondly" | "then" | "next"))
        {
            return Some(format!(
                "{} announces a list the sentence does not give",
                quoted(&format!("{} First", x.raw))
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(text: &str) -> Option<Rule> {
        check(text, text, None).map(|e| e.rule)
    }

    fn assert_dropped(r: Rule, texts: &[&str]) {
        for t in texts {
            let got = check(t, t, None);
            assert_eq!(got.as_ref().map(|e| e.rule), Some(r), "{t}: {got:?}");
        }
    }

    fn assert_kept(texts: &[&str]) {
        for t in texts {
            assert_eq!(check(t, t, None), None, "{t}");
        }
    }

    /// Good facts from real papers: no rule may drop them.
    const GOOD: &[&str] = &[
        "The paper proposes two novel model architectures for computing continuous vector representations of words from very large data sets.",
        "The Transformer achieves 28.4 BLEU on the WMT 2014 English-to-German translation task, improving over the existing best results by over 2 BLEU.",
        "The proposed model is trained on eight P100 GPUs for 3.5 days on the WMT 2014 English-French dataset.",
        "Amazon.com uses recommendations as a targeted marketing tool in many email campaigns and on most of its Web sites’ pages.",
        "The accuracy obtained by Item2Vec was 68%, compared to 58.4% by SVD.",
        "The dimension parameter m was set to 100 and 40 for the Music and Store datasets, respectively.",
        "Thanks to the cross network, DCN learns bounded-degree feature interactions more efficiently than a DNN.",
        "The claim that attention captures syntax is supported by experiments on three parsing datasets.",
        "There are six identical layers in the encoder, each with a multi-head self-attention sub-layer.",
        "Because the similar customers that the cluster models find are not the most similar customers, the recommendations they produce are less relevant.",
        "Item2Vec produces embeddings whose similarities are better related to the seed item than those of the SVD baseline.",
        "The authors believe that their comprehensive test set will help the research community to improve existing techniques.",
        "Both the encoder and the decoder use stacked self-attention and point-wise, fully connected layers.",
        "The paper introduces GREEN, an alignment-free evaluation metric for grammatical error correction based on n-gram multisets.",
        "GREEN treats a sentence as a multiset of n-grams with the maximum n-gram size N, such as N = 4.",
        "On the CoNLL-2014 dataset, wordGREEN shows the highest correlation with human judgements among corpus-level metrics.",
        "The authors restricted the vocabulary size to the 1 million most frequent words of the Google News corpus.",
        "Skip-gram with negative sampling was introduced by Mikolov et al. in 2013 and has been widely adopted.",
        // Antecedents inside the sentence, expletive "it", a subordinate clause's own subject.
        "The main challenge is in representing a temporal sequence of user actions and how these actions relate to the video impression.",
        "Using the DistBelief distributed framework, it should be possible to train the CBOW and Skip-gram models on one trillion words.",
        "Somewhat surprisingly, it was found that similarity of word representations goes beyond simple syntactic regularities.",
        "Since ERRANT uses the linguistically enhanced alignment, it does not match whole-sentence deletions with the reference edits.",
        "The monolingual vectors always have a fixed length of 80, they are just shown in the plots for comparison.",
        "The prediction task is typically done via a multiclass classifier, such as softmax over the vocabulary.",
        "The authors wrote a highly-optimized GPU implementation of 2D convolution, which they make available publicly.",
    ];

    #[test]
    fn good_facts_are_kept() {
        assert_kept(GOOD);
    }

    #[test]
    fn acknowledgements_and_funding() {
        assert_dropped(
            Rule::Acknowledgement,
            &[
                "The authors thank Marco Baroni, Hinrich Schütze and the anonymous reviewers for their insightful comments.",
                "We thank Geoff Zweig for providing us the test set.",
                "This research was supported by the NSF through grant IIS-1352440.",
                "Miguel Ballesteros is supported by the European Commission under the contract numbers FP7-ICT-610411.",
                "This work was funded in part by a Google Faculty Research Award to the first author.",
                "The authors would like to thank Jim McFadden and Pranav Khaitan for valuable guidance and support.",
            ],
        );
        // The acknowledgements section itself, whatever the sentence says.
        let e = check(
            "The experiments ran on a cluster of the computing centre for three weeks.",
            "The experiments ran on a cluster",
            Some("Acknowledgements"),
        )
        .unwrap();
        assert_eq!(e.rule, Rule::Acknowledgement);
        assert!(e.reason().starts_with("acknowledgement: in section"));
        // "Grant" as a surname is not a grant.
        assert_eq!(
            acknowledgement("Probabilistic models (Grant et al., 2018) learn task-specific priors over weights."),
            None
        );
    }

    #[test]
    fn front_matter_lines() {
        assert_dropped(
            Rule::FrontMatter,
            &[
                "Code and pretrained models are available at https://github.com/facebookresearch/fastText for 157 languages.",
                "Correspondence to ashish@google.com and noam@google.com for questions about the models.",
                "The code for all experiments will be publicly released upon acceptance of the paper.",
                "Permission to make digital or hard copies of all or part of this work for personal or classroom use is granted.",
                "Work performed while at Google Brain in Mountain View, California, United States of America.",
                "Department of Computer Science, Stanford University, Stanford, CA 94305, United States.",
                "Hsu and Ye Wang are with the department of Computer Science, National University of Singapore, SG, 117417, e-mail.",
            ],
        );
    }

    #[test]
    fn author_contribution_statements() {
        assert_dropped(
            Rule::AuthorContribution,
            &[
                "Jakob proposed replacing RNNs with self-attention and started the effort to evaluate this idea.",
                "Ashish, with Illia, designed and implemented the first Transformer models and has been crucially involved in every aspect of this work.",
                "Lukasz and Aidan spent countless long days designing various parts of and implementing tensor2tensor.",
                "Llion also experimented with novel model variants, was responsible for the initial codebase, and efficient inference.",
                "Equal contribution. Listing order is random and does not reflect the effort of each author.",
            ],
        );
    }

    #[test]
    fn citation_fragments() {
        assert_dropped(
            Rule::CitationFragment,
            &[
                "KDD Workshop on Web Mining for e-Commerce (WebKDD), ACM Press, 2000",
                "31st Conference on Neural Information Processing Systems (NIPS 2017), Long Beach, CA, USA.",
                "Mikolov, T., Chen, K., Corrado, G., and Dean, J. Efficient estimation of word representations in vector space.",
                "In Proceedings of the 52nd Annual Meeting of the Association for Computational Linguistics, pages 1–10.",
                "Distributed Representations of Words and Phrases and their Compositionality, NIPS 2013",
            ],
        );
    }

    #[test]
    fn figure_and_table_debris() {
        assert_dropped(
            Rule::FigureDebris,
            &[
                "The words are projected onto the gender direction 0.2 0.4 0.6 0.8 1.0 with a tilt toward males.",
                "Figure 2: Scaled Dot-Product Attention and Multi-Head Attention consist of several attention layers.",
                "The “Your Recommendations”feature on the Amazon.com homepage.Using this feature,customers can sort recommendations.",
                "Cluster Models To find customers who are similar to the user, cluster models divide the customer base into segments.",
                "BLEU 28.4 41.0 25.8 26.4 with training costs of 2.3 and 3.3 on the two tasks.",
                "R words from the future of the current word are used as correct labels for the classifier.",
                "Colors indicate which components share parameters. ⟨eos⟩ is the end of sentence token.",
            ],
        );
    }

    #[test]
    fn directives_and_definitions_in_the_papers_voice() {
        assert_dropped(
            Rule::AuthorialDirective,
            &[
                "Let the authors define for each word w in the vocabulary two vectors uw and vw in Rd.",
                "Suppose that you are given a dictionary of ngrams of size G.",
                "Note that the number of output units can go down to around log2(V) with a binary tree.",
                "Consider the problem of predicting the next word given the previous n words of context.",
                "Recall that the skip-gram model predicts the surrounding words of a center word.",
                "Assume the vocabulary is sorted by frequency so that frequent words get short codes.",
                "See the supplementary material for the full list of hyper-parameters used in training.",
                "The authors denote by s(w, c) the scoring function between a word and its context.",
                "The authors define for each word w in the vocabulary two vectors uw and vw in the space Rd.",
                // Fact-rubric round 5: flagged `definition` by its judges.
                "The authors define an unpopular item in case it has less than 15 users that played its corresponding artist.",
                "The authors further denote two pairs of words with the same relationship as a question, as they can ask.",
                "If the negative impression receives a higher score than the positive impression, then the authors consider the positive impression’s watch time to be mispredicted watch time.",
                "An example of a univalent categorical feature is the video ID of the impression being scored.",
                "An attention function can be described as mapping a query and a set of key-value pairs to an output, where the query, keys, values, and output are all vectors.",
            ],
        );
    }

    #[test]
    fn questions() {
        assert_dropped(
            Rule::Question,
            &["Can a model trained only on unlabeled text learn to translate between two languages?"],
        );
    }

    #[test]
    fn sentences_that_need_the_previous_one() {
        assert_dropped(
            Rule::NeedsContext,
            &[
                "Popular models that learn such representations ignore the morphology of words by assigning a distinct vector to each word.",
                "It achieves 28.4 BLEU on the WMT 2014 English-to-German translation task.",
                "This makes the model considerably faster to train than recurrent architectures.",
                "These questions can be answered by performing simple algebraic operations with the vector representation of words.",
                "They are trained on the same data for the same number of epochs as the baselines.",
                "Their performance is reported on the development set of the SEEDA benchmark.",
                "Thus, it converges faster than the recurrent baselines on both translation tasks.",
                "At the same time, it improved the training time by up to 59.3% to reach the same test error.",
                "To this end, the paper proposes a modified version of SGNS named Item2Vec.",
                "In this case, the cluster models assign each customer to the segment with the most similar purchases.",
                "The latter is trained with a larger learning rate and a longer warm-up period than the base model.",
                "Similarly, the decoder is composed of a stack of six identical layers with residual connections.",
                "Similarity, the authors can easily design an item-based RBM-CF if they clamp an item's rating on the visible layer.",
                "Effectively, the concatenated embedding is the same as for the unconditional case except for the zeroed experts.",
                "The authors have explored the performance of the Skip-gram architecture on this task in detail.",
                "Clearly, there is still a lot of discoveries to be made using these techniques in future work.",
                "Here the model uses learned positional embeddings instead of sinusoids for every position.",
                "This work was later extended to images and speech by several other research groups.",
                "Unfortunately, it often requires manual feature engineering or exhaustive search to identify such features.",
                "Notably, it is the first open research to validate that reasoning capabilities of LLMs can be incentivized purely through RL.",
                "The first is to directly evaluate the representation quality of the computed vectors on eight tasks.",
                "The reason is that M2 matches the long phrase deletions by NULL to the correct edits in reference.",
                "To learn user preferences, it uses a Bayesian model that accounts for audio content and novelty.",
            ],
        );
    }

    /// The rules against the rubric judgments of the selected corpus facts of rounds 1–14b
    /// (measurement, not a check: the judges are LLMs); fill-only hits are kept and counted apart. A fact's verdict is keyed by its paper and
    /// text (fact ids differ between builds); a text judged in several rounds keeps the latest
    /// verdict. Prints per rule how many facts it drops that the judges failed and passed, and the
    /// facts. `cargo test -p semtrace-pipeline --lib judged_facts -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn judged_facts() {
        use std::collections::BTreeMap;
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../training/data/fact-judgments");
        let read = |name: &str| -> Vec<serde_json::Value> {
            std::fs::read_to_string(dir.join(name))
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        };
        let key = |v: &serde_json::Value| format!("{}/{}", v["paper"], v["fact"]);
        // paper|text → (text, passed), later rounds overriding earlier ones.
        let mut facts: BTreeMap<String, (String, bool)> = BTreeMap::new();
        for round in [
            "",
            "round2/",
            "round3/",
            "round4/",
            "round5/",
            "round6/",
            "round7/",
            "round8/",
            "round9/",
            "round10/",
            "round11/",
            "round12/",
            "round13/",
            "round14/",
            "round14b/",
        ] {
            let mut pass = BTreeMap::new();
            for j in (1..=3).flat_map(|k| read(&format!("{round}judge-{k}.jsonl"))) {
                let ok = judged_pass(&j);
                pass.insert(key(&j), ok);
            }
            for f in read(&format!("{round}facts.jsonl")) {
                let text = f["text"].as_str().unwrap().to_string();
                facts.insert(format!("{}|{text}", f["paper"]), (text, pass[&key(&f)]));
            }
        }
        let mut counts: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        let (mut total, mut passed) = (0, 0);
        for (text, ok) in facts.into_values() {
            total += 1;
            if let Some(x) = check(&text, &text, None) {
                let c = counts.entry(x.rule.name()).or_default();
                if ok {
                    c.1 += 1;
                    println!("drops a passed fact: {} | {}", x.reason(), text);
                } else {
                    c.0 += 1;
                    println!("drops a failed fact: {} | {}", x.reason(), text);
                }
            } else if let Some(x) = fill_only(&text) {
                let c = counts.entry("fill-only").or_default();
                if ok {
                    c.1 += 1;
                    passed += 1;
                } else {
                    c.0 += 1;
                }
                println!(
                    "fill-only ({}): {} | {}",
                    if ok { "passed" } else { "failed" },
                    x.reason(),
                    text
                );
            } else if ok {
                passed += 1;
            } else {
                println!("keeps a failed fact: {text}");
            }
        }
        for (rule, (failed, ok)) in &counts {
            let does = if *rule == "fill-only" {
                "demotes"
            } else {
                "drops"
            };
            println!("{rule:<22} {does} {failed:>3} failed, {ok:>3} passed");
        }
        let kept: usize = total
            - counts
                .iter()
                .filter(|(rule, _)| **rule != "fill-only")
                .map(|(_, c)| c.0 + c.1)
                .sum::<usize>();
        println!("kept {kept} of {total}; of the kept, {passed} passed");
    }

    /// Round 5's failures that no earlier rule saw (training/data/fact-judgments/round5), and
    /// the near misses the judges passed.
    #[test]
    fn references_back_cut_brackets_and_run_in_headings() {
        assert_dropped(
            Rule::NeedsContext,
            &[
                "Averaging the predictions of two CNNs with the aforementioned five CNNs gives an error rate of 15.3%.",
                "Previously mentioned kernel methods have not been tested on ImageNet.",
                "The hyperparameters are selected in the same manner as in the previous task.",
                "The number of parameters was omitted as it is identical to both models.",
                "The framework combines the strengths of both types of model.",
                "The only difference is the scores are computed using linear transformations.",
                "The other axis of variation is whether the authors label the entire sentence.",
                "The pattern of results is explained in §6 which might not generalize well.",
                "The authors can draw two conclusions: First, distilling larger models works well.",
                "Texture synthesis or image inpainting, the authors have a limited understanding of it.",
                "Factual QA, self-cognition, and translation, the authors adopt the DeepSeek-V3 pipeline.",
                "The authors initialized the neuron biases in the remaining layers with the constant 0.",
                "Even so, for very large data sets the algorithm encounters severe performance problems.",
                "One the one hand, in most languages there is only a small amount of training data.",
                "Cross features, on the other hand, have been shown to improve the models' expressiveness.",
                "The major contributions of ARML are three-fold: (1) it constructs the meta-knowledge graph.",
            ],
        );
        assert_dropped(
            Rule::FigureDebris,
            &[
                "The authors evaluate models on MMLU, GPQA Diamond and SWE-Bench Verified (OpenAI,.",
                "The two versions produced nearly identical results).",
                "Back Street is a 1932 film made by Universal Pictures, directed by John M.",
                "Ablation experiments CIFAR-10 is a small dataset, thus the authors conducted several ablation experiments.",
                "Search-Based Methods Search- or content-based methods treat recommendation as search.",
                "Ablation experiments CIFAR-10 is a relatively small dataset that allows fast benchmarking.",
                "Drawback of DeepSeek-R1-Zero Although DeepSeek-R1-Zero exhibits strong reasoning capabilities, it faces several issues.",
                "More recent approaches have used deeper syn- source is text boxes from tactic information.",
                "An estimate of the sustained single-precision floating-point capacity of each GPU 5.",
                "The car is being driven by a man 5 4.9 There is no man driving the car.",
            ],
        );
        assert_dropped(
            Rule::CitationFragment,
            &["SGNS is a neural word embedding method that was introduced by Mikolov et. al in."],
        );
        assert_dropped(
            Rule::Background,
            &[
                "Recent progress in neural embedding methods has advanced natural language processing.",
                "Numerous efforts have since continued to push the boundaries of recurrent language models.",
                "Learning long-range dependencies is a key challenge in many sequence transduction tasks.",
            ],
        );
        assert_kept(&[
            "The authors directly fine-tuned Qwen and Llama on 800k samples, as detailed in §2.3.3.",
            "The proposed method handles in-the-wild images while the previous methods fail.",
            "The authors validate the model against the previous model as a sanity check.",
            "The authors make three contributions: 1) a new loss, 2) a dataset and 3) a benchmark.",
            "The authors compare the grid settings (1,2) and (3,4) on both datasets.",
            "The authors consider two settings: first, a static one, and second, a streaming one.",
            "Compared to the SSL method, the proposed approach keeps the model complexity.",
            "Success rate (SR) represents the proportion of successfully planned paths.",
            "For tasks like texture synthesis or image inpainting, the authors use a patch prior.",
            "Both the encoder and the decoder use six layers.",
            "The authors compare pre- and post-training checkpoints on first- to third-order tasks.",
            "Training details are given for CIFAR-10 and ImageNet.",
            "The remaining 20% of the data is held out, and the remaining parameters of the model are fixed.",
            "The authors train on 8 GPUs and report results for ResNet 50 and ViT-B 16 in Table 5.",
            "The proposed contributions are: (1) a new loss and (2) a benchmark.",
        ]);
    }

    /// Round 7's failures that no earlier rule saw (training/data/fact-judgments/round7), and
    /// the near misses the judges passed.
    #[test]
    fn surveyed_work_bare_subjects_and_cut_quotations() {
        assert_dropped(
            Rule::Background,
            &[
                "Many different types of models were proposed for estimating continuous representations of words.",
                "Numerous methods have been developed to achieve identity-preserving age progression.",
                "Some works also study directly patch encoders that achieve competitive accuracy on ImageNet.",
                "Traditionally, a simple strategy for modeling sequence is to map the input sequence to a fixed-sized vector.",
                "An alternative approach, purely unsupervised information extraction, extracts strings of words between entities.",
                "A third approach has been to use a very small number of seed instances to do bootstrap learning.",
                "Vulic´ and Moens learn bilingual vector spaces from non parallel data induced using a seed lexicon.",
                "Motivated by the success of multi-task learning, there are several neural models that learn several tasks jointly.",
                "Neural network based methods have obtained great progress on a variety of natural language processing tasks.",
                "With the advent of billion-parameter foundation models, efficient fine-tuning has become increasingly important.",
                "Self-attention has been used successfully in a variety of tasks including reading comprehension.",
                "The authors also use the usual learned linear transformation and softmax function to convert the decoder output.",
            ],
        );
        assert_dropped(
            Rule::NeedsContext,
            &[
                "The architecture consists of an input layer, a hidden layer with recurrent connections to itself and an output layer.",
                "The technology’s increased conversion rates will also make it compelling to offline retailers.",
                "The scores are calculated by running a forward inference pass over the Wide & Deep model.",
                "Given the user’s purchased and rated items, the algorithm constructs a search query to find other popular items.",
                "The differences among them are the mechanisms of sharing information among the several tasks.",
                "The experimental results have demonstrated its superiority over the state-of-art algorithms on the CTR prediction dataset.",
                "While the two are similar in theoretical complexity, dot-product attention is much faster and more space-efficient in practice.",
                "The paper's goal is to identify which of the three paragraphs are results of the same query.",
                "One could argue that it is still required to store the embeddings of the training set.",
            ],
        );
        assert_dropped(
            Rule::FigureDebris,
            &[
                "The average is higher than in Mary and most other recent comedies.” is positive and has a complicated semantic composition.",
                "Hyperparameter tuning is a problem of machine learning in general Granted, deep learning may introduce additional hyperparameters.",
            ],
        );
        assert_dropped(
            Rule::Pointer,
            &[
                "The authors further observe in rows (C) and (D) that bigger models are better, and dropout is very helpful.",
                "Due to space constraints, the authors only present the results on Art-Multi datasets.",
            ],
        );
        assert_dropped(
            Rule::UndefinedSymbol,
            &["The authors use three operations on multisets: intersection (∩), union (∪), and difference (\\)."],
        );
        assert_kept(&[
            "The accuracy obtained by Item2Vec was 68%, compared to 58.4% by SVD.",
            "The proposed method brings consistent gains, confirming its effectiveness even in CLIP-based deep clustering models.",
            "Despite its advantages, quantization has not yet been explored in the domain of video super-resolution.",
            "After replacing the last classification layer, the network was trained end-to-end for 50 epochs with a batch size of 32.",
            "Compared with existing batch selection methods, the results showed that Recency Bias reduced the test error by up to 20.5%.",
            "The performance delta between STEAM and generic generation grows in complex settings.",
            "Skip-gram and CBOW are the two architectures the paper proposes for learning word vectors.",
            "The authors compare Transformer and LSTM models, and the two are trained on the same data.",
            "The authors report results in three settings: full, frozen and linear probe.",
            "The sparsity introduced by DMS is also leveraged during the prefilling phase to eliminate unnecessary computation.",
        ]);
    }

    /// The rules replayed on the 1,503 judged train-pool facts of the fact-quality model
    /// (training/data/fact-quality): what a new rule drops that the judges passed.
    /// A rubric judgment passes: all four questions true and no flag (RUBRIC.md).
    fn judged_pass(j: &serde_json::Value) -> bool {
        [
            "self_contained",
            "true_to_quote",
            "reviewer_like",
            "not_boilerplate",
        ]
        .iter()
        .all(|q| j[q] == true)
            && j["flag"] == "none"
    }

    #[test]
    #[ignore = "prints a replay over the judged train-pool facts"]
    fn judged_pool_facts() {
        use std::collections::BTreeMap;
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../training/data/fact-quality");
        let mut pass = BTreeMap::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if !name.starts_with("judge-") {
                continue;
            }
            for l in std::fs::read_to_string(&path).unwrap().lines() {
                let j: serde_json::Value = serde_json::from_str(l).unwrap();
                let ok = judged_pass(&j);
                pass.insert(format!("{}/{}", j["paper"], j["fact"]), ok);
            }
        }
        let (mut dropped_ok, mut dropped_bad, mut kept_ok, mut kept) = (0, 0, 0, 0);
        for l in std::fs::read_to_string(dir.join("pool.jsonl"))
            .unwrap()
            .lines()
        {
            let f: serde_json::Value = serde_json::from_str(l).unwrap();
            let Some(&ok) = pass.get(&format!("{}/{}", f["paper"], f["fact"])) else {
                continue;
            };
            let text = f["text"].as_str().unwrap();
            let quote = f["quote"].as_str().unwrap_or(text);
            match check(text, quote, None) {
                Some(x) if ok => {
                    dropped_ok += 1;
                    println!("drops a passed fact: {} | {}", x.reason(), text);
                }
                Some(x) => {
                    dropped_bad += 1;
                    println!("drops a failed fact: {} | {}", x.reason(), text);
                }
                None => {
                    kept += 1;
                    kept_ok += usize::from(ok);
                }
            }
        }
        println!(
            "dropped {dropped_bad} failed and {dropped_ok} passed; kept {kept}, {kept_ok} passed"
        );
    }

    #[test]
    fn sets_and_bare_subjects_named_earlier() {
        assert_dropped(
            Rule::NeedsContext,
            &[
                "A common method is to measure the cosine of the angle between the two vectors.",
                "Example of another type of relationship can be word pairs big - biggest.",
                "The behavior of those dictionaries of patches in some classification methods is still not well understood.",
                "The second observation is that patches from ImageNet-32 tend to be better conditioned than those from CIFAR-10.",
                "The algorithm must use a subset or summary of the data, reducing quality.",
                "The hidden layer maintains a representation of the sentence history at every step.",
                "Among them, the Skipgram with Negative Sampling was shown to provide state-of-the-art results.",
                "Similar to the encoder, the authors employ residual connections around each of the sub-layers.",
            ],
        );
        assert_kept(&[
            "Kernels in layer 4 take input only from those kernel maps in layer 3 which reside on the same GPU.",
            "The second form of data augmentation consists of altering the intensities of the RGB channels.",
            "The authors find that adding another factor to the model only slightly slows down inference.",
            "The positional encodings have the same dimension as the embeddings, so that the two can be summed.",
            "The paper explores subnetworks of trained networks in order to both reduce the memory needs of fine-tuned models and adapt to new tasks.",
            // "both" inside a sentence is left alone: as often a set the sentence names ("two
            // datasets, both private") as one named earlier (judged corpus facts: 3 and 3).
            "The authors evaluate the methods on two different types of datasets, both private.",
            "The authors applied t- SNE with a cosine kernel to reduce the item vectors to 2 dimensions.",
            "The proposed model is trained on eight P100 GPUs for 3.5 days on the WMT 2014 English-French dataset.",
        ]);
    }

    #[test]
    fn undefined_symbols() {
        assert_dropped(
            Rule::UndefinedSymbol,
            &[
                "At the input layer, N previous words are encoded using 1-of-V coding, where V is size of the vocabulary.",
                "The authors then select the k that gives them the best average performance across language pairs.",
                "An overall estimate of the intrinsic dimension is obtained by averaging dint(p) over all patches.",
                // Round 13 (132).
                "To facilitate the adaption for incoming tasks, the meta-learning algorithm aims to find a well-generalized meta-learner on I training tasks at meta-learning phase.",
            ],
        );
        assert_kept(&[
            "CharGREEN shows the best Pearson correlation coefficients r on the SEEDA-S and SEEDA-E datasets.",
            "Considering that the cross network only introduces O(d) extra parameters, DCN is memory efficient.",
            "Alignment-based F -scores give 0.00 to inputs containing no edits to evaluate.",
            "The authors applied subsampling with ρ values of 10−5 and 10−3 to the Music and Store datasets.",
            "GLEU shows a relatively worse performance with Spearman ρ on the CoNLL-2014 benchmark.",
            "The authors report results in Table A of the appendix for all twelve language pairs.",
            "The test controls the Type I error at the nominal level on every benchmark, as Table I shows.",
        ]);
    }

    /// Judged failures of the corpus (fact-rubric rounds 8–12) that only demote a fact to
    /// fill-only, and good facts that must not be demoted.
    #[test]
    fn fill_only_rules() {
        let hits = [
            (Rule::NeedsContext, "Precisely, each current word is used as an input to a log-linear classifier with continuous projection layer."),
            (Rule::NeedsContext, "More precisely, the authors use each current word as an input to a log-linear classifier."),
            (Rule::Pointer, "The last row shows the average performance of the three language pairs."),
            (Rule::UndefinedSymbol, "CRi express the raw prototype information without tapping into the meta-knowledge graph, while Cˆ Ri give the prototype representations."),
            (Rule::UndefinedSymbol, "At test time, given new sentence pairs the authors first compute targets pˆ and then compute the related score."),
            (Rule::UndefinedSymbol, "The authors assume the vocabulary of Vw2v is much larger than that of Vrnn."),
            (Rule::UndefinedSymbol, "Σ∗k and Ω∗k are now word vector projections along the top k correlated dimensions."),
            // Round 14: failed in both panels.
            (Rule::NeedsContext, "If a customer buys the Godfather DVD Collection, for example, the system might recommend other crime drama titles, other titles starring Marlon Brando, or other movies directed by Francis Ford Coppola."),
            (Rule::NeedsContext, "If at least some training examples produce a positive input to a ReLU, learning will happen in that neuron."),
            (Rule::NeedsContext, "If the authors have a larger datasets with more complex relations, more vertices may be needed."),
            (Rule::NeedsContext, "The first three datasets are sentence-level, and the last dataset is document-level."),
            (Rule::NeedsContext, "The authors tune the L2 penality using cross-validation (and thus use a nested cross-validation for the first 4 datasets)."),
            (Rule::NeedsContext, "Because of the much lower computational complexity, it is possible to compute very accurate high dimensional word vectors from a much larger data set."),
            (Rule::NeedsContext, "The images were collected from the web and labeled by human labelers using Amazon’s Mechanical Turk crowd-sourcing tool."),
            (Rule::NeedsContext, "Each subphrase is treated as an independent sentence and the authors learn the representations for all the subphrases in the training set."),
            (Rule::NeedsContext, "The good performance demonstrates the merits of Paragraph Vector in capturing the semantics of paragraphs."),
            (Rule::NeedsContext, "Once the algorithm generates the segments, it computes the user’s similarity to vectors that summarize each segment."),
            (Rule::NeedsContext, "Many product pairs have no common customers, and thus the approach is inefficient in terms of processing time and memory usage."),
            (Rule::UndefinedSymbol, "Scanning every customer is approximately O(M), not O(MN), because almost all customer vectors contain a small number of items."),
            (Rule::Background, "Recommendations should help a customer find and discover new, relevant, and interesting items."),
            (Rule::Background, "Recurrent models like RNNs and LSTMs are capable of encoding very long sequences, however, they have a representation biased towards their most recent inputs."),
            (Rule::Background, "Data-driven learning of vector-space word embeddings that capture lexico-semantic properties is a technique of central importance in natural language processing."),
            (Rule::Background, "The hyperparameters which achieve the best performance on the development set will be chosen for the final evaluation."),
            (Rule::Background, "Any method that requires learning will be trained on the training set, while its hyperparameters will be selected on the validation set."),
            // Round 15: failed in both panels.
            (Rule::FrontMatter, "Some of the resulting word vectors were made available for future research and comparison."),
            (Rule::UndefinedSymbol, "The final sequence representation for task m is the output of LSMT at step T."),
            // Round 16's builder: the 013 fact that replaced the one above.
            (Rule::UndefinedSymbol, "The output at the last moment hT can be regarded as the representation of the whole sequence."),
            (Rule::NeedsContext, "The authors believe that it has the capability to replace many complex neural models and more investigation is expected."),
            (Rule::NeedsContext, "The authors also believe it introduces a useful dimensionality reduction, as it removes high-frequency part of images that are unstable Mallat."),
        ];
        for (rule, t) in hits {
            let x = fill_only(t).unwrap_or_else(|| panic!("not fill-only: {t}"));
            assert_eq!(x.rule, rule, "{t}: {}", x.reason());
            // Fill-only, not dropped: a dropping rule would cost short papers their facts.
            assert!(
                check(t, t, None).is_none() || rule == Rule::UndefinedSymbol,
                "{t}"
            );
        }
        for t in GOOD.iter().chain(&[
            "The authors used the data of the first 6 days for training, and randomly split day 7 data into validation and test sets.",
            "Several works in the field of Natural Language Processing suggested to learn a latent representation of words.",
            "CharGREEN shows the best Pearson correlation coefficients on the SEEDA-S and SEEDA-E datasets.",
            "ReLU units train several times faster than their equivalents with tanh units.",
            "Specifically designed gates let the LSTM keep information over long spans.",
            // Near misses of the round-14 rules that the judges passed (earlier rounds included).
            "The image search task is the reverse: given a caption, the authors retrieve images that are a good fit to the query.",
            "Because the algorithm recommends highly correlated similar items, recommendation quality is excellent.",
            "If BERT is frozen, the proposed adapter still recovers 95% of the fine-tuned accuracy.",
            "The authors fine-tune the first three layers of the network and freeze the rest.",
            "The performance of the proposed model degrades gracefully as the noise level grows.",
            "Considering that the cross network only introduces O(d) extra parameters, DCN is memory efficient.",
            "The proposed method has a much lower error rate than the baselines on all four datasets.",
            "The authors argue that the proposed recommender should be retrained every day.",
            "The authors select hyperparameters on the validation set and report test accuracy.",
            "The authors release 1.4 million named-entity vectors trained on Freebase names.",
            "The authors compare Task A and Task B of the shared task with three baselines.",
            // Judged passes in rounds 13-15b that share the words the two rules above read.
            "Without designing proper test sets, the paper argues that it is in fact hard to estimate and measure progress of the field.",
            "The authors believe it is the first method to learn item embeddings without user identifiers.",
            "The authors think that the iOS and eBay catalogues behave alike.",
        ]) {
            assert_eq!(fill_only(t), None, "{t}");
        }
    }

    #[test]
    fn flattened_subscripts_are_symbols() {
        assert_dropped(
            Rule::UndefinedSymbol,
            &[
                "The authors observed that adding a hidden layer between ci and the CRF layer marginally improved their results.",
                "The authors first computed the 10-fold cross-validation RMSE of Uc for each user.",
                "Fortunately, the authors find Un can be approximated by a piecewise linear function.",
                "An aggregator is involved to encode CRi into a dense representation.",
            ],
        );
        assert_kept(&[
            "The paper presents results on the CoNLL-2002 and CoNLL-2003 datasets with the tagger of De Meulder.",
            "The soft-assignment used by Coates and Ng does not affect the performance much.",
            "The authors compare several LMs of different sizes on the same benchmark.",
            "The attention input consists of queries and keys of dimension dk, and values of dimension dv.",
        ]);
    }

    #[test]
    fn what_a_removed_citation_leaves() {
        assert_dropped(
            Rule::CitationFragment,
            &[
                "The authors train the 640- dimensional model on 50M words provided in.",
                "The authors train on several LDC corpora, described in detail in (320M words, 82K vocabulary).",
                "Inspired by, which learned linear mappings between translation word spaces, the authors solve a linear regression.",
                "Follow, the authors use two fully connected layers with 40 neurons as the base model.",
            ],
        );
        assert_kept(&[
            "The authors restricted the vocabulary size to the 1 million most frequent words of the Google News corpus.",
            "The proposed model outperforms the baselines in all settings, as shown by the ablation study.",
            "The distributional hypothesis, by which the meaning of words is evidenced by the contexts they occur in, motivated the work.",
        ]);
    }

    /// Round 4: a survey's "the authors" are a cited work's (helpers 46–48 failed both such facts).
    #[test]
    fn the_authors_of_a_cited_work() {
        for (text, quote) in [
            (
                "To combine deep learning and recommendation models, the authors proposed a general Bayesian deep learning framework.",
                "To combine deep learning and recommendation models, the authors proposed a general Bayesian deep learning framework [161]",
            ),
            (
                "Given a tweet with images, the authors utilized CNNs to extract features from images and LSTM to learn text features.",
                "Given a tweet with images, the authors utilized CNNs to extract features from images and LSTM to learn text features",
            ),
        ] {
            let got = check(text, quote, None);
            assert_eq!(got.map(|e| e.rule), Some(Rule::Background), "{quote}");
        }
        // The rewrite of "we" is no cited author; nor is a paper's own third-person voice.
        for (text, quote) in [
            (
                "The authors propose a general Bayesian deep learning framework for recommendation with two components.",
                "We propose a general Bayesian deep learning framework for recommendation with two components",
            ),
            (
                "In this paper, the authors propose a general Bayesian deep learning framework for recommendation systems.",
                "In this paper, the authors propose a general Bayesian deep learning framework for recommendation systems",
            ),
        ] {
            assert_eq!(check(text, quote, None), None, "{quote}");
        }
    }

    /// Round 4's debris flags (helpers 46–48): footnote marks after short words, commas and
    /// percent signs, and a heading repeated after "The".
    #[test]
    fn short_footnote_marks_and_repeated_headings() {
        assert_dropped(
            Rule::FigureDebris,
            &[
                "The initial learning rate4 was tuned from 0.0001 to 0.001 with increments of 0.0001.",
                "Using cooccurrence statistics from a large corpus of text,1 it is possible to construct high-quality semantic vectors.",
                "The proposed network achieves top-1 and top-5 test set error rates of 37.5% and 17.0%5.",
                "IMDB The IMDB dataset consists of 100,000 movie reviews with binary classes.",
                "NBOW The NBOW sums the word vectors and applies a non-linearity followed by a softmax classification layer.",
            ],
        );
        assert_kept(&[
            "The authors pool the conv5 features of the proposed network before the final classifier layer.",
            "The authors compare the grid settings (1,2) and (3,4) of the proposed model on both datasets.",
            "The proposed model improves accuracy by 2.5% over the strongest baseline on all four datasets.",
        ]);
        assert_eq!(footnote_stem("rate4"), Some("rate"));
        assert_eq!(footnote_stem("text,1"), Some("text,"));
        assert_eq!(footnote_stem("17.0%5"), Some("17.0%"));
        assert_eq!(footnote_stem("layer4"), None);
        assert_eq!(footnote_stem("log2"), None);
    }

    /// Round 3's self-containedness failures (helpers 42–44): an explanation of a result given
    /// before, "the resulting ...", "the same effect", "the previous three", "the two are", and
    /// "The output/input" as the whole subject.
    #[test]
    fn explanations_and_results_of_an_earlier_sentence() {
        assert_dropped(
            Rule::NeedsContext,
            &[
                "One possible reason is that the impressions and labels in offline data sets are fixed.",
                "An explanation is that the experts learned from neighboring domains still capture useful features.",
                "The reason the authors set different parameter values is due to different sizes of the datasets.",
                "The resulting relations may not be easy to map to relations needed for a particular knowledge base.",
                "Dimensionality reduction techniques applied to the item space tend to have the same effect by eliminating low-frequency items.",
                "The proposed model differs in three aspects: it is based on audio content while the previous three depend only on usage data.",
                "While the two are similar in theoretical complexity, dot-product attention is much faster in practice.",
                "The output is computed as a weighted sum of the values, where the weight assigned to each value is computed by a compatibility function.",
                "The store radically changes based on customer interests, showing programming titles to a software engineer.",
            ],
        );
        assert_kept(&[
            "The authors observe that Item2Vec is consistently better than the SVD model, where the gap between the two keeps growing.",
            "The output of the last fully-connected layer is fed to a 1000-way softmax which produces a distribution over the 1000 class labels.",
            "The proposed encoder has the same effect as dropout on the attention weights of the baseline model.",
            "The authors empirically validate the model quality against the previous model as a sanity check.",
        ]);
    }

    #[test]
    fn naming_conventions_and_code_notes() {
        assert_dropped(
            Rule::AuthorialDirective,
            &[
                "The authors will refer to the former as the forward LSTM and the latter as the backward LSTM.",
                "The difference in tokenization is denoted as word-GREEN (word-level) or charGREEN (character-level).",
            ],
        );
        assert_dropped(
            Rule::FrontMatter,
            &[
                "The authors have open-sourced their implementation along with a high-level API in TensorFlow.",
                "Yi Tay is added as an author later to help revise the paper for the major revision.",
            ],
        );
    }

    #[test]
    fn field_background() {
        assert_dropped(
            Rule::Background,
            &[
                "Several methods have been proposed to enhance the performance of SGD, such as Adadelta or Adam.",
                "Because of promising applications in second language learning, GEC has attracted widespread attention from the NLP community.",
                "Distributed representations of words have been widely used in many natural language processing (NLP) tasks.",
                "Recently, post-training has emerged as an important component of the full training pipeline.",
                "Recently, learning the underlying structure among tasks provide a more effective way for balancing customization and generalization.",
                // Round 13 (013): "were also proposed" is others' work, not the paper's proposal.
                "More recently, several multi-task encoder-decoder networks were also proposed for neural machine translation.",
                "Traditionally, a simple strategy for modeling sequence is to map the input sequence to a fixed-sized vector using one RNN.",
            ],
        );
        assert_kept(&[
            "The authors propose a method that has attracted attention as the first alignment-free metric.",
            "Skip-gram with negative sampling was introduced by Mikolov et al. in 2013 and has been widely adopted.",
            "The proposed model has received the highest human rating on all three test sets.",
        ]);
    }

    #[test]
    fn purpose_clauses_without_a_main_clause() {
        // Round 13 (013, flagged other-bad).
        assert_dropped(
            Rule::NeedsContext,
            &["To get more insights into how the shared structures influences the specific task."],
        );
        assert_kept(&[
            "To reduce overfitting in the fully-connected layers the authors employed a recently-developed regularization method called dropout.",
            "To handle long documents, the proposed model splits each input into overlapping chunks of 512 tokens.",
        ]);
    }

    #[test]
    fn words_broken_at_a_line_end() {
        // Round 13 (027): a caption line ran into a hyphenated word ("tradi-" … "tional").
        assert_dropped(
            Rule::FigureDebris,
            &["The authors are not the first to consider alternatives to tradithan an equivalent network with tanh neurons tional neuron models in CNNs."],
        );
        assert_kept(&[
            "The proposed model improves the ability of the network to represent rare words.",
            "The authors report a reduction in computation of 40% with no loss in accuracy.",
        ]);
    }

    #[test]
    fn bare_subjects_of_data_and_frameworks() {
        assert_dropped(
            Rule::NeedsContext,
            &[
                "The framework allows the authors to run multiple replicas of the same model in parallel.",
                "The training set comes with over 80,000 images each with 5 captions.",
                "The dataset consists of three sets: 8544 sentences for training, 2210 for test and 1101 for validation.",
                "The feature is similar to the impulse items in a supermarket checkout line.",
            ],
        );
        assert_kept(&[
            "The dataset of 100,000 movie reviews is split evenly into training and test sets.",
            "The proposed framework reduces the training time of the baseline by a factor of three.",
        ]);
    }

    #[test]
    fn pointers_and_roadmaps() {
        assert_dropped(
            Rule::Pointer,
            &[
                "The meta-training procedure of ARML is shown in Alg. 2 with all of its hyper-parameters.",
                "The paper presents the results for many more test images in the supplementary material.",
                "Some of the follow-up work will be published in an upcoming NIPS 2013 paper.",
                "Now the authors are ready to describe the overall architecture of their CNN in full.",
                "The authors start with a brief overview of their RL algorithm, followed by some results.",
                "The authors will use paragraph vectors and compute the distances between the paragraphs.",
                "Due to the space limit, the authors only present the results on Art-Multi datasets.",
            ],
        );
        assert_kept(&[
            "The Transformer achieves 28.4 BLEU, as shown in the experiments on WMT 2014 English-German.",
            "The authors will focus on the immense impact deep learning has had on YouTube video recommendations.",
            "The space limit of the mobile device restricts the model to four million parameters in the study.",
        ]);
    }

    #[test]
    fn fused_numbers_glyphs_and_glossary_entries() {
        assert_dropped(
            Rule::FigureDebris,
            &[
                "Recommendation quality is low.1 Cluster models group numerous customers together in a segment.",
                "The authors design a new test set for measuring syntactic regularities1, and show many can be learned.",
                "SUBJ Subjectivity data set where the goal is to classify each snippet as subjective or objective.",
                "Given the growth of information on the web, users are o›en greeted with countless products.",
                "The a−ention mechanism of the model weighs the neighbours of each item in the session.",
                "„e former mentioned collaborative deep learning model is lack of robustness to noise.",
                "Traditional Collaborative Filtering A traditional collaborative filtering algorithm represents a customer as a vector.",
                "A common way to compare word vectors is to measure the cosine of their angle: 4.",
            ],
        );
        assert_kept(&[
            "The conv5 features of AlexNet are used as the image representation in all experiments.",
            "Word2vec and GloVe are compared on the analogy task with vectors of 300 dimensions.",
        ]);
    }

    #[test]
    fn every_rule_has_a_name_and_a_reason() {
        let names: Vec<&str> = Rule::ALL.iter().map(|r| r.name()).collect();
        assert_eq!(names.len(), 11);
        let e = check(
            "It achieves 28.4 BLEU on the WMT 2014 English-to-German task today.",
            "x",
            None,
        )
        .unwrap();
        assert_eq!(e.reason(), "needs-context: opens with \"It\"");
        assert_eq!(
            rule("The authors propose a model that is small and fast and works on phones."),
            None
        );
    }
}
