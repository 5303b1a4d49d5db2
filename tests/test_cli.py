import re
from pathlib import Path

from click.testing import CliRunner

from isrlab import __version__
from isrlab.cli import cli


def test_help_lists_the_command_group() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    assert "Kafka" in result.output


def test_version_prints_the_installed_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output


def test_help_gives_each_command_a_whole_line() -> None:
    """Each command's line is a whole phrase of its own: click cut the first sentence of
    each docstring at 45 characters ("Search for a shortest counterexample with an SMT
    solver, one...")."""
    result = CliRunner().invoke(cli, ["--help"], terminal_width=80)
    lines = result.output.split("Commands:\n", 1)[1].rstrip().splitlines()
    named = [line.split()[0] for line in lines if line.startswith("  ") and not
             line.startswith("   ") and line.split()[0] in cli.commands]
    assert sorted(named) == sorted(cli.commands) and len(lines) < 2 * len(named)
    assert not [line for line in lines if line.rstrip().endswith("...")]
    assert all(len(line) <= 80 for line in lines)


def test_models_short_texts_say_something_and_defaults_are_as_p_takes_them() -> None:
    short = CliRunner().invoke(cli, ["models"]).output.splitlines()
    line = next(x for x in short if x.strip().startswith("-p kafka_7414="))
    assert "(default true): KAFKA-7414: a follower past its leader's LEO" in line
    kip903 = next(x for x in short if x.strip().startswith("-p kip903="))
    assert "fetches carry the follower's broker" in kip903
    fault = next(x for x in short if x.strip().startswith("-p incarnation_check="))
    assert fault.count("[fault]") == 1


def test_the_kafka_models_line_says_its_defaults_and_what_their_check_finds() -> None:
    """``isrlab models``' one line on ``kafka``: KRaft mode by default, and the finding its
    default check reports (the invariant and the trace's length, as the check prints them)."""
    from isrlab.models import registry

    line = next(x for x in CliRunner().invoke(cli, ["models", "kafka"]).output.splitlines()
                if x.startswith("kafka: "))
    default = {p.name: p.default for p in registry().entries["kafka"].params}["controller"]
    assert f"Defaults: KRaft mode (controller={default}," in line and default == "kraft"
    result = CliRunner().invoke(cli, ["check", "--model", "kafka", "--no-progress"])
    found = re.search(r"VIOLATION of (\w+) \(trace of (\d+) states\)", result.stdout)
    assert found is not None and f"{found[1]} in {found[2]} states" in line
    write_up = re.search(r"docs/findings/[\w.-]+\.md", line)
    assert write_up is not None and (Path(__file__).parents[1] / write_up[0]).is_file()


def test_the_kafka_defaults_violation_points_at_its_write_up() -> None:
    """``isrlab check --model kafka`` exits 1 on purpose (README); its output says which
    finding that is and the candidate fix, and no other violation gets that note."""
    result = CliRunner().invoke(cli, ["check", "--model", "kafka", "--no-progress"])
    assert result.exit_code == 1
    assert "VIOLATION of ReplicationQuorumSuperset (trace of 8 states)" in result.stdout
    note = [line for line in result.stdout.splitlines() if line.startswith("Note: ")]
    assert len(note) == 1 and "docs/findings/kraft-equal-epoch-delta.md" in note[0]
    assert "-p make_leader_equal_epoch=skip" in note[0]
    run_file = Path(__file__).resolve().parents[1] / "scenarios" / "kip101-1.toml"
    other = CliRunner().invoke(cli, ["check", "--config", str(run_file), "--no-progress"])
    assert other.exit_code == 1 and "Note: " not in other.stdout
