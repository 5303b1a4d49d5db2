"""``isrlab check`` (exhaustive breadth-first search) and ``isrlab simulate`` (random walks)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from checker.bfs import CheckOptions, Progress, RunDirError, explore
from checker.report import CheckResult
from checker.simulate import SimulateOptions, simulate
from checker.trace import violation_text, write_itf
from isrlab.cli_support import BadInput, resolve_model
from isrlab.models import registry

_PARAM_HELP = "model parameter key=value (repeatable); see `isrlab models`"


class _Display:
    """A throttled one-line progress display on stderr."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.width = 0

    def show(self, text: str) -> None:
        if not self.enabled:
            return
        self.width = max(self.width, len(text))
        sys.stderr.write("\r" + text.ljust(self.width))
        sys.stderr.flush()

    def bfs(self, p: Progress) -> None:
        rate = p.generated / p.elapsed_s if p.elapsed_s > 0 else 0.0
        self.show(
            f"depth {p.level}  distinct {p.distinct:,}  generated {p.generated:,}  "
            f"queue {p.queue:,}  {rate:,.0f} states/s  {p.elapsed_s:,.0f} s"
        )

    def done(self) -> None:
        if self.enabled and self.width:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()


def _want_progress(flag: bool | None) -> bool:
    return sys.stderr.isatty() if flag is None else flag


def _report(result: CheckResult, json_path: Path | None, itf_path: Path | None) -> None:
    """Print the summary (and trace), write the requested files, exit 0 or 1."""
    click.echo(result.summary_line())
    for violation in (result.violation, *result.violations[1:]):
        if violation is not None:
            click.echo(violation_text(violation))
    unreached = [s.name for s in result.sometimes if not s.reached]
    if unreached:
        click.echo(f"never reached (sometimes): {', '.join(unreached)}")
    if json_path is not None:
        result.write_json(json_path)
    if itf_path is not None:
        if result.violation is None:
            click.echo(f"no counterexample: {itf_path} not written")
        else:
            write_itf(
                itf_path, result.violation.trace, source=result.model,
                description=f"{result.violation.invariant} violated ({result.engine})",
            )
    sys.exit(0 if result.ok else 1)


@click.command()
@click.option("--model", "model_name", required=True, help="registered model name")
@click.option("-p", "--param", "params", multiple=True, help=_PARAM_HELP)
@click.option("--symmetry", is_flag=True, help="reduce by the model's symmetry")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="worker processes (states partitioned by fingerprint)")
@click.option("--max-depth", type=click.IntRange(1), default=None,
              help="explore at most this many BFS levels (initial states = level 1)")
@click.option("--max-states", type=click.IntRange(1), default=None,
              help="stop after the level in which this many distinct states are reached")
@click.option("--continue", "keep_going", is_flag=True,
              help="go on after a violation; report one shortest trace per property")
@click.option("--deadlock", is_flag=True, help="report states without successors")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path),
              help="write the JSON report here")
@click.option("--itf", "itf_path", type=click.Path(dir_okay=False, path_type=Path),
              help="write the counterexample as an ITF trace here")
@click.option("--run-dir", type=click.Path(file_okay=False, path_type=Path),
              help="persist each BFS level here; rerun with it to resume")
@click.option("--progress/--no-progress", default=None,
              help="live progress on stderr (default: when stderr is a terminal)")
# -- spark_explore's options (owned by the Spark engine) --
@click.option("--engine", type=click.Choice(["bfs", "spark"]), default="bfs",
              show_default=True, help="bfs: this machine; spark: level-synchronous BFS on Spark")
@click.option("--master", default=None,
              help="Spark master URL, e.g. spark://host:7077 (implies --engine spark; "
                   "default local[*])")
def check(
    model_name: str, params: tuple[str, ...], symmetry: bool, workers: int,
    max_depth: int | None, max_states: int | None, keep_going: bool, deadlock: bool,
    json_path: Path | None, itf_path: Path | None, run_dir: Path | None,
    progress: bool | None, engine: str, master: str | None,
) -> None:
    """Explore a model breadth-first and check every invariant on every reachable state.

    Exit status: 0 when every invariant holds, 1 on a violation, 2 on bad input.
    """
    entry, values, model = resolve_model(model_name, params)
    if symmetry and not entry.symmetric:
        raise BadInput(f"model {model_name!r} has no symmetry to reduce by")
    display = _Display(_want_progress(progress))
    options = CheckOptions(
        symmetry=symmetry, workers=workers, max_depth=max_depth, max_states=max_states,
        stop_at_first=not keep_going, check_deadlock=deadlock, run_dir=run_dir,
        params=values, progress=display.bfs,
    )
    try:
        if engine == "spark" or master is not None:
            from spark_explore.command import run_check  # starts a JVM: import on demand

            result = run_check(model, options, master, progress is not False)
        else:
            result = explore(model, options)
    except RunDirError as error:
        raise BadInput(str(error)) from error
    finally:
        display.done()
    _report(result, json_path, itf_path)


@click.command("simulate")
@click.option("--model", "model_name", required=True, help="registered model name")
@click.option("-p", "--param", "params", multiple=True, help=_PARAM_HELP)
@click.option("--seed", type=int, default=0, show_default=True, help="random seed")
@click.option("--walks", type=click.IntRange(1), default=100, show_default=True,
              help="number of random walks")
@click.option("--depth", type=click.IntRange(1), default=100, show_default=True,
              help="at most this many states per walk")
@click.option("--deadlock", is_flag=True, help="report states without successors")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path),
              help="write the JSON report here")
@click.option("--itf", "itf_path", type=click.Path(dir_okay=False, path_type=Path),
              help="write the counterexample as an ITF trace here")
@click.option("--progress/--no-progress", default=None,
              help="live progress on stderr (default: when stderr is a terminal)")
def simulate_command(
    model_name: str, params: tuple[str, ...], seed: int, walks: int, depth: int,
    deadlock: bool, json_path: Path | None, itf_path: Path | None, progress: bool | None,
) -> None:
    """Check every invariant along seeded random walks; the same seed replays the same walks.

    Exit status: 0 when no walk broke an invariant, 1 on a violation, 2 on bad input.
    """
    _, values, model = resolve_model(model_name, params)
    display = _Display(_want_progress(progress))
    started, last = time.monotonic(), [0.0]

    def tick(done: int, visited: int) -> None:
        now = time.monotonic()
        if now - last[0] >= 1.0:
            last[0] = now
            display.show(f"walks {done:,}/{walks:,}  states {visited:,}  "
                         f"{visited / max(now - started, 1e-9):,.0f} states/s")

    options = SimulateOptions(
        seed=seed, walks=walks, depth=depth, check_deadlock=deadlock, params=values,
        progress=tick,
    )
    try:
        result = simulate(model, options)
    finally:
        display.done()
    _report(result, json_path, itf_path)


@click.command("models")
def models_command() -> None:
    """List the registered models and their parameters."""
    for name in registry().names():
        entry = registry().entries[name]
        symmetric = " (symmetric)" if entry.symmetric else ""
        click.echo(f"{name}{symmetric}: {entry.doc}")
        for param in entry.params:
            fault = " [fault]" if param.fault else ""
            click.echo(f"    -p {param.name}=<{param.type.__name__}>{fault} "
                       f"(default {param.default}): {param.doc}")
