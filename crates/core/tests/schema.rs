//! The committed JSON Schema and the serde types describe the same bundle.

use semtrace_core::bundle::Bundle;

fn schema() -> jsonschema::Validator {
    let text = include_str!("../../../schema/bundle-v1.schema.json");
    jsonschema::validator_for(&serde_json::from_str(text).unwrap()).expect("schema compiles")
}

fn sample() -> serde_json::Value {
    serde_json::from_str(include_str!("../../../tests/fixtures/sample-bundle.json")).unwrap()
}

#[test]
fn sample_bundle_satisfies_schema_and_types() {
    let v = sample();
    let errors: Vec<String> = schema().iter_errors(&v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let b = Bundle::from_json(&v.to_string()).expect("sample bundle is valid");
    assert_eq!(b.k, 12);
}

#[test]
fn serialised_bundle_satisfies_schema() {
    let b = Bundle::from_json(&sample().to_string()).unwrap();
    let v = serde_json::to_value(&b).unwrap();
    assert!(schema().is_valid(&v));
}

#[test]
fn schema_rejects_what_the_types_reject() {
    let s = schema();
    let mut v = sample();
    v.as_object_mut().unwrap().remove("codeword");
    assert!(!s.is_valid(&v));
    assert!(Bundle::from_json(&v.to_string()).is_err());

    let mut v = sample();
    v["format_version"] = "2.0".into();
    assert!(!s.is_valid(&v));
    assert!(Bundle::from_json(&v.to_string()).is_err());

    let mut v = sample();
    v["codeword"][0] = 2.into();
    assert!(!s.is_valid(&v));
    assert!(Bundle::from_json(&v.to_string()).is_err());

    let mut v = sample();
    v["positions"][0]["facts"].as_array_mut().unwrap().pop();
    assert!(!s.is_valid(&v));
    assert!(Bundle::from_json(&v.to_string()).is_err());

    let mut v = sample();
    v["model"]["sha256"] = "xyz".into();
    assert!(!s.is_valid(&v));
    assert!(Bundle::from_json(&v.to_string()).is_err());
}
