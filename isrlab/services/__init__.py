"""Services below the command layer, used by both ``isrlab.api`` and the ``*_cmd.py``
modules, so that a command only parses its options and prints: ``traces`` (trace formats,
reading, the Kafka log oracle), ``engines`` (the local breadth-first search or Spark, and
their run directories), ``runs`` (check, liveness and simulate runs with their options and
preconditions), ``bmc`` (bounded model checking), ``rendering`` (sequence charts, state
graphs, ITF counterexamples), ``reading`` (the notes printed beside a counterexample) and
``proofs`` (the proof obligations, compared with and written beside the recorded ones).

A service reports input it cannot use by raising ``InputError``: the command line prints its
one line and exits 2 (``isrlab.cli_support``), the API lets it propagate."""


class InputError(ValueError):
    """Input a service cannot use (an option that does not apply, a model without the
    needed declaration, a file it cannot write): ``str()`` is one line naming the problem."""
