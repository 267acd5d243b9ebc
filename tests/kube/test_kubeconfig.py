"""The kubeconfig reader's client-go rules beyond the connection's own specs: merged
files, relative paths, TLS switches, refused auth-provider plugins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubesched.cluster.kube.kubeconfig import KubeconfigError, kubeconfig_settings


def _write(path: Path, doc: dict[str, object]) -> str:
    path.write_text(json.dumps(doc))
    return str(path)


def _config(cluster: dict[str, object], user: dict[str, object], *, name: str = "c",
            current: str | None = "ctx") -> dict[str, object]:
    doc: dict[str, object] = {"apiVersion": "v1", "kind": "Config",
                              "clusters": [{"name": name, "cluster": cluster}],
                              "users": [{"name": name, "user": user}],
                              "contexts": [{"name": "ctx", "context": {"cluster": name, "user": name}}]}
    if current:
        doc["current-context"] = current
    return doc


def test_merged_files_keep_the_first_definition_of_each_name(tmp_path: Path) -> None:
    first = _write(tmp_path / "a", _config({"server": "https://first:6443"}, {"token": "one"}))
    second = _write(tmp_path / "b", _config({"server": "https://second:6443"}, {"token": "two"}, current="other"))
    settings = kubeconfig_settings([first, second])
    assert settings.server == "https://first:6443"
    assert settings.token is not None and settings.token() == "one"


def test_the_current_context_may_come_from_a_later_file(tmp_path: Path) -> None:
    first = _write(tmp_path / "a", _config({"server": "https://a:6443"}, {"token": "t"}, current=None))
    second = _write(tmp_path / "b", {"current-context": "ctx"})
    assert kubeconfig_settings([first, second]).server == "https://a:6443"


def test_relative_paths_are_relative_to_their_file(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "token").write_text("from-file\n")
    path = _write(tmp_path / "sub" / "config", _config(
        {"server": "https://a:6443", "certificate-authority": "ca.crt"}, {"tokenFile": "token"}))
    settings = kubeconfig_settings([path])
    assert settings.ca_file == str(tmp_path / "sub" / "ca.crt")
    assert settings.token is not None and settings.token() == "from-file"


def test_tls_switches_are_read(tmp_path: Path) -> None:
    path = _write(tmp_path / "c", _config({"server": "https://a:6443", "insecure-skip-tls-verify": True,
                                            "tls-server-name": "api.internal"}, {}))
    settings = kubeconfig_settings([path])
    assert (settings.insecure, settings.tls_server_name) == (True, "api.internal")


def test_an_auth_provider_user_is_refused_with_the_way_out(tmp_path: Path) -> None:
    path = _write(tmp_path / "c", _config({"server": "https://a:6443"}, {"auth-provider": {"name": "gcp"}}))
    with pytest.raises(KubeconfigError, match="exec plugin"):
        kubeconfig_settings([path])


def test_a_failing_exec_plugin_is_one_line_naming_it(tmp_path: Path) -> None:
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "/bin/false"}}
    path = _write(tmp_path / "c", _config({"server": "https://a:6443"}, user))
    with pytest.raises(KubeconfigError, match="exec plugin /bin/false exited with 1") as info:
        kubeconfig_settings([path])
    assert "\n" not in str(info.value)
