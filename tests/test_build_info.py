"""The benchmarks refuse to time the tests' build (``collateral.build_info``)."""

from __future__ import annotations

import re
import stat

import pytest

from collateral import _native, build_info


def _fake_emu(tmp_path, line: str) -> str:
    p = tmp_path / "collateral-emu"
    p.write_text(f"#!/bin/sh\necho '{line}'\n")
    p.chmod(p.stat().st_mode | stat.S_IXUSR)
    return str(p)


def test_the_module_says_how_it_was_built():
    b = _native.build()
    assert set(b) == {"checked", "pgo"}
    assert isinstance(b["checked"], bool)
    assert b["pgo"] in ("use", "generate", "")


@pytest.mark.parametrize(
    ("build", "words"),
    [
        ({"checked": True, "pgo": ""}, "checked"),
        ({"checked": False, "pgo": "use"}, "release, profile-guided"),
        ({"checked": False, "pgo": "generate"}, "instrumented"),
        ({"checked": False, "pgo": ""}, "release"),
    ],
)
def test_a_build_in_words(monkeypatch, build, words):
    monkeypatch.setattr(_native, "build", lambda: build)
    assert build_info.core() == words


def test_a_benchmark_refuses_the_checked_core_and_names_the_fix(monkeypatch):
    monkeypatch.delenv(build_info.ANY_BUILD, raising=False)
    monkeypatch.setattr(_native, "build", lambda: {"checked": True, "pgo": ""})
    with pytest.raises(SystemExit) as e:
        build_info.require_release("fig6.py")
    msg = str(e.value)
    assert msg.startswith("fig6.py: the native module is the checked build")
    assert "tools/build_native.sh" in msg and build_info.ANY_BUILD in msg
    monkeypatch.setenv(build_info.ANY_BUILD, "1")
    assert build_info.require_release("fig6.py") == "core: checked"


def test_a_module_built_before_it_said_is_unknown_and_refused(monkeypatch):
    monkeypatch.delenv(build_info.ANY_BUILD, raising=False)
    monkeypatch.delattr(_native, "build")
    assert build_info.core() == "unknown"
    with pytest.raises(SystemExit, match=r"^x: the native module is a build that does not say"):
        build_info.require_release("x")


def test_a_benchmark_times_a_release_core(monkeypatch):
    monkeypatch.delenv(build_info.ANY_BUILD, raising=False)
    monkeypatch.setattr(_native, "build", lambda: {"checked": False, "pgo": "use"})
    assert build_info.require_release("x") == "core: release, profile-guided"


@pytest.mark.parametrize(
    ("line", "build"),
    [
        ("collateral-emu 0.1.0 (release build)", "release"),
        ("collateral-emu 0.1.0 (checked build)", "checked"),
        ("collateral-emu 0.1.0", "unknown"),  # built before the line said it
    ],
)
def test_the_router_build_is_read_from_its_version_line(monkeypatch, tmp_path, line, build):
    monkeypatch.delenv(build_info.ANY_BUILD, raising=False)
    monkeypatch.setattr(_native, "build", lambda: {"checked": False, "pgo": ""})
    emu = _fake_emu(tmp_path, line)
    assert build_info.emulator(emu) == build
    if build == "release":
        assert build_info.require_release("acc", emulator_path=emu).endswith(
            f"router: release ({emu})"
        )
    else:
        words = "the checked build" if build == "checked" else "a build that does not say"
        with pytest.raises(SystemExit, match=f"^acc: {re.escape(emu)} is {words}"):
            build_info.require_release("acc", emulator_path=emu)


def test_the_real_router_says_its_build():
    """The built ``collateral-emu`` prints one of the two builds (a clap ``version``
    the Rust side sets from the model's ``CHECKED``)."""
    from collateral.emulate import find_emulator

    assert build_info.emulator(find_emulator()) in ("release", "checked")
