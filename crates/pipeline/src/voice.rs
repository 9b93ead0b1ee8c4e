//! The authors' voice → the voice a reviewer states a fact in.
//!
//! A reviewer writes "The paper proposes X", "the proposed model", "the results", not "we" and
//! "our", and never "the authors' model". Rules, per sentence (word level, punctuation kept):
//! - a self-reference frame opening the sentence is dropped: "In this paper, we" / "In this work
//!   we" / "Here, we" → "we" (then the rules below);
//! - "This paper/article/study" anywhere → "The paper"; "This work" too when a present-tense
//!   contribution verb follows ("This work introduces Y"): that is the paper speaking of itself.
//!   "This work was extended by ..." (past tense, usually prior work) is left for the
//!   needs-context rule of `reviewer_facts`;
//! - the first "we", followed (after at most one adverb) by a present-tense contribution verb, →
//!   "the paper" + third-person verb ("we also show" → "the paper also shows"); any other first
//!   "we" → "the authors"; a later "we" → "the authors" if the sentence has not named them yet,
//!   else "they" ("the authors found that when they train"); "us" → "the authors"/"them";
//! - "our" + a method noun → "the proposed" ("our model" → "the proposed model"); "our
//!   paper/work/study" → "the paper"; "our contributions/goal/aim" → "the paper's"; "our own" →
//!   "their own" after the authors are named; any other "our" → "their" after the authors are named,
//!   "the" otherwise ("our results" → "the results").
//!
//! Only the fact text is rewritten. The quotation stays verbatim (the quote gate compares it with
//! the source), and the source-NLI premise is rewritten by the same function, so the NLI model
//! judges content rather than the change of voice.

/// Present-tense verbs with which "we" means "the paper" (base form, third-person form): what
/// the paper proposes, shows, studies or argues. Experimental actions ("we evaluate", "we
/// compare", "we train") stay with "the authors", which is how a reviewer reports them.
const PAPER_VERBS: &[(&str, &str)] = &[
    ("propose", "proposes"),
    ("introduce", "introduces"),
    ("present", "presents"),
    ("show", "shows"),
    ("demonstrate", "demonstrates"),
    ("describe", "describes"),
    ("study", "studies"),
    ("investigate", "investigates"),
    ("explore", "explores"),
    ("analyze", "analyzes"),
    ("analyse", "analyses"),
    ("discuss", "discusses"),
    ("examine", "examines"),
    ("address", "addresses"),
    ("argue", "argues"),
    ("focus", "focuses"),
    ("prove", "proves"),
    ("conclude", "concludes"),
];

/// Adverbs allowed between "we" and its verb ("we also propose").
const ADVERBS: &[&str] = &[
    "also",
    "further",
    "then",
    "first",
    "additionally",
    "empirically",
    "experimentally",
    "theoretically",
    "formally",
    "systematically",
    "extensively",
    "briefly",
    "finally",
    "next",
    "now",
];

/// After "our": the paper's own method, stated as "the proposed ...".
const PROPOSED_NOUNS: &[&str] = &[
    "model",
    "models",
    "method",
    "methods",
    "approach",
    "approaches",
    "algorithm",
    "algorithms",
    "system",
    "systems",
    "architecture",
    "architectures",
    "framework",
    "technique",
    "techniques",
    "network",
    "networks",
    "metric",
    "metrics",
    "scheme",
    "solution",
    "estimator",
    "procedure",
    "pipeline",
];

/// After "our": the paper itself ("our work" → "the paper").
const PAPER_NOUNS: &[&str] = &["paper", "work", "study", "article"];

/// After "our": something the paper has ("our contributions" → "the paper's contributions").
const PAPER_POSSESSIONS: &[&str] = &[
    "contribution",
    "contributions",
    "goal",
    "goals",
    "aim",
    "objective",
    "motivation",
    "hypothesis",
    "focus",
];

/// Self-reference frames dropped before a "we" at the start of a sentence (lowercase).
const FRAMES: &[&str] = &[
    "in this paper,",
    "in this paper",
    "in this work,",
    "in this work",
    "in this article,",
    "in this article",
    "in this study,",
    "in this study",
    "in this note,",
    "in the present paper,",
    "in the present work,",
    "here,",
    "here",
];

/// Rewrite every sentence of `text`; a sentence ends with a word ending in `.`, `!` or `?`
/// (a stray abbreviation only splits a sentence, which at worst says "the authors" twice).
pub fn rewrite_text(text: &str) -> String {
    let mut out = Vec::new();
    let mut sentence: Vec<&str> = Vec::new();
    for w in text.split_whitespace() {
        sentence.push(w);
        if w.ends_with(['.', '!', '?']) {
            out.push(rewrite(&sentence.join(" ")));
            sentence.clear();
        }
    }
    if !sentence.is_empty() {
        out.push(rewrite(&sentence.join(" ")));
    }
    out.join(" ")
}

