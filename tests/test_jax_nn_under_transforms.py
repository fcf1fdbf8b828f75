"""chainrule.jax_nn (JAX's jax.nn) under the function transforms, generated from a table.

tests/test_jax_nn.py checks each function's values and derivatives against jax.nn on
plain arrays. Here each row runs through the derivative table's seven transforms
(tests/test_table_under_transforms.py: vmap over the first and the last axis, vmap of
the first argument with the others shared, grad of vmap, vmap of grad,
jit(vmap(jit)) replayed on new numbers, jit of jacfwd), against the same call made one
example at a time, eagerly: the way a JAX program uses them (a network's activations
under vmap of grad, jit). Every public function has a row or a reason in SKIPPED.
"""

import numpy as np
import pytest

import chainrule.jax_nn as jnn

import test_table_under_transforms as transforms

CASES = []
X = ((2, 3), "any")


def case(*row, **options):
    CASES.append(transforms.row(*row, **options))


for name in ("celu", "elu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
             "identity", "leaky_relu", "log_sigmoid", "mish", "relu", "relu6", "selu",
             "sigmoid", "silu", "soft_sign", "softplus", "sparse_plus", "sparse_sigmoid",
             "squareplus", "swish", "tanh"):
    case(name, getattr(jnn, name), X)
case("gelu-exact", lambda x: jnn.gelu(x, approximate=False), X)
case("gelu-tanh", jnn.gelu, X)
case("celu-alpha", lambda x: jnn.celu(x, 0.5), X)
case("squareplus-b", lambda x: jnn.squareplus(x, 1.5), X)
case("log1mexp", lambda x: jnn.log1mexp(x), ((2, 3), "pos"))
case("glu", jnn.glu, ((2, 4), "any"))
case("glu-axis0", lambda x: jnn.glu(x, axis=0), ((4, 3), "any"))
for axis in (-1, 0, None):
    case(f"softmax-axis{axis}", lambda x, a=axis: jnn.softmax(x, axis=a), X)
    case(f"log_softmax-axis{axis}", lambda x, a=axis: jnn.log_softmax(x, axis=a), X)
    case(f"logsumexp-axis{axis}", lambda x, a=axis: jnn.logsumexp(x, axis=a), X)
    case(f"logmeanexp-axis{axis}", lambda x, a=axis: jnn.logmeanexp(x, axis=a), X)
    case(f"standardize-axis{axis}", lambda x, a=axis: jnn.standardize(x, axis=a), X)
case("logsumexp-b-keepdims", lambda x, b: jnn.logsumexp(x, axis=1, b=b, keepdims=True),
     X, ((2, 3), "pos"))
case("logsumexp-signed-b", lambda x, b: jnn.logsumexp(x, b=b, return_sign=True)[0],
     X, ((2, 3), "any"))
case("logmeanexp-where",
     lambda x: jnn.logmeanexp(x, axis=1, where=np.array([[True, False, True]] * 2)), X)
case("standardize-given", lambda x, m, v: jnn.standardize(x, 0, m, v),
     X, ((3,), "any"), ((3,), "pos"))
case("one_hot", lambda x: jnn.one_hot(x.argmax(-1), 4), ((3, 4), "any"), values_only=True)
case("one_hot-axis0", lambda x: jnn.one_hot(x.argmax(-1), 4, axis=0), ((3, 4), "any"),
     values_only=True)
QKV = (((2, 3, 2, 4), "any"), ((2, 5, 2, 4), "any"), ((2, 5, 2, 4), "any"))
case("dot_product_attention", jnn.dot_product_attention, *QKV)
case("dot_product_attention-causal",
     lambda q, k, v: jnn.dot_product_attention(q, k, v, is_causal=True),
     ((1, 3, 2, 4), "any"), ((1, 3, 2, 4), "any"), ((1, 3, 2, 4), "any"))
case("dot_product_attention-bias-mask",
     lambda q, k, v, b: jnn.dot_product_attention(
         q, k, v, bias=b, mask=np.array([[True, True, False, True, True]] * 3)),
     *QKV, ((3, 5), "any"))
case("dot_product_attention-lengths",
     lambda q, k, v: jnn.dot_product_attention(q, k, v,
                                               key_value_seq_lengths=np.array([4, 2])),
     *QKV)

SKIPPED = {"initializers": "draws random numbers from a key (tests/test_jax_nn.py)"}


def test_every_function_has_a_row_or_a_reason():
    here = {c.id.split("-")[0] for c in CASES}
    missing = [name for name in jnn.__all__ if name not in here and name not in SKIPPED]
    assert not missing, f"add a row (or a reason in SKIPPED) for: {missing}"


@pytest.mark.parametrize("case, transform", transforms.params(CASES))
def test_a_function_through_a_transform(case, transform):
    transforms.through(case, transform)
