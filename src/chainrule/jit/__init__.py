"""cr.jit: a function traced once into a program of NumPy calls, replayed after.

    jitted.py      jit and make_program: trace on the first call, replay on the next
    entry.py       a traced program with what a call needs around it (state, result)
    traced.py      the traced array: what a function holds where its arrays were, and
                   how it hands each NumPy call on
    recording.py   the recorder: each NumPy call on a traced array, recorded as data
    ops.py         the recorded calls as data (Op, Slot, Effect): what the passes and
                   the code generator read
    errors.py      what tracing refuses (TracingError), raised by the traced array and
                   the recorder
    program.py     the recorded calls as a Program (data), and compile_program, the
                   pipeline: each pass, then the code generator once
    simplify.py    rewrites that keep every number: fewer and cheaper NumPy calls
    passes.py      the passes: live calls, new arrays, views, in place, kept buffers
    blocks.py      the pass that runs elementwise calls on large arrays by blocks of rows
    codegen.py     the one code generator: a program, and a jitted call around it, as
                   Python; the listing print(program) shows
    native.py      the compiled tier (Numba): a hot program as one machine-code function
    fused.py       an optimizer's p -= lr * g on a large array as one compiled loop
    state.py       the state a traced function reads and writes (tensors, and any
                   object with the state protocol: modules, optimizers, a user's
                   class), as the program's inputs and outputs
    pmap.py        jax.pmap on one CPU: a named cr.vmap, traced and replayed
    guards.py      how the function reached that state (a closure, a dict, an attribute),
                   checked at each call: replaced state traces again
"""

from .jitted import jit, make_program
from .pmap import pmap

__all__ = ["jit", "make_program", "pmap"]
