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
