"""The application around the library: the ``chainrule`` command and what it runs.

    cli.py                the ``chainrule`` command: reads it, runs it, its exit status
    cli_parser.py         its arguments, their help and checks
    cli_messages.py       its one-line errors and warnings
    cli_train.py          ``chainrule train``: flags to a Config, the run, its report
    cli_outputs.py        what a run leaves in --out: checkpoint, metrics.json, pictures
    cli_eval.py           ``chainrule eval``: a saved model on its test split
    cli_data.py           ``chainrule data fetch``: MNIST downloaded
    cli_graph.py          ``chainrule graph``: an expression's graph, gradients, picture
    training.py           a training run: configuration, loop, history
    training_engines.py   the two engines (Value, Tensor) behind one training loop
    training_data.py      the data sets a run takes, by name or from arrays
    metrics.py            a model on a data set: accuracy, confusion matrix, error
    recipes.py            the runs the demo and the README show
    progress.py           a progress bar (tqdm where installed) and per-epoch lines
    plots.py              the pictures of a run (matplotlib)
    viz.py                computation graphs drawn with Graphviz
    expression.py         an arithmetic expression parsed into a graph of Values

Nothing in the engines imports this package; it imports them all.
"""
