"""isrlab's Python API: define a model or wrap a registered one with extra invariants and
``sometimes`` properties, and run it (check, liveness, simulate, bmc, validate, render,
prove) — without forking isrlab.  Every run goes through ``isrlab.services``, as the commands do.

A *model spec* names a model anywhere isrlab takes one (``--model`` on the command line,
``model(...)`` here, the pytest plugin's marker):

* a registered name, e.g. ``tla-kip320`` (``isrlab models`` lists them; installed packages
  add theirs through the ``isrlab.models`` entry-point group, see ``isrlab.models``);
* ``path/to/file.py:NAME`` or ``package.module:NAME``: the object ``NAME`` of that file or
  module, either a ``ModelEntry`` (a model with typed ``-p`` parameters; ``extend`` returns
  one) or an object implementing ``isrlab.checker.model.Model`` (no parameters).

``extend`` adds properties written over a state's *variables* (``Model.variables``: the
mapping a trace shows, e.g. ``v["replicaState"]["r1"]["hw"]``), so they work on every model
whatever its internal state encoding.  docs/api.md has a worked example.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from returns.result import Failure

from isrlab.checker.bfs import CheckOptions
from isrlab.checker.graph import DOT_LIMIT
from isrlab.checker.liveness import LivenessResult
from isrlab.checker.model import Delegating, Model, Property
from isrlab.checker.registry import USER_MODULE_PREFIX, ModelEntry, Param, ParamValue, Registry
from isrlab.checker.report import CheckResult
from isrlab.checker.simulate import SimulateOptions
from isrlab.checker.validate import TraceFormatError, ValidateOptions, ValidationResult
from isrlab.models import registry
from isrlab.services import InputError, rendering, runs, traces
from isrlab.services.engines import Engine
from isrlab.spec.oracle.run import Verdict

if TYPE_CHECKING:
    from isrlab.services.bmc import BmcRun
    from isrlab.services.proofs import ProveRun

__all__ = [
    "CheckResult", "InputError", "LivenessResult", "Model", "ModelEntry", "ModelError",
    "Param", "ParamValue", "Predicate", "Property", "TraceFormatError", "UserPropertyError",
    "Verdict", "bmc", "check", "check_liveness", "describe", "entry", "extend", "judge_logs",
    "model", "prove", "render", "simulate", "validate", "write_dot", "write_itf", "write_svg",
]

Predicate = Callable[[Mapping[str, Any]], bool]
"""A property over a state's variables (``Model.variables(state)``)."""


class ModelError(ValueError):
    """A model spec or its parameters that cannot be used (a one-line message)."""


# -- finding models -----------------------------------------------------------------------------

def _module_of_file(path: Path) -> Any:
    """Import a user's Python file under a stable private module name."""
    if not path.is_file():
        raise ModelError(f"model file {str(path)!r} does not exist")
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    name = f"{USER_MODULE_PREFIX}{path.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ModelError(f"cannot load {str(path)!r} as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as error:  # a file that calls sys.exit() is no model
        del sys.modules[name]
        raise ModelError(f"cannot load {str(path)!r}: {type(error).__name__}: {error}") from error
    return module


