//! A BERT encoder as an ONNX `ModelProto`, built in Rust from safetensors weights (no torch, no
//! Python export step). Standard opset-17 ops only: Gather, Shape, Slice, Add, Sub, Mul, Div, Erf,
//! MatMul, Reshape, Transpose, Softmax, Cast, LayerNormalization. Weights become initializers.
//!
//! Inputs `input_ids`, `attention_mask`: int64 `[batch, seq]` (symbolic). Output
//! `last_hidden_state`: float `[batch, seq, hidden]`. Token type ids are all 0 for single texts,
//! so type embedding 0 is added as a constant. Pooling and normalisation happen outside the graph.

use serde::Deserialize;
use tract_onnx::pb;

use super::safetensors::SafeTensors;
use semtrace_core::error::{Error, Result};

/// The fields of a HuggingFace BERT `config.json` the graph needs.
#[derive(Debug, Clone, Deserialize)]
pub struct BertConfig {
    pub hidden_size: usize,
    pub num_attention_heads: usize,
    pub num_hidden_layers: usize,
    pub intermediate_size: usize,
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f32,
    #[serde(default = "default_act")]
    pub hidden_act: String,
    #[serde(default = "default_max_pos")]
    pub max_position_embeddings: usize,
    #[serde(default)]
    pub model_type: String,
}

fn default_eps() -> f32 {
    1e-12
}
fn default_act() -> String {
    "gelu".into()
}
fn default_max_pos() -> usize {
    512
}

impl BertConfig {
    pub fn from_json(bytes: &[u8]) -> Result<BertConfig> {
        let c: BertConfig = serde_json::from_slice(bytes)
            .map_err(|e| Error::model(format!("config.json is not a BERT config: {e}")))?;
        if !c.model_type.is_empty() && c.model_type != "bert" {
            return Err(Error::model(format!(
                "config.json says model_type {:?}: only BERT encoders are supported",
                c.model_type
            )));
        }
        if c.hidden_act != "gelu" {
            return Err(Error::model(format!(
                "hidden_act {:?} is not supported (only exact gelu)",
                c.hidden_act
            )));
        }
        if c.num_attention_heads == 0 || !c.hidden_size.is_multiple_of(c.num_attention_heads) {
            return Err(Error::model(
                "hidden_size is not a multiple of num_attention_heads",
            ));
        }
        Ok(c)
    }
}

const FLOAT: i32 = pb::tensor_proto::DataType::Float as i32;
const INT64: i32 = pb::tensor_proto::DataType::Int64 as i32;

struct Builder<'a> {
    st: &'a SafeTensors<'a>,
    prefix: &'a str,
    nodes: Vec<pb::NodeProto>,
    inits: Vec<pb::TensorProto>,
    n: usize,
}

fn attr_int(name: &str, i: i64) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.into(),
        r#type: pb::attribute_proto::AttributeType::Int as i32,
        i,
        ..Default::default()
    }
}

fn attr_ints(name: &str, ints: &[i64]) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.into(),
        r#type: pb::attribute_proto::AttributeType::Ints as i32,
        ints: ints.to_vec(),
        ..Default::default()
    }
}

fn attr_float(name: &str, f: f32) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.into(),
        r#type: pb::attribute_proto::AttributeType::Float as i32,
        f,
        ..Default::default()
    }
}

