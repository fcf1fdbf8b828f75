"""PyTorch's ``torch.nn.utils`` for chainrule's parameters: clipping gradients
(``clip_grad_norm_``, ``clip_grad_value_``, ``get_total_norm``,
``clip_grads_with_norm_``), a model's parameters as one vector and back
(``parameters_to_vector``, ``vector_to_parameters``), a layer and the batch norm after
it folded into one for inference (``fuse_conv_bn_eval``, ``fuse_linear_bn_eval`` and
their ``_weights`` forms), tensors computed from others each time they are read
(``parametrize``, ``parametrizations.weight_norm`` and ``spectral_norm``, and the older
``weight_norm``), and batches of sequences of different lengths, padded or
packed for the recurrent layers (``rnn``).

>>> w = cr.tensor([3.0, 4.0], requires_grad=True)
>>> (w * w).sum().backward()                        # the gradient 2w = [6, 8], norm 10
>>> round(float(cr.nn.utils.clip_grad_norm_([w], max_norm=1.0)), 6)
10.0
>>> np.round(w.grad, 6).tolist()                    # scaled to norm 1
[0.6, 0.8]
"""

from .clip_grad import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval,
                     fuse_linear_bn_weights)
from . import parametrizations, parametrize, rnn
from .parametrizations import legacy_weight_norm as weight_norm, remove_weight_norm

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_",
           "parameters_to_vector", "vector_to_parameters", "fuse_conv_bn_eval",
           "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights", "weight_norm", "remove_weight_norm",
           "parametrize", "parametrizations", "rnn"]
