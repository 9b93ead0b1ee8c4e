//! A minimal reader for the safetensors format: an 8-byte little-endian header length, a JSON
//! header `{name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {...}}`, then the
//! raw little-endian tensor data (offsets relative to its start). Only what the embedder needs.

use std::collections::BTreeMap;

use serde::Deserialize;

use semtrace_core::error::{Error, Result};

#[derive(Debug, Clone, Deserialize)]
struct Entry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: [usize; 2],
}

/// One tensor: its dtype name (as in the file, e.g. "F32"), shape and raw bytes.
#[derive(Debug, Clone)]
pub struct TensorView<'a> {
    pub dtype: String,
    pub shape: Vec<usize>,
    pub data: &'a [u8],
}

impl TensorView<'_> {
    /// The values of an F32 tensor.
    pub fn to_f32(&self) -> Result<Vec<f32>> {
        if self.dtype != "F32" {
            return Err(Error::model(format!(
                "tensor has dtype {}, only F32 is supported",
                self.dtype
            )));
        }
        Ok(self
            .data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
}

/// A parsed safetensors file borrowing the bytes it was read from.
#[derive(Debug)]
pub struct SafeTensors<'a> {
    tensors: BTreeMap<String, TensorView<'a>>,
}

fn elem_size(dtype: &str) -> Option<usize> {
    Some(match dtype {
        "F64" | "I64" | "U64" => 8,
        "F32" | "I32" | "U32" => 4,
        "F16" | "BF16" | "I16" | "U16" => 2,
        "I8" | "U8" | "BOOL" | "F8_E4M3" | "F8_E5M2" => 1,
        _ => return None,
    })
}

impl<'a> SafeTensors<'a> {
    pub fn parse(bytes: &'a [u8]) -> Result<SafeTensors<'a>> {
        let bad = |m: String| Error::model(format!("model.safetensors is malformed: {m}"));
        if bytes.len() < 8 {
            return Err(bad("shorter than its 8-byte header length".into()));
        }
        let n = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
        let n = usize::try_from(n)
            .ok()
            .filter(|&n| n <= bytes.len() - 8)
            .ok_or_else(|| bad(format!("header length {n} exceeds the file")))?;
        let header: BTreeMap<String, serde_json::Value> =
            serde_json::from_slice(&bytes[8..8 + n]).map_err(|e| bad(format!("header: {e}")))?;
        let data = &bytes[8 + n..];
        let mut tensors = BTreeMap::new();
        for (name, v) in header {
            if name == "__metadata__" {
                continue;
            }
            let e: Entry = serde_json::from_value(v).map_err(|e| bad(format!("{name}: {e}")))?;
            let [begin, end] = e.data_offsets;
            if begin > end || end > data.len() {
                return Err(bad(format!("{name}: data offsets out of range")));
            }
            let count: usize = e.shape.iter().product();
            match elem_size(&e.dtype) {
                Some(s) if s * count == end - begin => {}
                Some(_) => return Err(bad(format!("{name}: size does not match its shape"))),
                None => return Err(bad(format!("{name}: unknown dtype {}", e.dtype))),
            }
            tensors.insert(
                name,
                TensorView {
                    dtype: e.dtype,
                    shape: e.shape,
                    data: &data[begin..end],
                },
            );
        }
        Ok(SafeTensors { tensors })
    }

    pub fn get(&self, name: &str) -> Option<&TensorView<'a>> {
        self.tensors.get(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tensors.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut v = (header.len() as u64).to_le_bytes().to_vec();
        v.extend_from_slice(header.as_bytes());
        v.extend_from_slice(data);
        v
    }

    #[test]
    fn reads_f32_tensors_and_rejects_bad_offsets() {
        let data: Vec<u8> = [1.0f32, -2.5, 3.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let f = file(
            r#"{"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}}"#,
            &data,
        );
        let st = SafeTensors::parse(&f).unwrap();
        let w = st.get("w").unwrap();
        assert_eq!(w.shape, vec![3]);
        assert_eq!(w.to_f32().unwrap(), vec![1.0, -2.5, 3.0]);
        let f = file(
            r#"{"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#,
            &data,
        );
        assert!(SafeTensors::parse(&f).is_err());
        assert!(SafeTensors::parse(b"\xff\xff\xff\xff\xff\xff\xff\x7f{}").is_err());
        assert!(SafeTensors::parse(b"abc").is_err());
    }
}