/// Whether the sentence speaks of the authors ("we", "our") and of others ("their method")
/// at once: the rewrite turns "we" into "the authors" and "our" into "their", after which the
/// others' "their" reads as the authors' ("... their method can outperform the proposed
/// method" from "their method can outperform our method"). Such a sentence is not rewritten
/// into a candidate.
pub fn third_person_clash(sentence: &str) -> bool {
    let has = |ws: &[&str]| {
        sentence.split_whitespace().any(|w| {
            let (_, core, _) = split_word(w);
            ws.contains(&core.to_lowercase().as_str())
        })
    };
    has(&["we", "our", "ours", "us"]) && has(&["they", "their", "theirs", "them"])
}

/// Rewrite one sentence from the authors' voice into a reviewer's.
pub fn rewrite(sentence: &str) -> String {
    let s = drop_frame(&drop_purpose_frame(sentence.trim()));
    let s = self_reference(&s);
    let words: Vec<&str> = s.split(' ').collect();
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    let mut named = false; // "the authors" already said in this sentence
    let mut saw_we = false;
    let mut i = 0;
    while i < words.len() {
        let (lead, core, tail) = split_word(words[i]);
        let lower = core.to_lowercase();
        let next = |k: usize| {
            words
                .get(i + k)
                .map(|w| split_word(w))
                .filter(|(l, _, _)| l.is_empty())
        };
        // Capitalised as the word was, or as the first word once a frame was dropped.
        let at_start = core.starts_with(char::is_uppercase) || (out.is_empty() && lead.is_empty());
        let push = |text: String, out: &mut Vec<String>| {
            out.push(format!("{lead}{}{tail}", cap_if(&text, at_start)))
        };
        match lower.as_str() {
            "we" | "we've" | "we’ve" | "we're" | "we’re" | "we'll" | "we’ll" | "we'd" | "we’d" =>
            {
                let contraction = match lower.get(2..).unwrap_or("") {
                    "'ve" | "’ve" => " have",
                    "'re" | "’re" => " are",
                    "'ll" | "’ll" => " will",
                    "'d" | "’d" => " would",
                    _ => "",
                };
                // "we (adverb) propose" → "the paper (adverb) proposes".
                let plain_tail = tail.is_empty() && contraction.is_empty();
                let (adverb, verb_at) = match next(1) {
                    Some((_, a, "")) if ADVERBS.contains(&a.to_lowercase().as_str()) => {
                        (Some(words[i + 1]), 2)
                    }
                    _ => (None, 1),
                };
                let verb = next(verb_at).and_then(|(_, v, vt)| {
                    PAPER_VERBS
                        .iter()
                        .find(|(base, _)| *base == v)
                        .map(|(_, third)| format!("{third}{vt}"))
                });
                if let (false, true, Some(verb)) = (saw_we, plain_tail, verb) {
                    push("the paper".into(), &mut out);
                    if let Some(a) = adverb {
                        out.push(a.to_string());
                    }
                    out.push(verb);
                    saw_we = true;
                    i += verb_at + 1;
                    continue;
                }
                saw_we = true;
                let who = if named { "they" } else { "the authors" };
                named = true;
                push(format!("{who}{contraction}"), &mut out);
            }
            "us" => {
                push(if named { "them" } else { "the authors" }.into(), &mut out);
                named = true;
            }
            "ourselves" => {
                push(
                    if named {
                        "themselves"
                    } else {
                        "the authors themselves"
                    }
                    .into(),
                    &mut out,
                );
                named = true;
            }
            "ours" => {
                // "another research goal of ours" → "of the authors"; "than ours" → "than the
                // proposed one" (a comparison is with the paper's method).
                let after_of = i > 0 && split_word(words[i - 1]).1.eq_ignore_ascii_case("of");
                let who = match (named, after_of) {
                    (true, _) => "theirs",
                    (false, true) => "the authors",
                    (false, false) => "the proposed one",
                };
                push(who.into(), &mut out);
            }
            "our" if tail.is_empty() => {
                let noun = next(1)
                    .map(|(_, n, _)| n.to_lowercase())
                    .unwrap_or_default();
                if PAPER_NOUNS.contains(&noun.as_str()) {
                    // "our work" → "the paper": the noun is replaced too.
                    let (_, _, ntail) = split_word(words[i + 1]);
                    push(format!("the paper{ntail}"), &mut out);
                    i += 2;
                    continue;
                }
                let det = if PROPOSED_NOUNS.contains(&noun.as_str()) {
                    "the proposed"
                } else if PAPER_POSSESSIONS.contains(&noun.as_str()) {
                    "the paper's"
                } else if named {
                    "their"
                } else {
                    "the"
                };
                if noun == "own" && !named {
                    // "our own X" with nobody named: "the X" (never "the authors' own").
                    push("the".into(), &mut out);
                    i += 2;
                    continue;
                }
                push(det.into(), &mut out);
            }
            _ => out.push(words[i].to_string()),
        }
        i += 1;
    }
    out.join(" ")
}

