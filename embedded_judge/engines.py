"""Which build of llama.cpp serves the embedded judge: the prebuilt wheel, or one compiled for
this machine (`python -m embedded_judge.engines build`; docs/judging.md, "The engine")."""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

NATIVE = "native"
PREBUILT = "prebuilt"
ENGINES = (NATIVE, PREBUILT)

UNKNOWN_ENGINE = "unknown engine {name!r}: expected auto, native or prebuilt"
NO_NATIVE_ENGINE = ("the native engine is not built under {var_dir}: run `python -m "
                    "embedded_judge.engines build` (or GRADER_LOCAL_ENGINE=auto)")
NO_COMPILER = "no native engine: {missing} not found, so the prebuilt wheel serves"
BUILD_FAILED = "the native build failed (exit code {code}); the prebuilt wheel serves. Log: {log}"
BUILD_DOES_NOT_LOAD = "the native build does not load; the prebuilt wheel serves:\n{detail}"

# Left out of the build: llama.cpp's optional parts that fetch code from the network
# (json_schema has llama.cpp's own grammar; the server speaks plain HTTP), and its AMX
# kernels, which die of an illegal instruction on virtual CPUs that list AMX (seen on
# a Sapphire Rapids VM); AVX-512, VNNI and BF16 stay.
_NO_AMX = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
CMAKE_ARGS = (f"-DGGML_NATIVE=ON -DLLAMA_LLGUIDANCE=OFF -DLLAMA_BUILD_BORINGSSL=OFF "
              f"'-DCMAKE_C_FLAGS={_NO_AMX}' '-DCMAKE_CXX_FLAGS={_NO_AMX}'")
_WORKS = ".works"  # a native build's marker once it has loaded: its options, its system info


class EngineError(Exception):
    """The engine asked for is not available."""


def xllamacpp_version() -> str:
    """The xllamacpp release the project pins (the prebuilt wheel's)."""
    return importlib.metadata.version("xllamacpp")


def native_dir(var_dir: Path) -> Path:
    """Where this machine's build of the pinned release lives."""
    return Path(var_dir) / "engines" / f"xllamacpp-{xllamacpp_version()}-native"


def native_works(var_dir: Path) -> bool:
    """True when a build made with today's options has loaded (its marker says so)."""
    marker = native_dir(var_dir) / _WORKS
    return marker.is_file() and marker.read_text().partition("\n")[0] == CMAKE_ARGS


def chosen_engine(requested: str | None, *, var_dir: Path) -> str:
    """The engine `requested` ("auto" or None: the native build where one works) means."""
    requested = requested or "auto"
    if requested not in (*ENGINES, "auto"):
        raise EngineError(UNKNOWN_ENGINE.format(name=requested))
    if requested == NATIVE and not native_works(var_dir):
        raise EngineError(NO_NATIVE_ENGINE.format(var_dir=var_dir))
    if requested == "auto":
        return NATIVE if native_works(var_dir) else PREBUILT
    return requested


def engine_environment(engine: str, *, var_dir: Path, package_root: Path,
                       wait_policy: str | None) -> dict[str, str]:
    """The environment of a server child running `engine` (already chosen), whose
    OpenMP threads wait as `wait_policy` says (None: OpenMP's default, spinning first)."""
    paths = [str(package_root), os.environ.get("PYTHONPATH", "")]
    if engine == NATIVE:
        paths.insert(0, str(native_dir(var_dir)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths))}
    if wait_policy is not None:
        env["OMP_WAIT_POLICY"] = wait_policy
    return env


def cpu_key(cpuinfo: str) -> str:
    """A short key for a CPU and the build's options, from what /proc/cpuinfo says of
    its model and instructions (pip keys its cache on the source alone)."""
    named = sorted({line.strip() for line in cpuinfo.splitlines()
                    if line.startswith(("flags", "model name", "Features"))})
    return hashlib.sha256("\n".join([CMAKE_ARGS, *named]).encode()).hexdigest()[:12]


