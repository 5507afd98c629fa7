#!/bin/sh
# `make test` runs the browser tests in Debian's Chromium (Playwright downloads no browser
# here). Install it once when it is missing and apt can be used; otherwise say in one line
# what to do, and stop before the suite runs.
set -eu
if [ -n "${CHROMIUM_PATH:-}" ] && [ -x "$CHROMIUM_PATH" ]; then exit 0; fi
if command -v chromium >/dev/null 2>&1; then exit 0; fi

if [ "$(id -u)" = 0 ]; then
    as_root=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root="sudo -n"
else
    as_root="none"
fi
if [ "$as_root" = none ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "make test: the browser tests need Chromium; install it (Debian: sudo apt-get install chromium) or set CHROMIUM_PATH, then run make test again." >&2
    exit 1
fi
echo "make test: installing Debian's chromium for the browser tests (once)..."
export DEBIAN_FRONTEND=noninteractive
# Another apt at work (unattended upgrades, a second install) is waited for, not failed on.
wait_lock="-o DPkg::Lock::Timeout=600"
if ! { $as_root apt-get $wait_lock update -qq \
        && $as_root apt-get $wait_lock install -y -qq chromium >/dev/null; }; then
    echo "make test: apt-get could not install chromium (see above); install it by hand or set CHROMIUM_PATH, then run make test again." >&2
    exit 1
fi