/// Purpose frames that point back ("To this end, we propose X"): the main clause states the fact
/// on its own, and a reviewer would state just that. Other anaphoric openers ("In this case,")
/// change the meaning when dropped and are left to the needs-context rule.
const PURPOSE_FRAMES: &[&str] = &[
    "to this end,",
    "to that end,",
    "toward this goal,",
    "towards this goal,",
    "toward this end,",
    "to achieve this goal,",
    "to achieve this,",
    "for this purpose,",
];

/// "To this end, the paper proposes X" → "The paper proposes X".
fn drop_purpose_frame(s: &str) -> String {
    for f in PURPOSE_FRAMES {
        let Some(head) = s.get(..f.len()) else {
            continue;
        };
        if head.eq_ignore_ascii_case(f) {
            let rest = s[f.len()..].trim_start();
            let mut c = rest.chars();
            if let Some(first) = c.next() {
                return first.to_uppercase().chain(c).collect();
            }
        }
    }
    s.to_string()
}

/// "In this paper, we propose" → "we propose" (only when "we" follows the frame); in mid-sentence
/// too, after a comma: "Although X, in this paper we argue" → "Although X, we argue" (else it
/// would read "in the paper the paper argues").
fn drop_frame(s: &str) -> String {
    for f in FRAMES {
        let Some(head) = s.get(..f.len()) else {
            continue;
        };
        let rest = s[f.len()..].trim_start();
        if head.eq_ignore_ascii_case(f) && rest.starts_with("we ") {
            return rest.to_string();
        }
    }
    let mut s = s.to_string();
    for f in FRAMES.iter().filter(|f| f.starts_with("in ")) {
        let framed = format!(", {f} we ");
        while let Some(at) = s.find(&framed) {
            s.replace_range(at..at + framed.len(), ", we ");
        }
    }
    s
}

/// "This paper" → "The paper", and "This work" before a present-tense contribution verb.
fn self_reference(s: &str) -> String {
    let words: Vec<&str> = s.split(' ').collect();
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    let mut i = 0;
    while i < words.len() {
        let (lead, core, _) = split_word(words[i]);
        if matches!(core, "This" | "this") && i + 1 < words.len() {
            let (nlead, noun, ntail) = split_word(words[i + 1]);
            let verb_follows = words
                .get(i + 2)
                .map(|w| split_word(w).1)
                .is_some_and(|v| PAPER_VERBS.iter().any(|(_, third)| *third == v));
            let selfref = nlead.is_empty()
                && (matches!(noun, "paper" | "article" | "study")
                    || (noun == "work" && ntail.is_empty() && verb_follows));
            if selfref {
                let the = if core == "This" { "The" } else { "the" };
                out.push(format!("{lead}{the} paper{ntail}"));
                i += 2;
                continue;
            }
        }
        out.push(words[i].to_string());
        i += 1;
    }
    out.join(" ")
}

fn cap_if(text: &str, cap: bool) -> String {
    let mut c = text.chars();
    match (cap, c.next()) {
        (true, Some(f)) => f.to_uppercase().chain(c).collect(),
        _ => text.to_string(),
    }
}

