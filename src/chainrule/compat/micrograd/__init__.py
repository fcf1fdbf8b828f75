"""micrograd's module paths, so ``micrograd`` code runs by changing one import line:

    from chainrule.micrograd.engine import Value
    from chainrule.micrograd.nn import Neuron, Layer, MLP
"""
