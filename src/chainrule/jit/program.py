"""The program: a traced function's calls as data, and the pipeline that compiles it.

A ``Program`` holds what a recording made (its inputs, its calls as ``ops.Op``s,
the values they had while tracing, its outputs) and what each pass decided about it.
``compile_program`` runs the passes, each a function of the program's data (``passes.py``,
``blocks.py``), then the code generator once (``codegen.py``):

* calls that give numbers another call already gave, or that a cheaper call gives to
  the last bit, are rewritten (``simplify.py``);
* an operand that small arithmetic broadcasts is copied out to the result's shape
  once, for NumPy's short path (``broadcasts.py``);
* calls whose results nobody uses are dropped, and writes into arrays the program
  made that nobody reads afterwards (``writes.py``);
* temporaries go into buffers kept from call to call (NumPy's ``out=``; temporaries
  whose lives do not overlap share one, and an elementwise call writes over an operand
  that dies there, as NumPy does inside an expression);
* the new value of a parameter is computed into the parameter's own array;
* elementwise calls one after another on large arrays (an optimizer's update of a
  weight matrix) run block of rows by block of rows, each block still in cache for the
  next call;
* where Numba is installed, ``p -= lr * g`` on a large array is one compiled loop
  (``fused.py``), with the same roundings as NumPy's two calls.

A replay runs the same NumPy calls (or, where simplify rewrote one, calls that give the
same numbers), in the same order, on arrays of the same shapes and dtypes, so its
results are the traced run's to the last bit.
"""

import threading

from . import blocks, broadcasts, codegen, fused, native, passes, simplify, writes

__all__ = ["Program", "compile_program"]


class Program:
    """A traced function as a list of NumPy calls: ``program(inputs) -> outputs``.

    ``inputs`` are the slots of the program's arguments, in order; ``outputs`` the
    slots it returns. ``print(program)`` lists the calls, one a line, with the shape
    and dtype each made while tracing; ``source()`` is the Python a run runs."""

    def __init__(self, inputs, ops, outputs, values, sections, names=None,
                 destinations=None):
        self.inputs = list(inputs)
        self.ops = ops
        self.outputs = list(outputs)
        self.values = values      # slot -> the value it had while tracing
        self.sections = sections  # op index -> the part of the program starting there
        self.names = dict(names or {})  # slot -> a reader's name (x, layers.0.weight)
        self.destinations = dict(destinations or {})  # output slot -> where it goes
        # What the passes decide (compile_program fills them in)
        self.fresh = set()   # indices of the calls that make a new array
        self.views = {}      # slot -> the slots whose memory it may share
        self.in_place = {}   # output slot -> the input slot whose array it goes into
        self.blocks = {}     # index of a run's first call -> blocks.Run
        self.buffers = {}    # slot -> the buffer kept from run to run that holds it
        self.unused = []     # positions of the inputs no call reads
        self.native = None   # the compiled tier (native.Tier), where it can have one
        self.fused = {}      # index of a call -> the fused.Update it and the next make
        self._run = None     # the generated function
        self._lock = threading.Lock()  # the kept buffers are its own: one run at a time

    def __call__(self, inputs):
        with self._lock:
            return self._run(*inputs)

    def source(self):
        """The Python function a replay runs."""
        return self._run.source

    def __str__(self):
        return codegen.listing(self)

    __repr__ = __str__

    def __len__(self):
        return len(self.ops)


def compile_program(recording, outputs, names=None, replaces=None, destinations=None,
                    parameters=()):
    """The program of a finished recording that returns the values of ``outputs``
    (slots). ``names``: slot -> a reader's name; ``replaces``: {output: input} where an
    output is an input's new value (a parameter after its update), which may be
    computed into the input's array; ``destinations``: output -> where it goes;
    ``parameters``: the input slots of the arrays of tensors that require grad (the
    last two for the listing)."""
    replaces = replaces or {}
    ops = writes.permuted_scatters(recording.ops, recording.values)
    ops = simplify.simplify(ops, recording.values,
                            set(outputs) | set(recording.inputs) | set(replaces))
    ops = broadcasts.copy_broadcast_operands(ops, recording.values)
    ops = writes.self_assignments(ops, recording.values)
    ops, sections = passes.live_calls(ops, recording.marks,
                                      set(outputs) | set(recording.inputs),
                                      writes.private_arrays(ops, recording.values))
    program = Program(recording.inputs, ops, outputs, recording.values, sections, names,
                      destinations)
    program.sections = passes.parts(program, set(parameters), replaces)
    program.fresh = passes.new_arrays(program)
    program.views = passes.views(program)
    program.in_place = passes.in_place(program, replaces)
    program.blocks = blocks.row_blocks(program)
    scratch = {n for run in program.blocks.values() for n in run.scratch}
    program.buffers = passes.kept_buffers(program, skip=scratch)
    program.unused = passes.unused_inputs(program)
    program.native = native.tier_for(program)
    program.fused = fused.scaled_updates(program)
    program._run = codegen.program_function(program)
    return program