def _module_named(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except (Exception, SystemExit) as error:
        raise ModelError(f"cannot import {name!r}: {type(error).__name__}: {error}") from error


def as_entry(obj: Any, where: str) -> ModelEntry:
    """``obj`` as a ``ModelEntry``: itself, or a parameterless entry for a ``Model``."""
    if isinstance(obj, ModelEntry):
        return obj
    if all(callable(getattr(obj, m, None)) for m in ("init_states", "next_states", "encode")):
        name = str(getattr(obj, "name", where))
        doc = (type(obj).__doc__ or "").strip().split("\n")[0]
        return ModelEntry(name, doc, (), lambda _params: obj)
    raise ModelError(f"{where} is a {type(obj).__name__}, not a ModelEntry or a Model")


def entry(spec: str) -> ModelEntry:
    """The ``ModelEntry`` a model spec names (module docstring); ``ModelError`` if none."""
    if ":" not in spec:
        found = registry().get(spec)
        if isinstance(found, Failure):
            raise ModelError(found.failure())
        return found.unwrap()
    target, _, attribute = spec.rpartition(":")
    if not target or not attribute.isidentifier():
        raise ModelError(f"model {spec!r} is not of the form path/to/file.py:NAME or "
                         "package.module:NAME")
    file_like = target.endswith(".py") or "/" in target or "\\" in target
    module = _module_of_file(Path(target)) if file_like else _module_named(target)
    if not hasattr(module, attribute):
        public = sorted(n for n in vars(module) if not n.startswith("_"))
        raise ModelError(f"{target} defines no {attribute!r} (it defines: "
                         f"{', '.join(public) or 'nothing'})")
    return as_entry(getattr(module, attribute), spec)


def _entry_of(spec: str | ModelEntry | Model[Any]) -> ModelEntry:
    """The entry a spec names, an entry itself, or a parameterless entry for a model."""
    return spec if isinstance(spec, ModelEntry) else (
        entry(spec) if isinstance(spec, str) else as_entry(spec, repr(spec)))


def _assignment(name: str, value: ParamValue | str) -> str:
    text = str(value).lower() if isinstance(value, bool) else str(value)
    return f"{name}={text}"


def parse(found: ModelEntry, assignments: Iterable[str]) -> dict[str, ParamValue]:
    """``key=value`` strings checked against ``found``'s parameters (``ModelError``)."""
    parsed = Registry().parse_params(found, assignments)
    if isinstance(parsed, Failure):
        raise ModelError(parsed.failure())
    return parsed.unwrap()


def build(found: ModelEntry, values: Mapping[str, ParamValue]) -> Model[Any]:
    """``found`` built with parsed parameters; a ``ValueError`` becomes ``ModelError``."""
    try:
        return found.build(values)
    except ModelError:
        raise
    except ValueError as error:
        raise ModelError(f"model {found.name!r}: {error}") from error


def model(spec: str | ModelEntry | Model[Any], **params: ParamValue) -> Model[Any]:
    """The model a spec, an entry or a model names, built with ``params`` (keyword
    arguments, checked and typed like ``-p key=value``; ``ModelError`` when unusable)."""
    found = _entry_of(spec)
    values = parse(found, [_assignment(k, v) for k, v in params.items()])
    return build(found, values)


def describe(found: ModelEntry) -> dict[str, Any]:
    """A model as JSON (``isrlab models --json``): its parameters, and the invariants and
    ``sometimes`` properties of its default build."""
    built = found.build({p.name: p.default for p in found.params})
    return {
        "name": found.name,
        "doc": found.doc,
        "symmetric": found.symmetric,
        "params": [
            {"name": p.name, "type": p.type.__name__, "default": p.default, "doc": p.doc,
             "minimum": p.minimum, "maximum": p.maximum,
             "choices": list(p.choices) if p.choices is not None else None,
             **({"aliases": dict(p.aliases)} if p.aliases else {})}
            for p in found.params
        ],
        "invariants": [{"name": p.name, "doc": p.doc} for p in built.invariants()],
        "sometimes": [{"name": p.name, "doc": p.doc} for p in built.sometimes()],
    }


# -- extending models ---------------------------------------------------------------------------

class UserPropertyError(Exception):
    """A property written by a user (``extend``) raised: ``str()`` is one line naming the
    property, where in the user's file it raised, and the exception."""


def user_error_line(kind: str, name: str, predicate: Predicate, error: BaseException) -> str:
    """One line for ``error`` raised by the user's ``predicate``: its kind and name, the
    exception, and the file and line in the user's code (the innermost frame of the
    predicate's own file, else the innermost frame)."""
    frames = traceback.extract_tb(error.__traceback__)
    code = getattr(predicate, "__code__", None)
    own = [f for f in frames if code is not None and f.filename == code.co_filename]
    chosen = own or list(frames)
    where = f" ({chosen[-1].filename}, line {chosen[-1].lineno})" if chosen else ""
    message = " ".join(f"{type(error).__name__}: {error}".split())[:300]
    return f"your {kind} {name!r} raised {message}{where}"


def _on_variables(base: Model[Any], name: str, predicate: Predicate,
                  kind: str = "invariant") -> Property[Any]:
    doc = (getattr(predicate, "__doc__", None) or "").strip()

    def holds(state: Any) -> bool:
        try:
            return bool(predicate(base.variables(state)))
        except Exception as error:  # the user's code: reported as theirs (UserPropertyError)
            raise UserPropertyError(user_error_line(kind, name, predicate, error)) from error

    return Property(name, holds, doc)


@dataclass(frozen=True)
class Extended(Delegating[Any]):
    """A model with more properties: every step, state and encoding is the base model's; the
    invariants and ``sometimes`` properties are the base's (unless ``replace``) followed by
    the added ones.  The base's optional members that say how states are identified and
    stored (``view``, ``identity_encoding``, ``has_boundary``, ``state_layout``) are passed
    on, so the search finds the same states, counts and counterexamples as on the base; its
    compiled successors are not (they carry the base's invariants only).  Modelling
    shortcut: the added predicates read ``variables(state)``, so with ``--symmetry`` they
    must not tell symmetric replicas apart."""

    base: Model[Any]
    name: str
    added_invariants: tuple[Property[Any], ...] = ()
    added_sometimes: tuple[Property[Any], ...] = ()
    replace: bool = False
    _cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def invariants(self) -> Sequence[Property[Any]]:
        """The base's invariants (none with ``replace``), then the added ones."""
        kept = () if self.replace else tuple(self.base.invariants())
        return (*kept, *self.added_invariants)

    def sometimes(self) -> Sequence[Property[Any]]:
        """The base's ``sometimes`` properties (none with ``replace``), then the added ones."""
        kept = () if self.replace else tuple(self.base.sometimes())
        return (*kept, *self.added_sometimes)

    @property
    def view(self) -> Callable[[Any], bytes] | None:
        """The base's view (TLC's VIEW: states sharing one are one state), or ``None``."""
        return getattr(self.base, "view", None)

    @property
    def identity_encoding(self) -> bool:
        """Whether the base's states are their own encoding."""
        return bool(getattr(self.base, "identity_encoding", False))

    @property
    def has_boundary(self) -> bool:
        """Whether the base has a state constraint (``within_boundary`` not always true)."""
        return bool(getattr(self.base, "has_boundary", True))

    @property
    def state_layout(self) -> str | None:
        """The version of the base's encoding a run directory records, or ``None``."""
        layout = getattr(self.base, "state_layout", None)
        return layout if isinstance(layout, str) else None


def extend(
    base: str | ModelEntry | Model[Any], *, name: str | None = None,
    invariants: Mapping[str, Predicate] | None = None,
    sometimes: Mapping[str, Predicate] | None = None, replace: bool = False,
) -> ModelEntry:
    """A model entry that is ``base`` (a spec, an entry or a model) with more properties.

    ``invariants`` and ``sometimes`` map a property's name to a predicate over a state's
    variables; a predicate's docstring becomes the property's description.  With
    ``replace`` the base's own properties are dropped.  The entry keeps ``base``'s
    parameters, so ``-p key=value`` works on it as on the base."""
    found = _entry_of(base)
    added_invariants = dict(invariants or {})
    added_sometimes = dict(sometimes or {})
    new_name = name or f"{found.name}+custom"

    def build_extended(values: Mapping[str, ParamValue]) -> Model[Any]:
        inner = found.build(values)
        return Extended(
            inner, new_name,
            tuple(_on_variables(inner, n, p) for n, p in added_invariants.items()),
            tuple(_on_variables(inner, n, p, "sometimes property")
                  for n, p in added_sometimes.items()),
            replace,
        )

    doc = f"{found.doc} (extended: {', '.join([*added_invariants, *added_sometimes])})"
    return ModelEntry(new_name, doc, found.params, build_extended, found.symmetric)


# -- running models -------------------------------------------------------------------------
# Every run goes through isrlab.services, as the commands do: the API returns the reports the
# commands print and write.

def _resolve(spec: str | ModelEntry | Model[Any], params: Mapping[str, ParamValue]
             ) -> tuple[Model[Any], dict[str, ParamValue]]:
    found = _entry_of(spec)
    values = parse(found, [_assignment(k, v) for k, v in params.items()])
    return build(found, values), values


def _check_options(
    spec: str | ModelEntry | Model[Any], params: Mapping[str, ParamValue] | None,
    chosen: Engine, liveness: bool, **options: Any,
) -> tuple[Model[Any], CheckOptions]:
    """The model and the options of a check, its preconditions met (``InputError``)."""
    found = _entry_of(spec)
    built, values = _resolve(found, params or {})
    checked = CheckOptions(params=values, **options)
    runs.check_preconditions(built, found.name, found.symmetric, checked, chosen, liveness)
    return built, checked


def check(
    spec: str | ModelEntry | Model[Any], params: Mapping[str, ParamValue] | None = None, *,
    max_depth: int | None = None, max_states: int | None = None, workers: int = 1,
    symmetry: bool = False, deadlock: bool = False, keep_going: bool = False,
    run_dir: str | Path | None = None, engine: str = "bfs", master: str | None = None,
    buckets: int | None = None,
) -> CheckResult:
    """Explore a model breadth-first (``isrlab check``) and return the report: ``.ok``,
    ``.violation`` (with its shortest trace and, when the invariant explains itself, its
    ``explanation``), counts, ``.complete``.  ``run_dir`` persists each level (a rerun with
    it resumes); ``engine="spark"`` (or a Spark ``master`` URL) runs on Spark, with
    ``buckets`` fingerprint buckets.  ``InputError`` for options the model or engine
    cannot take (``symmetry`` on a model without one, ``buckets`` without Spark)."""
    chosen = Engine(engine, master, buckets)
    built, options = _check_options(
        spec, params, chosen, False, symmetry=symmetry, workers=workers, max_depth=max_depth,
        max_states=max_states, stop_at_first=not keep_going, check_deadlock=deadlock,
        run_dir=Path(run_dir) if run_dir is not None else None)
    return runs.check(built, options, chosen)


def check_liveness(
    spec: str | ModelEntry | Model[Any], params: Mapping[str, ParamValue] | None = None, *,
    workers: int = 1, deadlock: bool = False,
) -> tuple[CheckResult, LivenessResult | None]:
    """``isrlab check --liveness``: every invariant on every reachable state, then, when
    they all hold, the model's temporal properties under its fairness (``None`` when the
    plain check failed).  ``InputError`` for a model declaring no ``liveness()`` or with a
    view."""
    chosen = Engine()
    built, options = _check_options(spec, params, chosen, True, workers=workers,
                                    check_deadlock=deadlock)
    result = runs.check(built, options, chosen)
    return result, (runs.liveness(built) if result.ok else None)


def simulate(
    spec: str | ModelEntry | Model[Any], params: Mapping[str, ParamValue] | None = None, *,
    seed: int = 0, walks: int = 100, depth: int = 100, deadlock: bool = False,
) -> CheckResult:
    """Check every invariant along seeded random walks (``isrlab simulate``)."""
    built, values = _resolve(spec, params or {})
    return runs.simulate(built, SimulateOptions(
        seed=seed, walks=walks, depth=depth, check_deadlock=deadlock, params=values,
    ))


def bmc(
    spec: str | ModelEntry, params: Mapping[str, ParamValue] | None = None, *,
    depth: int = 12, timeout_s: int = 0, solver: str = "auto",
    partial_order: bool | None = None,
) -> BmcRun:
    """Search a registered model's symbolic twin for a shortest counterexample with an SMT
    solver, one more step at a time up to ``depth`` steps (``isrlab bmc``): ``.report`` is
    the ``CheckResult`` (its violation replayed through the explicit model), ``.summary()``
    the line the command prints, ``.gave_up`` whether ``timeout_s`` stopped it first;
    ``partial_order`` forces the partial-order reduction on or off (``None``: where the
    model's encoding declares it).  ``InputError`` for a model without a symbolic encoding
    (``BmcRun``: ``isrlab.services.bmc``)."""
    from isrlab.services import bmc as bounded  # Z3 and the symbolic encodings: on first use

    found = _entry_of(spec)
    built, values = _resolve(found, params or {})
    return bounded.bmc(built, found.name, values, depth, timeout_s, solver, partial_order)


def prove(
    model: str | None = None, *, timeout_s: int = 20, out: str | Path | None = None,
    update: bool = False,
) -> ProveRun:
    """Discharge the inductive proof obligations of ``model`` (every model's when ``None``)
    and compare them with the recorded outcomes (``isrlab prove``): ``.lost`` names each
    obligation recorded as proved that no longer is.  The outcomes are written to ``out``
    (default: a fresh temporary directory) or, with ``update``, over the recorded
    proofs/results.json and proofs/RESULTS.md (``ProveRun``: ``isrlab.services.proofs``)."""
    from isrlab.services import proofs  # Z3 and every obligation module: on first use

    destination = Path(out) if out is not None else None
    selected = proofs.selected_groups(model)
    proofs.check_destination(destination, update)
    run = proofs.prove(selected, timeout_s)
    proofs.write_results(run, destination, update)
    return run


def render(trace: str | Path, out: str | Path, invariant: str | None = None) -> int:
    """Draw an ITF trace file (``isrlab render``) as a message sequence chart (SVG) in
    ``out``; returns its number of states (``InputError`` for a file that is no trace)."""
    return rendering.render_itf(Path(trace), Path(out), invariant)


def write_svg(path: str | Path, result: CheckResult, spec: str | ModelEntry | Model[Any]
              | None = None, params: Mapping[str, ParamValue] | None = None) -> bool:
    """A run's counterexample as a sequence chart (``--svg``), its VIOLATED note in the
    words of the model ``spec`` (built with ``params``) if given; ``False`` when it has no
    counterexample."""
    built = _resolve(spec, params or {})[0] if spec is not None else None
    return rendering.write_result_svg(Path(path), result, built)


def write_itf(path: str | Path, result: CheckResult) -> bool:
    """A run's counterexample as an ITF trace (``--itf``); ``False`` when it has none."""
    return rendering.write_result_itf(Path(path), result)


def write_dot(
    path: str | Path, spec: str | ModelEntry | Model[Any],
    params: Mapping[str, ParamValue] | None = None, *, limit: int = DOT_LIMIT,
    max_depth: int | None = None, max_states: int | None = None, symmetry: bool = False,
    keep_going: bool = False, full_labels: bool = False,
) -> None:
    """The state graph ``check`` with these options explores as Graphviz DOT (``--dot``),
    each state labelled with what changed from the state it was first reached from
    (``full_labels``: every variable, ``--dot-labels full``); ``InputError`` above
    ``limit`` states."""
    built, values = _resolve(spec, params or {})
    rendering.write_dot(Path(path), built, limit, CheckOptions(
        symmetry=symmetry, max_depth=max_depth, max_states=max_states,
        stop_at_first=not keep_going, params=values), full_labels)


def validate(
    spec: str | ModelEntry | Model[Any], trace: str | Path | Sequence[str | Path],
    params: Mapping[str, ParamValue] | None = None, *, closest: int = 3,
    max_frontier: int = 0, partition: str | None = None, brokers: str | None = None,
    engine: str = "oracle", hidden: int | None = None, level: str | None = None,
) -> ValidationResult | Verdict:
    """Whether a trace is allowed (``isrlab validate``).  An ITF document or JSON Lines file
    is checked to be a behaviour of the model (a ``ValidationResult``); a Kafka broker log
    (one file, or several of one cluster) is judged by the log oracle against the rules of
    Kafka's code with the ``kafka`` model's parameters (a ``Verdict`` of ``partition``, the
    only one when ``None``; ``judge_logs`` gives every partition's), or with
    ``engine="model"`` read as a trace of the bounded ``kafka`` model from topic creation
    (``hidden`` unobserved steps before each, the logs' ``level``).  Both have
    ``.accepted`` and ``.verdict``.  ``TraceFormatError`` for unusable input."""
    paths = [Path(trace)] if isinstance(trace, str | Path) else [Path(t) for t in trace]
    text = traces.read_text(paths[0])
    fmt = traces.detect_format(text) if text.strip() else "jsonl"
    options = ValidateOptions(closest=closest, max_frontier=max_frontier)
    if fmt == "kafka-log" and engine == "oracle":
        return judge_logs(paths, spec, params, partition=partition, brokers=brokers)[0]
    if fmt == "kafka-log":
        found = _entry_of(spec)
        texts = [(str(p), text if p == paths[0] else traces.read_text(p)) for p in paths]
        log = traces.kafka_trace(texts, partition, brokers, hidden, level)
        given = [_assignment(k, v) for k, v in (params or {}).items()]
        values = parse(found, traces.kafka_model_params(log, found.name, given))
        built = build(found, values)
        return traces.kafka_log_verdict(log, traces.validate_observations(
            built, traces.kafka_log_observations(log, None, built), options))
    if len(paths) > 1:
        raise TraceFormatError("arguments", "several trace files are read only as Kafka logs")
    built, _ = _resolve(spec, params or {})
    observations = traces.read_observations(text, fmt, None, None, hidden, None)
    return traces.validate_observations(built, observations, options)


def judge_logs(
    logs: Sequence[str | Path], spec: str | ModelEntry | Model[Any] = "kafka",
    params: Mapping[str, ParamValue] | None = None, *, partition: str | None = None,
    brokers: str | None = None,
) -> list[Verdict]:
    """The log oracle's verdict on each chosen partition of a cluster's Kafka broker logs
    (``partition``: a name, ``None`` for the only one, ``"all"``), with the ``kafka``
    model's parameters ``params`` (``unclean_election``, ``truncation``, ``crashes``,
    ``brokers``); ``ModelError`` for another model, ``TraceFormatError`` for unusable
    input (docs/oracle.md)."""
    found = _entry_of(spec)
    if found.name != "kafka":
        raise ModelError(f"a Kafka log is judged with the kafka model's rules, not {found.name}")
    values = parse(found, [_assignment(k, v) for k, v in (params or {}).items()])
    given = traces.oracle_params(values, bool(params) and "brokers" in (params or {}))
    return traces.judge_kafka_logs([(str(p), Path(p)) for p in logs], partition=partition,
                                   brokers=brokers, params=given)