def cpu_cache_dir() -> Path:
    """pip's cache for native builds on this CPU, so unlike CPUs never share a build."""
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
    except OSError:
        cpuinfo = ""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "evalservice" / f"native-{cpu_key(cpuinfo)}"


def missing_tools() -> list[str]:
    """The build tools this machine lacks (a C/C++ compiler, cmake)."""
    wanted = {"a C++ compiler (c++)": "c++", "a C compiler (cc)": "cc", "cmake": "cmake"}
    return [name for name, command in wanted.items() if shutil.which(command) is None]


def build_native(var_dir: Path, *, progress: TextIO | None = sys.stderr) -> Path | None:
    """Compile the pinned xllamacpp for this machine unless it is built already; its
    folder, or None (said on `progress`) where it cannot be built or does not load."""
    target = native_dir(var_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    # One build at a time: a second caller waits, then finds it built.
    with (target.parent / f"{target.name}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if native_works(var_dir):
            return target
        missing = missing_tools()
        if missing:
            _say(progress, NO_COMPILER.format(missing=", ".join(missing)))
            return None
        return _build(target, progress)


def _build(target: Path, progress: TextIO | None) -> Path | None:
    log = target.parent / f"{target.name}.build.log"
    scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        _say(progress, f"building llama.cpp (xllamacpp {xllamacpp_version()}) for this "
                       f"machine's CPU, once: about 10 minutes on 2 cores, seconds where pip "
                       f"has built it before. Log: {log}")
        with log.open("w") as out:
            code = subprocess.call(
                [sys.executable, "-m", "pip", "install", "--no-deps", "--no-binary",
                 "xllamacpp", "--disable-pip-version-check", "--target", str(scratch),
                 f"xllamacpp=={xllamacpp_version()}"],
                stdout=out, stderr=subprocess.STDOUT,
                env={**os.environ, "CMAKE_ARGS": CMAKE_ARGS,
                     "PIP_CACHE_DIR": str(cpu_cache_dir()),
                     "NPROC": str(os.cpu_count() or 1)})
        if code != 0:
            _say(progress, BUILD_FAILED.format(code=code, log=log))
            return None
        loaded = subprocess.run(
            [sys.executable, "-c", "import xllamacpp; print(xllamacpp.get_system_info())"],
            env={**os.environ, "PYTHONPATH": str(scratch)}, capture_output=True, text=True,
            check=False, cwd=scratch)
        if loaded.returncode != 0:
            _say(progress, BUILD_DOES_NOT_LOAD.format(detail=loaded.stderr.strip()[-2000:]))
            return None
        (scratch / _WORKS).write_text(f"{CMAKE_ARGS}\n{loaded.stdout}")
        shutil.rmtree(target, ignore_errors=True)
        scratch.rename(target)
        _say(progress, f"native engine ready: {loaded.stdout.strip()}")
        return target
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def system_info(var_dir: Path) -> str:
    """What the native build said of itself when it was kept ("" if there is none)."""
    marker = native_dir(var_dir) / _WORKS
    return marker.read_text().partition("\n")[2].strip() if native_works(var_dir) else ""


def _say(progress: TextIO | None, line: str) -> None:
    if progress is not None:
        print(line, file=progress, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m embedded_judge.engines build [--var-dir DIR]`."""
    parser = argparse.ArgumentParser(description="Build llama.cpp for this machine.")
    parser.add_argument("action", choices=["build", "show"])
    parser.add_argument("--var-dir", type=Path, default=Path(os.environ.get("VAR_DIR", "var")))
    args = parser.parse_args(argv)
    if args.action == "show":
        engine = chosen_engine("auto", var_dir=args.var_dir)
        print(f"{engine}: {system_info(args.var_dir) or 'the prebuilt wheel'}")
        return 0
    build_native(args.var_dir)
    return 0  # a machine without a build keeps the prebuilt wheel: not a failure


if __name__ == "__main__":
    raise SystemExit(main())
