//! Candidate facts: generation only (LLM mode). The gates (quote check, NLI support, neutrality,
//! deduplication) live elsewhere and consume [`llm::RawCandidate`]s.

pub mod llm;
