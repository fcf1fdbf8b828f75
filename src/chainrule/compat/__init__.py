"""Other libraries' module paths and names, over chainrule's engine.

    micrograd/          ``micrograd.engine`` and ``micrograd.nn`` (Karpathy's)
    autograd/           HIPS autograd's modules and names
    example_libraries/  ``jax.example_libraries.optimizers`` and ``stax``
    jax_nn/             ``jax.nn``'s functions and ``jax.nn.initializers``

Users import them by their public paths (``chainrule.micrograd.engine``,
``chainrule.autograd``...: api/paths.py); this package imports none of them.
"""
