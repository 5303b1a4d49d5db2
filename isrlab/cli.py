"""The ``isrlab`` command line."""

from __future__ import annotations

import click

from isrlab import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="isrlab")
def cli() -> None:
    """Explore, check and prove Kafka's partition replication protocol."""


def main() -> None:
    """Entry point of the ``isrlab`` console script."""
    cli()
