"""Which llama.cpp build serves the embedded judge (embedded_judge.engines)."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest

from embedded_judge import engines
from embedded_judge.engines import (
    NATIVE,
    NO_COMPILER,
    PREBUILT,
    EngineError,
    build_native,
    chosen_engine,
    engine_environment,
    native_dir,
    native_works,
)
from embedded_judge.options import ServerOptions
from embedded_judge.server import EmbeddedJudge

REPO = Path(__file__).resolve().parents[2]


def built(var_dir: Path, module: str = "") -> Path:
    """A native build under `var_dir` as `build_native` leaves one: its folder and marker."""
    folder = native_dir(var_dir)
    folder.mkdir(parents=True)
    (folder / ".works").write_text(f"{engines.CMAKE_ARGS}\nCPU : AVX512 = 1 |\n")
    if module:
        (folder / "xllamacpp.py").write_text(module)
    return folder


def test_auto_takes_the_native_build_where_one_works_and_the_wheel_elsewhere(tmp_path: Path):
    assert chosen_engine("auto", var_dir=tmp_path) == PREBUILT
    assert chosen_engine(None, var_dir=tmp_path) == PREBUILT
    built(tmp_path)
    assert chosen_engine("auto", var_dir=tmp_path) == NATIVE
    assert chosen_engine(PREBUILT, var_dir=tmp_path) == PREBUILT


def test_a_build_made_with_other_options_is_built_again(tmp_path: Path):
    folder = built(tmp_path)
    (folder / ".works").write_text("-DGGML_NATIVE=ON\nCPU : AMX_INT8 = 1 |\n")

    assert not native_works(tmp_path)
    assert chosen_engine("auto", var_dir=tmp_path) == PREBUILT
    assert engines.system_info(tmp_path) == ""


def test_asking_for_a_native_build_that_is_not_there_says_how_to_make_one(tmp_path: Path):
    with pytest.raises(EngineError, match=r"python -m embedded_judge\.engines build"):
        chosen_engine(NATIVE, var_dir=tmp_path)
    with pytest.raises(EngineError, match="expected auto, native or prebuilt"):
        chosen_engine("gpu", var_dir=tmp_path)


def test_the_child_finds_the_native_build_first_and_waits_passively(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    native = engine_environment(NATIVE, var_dir=tmp_path, package_root=REPO,
                                wait_policy="PASSIVE")
    prebuilt = engine_environment(PREBUILT, var_dir=tmp_path, package_root=REPO,
                                  wait_policy=None)

    assert native["PYTHONPATH"].split(os.pathsep)[:2] == [str(native_dir(tmp_path)), str(REPO)]
    assert native["OMP_WAIT_POLICY"] == "PASSIVE"
    assert prebuilt["PYTHONPATH"].split(os.pathsep)[0] == str(REPO)
    assert "OMP_WAIT_POLICY" not in prebuilt  # OpenMP's own default: spin first


def test_a_machine_without_a_compiler_keeps_the_wheel_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(engines.shutil, "which", lambda command: None)
    said = io.StringIO()

    assert build_native(tmp_path, progress=said) is None
    assert said.getvalue().strip() == NO_COMPILER.format(
        missing="a C++ compiler (c++), a C compiler (cc), cmake")
    assert not native_works(tmp_path)


def test_a_failed_build_leaves_nothing_and_the_wheel_serves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(engines.subprocess, "call", lambda *args, **kwargs: 2)
    said = io.StringIO()

    assert build_native(tmp_path, progress=said) is None
    assert "the native build failed (exit code 2); the prebuilt wheel serves" in said.getvalue()
    assert not native_dir(tmp_path).exists() and not native_works(tmp_path)
    assert list(native_dir(tmp_path).parent.glob(".xllamacpp-*")) == []  # no scratch left


def test_a_native_build_that_fails_to_start_gives_way_to_the_wheel(tmp_path: Path):
    # A "native build" whose xllamacpp cannot load, and a child that imports it first.
    built(tmp_path, module="raise ImportError('illegal instruction')\n")
    child = tmp_path / "child.py"
    child.write_text("import xllamacpp\nfrom tests.embedded_judge.standin_judge import main\n"
                     "main()\n")
    judge = EmbeddedJudge("standin", var_dir=tmp_path, startup_timeout=30,
                          options=ServerOptions(n_parallel=1), progress=None,
                          command=[sys.executable, str(child), "--alias", "standin",
                                   "--starts", str(tmp_path / "starts")])
    with judge:
        assert judge.engine_name == PREBUILT
    assert len((tmp_path / "starts").read_text().split()) == 1  # the second child served

    asked = EmbeddedJudge("standin", var_dir=tmp_path, startup_timeout=30, engine=NATIVE,
                          progress=None, command=judge.command)
    with pytest.raises(RuntimeError, match="exited with code 1 while starting"):
        asked.start()  # asked for by name: no way round it


@pytest.mark.llm
def test_the_machine_s_own_build_serves_where_it_is_built(model_var_dir: Path,
                                                          tmp_path: Path) -> None:
    if not native_works(model_var_dir):
        pytest.skip("no native build on this machine (no compiler): the prebuilt wheel serves")
    judge = EmbeddedJudge("qwen2.5-coder-0.5b", var_dir=model_var_dir,
                          options=ServerOptions(n_parallel=1, ctx_per_slot=1024),
                          log_path=tmp_path / "server.log")
    with judge:
        assert judge.engine_name == NATIVE
    assert "AVX" in engines.system_info(model_var_dir)


def test_builds_are_cached_per_cpu_so_unlike_machines_never_share_one():
    sapphire = ("processor : 0\nmodel name : Xeon 8480\nflags : avx2 avx512f amx_int8\n"
                "cpu MHz : 2000.1\nprocessor : 1\nmodel name : Xeon 8480\n"
                "flags : avx2 avx512f amx_int8\ncpu MHz : 2100.7\n")
    same_cpu_other_clock = sapphire.replace("2000.1", "1999.0")
    without_amx = sapphire.replace(" amx_int8", "")

    assert engines.cpu_key(sapphire) == engines.cpu_key(same_cpu_other_clock)
    assert engines.cpu_key(sapphire) != engines.cpu_key(without_amx)
