"""``isrlab explore``: the model explorer in the browser (see ``isrlab.explorer``)."""

from __future__ import annotations

from pathlib import Path

import click

from isrlab.checker.trace import parse_itf
from isrlab.cli_support import CONFIG_OPTION, MODEL_HELP, BadInput, resolve_model
from isrlab.cli_support import PARAM_HELP as _PARAM_HELP
from isrlab.explorer import Session, TraceMismatch, create_app, serve
from isrlab.services.traces import read_itf_document, recorded_params


@click.command("explore")
@CONFIG_OPTION
@click.option("--model", "model_name", default=None,
              help=MODEL_HELP + "; default: the model the --trace names")
@click.option("-p", "--param", "params", multiple=True,
              help=_PARAM_HELP + "; with --trace, overrides the parameters it records")
@click.option("--trace", "trace_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="start with this ITF trace (from `isrlab check --itf`) as the path; its "
                   "recorded model and parameters are used")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="TCP port on 127.0.0.1 (0: any free port)")
def explore_command(
    model_name: str | None, params: tuple[str, ...], trace_path: Path | None, port: int
) -> None:
    """Step through a model by hand in the browser, on http://127.0.0.1:PORT/.

    From an initial state: every enabled action with its label, take one, go back; the state
    as a table with what changed highlighted; load a counterexample (ITF) and step through it
    beside its sequence chart; run a bounded check from the current state.  Ctrl-C stops.
    """
    document = read_itf_document(trace_path) if trace_path is not None else None
    steps = None
    if document is not None:
        try:  # a damaged trace is named before anything it should have told (its model)
            steps = parse_itf(document)
        except ValueError as error:  # parse_itf says what is wrong
            raise BadInput(f"{trace_path}: {error}") from error
    model_name, recorded = recorded_params(document, model_name)
    if model_name is None:
        raise BadInput("--model is required (no --trace naming its model)")
    assignments = (*recorded, *params)
    entry, values, model = resolve_model(model_name, assignments)
    defaults = {p.name: p.default for p in entry.params}
    settings = " ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                        for k, v in values.items() if k in defaults and v != defaults[k])
    session = Session(model, " ".join((model_name, *params)), values,
                      settings=settings or "(the model's defaults)")
    if steps is not None:
        try:
            session.load(steps)
        except TraceMismatch as error:
            raise BadInput(f"{trace_path}: {error}") from error
    try:
        serve(create_app(session), port,
              lambda url: click.echo(f"isrlab explore: serving {url} (Ctrl-C stops)"))
    except OSError as error:
        raise BadInput(f"cannot listen on 127.0.0.1:{port}: {error.strerror or error}") from error
