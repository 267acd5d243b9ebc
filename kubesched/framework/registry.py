"""The plugin registry: plugin name -> how to build it and decode its args.

A plugin is registered as a ``PluginSpec``: its name, a factory ``(args, handle) ->
plugin``, and how its args are read: an ``args_type`` dataclass decoded by the shared
strict decoder (``decode_args``), as every in-tree plugin's are, or a ``parse_args``
function for args no dataclass can describe. Out-of-tree plugins are registered the
same way as in-tree ones; ``kubesched.framework.loader`` finds them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Generic, Iterable, Protocol, cast, runtime_checkable

from typing_extensions import Never, TypeVar

from .args import ArgsError, decode_args
from .features import DEFAULT_FEATURES, Features
from .handle import Handle
from .interfaces import Plugin

__all__ = ["AnyPluginSpec", "GatedArgs", "PluginSpec", "Registry", "PluginFactory", "DefaultPlugin"]

A = TypeVar("A", default=None)  # a plugin's args type; None for a plugin without args

PluginFactory = Callable[[A, Handle], Plugin]
"""``factory(args, handle)``: ``args`` is the decoded args (None for a plugin without args)."""


@runtime_checkable
class GatedArgs(Protocol):
    """Args whose defaults and validation depend on the feature gates, as upstream's
    ``SetDefaults_<Name>Args`` and ``Validate<Name>Args`` read ``feature.DefaultFeatureGate``
    (DynamicResourcesArgs: each timeout only with its gate on)."""

    def defaulted(self, features: Features) -> "GatedArgs": ...

    def problems(self, features: Features) -> list[tuple[str, str]]:
        """``(field, message)`` per problem, in upstream's order."""
        ...


@dataclass(slots=True, frozen=True)
class PluginSpec(Generic[A]):
    """How to make one plugin.

    ``args_type``: a dataclass the plugin's ``pluginConfig`` args decode into (strictly:
    unknown fields and wrong types are config errors with the field's path); a plugin
    with args gets ``args_type()`` (its defaults) when the config gives none.
    ``parse_args(raw)``: a hand-written decoder instead, raising ``ArgsError``.
    With neither, the plugin takes no args and its factory gets None.
    ``object_kinds``: ``(apiVersion, kind)`` of objects the plugin reads through
    ``Handle.object_store``, so a snapshot holding them loads.
    ``needs_raw``: the plugin reads whole documents (``Node.raw``, ``PodInfo.raw``), not
    only the parsed records: when a profile enables it, every node and every pod bound to
    a node keeps its document (otherwise only HTTP extenders make them keep theirs), as
    pods being scheduled always do.
    """

    name: str
    factory: Callable[[A, Handle], Plugin]
    args_type: type[A] | None = None
    parse_args: Callable[[object], A] | None = None
    object_kinds: tuple[tuple[str, str], ...] = ()
    needs_raw: bool = False

    @property
    def takes_args(self) -> bool:
        return self.args_type is not None or self.parse_args is not None

    def decode(self, raw: object, features: Features = DEFAULT_FEATURES) -> A | None:
        """The plugin's args from a ``pluginConfig`` entry's ``args`` (None: not given), defaulted
        and validated for ``features`` when they are ``GatedArgs`` (the first problem raised)."""
        if self.parse_args is not None:
            return self.parse_args(raw)
        if self.args_type is not None:
            args = decode_args(self.args_type, raw)
            if not isinstance(args, GatedArgs):
                return args
            gated = args.defaulted(features)
            problems = gated.problems(features)
            if problems:
                raise ArgsError(*problems[0])
            return cast(A, gated)  # the same dataclass, defaulted
        return None

    def build(self, args: object, handle: Handle) -> Plugin:
        """Call the factory with args this spec decoded."""
        factory: Callable[[object, Handle], Plugin] = self.factory  # type: ignore[assignment]
        return factory(args, handle)


