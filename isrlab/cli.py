"""The ``isrlab`` command line."""

from __future__ import annotations

import click

from isrlab import __version__
from isrlab.bmc_cmd import bmc_command
from isrlab.check_cmd import check, models_command, simulate_command
from isrlab.cli_support import OneLineErrors
from isrlab.demo import demo_command
from isrlab.explore_cmd import explore_command
from isrlab.prove_cmd import prove_command
from isrlab.render_cmd import render_command
from isrlab.validate_cmd import validate_command


@click.group(cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]},
             epilog="Start with `isrlab demo` and `isrlab models`; `isrlab COMMAND --help` "
                    "for a command's options and exit statuses.")
@click.version_option(__version__, prog_name="isrlab")
def cli() -> None:
    """Explore, check and prove Kafka's partition replication protocol."""


SHORT_HELP = {
    check: "check every invariant on every reachable state, breadth-first",
    simulate_command: "check every invariant along seeded random walks",
    models_command: "list the models, their parameters and invariants",
    bmc_command: "bounded model checking with an SMT solver (Yices or Z3)",
    prove_command: "re-run the Z3 proof obligations against their recorded outcomes",
    demo_command: "the protocol's worked examples, then a known Kafka bug and its fix",
    validate_command: "is an observed run (JSON Lines, ITF, Kafka's own logs) allowed?",
    render_command: "draw an ITF trace as a message sequence chart (SVG)",
    explore_command: "step through a model or a counterexample in the browser",
}
"""Each command's line in ``isrlab --help`` (click would cut its first sentence at 45
characters, mid-phrase: "Search for a shortest counterexample with an SMT solver, one...")."""

for command, line in SHORT_HELP.items():
    command.short_help = line
    cli.add_command(command)


def main() -> None:
    """Entry point of the ``isrlab`` console script."""
    cli()
