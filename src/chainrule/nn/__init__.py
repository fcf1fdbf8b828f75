"""Neural networks: micrograd's scalar Neuron, Layer and MLP, and PyTorch-shaped layers
for tensors, with losses as functions (``nn.functional``) and as modules.

``nn.MLP(2, [16, 16, 1])`` (micrograd's signature) is a scalar MLP;
``nn.MLP([784, 128, 10], activation="relu")`` a tensor one.

>>> from chainrule import nn
>>> model = nn.Sequential(nn.Linear(2, 3, rng=0), nn.ReLU(), nn.Linear(3, 1, rng=0))
>>> model(cr.ones(5, 2)).shape             # a batch of 5 rows in, 5 rows out
(5, 1)
>>> len(model.parameters())                # two weights, two biases
4
>>> len(nn.MLP(2, [16, 16, 1], rng=0).parameters())    # micrograd's MLP of Values
337
"""

from . import functional, init, utils
from .attention import MultiheadAttention
from .containers import ModuleDict, ModuleList
from .conv import Conv1d, Conv2d
from .conv import Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .activations import (CELU, ELU, GELU, GLU, Hardshrink, Hardsigmoid, Hardswish,
                          Hardtanh, Identity, LeakyReLU, LogSigmoid, LogSoftmax, Mish, PReLU,
                          ReLU, ReLU6, RReLU, SELU, Sigmoid, SiLU, Softmax, Softmax2d, Softmin,
                          Softplus, Softshrink, Softsign, Tanh, Tanhshrink, Threshold)
from .layers import Bilinear, Dropout, Flatten, LayerNorm, Linear, MLP, Sequential
from .embeddings import Embedding, EmbeddingBag
from .losses import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CosineSimilarity,
                     CrossEntropyLoss, GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss,
                     KLDivLoss, L1Loss, MarginRankingLoss, MSELoss, MultiLabelMarginLoss,
                     MultiLabelSoftMarginLoss, MultiMarginLoss, NLLLoss, PairwiseDistance,
                     PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss, TripletMarginLoss,
                     TripletMarginWithDistanceLoss)
from .losses import CTCLoss, LinearCrossEntropyLoss
from .module import IncompatibleKeys, Module, Parameter
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm,
                            InstanceNorm1d, InstanceNorm2d, InstanceNorm3d,
                            LocalResponseNorm, RMSNorm)
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d,
                      ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d,
                      ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
                      ZeroPad1d, ZeroPad2d, ZeroPad3d)
from .channel_dropout import (AlphaDropout, Dropout1d, Dropout2d, Dropout3d,
                              FeatureAlphaDropout)
from .reshaping import ChannelShuffle, PixelShuffle, PixelUnshuffle, Unflatten
from .resampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool3d, AdaptiveMaxPool1d,
                      AdaptiveMaxPool2d, AdaptiveMaxPool3d, AvgPool1d, AvgPool3d, LPPool1d,
                      LPPool2d, LPPool3d, MaxPool1d, MaxPool3d, MaxUnpool1d, MaxUnpool2d,
                      MaxUnpool3d)
from .folding import Fold, Unfold
from .parameter_containers import ParameterDict, ParameterList
from .recurrent import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNCell
from .scalar import Layer, Neuron
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,
                          TransformerEncoder, TransformerEncoderLayer)

from .module import Buffer
from .recurrent import RNNBase, RNNCellBase
from .lazy import (LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyConv1d, LazyConv2d,
                   LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d,
                   LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d, LazyLinear,
                   UninitializedBuffer, UninitializedParameter)
from .pooling import FractionalMaxPool2d, FractionalMaxPool3d
from .legacy_norms import CrossMapLRN2d
from .adaptive_softmax import AdaptiveLogSoftmaxWithLoss

__all__ = ["Module", "Parameter", "Neuron", "Layer", "MLP", "Linear", "Sequential",
           "ReLU", "Tanh", "Sigmoid", "GELU", "Dropout", "Flatten", "CrossEntropyLoss",
           "MSELoss", "BCEWithLogitsLoss", "ModuleList", "ModuleDict", "LayerNorm",
           "Embedding", "Softmax", "LogSoftmax", "IncompatibleKeys", "functional",
           "Conv1d", "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "BatchNorm1d",
           "BatchNorm2d", "SiLU", "LeakyReLU", "ELU", "Softplus", "Identity", "NLLLoss",
           "L1Loss", "SmoothL1Loss", "HuberLoss", "BCELoss", "RNN", "GRU", "LSTM",
           "RNNCell", "GRUCell", "LSTMCell", "MultiheadAttention",
           "TransformerEncoderLayer", "TransformerEncoder", "ParameterList",
           "ParameterDict", "utils", "init", "ReLU6", "Hardtanh", "SELU", "CELU", "Mish",
           "Softsign", "LogSigmoid", "Hardswish", "Hardsigmoid", "Hardshrink", "Softshrink",
           "Tanhshrink", "Threshold", "RReLU", "GLU", "Softmin", "PReLU", "CosineSimilarity",
           "PairwiseDistance", "KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss",
           "MarginRankingLoss", "HingeEmbeddingLoss", "CosineEmbeddingLoss",
           "SoftMarginLoss", "MultiLabelSoftMarginLoss", "TripletMarginLoss",
           "TripletMarginWithDistanceLoss", "MultiMarginLoss", "MultiLabelMarginLoss"]
__all__ += ["BatchNorm3d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
            "RMSNorm"]
__all__ += ["ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d",
            "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
            "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
            "CircularPad2d", "CircularPad3d"]
__all__ += ["AlphaDropout", "Dropout1d", "Dropout2d", "Dropout3d", "ChannelShuffle",
            "PixelShuffle", "PixelUnshuffle", "Unflatten"]
__all__ += ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
__all__ += ["Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]
__all__ += ["MaxPool1d", "MaxPool3d", "AvgPool1d", "AvgPool3d", "AdaptiveAvgPool1d",
            "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
            "LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
            "Fold", "Unfold"]
__all__ += ["TransformerDecoderLayer", "TransformerDecoder", "Transformer"]
__all__ += ["CTCLoss"]
__all__ += ["EmbeddingBag"]
__all__ += ["Bilinear", "Softmax2d", "FeatureAlphaDropout", "LocalResponseNorm"]
__all__ += ["Buffer", "RNNBase", "RNNCellBase", "UninitializedParameter", "UninitializedBuffer",
            "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
            "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
            "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
__all__ += ["LinearCrossEntropyLoss"]
__all__ += ["FractionalMaxPool2d", "FractionalMaxPool3d", "CrossMapLRN2d",
            "AdaptiveLogSoftmaxWithLoss"]
