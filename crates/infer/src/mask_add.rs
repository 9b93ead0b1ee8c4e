//! The attention-mask add of a BERT graph, `scores[B,H,S,T] + mask[B,1,1,T]`, as one tract op.
//!
//! tract vectorises an element-wise op only when the smaller operand repeats along leading axes
//! (unicast) or is one value per row (by scalar). The mask repeats along the middle axes (heads and
//! query positions), so tract ran this add on its generic path, one closure call per element:
//! ~6% of a pair's time (`perf`, default model). This op adds the mask row to every row of its
//! batch item in a plain loop that the compiler vectorises. Same float additions, same results.

use tract_onnx::prelude::*;
use tract_onnx::tract_core::internal::*;
use tract_onnx::tract_core::ops::binary::{BinMiniOp, TypedBinOp};
use tract_onnx::tract_core::ops::math::Add;

#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct MaskRowAdd;

impl Op for MaskRowAdd {
    fn name(&self) -> StaticName {
        "MaskRowAdd".into()
    }

    op_as_typed_op!();
}

impl EvalOp for MaskRowAdd {
    op_out_of_plan!();

    fn eval(&self, _ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let (a, b) = args_2!(inputs);
        let natural = |t: &Tensor| {
            t.len() == t.shape().iter().product::<usize>()
                && t.strides() == &*Tensor::natural_strides(t.shape())
        };
        let fits = a.datum_type() == f32::datum_type()
            && b.datum_type() == f32::datum_type()
            && a.rank() == 4
            && b.rank() == 4
            && b.shape()[0] == a.shape()[0]
            && b.shape()[1] == 1
            && b.shape()[2] == 1
            && b.shape()[3] == a.shape()[3]
            && natural(&a)
            && natural(&b);
        if !fits {
            // Anything unexpected at run time takes tract's own (generic) add.
            return Ok(tvec!(Add.eval(a, b, f32::datum_type())?.into_tvalue()));
        }
        let t = a.shape()[3];
        let per_item = a.shape()[1] * a.shape()[2] * t;
        let mut a = a.into_tensor();
        let bview = b.view();
        let bv = bview.as_slice::<f32>()?;
        let mut aview = a.view_mut();
        let av = aview.as_slice_mut::<f32>()?;
        if t > 0 && per_item > 0 {
            for (item, mask) in av.chunks_exact_mut(per_item).zip(bv.chunks_exact(t)) {
                for row in item.chunks_exact_mut(t) {
                    for (x, m) in row.iter_mut().zip(mask) {
                        *x += *m;
                    }
                }
            }
        }
        Ok(tvec!(a.into_tvalue()))
    }
}

impl TypedOp for MaskRowAdd {
    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        Ok(tvec!(inputs[0].without_value()))
    }

    as_op!();
}

/// Whether `a + b` has the mask-add shape: f32, rank 4, `b = [B,1,1,T]` against `a = [B,H,S,T]`
/// with `H` and `S` not both 1 (then it is already a plain unicast).
fn is_mask_add(a: &TypedFact, b: &TypedFact) -> bool {
    let (sa, sb) = (a.shape.dims(), b.shape.dims());
    let one = TDim::Val(1);
    a.datum_type == f32::datum_type()
        && b.datum_type == f32::datum_type()
        && sa.len() == 4
        && sb.len() == 4
        && sb[0] == sa[0]
        && sb[1] == one
        && sb[2] == one
        && sb[3] == sa[3]
        && !(sa[1] == one && sa[2] == one)
}

/// Replace every mask-shaped `Add` of a typed model by [`MaskRowAdd`]; returns how many.
pub fn rewrite_mask_adds(model: &mut TypedModel) -> TractResult<usize> {
    let mut done = 0;
    for id in model.eval_order()? {
        let node = model.node(id);
        let Some(bin) = node.op_as::<TypedBinOp>() else {
            continue;
        };
        if !bin.0.is::<Add>() || node.inputs.len() != 2 {
            continue;
        }
        let facts = model.node_input_facts(id)?;
        let fits = is_mask_add(facts[0], facts[1]);
        drop(facts);
        if !fits {
            continue;
        }
        let node = model.node(id);
        let patch =
            TypedModelPatch::replace_single_op(model, node, &node.inputs.clone(), MaskRowAdd)?;
        patch.apply(model)?;
        done += 1;
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(t: &Tensor) -> Vec<f32> {
        t.to_plain_array_view::<f32>()
            .unwrap()
            .iter()
            .copied()
            .collect()
    }

    #[test]
    fn adds_each_items_mask_row_to_all_its_rows() {
        let a = Tensor::from_shape(
            &[2, 2, 1, 3],
            &[1f32, 2., 3., 4., 5., 6., 7., 8., 9., 10., 11., 12.],
        )
        .unwrap();
        let b = Tensor::from_shape(&[2, 1, 1, 3], &[0f32, -100., 0., -1., -1., 0.]).unwrap();
        let out = MaskRowAdd
            .eval_out_of_plan(tvec!(a.clone().into_tvalue(), b.clone().into_tvalue()))
            .unwrap()
            .unwrap();
        let want = Add
            .eval(a.into_tvalue(), b.into_tvalue(), f32::datum_type())
            .unwrap();
        assert_eq!(vals(&out[0]), vals(&want));
        assert_eq!(
            vals(&out[0]),
            [1., -98., 3., 4., -95., 6., 6., 7., 9., 9., 10., 12.]
        );
    }

    #[test]
    fn other_shapes_fall_back_to_the_generic_add() {
        let a = Tensor::from_shape(&[1, 2, 3], &[1f32, 2., 3., 4., 5., 6.]).unwrap();
        let b = Tensor::from_shape(&[1, 1, 3], &[1f32, 1., 1.]).unwrap();
        let out = MaskRowAdd
            .eval_out_of_plan(tvec!(a.into_tvalue(), b.into_tvalue()))
            .unwrap()
            .unwrap();
        assert_eq!(vals(&out[0]), [2., 3., 4., 5., 6., 7.]);
    }
}
