"""Settings from the environment: `NAME_FILE` holds any setting's value, whatever its type,
and a bad value names the variable and what was expected."""

from __future__ import annotations

from pathlib import Path

import pytest

from infrastructure.env import env_bool, env_float, env_int, env_list, env_str


@pytest.mark.parametrize(("read", "text", "expected"), [
    (lambda: env_str("SETTING"), "s3cret\n", "s3cret"),
    (lambda: env_bool("SETTING", False), " yes\n", True),
    (lambda: env_int("SETTING", 1), "42\n", 42),
    (lambda: env_float("SETTING", 1.0), "0.25", 0.25),
    (lambda: env_list("SETTING", []), "a, b,,c\n", ["a", "b", "c"]),
])
def test_a_file_named_by_name_file_gives_the_value_of_any_kind_of_setting(
    read: object, text: str, expected: object, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    held = tmp_path / "setting"
    held.write_text(text, encoding="utf-8")
    monkeypatch.setenv("SETTING", "the variable itself, which the file overrides")
    monkeypatch.setenv("SETTING_FILE", str(held))

    assert read() == expected  # type: ignore[operator]


def test_without_a_file_the_variable_or_the_default_counts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SETTING_FILE", raising=False)
    monkeypatch.setenv("SETTING", "7")
    assert env_int("SETTING", 1) == 7
    monkeypatch.delenv("SETTING")
    assert env_int("SETTING", 1) == 1


def test_a_bad_value_from_a_file_names_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    held = tmp_path / "setting"
    held.write_text("many", encoding="utf-8")
    monkeypatch.setenv("SETTING_FILE", str(held))

    with pytest.raises(ValueError, match=r"^SETTING='many': expected an integer$"):
        env_int("SETTING", 1)
