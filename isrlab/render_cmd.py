"""``isrlab render``: a trace as a message sequence chart (SVG), drawn by
``isrlab.services.rendering``."""

from __future__ import annotations

from pathlib import Path

import click

from isrlab.cli_support import check_outputs
from isrlab.services.rendering import render_itf


@click.command("render")
@click.argument("trace", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", "out", required=True,
              type=click.Path(dir_okay=False, path_type=Path), help="the SVG file to write")
@click.option("--invariant", default=None,
              help="the violated property to mark on the last state (default: the one the "
                   "trace's description names, 'NAME violated (...)')")
def render_command(trace: Path, out: Path, invariant: str | None) -> None:
    """Draw an ITF trace (from `isrlab check --itf`) as a message sequence chart in SVG.

    Brokers and the controller are lifelines; LeaderAndIsr, UpdateMetadata, fetches and ISR
    writes are arrows; each broker's log, LEO, HW, epoch and ISR are noted where they change.
    """
    check_outputs({"-o": out}, {"TRACE": trace})
    states = render_itf(trace, out, invariant)
    click.echo(f"wrote {out} ({states} state{'s' if states != 1 else ''})")