class AnyPluginSpec(Protocol):
    """Any ``PluginSpec``, whatever its args type, for lists of specs with different args.

    ``PluginSpec[A]`` is invariant in ``A`` (its factory takes an ``A``, its decoder makes
    one), so ``list[PluginSpec[object]]`` rejects a ``PluginSpec[MyArgs]``; a list of
    these accepts every spec and needs no ``Any``::

        specs: list[AnyPluginSpec] = [fewest_pods.spec, prefer_label.spec]

    What it offers is what the loader and the registry read; a spec read through it is
    still a ``PluginSpec`` (what entry points and ``--plugin`` must name).
    """

    @property
    def name(self) -> str: ...

    @property
    def factory(self) -> Callable[[Never, Handle], Plugin]: ...

    @property
    def args_type(self) -> type[object] | None: ...

    @property
    def parse_args(self) -> Callable[[object], object] | None: ...

    @property
    def object_kinds(self) -> tuple[tuple[str, str], ...]: ...

    @property
    def needs_raw(self) -> bool: ...

    @property
    def takes_args(self) -> bool: ...

    def build(self, args: object, handle: Handle) -> Plugin: ...


@dataclass(slots=True, frozen=True)
class DefaultPlugin:
    """A plugin of the default profile's ``multiPoint`` set, with its score weight (0: none)."""

    name: str
    weight: int = 0


class Registry:
    """Plugins by name, the default profile's plugin list, and upstream plugins kubesched lacks.

    ``features``: the feature gates the default list was made for; schedulers built from
    this registry hand them to plugins (``Handle.features``).
    """

    def __init__(
        self,
        specs: Iterable[PluginSpec[object]] | None = None,
        defaults: Iterable[DefaultPlugin] = (),
        unimplemented: Iterable[str] = (),
        features: Features = DEFAULT_FEATURES,
    ) -> None:
        self._specs: dict[str, PluginSpec[object]] = {}
        self.defaults: tuple[DefaultPlugin, ...] = tuple(defaults)
        self.unimplemented: frozenset[str] = frozenset(unimplemented)
        self.features = features
        # Installed plugin packages whose entry point failed to load, one line each
        # ("package P, entry point 'e' (module:attr): why"): an error only for a
        # configuration that enables a plugin this registry lacks, a warning otherwise.
        self.broken: list[str] = []
        self._warned = False
        for spec in specs or []:
            self.register(spec)

    def register(self, spec: PluginSpec[A]) -> None:
        if spec.name in self._specs:
            raise ValueError(f"a plugin named {spec.name} already exists")
        self._specs[spec.name] = spec  # type: ignore[assignment]

    def add(
        self,
        name: str,
        factory: Callable[[A, Handle], Plugin],
        args_type: type[A] | None = None,
        object_kinds: tuple[tuple[str, str], ...] = (),
    ) -> None:
        """Register a plugin by its parts."""
        self.register(PluginSpec(name, factory, args_type, None, object_kinds))

    def get(self, name: str) -> PluginSpec[object] | None:
        return self._specs.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def names(self) -> list[str]:
        return list(self._specs)

    def specs(self) -> list[PluginSpec[object]]:
        return list(self._specs.values())

    def object_kinds(self) -> frozenset[tuple[str, str]]:
        """Every ``(apiVersion, kind)`` some registered plugin reads."""
        return frozenset(k for spec in self._specs.values() for k in spec.object_kinds)

    def merged(self, other: "Registry") -> "Registry":
        """This registry's plugins and defaults, plus ``other``'s plugins (names must not clash)."""
        out = Registry(self._specs.values(), self.defaults, self.unimplemented - set(other.names()), self.features)
        for spec in other._specs.values():
            out.register(spec)
        out.broken = self.broken + other.broken
        return out

    def broken_warnings(self) -> list[str]:
        """One warning line per broken installed plugin package, the first time asked
        (a command that goes on without them says so once)."""
        if self._warned:
            return []
        self._warned = True
        return [f"warning: plugin {line}; its plugins are not available" for line in self.broken]


