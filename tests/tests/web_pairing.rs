//! The chair page's pairing rules (web/pairing.js: manifest, name, folder, only bundle, and the
//! problems it names), unit-tested by node without a browser: tests/js/pairing-test.mjs.

use std::process::Command;

use semtrace_e2e::root;

#[test]
fn chair_page_pairing_rules() {
    let o = Command::new("node")
        .arg(root().join("tests/js/pairing-test.mjs"))
        .output()
        .expect("node (Debian nodejs) must be installed");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "pairing tests failed: {}{out}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("JSON summary");
    assert_eq!(v["ok"], true);
    assert!(v["tests"].as_u64().unwrap() >= 6, "{v}");
}