/// (leading punctuation, word, trailing punctuation); apostrophes inside the word are kept.
pub fn split_word(w: &str) -> (&str, &str, &str) {
    let start = w
        .char_indices()
        .find(|(_, c)| c.is_alphanumeric())
        .map(|(i, _)| i)
        .unwrap_or(w.len());
    let end = w
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_alphanumeric())
        .map(|(i, c)| i + c.len_utf8())
        .unwrap_or(start)
        .max(start);
    (&w[..start], &w[start..end], &w[end..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn others_their_next_to_we_is_a_clash() {
        assert!(third_person_clash(
            "We also find that if we use the sparsity found by our method, their method can come close to our method."
        ));
        assert!(!third_person_clash(
            "We propose two novel model architectures for computing word vectors."
        ));
        assert!(!third_person_clash(
            "Their method fails on long sentences, as shown by Smith et al."
        ));
    }

    #[test]
    fn contribution_verbs_become_the_paper() {
        assert_eq!(
            rewrite("We propose two novel model architectures for computing word vectors."),
            "The paper proposes two novel model architectures for computing word vectors."
        );
        assert_eq!(
            rewrite("We show that many such regularities can be learned."),
            "The paper shows that many such regularities can be learned."
        );
        assert_eq!(
            rewrite("In this paper, we also study the problem of X."),
            "The paper also studies the problem of X."
        );
        assert_eq!(
            rewrite("Here we present a simple baseline."),
            "The paper presents a simple baseline."
        );
        assert_eq!(
            rewrite("To this end, we propose a modified version of SGNS named Item2Vec."),
            "The paper proposes a modified version of SGNS named Item2Vec."
        );
        assert_eq!(
            rewrite("Toward this goal, the predictive uncertainty of each sample is evaluated."),
            "The predictive uncertainty of each sample is evaluated."
        );
        assert_eq!(
            rewrite("This paper proposes the Transformer."),
            "The paper proposes the Transformer."
        );
        assert_eq!(
            rewrite("This work introduces GREEN, an alignment-free metric."),
            "The paper introduces GREEN, an alignment-free metric."
        );
        // Past tense is the authors' action, and "This work" in the past tense is left alone.
        assert_eq!(
            rewrite("We proposed an alignment-free metric."),
            "The authors proposed an alignment-free metric."
        );
        assert_eq!(
            rewrite("This work was later extended to images."),
            "This work was later extended to images."
        );
    }

    #[test]
    fn our_becomes_the_proposed_or_the_never_the_authors_apostrophe() {
        assert_eq!(
            rewrite("Our model achieves 28.4 BLEU on the WMT 2014 task."),
            "The proposed model achieves 28.4 BLEU on the WMT 2014 task."
        );
        assert_eq!(
            rewrite("Our results show a 2% gain over the SVD baseline."),
            "The results show a 2% gain over the SVD baseline."
        );
        assert_eq!(
            rewrite("We compare our method to a SVD based item-item similarity system."),
            "The authors compare the proposed method to a SVD based item-item similarity system."
        );
        assert_eq!(
            rewrite("Because existing algorithms cannot scale, we developed our own."),
            "Because existing algorithms cannot scale, the authors developed their own."
        );
        assert_eq!(
            rewrite("We believe that our comprehensive test set will help."),
            "The authors believe that their comprehensive test set will help."
        );
        assert_eq!(
            rewrite("Our main contributions are twofold."),
            "The main contributions are twofold."
        );
        assert_eq!(
            rewrite("Our contributions are twofold."),
            "The paper's contributions are twofold."
        );
        assert_eq!(
            rewrite("Our work differs from prior methods."),
            "The paper differs from prior methods."
        );
        for s in [
            "We compare our method to a SVD based system.",
            "At Amazon.com, we use our recommendation algorithms to personalize the store.",
            "Our code, our data and our model are released.",
        ] {
            assert!(!rewrite(s).contains("authors'"), "{}", rewrite(s));
        }
    }

    #[test]
    fn later_we_is_they_and_us_is_the_authors() {
        assert_eq!(
            rewrite("We found that when we train longer, the error drops."),
            "The authors found that when they train longer, the error drops."
        );
        assert_eq!(
            rewrite("Inspired by SGNS, we describe a method we name Item2Vec."),
            "Inspired by SGNS, the paper describes a method the authors name Item2Vec."
        );
        assert_eq!(
            rewrite("This allows us to train on one trillion words."),
            "This allows the authors to train on one trillion words."
        );
        assert_eq!(
            rewrite("(we use a learning rate of 0.025)."),
            "(the authors use a learning rate of 0.025)."
        );
        assert_eq!(
            rewrite("Making generation less sequential is another research goal of ours."),
            "Making generation less sequential is another research goal of the authors."
        );
        assert_eq!(
            rewrite("We've trained it for 12 hours."),
            "The authors have trained it for 12 hours."
        );
    }

    #[test]
    fn text_without_first_person_is_unchanged() {
        for s in [
            "The Transformer achieves 28.4 BLEU on the WMT 2014 English-to-German task.",
            "Western Europe was covered; wearables were excluded.",
            "In this case the model overfits.",
        ] {
            assert_eq!(rewrite(s), s);
        }
        assert_eq!(
            rewrite_text("We propose X for Y. Our model is small."),
            "The paper proposes X for Y. The proposed model is small."
        );
    }

    #[test]
    fn a_self_reference_frame_in_mid_sentence_is_dropped() {
        assert_eq!(
            rewrite("Although there is much evidence for X, in this paper we argue for Y."),
            "Although there is much evidence for X, the paper argues for Y."
        );
        assert_eq!(
            rewrite("Unlike prior work, in this work, we train on Z."),
            "Unlike prior work, the authors train on Z."
        );
    }
}
