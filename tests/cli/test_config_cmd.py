"""Config files that are not text: one line, exit 2 (``kubesched config check`` reads them as every command does)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kubesched.cli.main import cli


def test_a_config_file_that_is_not_utf8_is_one_line_and_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_bytes(b"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n# caf\xe9\n")
    result = CliRunner().invoke(cli, ["config", "check", str(config)])
    assert result.exit_code == 2
    assert result.output.strip() == f"error: {config}: not UTF-8 text (byte 81)"
