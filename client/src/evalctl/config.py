"""Where the client keeps the site and API token between commands: a JSON file only its
user may read, under the XDG config folder; ``EVALCTL_SITE`` and ``EVALCTL_TOKEN`` override it."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from evalctl.api import Api, ClientError, site_url

ENV_SITE = "EVALCTL_SITE"
ENV_TOKEN = "EVALCTL_TOKEN"
FILE_MODE = 0o600
FOLDER_MODE = 0o700

NOT_SIGNED_IN = (
    "no site to talk to: sign in with `evalctl login --site URL` (or set "
    f"{ENV_SITE} and {ENV_TOKEN})"
)
NO_TOKEN = (
    "no token for {site}: sign in with `evalctl login --site {site}` (or set {env})"
)
UNREADABLE = "cannot read {path}: {reason}; sign in again with `evalctl login`"


@dataclass(frozen=True)
class Credentials:
    site: str
    token: str | None


def config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or ""
    folder = Path(base) if os.path.isabs(base) else Path.home() / ".config"
    return folder / "evalctl" / "config.json"


def _stored() -> dict[str, str]:
    path = config_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        raise ClientError(UNREADABLE.format(path=path, reason=error)) from None
    if not isinstance(data, dict):
        raise ClientError(UNREADABLE.format(path=path, reason="not a JSON object"))
    return {key: value for key, value in data.items() if isinstance(value, str)}


def credentials(*, need_token: bool = True) -> Credentials:
    """The site and token to use, the environment's else those `evalctl login` stored; a
    stored token goes only to the site that issued it."""
    stored = _stored()
    site_text = os.environ.get(ENV_SITE) or stored.get("site")
    if not site_text:
        raise ClientError(NOT_SIGNED_IN)
    site = site_url(site_text)
    token = os.environ.get(ENV_TOKEN) or None
    if token is None and stored.get("site") == site:
        token = stored.get("token") or None
    if need_token and token is None:
        raise ClientError(NO_TOKEN.format(site=site, env=ENV_TOKEN))
    return Credentials(site=site, token=token)


def save(credentials: Credentials) -> Path:
    """Write the site and token, replacing the file whole; only its owner may read it."""
    path = config_path()
    path.parent.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    # Created with its mode, never readable by others even for a moment.
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        json.dump({"site": credentials.site, "token": credentials.token}, file)
        file.write("\n")
    os.chmod(partial, FILE_MODE)  # a leftover partial file may have had another mode
    os.replace(partial, path)
    return path


def signed_in_api(*, need_token: bool = True) -> Api:
    found = credentials(need_token=need_token)
    return Api(found.site, found.token)
