//! The one HTTP client constructor. Model downloads and the LLM client both come through here, so
//! every request trusts the same certificates and goes through the same proxies.
//!
//! Trust: the webpki roots compiled into the binary (so a machine without a system store still
//! reaches public hosts) plus the system store, or instead of it the PEM certificates in
//! `SSL_CERT_FILE` and the directories in `SSL_CERT_DIR` (rustls-native-certs, as OpenSSL reads
//! them). A TLS-inspecting proxy's CA is trusted by installing it in the system store or by naming
//! it in `SSL_CERT_FILE`.
//!
//! Proxies: reqwest reads `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and `NO_PROXY` (and their
//! lower-case forms) by default; nothing here turns that off.

use std::time::Duration;

use anyhow::{bail, Context, Result};

/// The environment variable with extra trusted CA certificates (PEM), as in OpenSSL and curl.
pub const CERT_FILE_ENV: &str = "SSL_CERT_FILE";

/// A client with the project's trust roots and proxy settings. `read`: the longest wait for the
/// next bytes of a response (None: no limit beyond what the caller sets per request).
pub fn client(connect: Duration, read: Option<Duration>) -> Result<reqwest::Client> {
    check_cert_file()?;
    let mut b = reqwest::Client::builder()
        .connect_timeout(connect)
        .user_agent(concat!("semtrace/", env!("CARGO_PKG_VERSION")));
    if let Some(r) = read {
        b = b.read_timeout(r);
    }
    b.build().context("setting up the HTTP client")
}

/// rustls-native-certs skips an unreadable `SSL_CERT_FILE` silently, which would surface later
/// as an "UnknownIssuer" that names neither the variable nor the file: refuse it here instead.
fn check_cert_file() -> Result<()> {
    let Some(path) = std::env::var_os(CERT_FILE_ENV).filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    let shown = path.to_string_lossy();
    let pem = std::fs::read(&path)
        .with_context(|| format!("{CERT_FILE_ENV}={shown}: cannot read the CA certificates"))?;
    let certs = reqwest::Certificate::from_pem_bundle(&pem)
        .with_context(|| format!("{CERT_FILE_ENV}={shown}: not a PEM certificate bundle"))?;
    if certs.is_empty() {
        bail!("{CERT_FILE_ENV}={shown} holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
    }
    Ok(())
}

/// An error and all its causes, joined with ": " (reqwest's own message names no cause).
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

/// Whether a transport error is the server's certificate being refused (rustls says "invalid
/// peer certificate: UnknownIssuer" and the like). Retrying cannot help with it.
pub fn is_certificate_problem(e: &dyn std::error::Error) -> bool {
    error_chain(e).to_ascii_lowercase().contains("certificate")
}

/// What to do about a refused certificate, for error messages.
pub const CERTIFICATE_HINT: &str = "the server's TLS certificate is not signed by a CA this \
    machine trusts; behind a TLS-inspecting proxy, set SSL_CERT_FILE to a PEM file with the \
    proxy's CA certificate (or install that CA in the system store)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificate_problems_are_recognised_through_the_chain() {
        let inner = std::io::Error::other("invalid peer certificate: UnknownIssuer");
        let outer = anyhow::Error::new(inner).context("GET https://example.org/x");
        let e: &dyn std::error::Error = outer.as_ref();
        assert!(is_certificate_problem(e));
        assert!(
            error_chain(e).ends_with("UnknownIssuer"),
            "{}",
            error_chain(e)
        );
        let other = std::io::Error::other("connection refused");
        assert!(!is_certificate_problem(&other));
    }
}
