//! LLM mode of the builder: an async client for any OpenAI-compatible `POST {base}/v1/chat/completions`
//! endpoint (llama.cpp server, vLLM, Ollama) with JSON-schema constrained answers, bounded concurrency,
//! retries and an on-disk cache so that a killed run resumes without repeating finished calls.

pub mod cache;
pub mod client;

pub use cache::LlmCache;
pub use client::{ChatRequest, LlmClient, LlmConfig, Message};
