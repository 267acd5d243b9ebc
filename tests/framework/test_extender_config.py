"""The ``extenders`` of KubeSchedulerConfiguration: fields, defaults, and upstream's
validateExtenders with its field paths and messages."""

from __future__ import annotations

import base64

import pytest

from kubesched.framework.config import ConfigError
from kubesched.framework.extender_config import (
    ExtenderConfig,
    ExtenderManagedResource,
    ExtenderTLSConfig,
    parse_go_duration,
)

from ..helpers import config, parse

GPU = "example.com/gpu"


def ext(url: str, **fields) -> dict:
    return {"urlPrefix": url, **fields}


def test_extender_fields_and_defaults():
    tls = {"insecure": True, "serverName": "s", "certFile": "c", "keyFile": "k", "caFile": "",
           "certData": base64.b64encode(b"CERT").decode()}
    full = ext("https://e:8443/scheduler", filterVerb="filter", preemptVerb="preempt", prioritizeVerb="prioritize",
               bindVerb="bind", weight=3, enableHTTPS=True, tlsConfig=tls, httpTimeout="1m30s", nodeCacheCapable=True,
               managedResources=[{"name": GPU, "ignoredByScheduler": True}], ignorable=True)
    first, second = parse(config(extenders=[full, ext("http://e")])).extenders
    assert first == ExtenderConfig(
        "https://e:8443/scheduler", "filter", "preempt", "prioritize", 3, "bind", True,
        ExtenderTLSConfig(True, "s", "c", "k", "", b"CERT"), 90.0, True, (ExtenderManagedResource(GPU, True),), True)
    assert second.http_timeout == 5.0  # upstream's DefaultExtenderTimeout
    assert parse(config()).extenders == []
    assert parse(config(extenders=[ext("http://e", httpTimeout="0s")])).extenders[0].http_timeout == 5.0
    assert parse(config(extenders=[ext("http://e", httpTimeout="200ms")])).extenders[0].http_timeout == pytest.approx(0.2)


def problems(*extenders: dict) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as err:
        parse(config(extenders=list(extenders)))
    return err.value.problems


QNAME = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
         "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
         "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


@pytest.mark.parametrize("extenders, expected", [
    ([ext("u", prioritizeVerb="p")],
     [("extenders[0].weight", "Invalid value: 0: must have a positive weight applied to it")]),
    ([ext("u", prioritizeVerb="p", weight=-2)],
     [("extenders[0].weight", "Invalid value: -2: must have a positive weight applied to it")]),
    ([ext("u", bindVerb="b"), ext("v", bindVerb="b"), ext("w", bindVerb="b")],
     [("extenders", 'Invalid value: "found 3 extenders implementing bind": only one extender can implement bind')]),
    ([ext("u", managedResources=[{"name": "gpu"}])],
     [("extenders[0].managedResources[0].name", 'Invalid value: "gpu": is an invalid extended resource name')]),
    ([ext("u", managedResources=[{"name": "kubernetes.io/gpu"}])],
     [("extenders[0].managedResources[0].name", 'Invalid value: "kubernetes.io/gpu": is an invalid extended resource name')]),
    ([ext("u", managedResources=[{"name": GPU}]), ext("v", managedResources=[{"name": GPU}])],
     [("extenders[1].managedResources[0].name", f'Invalid value: "{GPU}": duplicate extender managed resource name')]),
    ([ext("u", managedResources=[{"name": "example.com/"}])],
     [("extenders[0].managedResources[0].name", 'Invalid value: "example.com/": name part must be non-empty'),
      ("extenders[0].managedResources[0].name", f'Invalid value: "example.com/": name part {QNAME}')]),
    ([ext("u", managedResources=[{"name": "a/b/c"}])],
     [("extenders[0].managedResources[0].name", f'Invalid value: "a/b/c": a qualified name {QNAME} with an optional '
                                                "DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")]),
    ([ext("u", httpTimeout="soon")], [("extenders[0].httpTimeout", 'time: invalid duration "soon"')]),
    ([ext("u", httpTimeout="5")], [("extenders[0].httpTimeout", 'time: missing unit in duration "5"')]),
    ([ext("u", httpTimeout=30)], [("extenders[0].httpTimeout", "json: cannot unmarshal number into Go value of type string")]),
    ([ext("u", urlprefix="x")], [("extenders[0].urlprefix", 'unknown field "urlprefix"')]),
    ([ext("u", tlsConfig={"caData": "not base64!"})], [("extenders[0].tlsConfig.caData", "illegal base64 data")]),
    ([ext("u", weight="2")], [("extenders[0].weight", "must be an integer, got '2'")]),
    ([ext("u", ignorable="yes")], [("extenders[0].ignorable", "must be a boolean, got 'yes'")]),
])
def test_extender_validation(extenders, expected):
    assert problems(*extenders) == expected


def test_a_weight_without_a_prioritizer_and_one_binder_are_fine():
    assert len(parse(config(extenders=[ext("u", bindVerb="b"), ext("v", filterVerb="f")])).extenders) == 2


@pytest.mark.parametrize("text, seconds", [("30s", 30.0), ("1h2m3s", 3723.0), ("1.5m", 90.0), (".5s", 0.5),
                                           ("-1s", -1.0), ("0", 0.0), ("100ms", 0.1), ("7\u00b5s", 7e-6)])
def test_go_durations(text, seconds):
    assert parse_go_duration(text) == pytest.approx(seconds)
