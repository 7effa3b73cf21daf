#!/usr/bin/env bash
# libfaketime for the tests that run a worker process on a skewed clock (worker/tests/e2e/
# robustness.rs: a worker machine whose clock is minutes off). Sourced by scripts/test.sh; usable
# alone:
#   scripts/faketime.sh install   -> installs Debian's faketime (and its libfaketime) when missing
# faketime_export exports QUICKACT_LIBFAKETIME, the library the tests preload into the process.
set -euo pipefail

# The preloadable library of Debian's libfaketime (a multiarch path), if installed.
faketime_library() {
  local lib
  for lib in /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1; do
    if [ -f "$lib" ]; then echo "$lib"; return 0; fi
  done
  return 1
}

# Installs faketime with apt when the library is missing (CI runs as root on a fresh Debian
# machine). Returns non-zero when it is missing and cannot be installed here.
faketime_install() {
  if faketime_library >/dev/null; then return 0; fi
  local sudo=""
  if [ "$(id -u)" != "0" ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; else
      echo "cannot install faketime (apt-get needs root)" >&2
      return 1
    fi
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "cannot install faketime: apt-get is not available; install it by hand" >&2
    return 1
  fi
  echo "installing faketime (Debian package) for the skewed-clock tests..." >&2
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || true
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends faketime >&2 || true
  faketime_library >/dev/null
}

# Exports QUICKACT_LIBFAKETIME for the tests.
faketime_export() {
  QUICKACT_LIBFAKETIME=$(faketime_library)
  export QUICKACT_LIBFAKETIME
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  case "${1:-}" in
    install) faketime_install ;;
    *) echo "usage: $0 install" >&2; exit 2 ;;
  esac
fi
