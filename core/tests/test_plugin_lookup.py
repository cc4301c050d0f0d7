"""``torchplug.<name>`` for a name a plugin provides when that plugin is missing: the error says how to get it."""

from __future__ import annotations

import pytest

from torchplug._plugins import exposure
from torchplug._plugins.lookup import resolve
from torchplug._runtime.backends import repository_root


def test_a_missing_separate_plugin_names_the_install_command(monkeypatch):
    monkeypatch.setitem(exposure.PROVIDERS, "toyfeature", "toyplugin")
    monkeypatch.setitem(exposure.SEPARATE_DISTRIBUTIONS, "toyplugin", "plugins/distributed")
    with pytest.raises(AttributeError) as info:
        resolve("toyfeature")
    message = str(info.value)
    assert message.startswith("torchplug.toyfeature is provided by the 'toyplugin' plugin, which is not installed.")
    root = repository_root()
    assert f"pip install -e {root / 'plugins/distributed'}" in message  # a folder of this checkout that installs


def test_a_missing_plugin_of_the_core_distribution_says_how_to_enable_it(monkeypatch):
    monkeypatch.setitem(exposure.PROVIDERS, "toyfeature", "toyplugin")  # not a distribution of its own
    with pytest.raises(AttributeError, match="which is not installed. It ships with torchplug: remove it from "
                                             "TORCHPLUG_BLOCK_PLUGINS"):
        resolve("toyfeature")


def test_every_separate_plugin_folder_exists_and_installs():
    root = repository_root()
    for plugin, folder in exposure.SEPARATE_DISTRIBUTIONS.items():
        assert (root / folder / "pyproject.toml").is_file(), (plugin, folder)


def test_the_doctor_lists_the_extension_groups_plugins_define(monkeypatch):
    """A ``torchplug.*`` entry-point group the core does not read itself (a plugin's own extension point, such as
    the distributed plugin's process-group backends) is listed with what is installed in it."""
    from types import SimpleNamespace

    from torchplug.__main__ import _extension_groups_section
    from torchplug._plugins import manager

    points = [SimpleNamespace(group="torchplug.toy_backends", name="fast", dist=SimpleNamespace(name="toy-dist")),
              SimpleNamespace(group="torchplug.plugins", name="nn", dist=SimpleNamespace(name="torchplug")),
              SimpleNamespace(group="other.group", name="x", dist=None)]
    monkeypatch.setattr(manager.importlib_metadata, "entry_points", lambda **kw: points)
    lines = _extension_groups_section()
    assert lines[1] == "Extension points of plugins (entry-point groups):"
    assert lines[2].split() == ["torchplug.toy_backends", "fast", "(toy-dist)"]
    assert len(lines) == 3  # the core's own groups and foreign groups are not listed here
