#!/usr/bin/env bash
# Headless Chromium for the admin page's browser tests (api/tests/browser.rs). Sourced by
# scripts/test.sh; usable alone:
#   scripts/browser.sh install   -> installs Debian's chromium and chromium-driver when missing
# browser_start starts chromedriver on a free loopback port and exports QUICKACT_WEBDRIVER_URL (and
# QUICKACT_CHROMIUM, the browser binary) for the tests; it is stopped when the calling script
# exits. The tests start Chromium through it headless, each session in a new empty profile.
set -euo pipefail
# pg_free_port
source "$(dirname "${BASH_SOURCE[0]}")/pg.sh"

browser_binaries_present() {
  command -v chromedriver >/dev/null 2>&1 && { command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; }
}

# A font with Chinese glyphs, so the screenshots show the sentences rather than empty boxes.
browser_cjk_font_present() {
  command -v fc-list >/dev/null 2>&1 && [ -n "$(fc-list :lang=zh family 2>/dev/null)" ]
}

# Installs chromium, chromium-driver and a small Chinese font with apt when missing (CI runs as
# root on a fresh Debian machine). Returns non-zero when the browser is missing and cannot be
# installed here.
browser_install() {
  local packages=()
  browser_binaries_present || packages+=(chromium chromium-driver)
  browser_cjk_font_present || packages+=(fonts-wqy-microhei)
  if [ ${#packages[@]} -eq 0 ]; then return 0; fi
  local sudo=""
  if [ "$(id -u)" != "0" ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; else
      echo "cannot install ${packages[*]} (apt-get needs root)" >&2
      browser_binaries_present
      return
    fi
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "cannot install ${packages[*]}: apt-get is not available; install them by hand" >&2
    browser_binaries_present
    return
  fi
  echo "installing ${packages[*]} (Debian packages) for the browser tests..." >&2
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || true
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >&2 || true
  browser_binaries_present
}

# Starts chromedriver on a free port of 127.0.0.1 and waits until it answers; exports
# QUICKACT_WEBDRIVER_URL and QUICKACT_CHROMIUM. Stops it when the calling script exits, after
# whatever exit trap was already set (e.g. the throwaway Postgres cluster's).
browser_start() {
  local port previous
  browser_log=$(mktemp -t quickact-chromedriver-XXXXXX.log)
  port=$(pg_free_port)
  chromedriver --port="$port" --allowed-ips=127.0.0.1 --log-level=WARNING >"$browser_log" 2>&1 &
  browser_driver_pid=$!
  previous=$(trap -p EXIT | sed -E "s/^trap -- '(.*)' EXIT$/\1/")
  # shellcheck disable=SC2064
  trap "browser_stop; ${previous:-:}" EXIT
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      export QUICKACT_WEBDRIVER_URL="http://127.0.0.1:$port"
      QUICKACT_CHROMIUM=$(command -v chromium || command -v chromium-browser)
      export QUICKACT_CHROMIUM
      echo "chromedriver: $QUICKACT_WEBDRIVER_URL (browser $QUICKACT_CHROMIUM)"
      return 0
    fi
    if ! kill -0 "$browser_driver_pid" 2>/dev/null; then break; fi
    sleep 0.1
  done
  echo "chromedriver did not start; its log:" >&2
  cat "$browser_log" >&2
  return 1
}

# Stops the chromedriver this script started (by its pid) and the browsers it still runs.
browser_stop() {
  if [ -n "${browser_driver_pid:-}" ]; then
    pkill -TERM -P "$browser_driver_pid" 2>/dev/null || true
    kill "$browser_driver_pid" 2>/dev/null || true
    wait "$browser_driver_pid" 2>/dev/null || true
    browser_driver_pid=""
  fi
  if [ -n "${browser_log:-}" ]; then rm -f "$browser_log"; fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  case "${1:-}" in
    install) browser_install ;;
    *) echo "usage: $0 install" >&2; exit 2 ;;
  esac
fi
