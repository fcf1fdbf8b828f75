"""The application around the library: the ``chainrule`` command and what it runs.

    cli.py                the command line: train, evaluate, fetch, graph
    training.py           a training run: configuration, loop, evaluation, history
    training_engines.py   the two engines (Value, Tensor) behind one training loop
    recipes.py            the runs the demo and the README show
    progress.py           a progress bar (tqdm where installed) and per-epoch lines
    plots.py              the pictures of a run (matplotlib)
    viz.py                computation graphs drawn with Graphviz
    expression.py         an arithmetic expression parsed into a graph of Values

Nothing in the engines imports this package; it imports them all.
"""
