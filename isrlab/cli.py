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


@click.group(cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="isrlab")
def cli() -> None:
    """Explore, check and prove Kafka's partition replication protocol."""


cli.add_command(check)
cli.add_command(simulate_command)
cli.add_command(models_command)
cli.add_command(bmc_command)
cli.add_command(prove_command)
cli.add_command(demo_command)
cli.add_command(validate_command)
cli.add_command(render_command)
cli.add_command(explore_command)


def main() -> None:
    """Entry point of the ``isrlab`` console script."""
    cli()