fn value_info(name: &str, elem_type: i32, dims: &[&str]) -> pb::ValueInfoProto {
    use pb::tensor_shape_proto::{dimension::Value, Dimension};
    pb::ValueInfoProto {
        name: name.into(),
        r#type: Some(pb::TypeProto {
            value: Some(pb::type_proto::Value::TensorType(pb::type_proto::Tensor {
                elem_type,
                shape: Some(pb::TensorShapeProto {
                    dim: dims
                        .iter()
                        .map(|d| Dimension {
                            value: Some(match d.parse::<i64>() {
                                Ok(v) => Value::DimValue(v),
                                Err(_) => Value::DimParam(d.to_string()),
                            }),
                            ..Default::default()
                        })
                        .collect(),
                }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

impl<'a> Builder<'a> {
    fn fresh(&mut self, hint: &str) -> String {
        self.n += 1;
        format!("{hint}_{}", self.n)
    }

    fn node(&mut self, op: &str, inputs: &[&str], attrs: Vec<pb::AttributeProto>) -> String {
        let out = self.fresh(&op.to_ascii_lowercase());
        self.node_named(op, inputs, attrs, &out);
        out
    }

    fn node_named(&mut self, op: &str, inputs: &[&str], attrs: Vec<pb::AttributeProto>, out: &str) {
        self.nodes.push(pb::NodeProto {
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![out.to_string()],
            name: format!("n{}", self.nodes.len()),
            op_type: op.into(),
            attribute: attrs,
            ..Default::default()
        });
    }

    fn const_f32(&mut self, hint: &str, dims: &[usize], values: &[f32]) -> String {
        let name = self.fresh(hint);
        self.inits.push(pb::TensorProto {
            name: name.clone(),
            dims: dims.iter().map(|&d| d as i64).collect(),
            data_type: FLOAT,
            raw_data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
            ..Default::default()
        });
        name
    }

    fn const_i64(&mut self, hint: &str, values: &[i64]) -> String {
        let name = self.fresh(hint);
        self.inits.push(pb::TensorProto {
            name: name.clone(),
            dims: vec![values.len() as i64],
            data_type: INT64,
            int64_data: values.to_vec(),
            ..Default::default()
        });
        name
    }

    /// A weight from the file, checked against the expected shape.
    fn weight(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>> {
        let full = format!("{}{name}", self.prefix);
        let t = self
            .st
            .get(&full)
            .ok_or_else(|| Error::model(format!("model.safetensors lacks tensor {full:?}")))?;
        if t.shape != shape {
            return Err(Error::model(format!(
                "tensor {full:?} has shape {:?}, expected {shape:?} (config.json does not match the weights)",
                t.shape
            )));
        }
        t.to_f32()
    }

    fn init(&mut self, name: &str, shape: &[usize]) -> Result<String> {
        let v = self.weight(name, shape)?;
        Ok(self.const_f32(name, shape, &v))
    }

    /// x · Wᵀ + b for a torch Linear weight `[out, in]` (stored transposed as `[in, out]`).
    fn linear(&mut self, x: &str, name: &str, d_in: usize, d_out: usize) -> Result<String> {
        let w = self.weight(&format!("{name}.weight"), &[d_out, d_in])?;
        let mut wt = vec![0f32; w.len()];
        for o in 0..d_out {
            for i in 0..d_in {
                wt[i * d_out + o] = w[o * d_in + i];
            }
        }
        let wt = self.const_f32(&format!("{name}.weight_t"), &[d_in, d_out], &wt);
        let b = self.init(&format!("{name}.bias"), &[d_out])?;
        let y = self.node("MatMul", &[x, &wt], vec![]);
        Ok(self.node("Add", &[&y, &b], vec![]))
    }

    fn layer_norm(&mut self, x: &str, name: &str, h: usize, eps: f32) -> Result<String> {
        let g = self.init(&format!("{name}.weight"), &[h])?;
        let b = self.init(&format!("{name}.bias"), &[h])?;
        Ok(self.node(
            "LayerNormalization",
            &[x, &g, &b],
            vec![attr_int("axis", -1), attr_float("epsilon", eps)],
        ))
    }
}

/// Build the encoder graph from the weights and the config.
pub fn bert_encoder(st: &SafeTensors<'_>, c: &BertConfig) -> Result<pb::ModelProto> {
    let prefix = if st.get("embeddings.word_embeddings.weight").is_some() {
        ""
    } else if st.get("bert.embeddings.word_embeddings.weight").is_some() {
        "bert."
    } else {
        return Err(Error::model(
            "model.safetensors has no embeddings.word_embeddings.weight: not a BERT checkpoint",
        ));
    };
    let vocab = st
        .get(&format!("{prefix}embeddings.word_embeddings.weight"))
        .map(|t| t.shape.first().copied().unwrap_or(0))
        .unwrap_or(0);
    let (h, heads, ff) = (c.hidden_size, c.num_attention_heads, c.intermediate_size);
    let dh = h / heads;
    let mut b = Builder {
        st,
        prefix,
        nodes: Vec::new(),
        inits: Vec::new(),
        n: 0,
    };

    // Embeddings: word[ids] + position[0..seq] + type[0], then LayerNorm.
    let word = b.init("embeddings.word_embeddings.weight", &[vocab, h])?;
    let pos = b.init(
        "embeddings.position_embeddings.weight",
        &[c.max_position_embeddings, h],
    )?;
    let type0: Vec<f32> = {
        let t = st
            .get(&format!("{prefix}embeddings.token_type_embeddings.weight"))
            .ok_or_else(|| Error::model("model.safetensors lacks token_type_embeddings"))?;
        if t.shape.len() != 2 || t.shape[1] != h || t.shape[0] == 0 {
            return Err(Error::model("token_type_embeddings has the wrong shape"));
        }
        t.to_f32()?[..h].to_vec()
    };
    let type0 = b.const_f32("type_embedding_0", &[h], &type0);
    let x = b.node("Gather", &[&word, "input_ids"], vec![attr_int("axis", 0)]);
    let x = b.node("Add", &[&x, &type0], vec![]);
    let shape = b.node("Shape", &["input_ids"], vec![]);
    let one = b.const_i64("one", &[1]);
    let zero = b.const_i64("zero", &[0]);
    let seq = b.node("Gather", &[&shape, &one], vec![attr_int("axis", 0)]);
    let pos = b.node("Slice", &[&pos, &zero, &seq, &zero], vec![]);
    let x = b.node("Add", &[&x, &pos], vec![]);
    let mut x = b.layer_norm(&x, "embeddings.LayerNorm", h, c.layer_norm_eps)?;

    // Attention bias: (1 - mask) · -10000 as [batch, 1, 1, seq] (as in the original BERT).
    let mask = b.node(
        "Cast",
        &["attention_mask"],
        vec![attr_int("to", FLOAT as i64)],
    );
    let one_f = b.const_f32("one_f", &[], &[1.0]);
    let neg = b.const_f32("neg", &[], &[-10000.0]);
    let inv = b.node("Sub", &[&one_f, &mask], vec![]);
    let bias = b.node("Mul", &[&inv, &neg], vec![]);
    let bias_shape = b.const_i64("bias_shape", &[0, 1, 1, -1]);
    let bias = b.node("Reshape", &[&bias, &bias_shape], vec![]);

    let heads_shape = b.const_i64("heads_shape", &[0, 0, heads as i64, dh as i64]);
    let merged_shape = b.const_i64("merged_shape", &[0, 0, h as i64]);
    let scale = b.const_f32("scale", &[], &[1.0 / (dh as f32).sqrt()]);
    let sqrt2 = b.const_f32("sqrt2", &[], &[std::f32::consts::SQRT_2]);
    let half = b.const_f32("half", &[], &[0.5]);

    for l in 0..c.num_hidden_layers {
        let p = format!("encoder.layer.{l}");
        let q = b.linear(&x, &format!("{p}.attention.self.query"), h, h)?;
        let k = b.linear(&x, &format!("{p}.attention.self.key"), h, h)?;
        let v = b.linear(&x, &format!("{p}.attention.self.value"), h, h)?;
        let q = b.node("Reshape", &[&q, &heads_shape], vec![]);
        let q = b.node("Transpose", &[&q], vec![attr_ints("perm", &[0, 2, 1, 3])]);
        let k = b.node("Reshape", &[&k, &heads_shape], vec![]);
        let k = b.node("Transpose", &[&k], vec![attr_ints("perm", &[0, 2, 3, 1])]);
        let v = b.node("Reshape", &[&v, &heads_shape], vec![]);
        let v = b.node("Transpose", &[&v], vec![attr_ints("perm", &[0, 2, 1, 3])]);
        let s = b.node("MatMul", &[&q, &k], vec![]);
        let s = b.node("Mul", &[&s, &scale], vec![]);
        let s = b.node("Add", &[&s, &bias], vec![]);
        let a = b.node("Softmax", &[&s], vec![attr_int("axis", -1)]);
        let ctx = b.node("MatMul", &[&a, &v], vec![]);
        let ctx = b.node("Transpose", &[&ctx], vec![attr_ints("perm", &[0, 2, 1, 3])]);
        let ctx = b.node("Reshape", &[&ctx, &merged_shape], vec![]);
        let o = b.linear(&ctx, &format!("{p}.attention.output.dense"), h, h)?;
        let o = b.node("Add", &[&o, &x], vec![]);
        let x1 = b.layer_norm(
            &o,
            &format!("{p}.attention.output.LayerNorm"),
            h,
            c.layer_norm_eps,
        )?;
        // Feed-forward with exact GELU: 0.5 · x · (1 + erf(x / √2)).
        let f = b.linear(&x1, &format!("{p}.intermediate.dense"), h, ff)?;
        let e = b.node("Div", &[&f, &sqrt2], vec![]);
        let e = b.node("Erf", &[&e], vec![]);
        let e = b.node("Add", &[&e, &one_f], vec![]);
        let g = b.node("Mul", &[&f, &e], vec![]);
        let g = b.node("Mul", &[&g, &half], vec![]);
        let o = b.linear(&g, &format!("{p}.output.dense"), ff, h)?;
        let o = b.node("Add", &[&o, &x1], vec![]);
        x = b.layer_norm(&o, &format!("{p}.output.LayerNorm"), h, c.layer_norm_eps)?;
    }
    b.node_named("Identity", &[&x], vec![], "last_hidden_state");

    let h_str = h.to_string();
    Ok(pb::ModelProto {
        ir_version: 8,
        opset_import: vec![pb::OperatorSetIdProto {
            domain: String::new(),
            version: 17,
        }],
        producer_name: "semtrace-core".into(),
        graph: Some(pb::GraphProto {
            name: "bert_encoder".into(),
            node: b.nodes,
            initializer: b.inits,
            input: vec![
                value_info("input_ids", INT64, &["batch", "seq"]),
                value_info("attention_mask", INT64, &["batch", "seq"]),
            ],
            output: vec![value_info(
                "last_hidden_state",
                FLOAT,
                &["batch", "seq", &h_str],
            )],
            ..Default::default()
        }),
        ..Default::default()
    })
}
