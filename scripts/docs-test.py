#!/usr/bin/env python3
"""The shell examples of README.md and docs/*.md as tests (scripts/docs-test.sh runs this).

Every fenced ```sh / ```bash / ```shell block runs, as written, in a fresh `bash -euo pipefail`,
unless an HTML comment on the line before its fence (blank lines between are allowed) says
otherwise:

    <!-- docs-test: skip (why) -->         not run (installing, building, configuration, ...)
    <!-- docs-test: background (why) -->   started in the background, as a second terminal would
                                           run it, and stopped after the file's last block

The blocks of one file run in document order, as a user pasting them into one terminal would
run them: what a block sets (variables, functions) is carried over to the next blocks of the same
file. Each file starts from the variables scripts/run.sh's summary prints (QUICKACT_URL,
QUICKACT_KEY of a new user of its own, QUICKACT_ADMIN_KEY, PATH with the quickact CLI first).

A block fails when it exits non-zero, runs past its time limit, or when curl got an HTTP error
(4xx, 5xx) from the service; a background block fails when it exits before its file's blocks end or
prints nothing by then. Standard library only.

    docs-test.py list FILE...                       which blocks run, which are skipped and why
    docs-test.py run [--verbose] --url U --admin-key K --bin DIR --work DIR FILE...
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

SHELLS = {"sh", "bash", "shell"}
# Fences at any indentation: the docs put some under list items.
FENCE = re.compile(r"^( *)(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")
CLOSE = re.compile(r"^ *(`{3,}|~{3,})\s*$")
MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*([a-z-]+)\s*(.*?)\s*-->\s*$")
ACTIONS = {"skip", "background"}


class Block:
    def __init__(self, path, line, lang, text, action, reason):
        self.path, self.line, self.lang, self.text = path, line, lang, text
        self.action, self.reason = action, reason  # action: "run", "skip" or "background"

    @property
    def where(self):
        return f"{self.path}:{self.line}"


class DocError(Exception):
    pass


def blocks_of(path):
    """The fenced shell blocks of a Markdown file, with what their markers say."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    found, errors = [], []
    marker = None  # (line number, action, reason) of a marker waiting for its fence
    i = 0
    while i < len(lines):
        line = lines[i]
        m = FENCE.match(line)
        if not m:
            mm = MARKER.match(line)
            if mm:
                if marker:
                    errors.append(f"{path}:{marker[0]}: docs-test marker not followed by a fenced block")
                action, reason = mm.group(1), mm.group(2)
                if action not in ACTIONS:
                    errors.append(f"{path}:{i + 1}: unknown docs-test marker '{action}' (known: {', '.join(sorted(ACTIONS))})")
                elif not reason.strip("() "):
                    errors.append(f"{path}:{i + 1}: a docs-test marker says why: <!-- docs-test: {action} (why) -->")
                marker = (i + 1, action, reason.strip().removeprefix("(").removesuffix(")").strip())
            elif line.lstrip().startswith("<!--") and "docs-test" in line:
                errors.append(f"{path}:{i + 1}: malformed docs-test marker (expected <!-- docs-test: skip (why) -->)")
            elif line.strip() and marker:
                errors.append(f"{path}:{marker[0]}: docs-test marker not followed by a fenced block")
                marker = None
            i += 1
            continue
        indent, fence, lang = len(m.group(1)), m.group(2), m.group(3).lower()
        start = i
        body = []
        i += 1
        while i < len(lines):
            close = CLOSE.match(lines[i])
            if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= len(fence):
                break
            text = lines[i]
            # Content lines lose up to the fence's indentation (CommonMark).
            strip = len(text) - len(text.lstrip(" "))
            body.append(text[min(strip, indent):])
            i += 1
        i += 1  # past the closing fence (or the end of the file)
        if lang in SHELLS:
            action, reason = ("run", "") if marker is None else (marker[1], marker[2])
            found.append(Block(path, start + 1, lang, "\n".join(body) + "\n", action, reason))
        elif marker:
            errors.append(f"{path}:{marker[0]}: docs-test marker before a ```{lang or '(no language)'} block, which never runs")
        marker = None
    if marker:
        errors.append(f"{path}:{marker[0]}: docs-test marker not followed by a fenced block")
    return found, errors


def collect(files):
    blocks, errors = [], []
    for path in files:
        b, e = blocks_of(path)
        blocks += b
        errors += e
    if errors:
        raise DocError("\n".join(errors))
    return blocks


def cmd_list(args):
    blocks = collect(args.files)
    for b in blocks:
        what = b.action if b.action == "run" else f"{b.action}: {b.reason}"
        first = b.text.strip().split("\n")[0]
        print(f"{b.where:28} {what:60.60}  | {first[:70]}")
    counts = {a: sum(1 for b in blocks if b.action == a) for a in ("run", "background", "skip")}
    print(f"{len(blocks)} shell blocks: {counts['run']} run, {counts['background']} in the background, {counts['skip']} skipped")
    return 0


# What each block's bash reads first (BASH_ENV): the variables earlier blocks of its file left,
# and, when the block exits 0, a dump of what it leaves for the next ones. The block itself is the
# script, as written, so bash's messages give its own line numbers.
PRELUDE = r"""unset BASH_ENV
if [ -s "$DOCS_TEST_STATE" ]; then source "$DOCS_TEST_STATE"; fi
__docs_test_carry() {
  local __status=$? __name __decl __flags
  [ "$__status" = 0 ] || return 0
  {
    for __name in $(compgen -v); do
      case $__name in
        BASH* | SHELLOPTS | PPID | UID | EUID | GROUPS | FUNCNAME | PIPESTATUS | LINENO | RANDOM | SRANDOM \
          | SECONDS | EPOCHREALTIME | EPOCHSECONDS | HISTCMD | _ | OPTIND | OPTARG | OPTERR | SHLVL | PWD \
          | OLDPWD | DIRSTACK | COMP_* | HOSTNAME | HOSTTYPE | MACHTYPE | OSTYPE | IFS | PS4 | __* | DOCS_TEST_*) continue ;;
      esac
      __decl=$(declare -p "$__name" 2>/dev/null) || continue
      __flags=${__decl#declare -}
      __flags=${__flags%% *}
      case $__flags in *r*) continue ;; esac
      printf '%s\n' "$__decl"
    done
    declare -f | sed '/^__docs_test_carry ()/,/^}/d'
  } >"$DOCS_TEST_STATE.next"
}
trap __docs_test_carry EXIT
"""

# `curl` as the blocks find it first on their PATH: the real curl, with the headers of each answer
# written to a file (prepended, so a block's own -D wins and that call is not checked), and the
# final status of each call logged for the runner.
CURL_SHIM = r"""#!/usr/bin/env bash
# docs-test: runs the real curl, and logs the HTTP status of its answer for scripts/docs-test.py.
headers=$(mktemp "$DOCS_TEST_HTTP/headers.XXXXXX")
status=0
"$DOCS_TEST_REAL_CURL" -D "$headers" "$@" || status=$?
code=$(sed -n 's/^HTTP\/[0-9.]* \([0-9][0-9][0-9]\).*/\1/p' "$headers" 2>/dev/null | grep -v '^1' | tail -n 1)
args=""
for a in "$@"; do args+=" $(printf '%q' "$a")"; done
printf '%s\tcurl%s\n' "${code:--}" "$args" >>"$DOCS_TEST_HTTP/log"
rm -f "$headers"
exit "$status"
"""


def new_user(url, admin_key):
    """A user of its own for a file: created through the admin API, as scripts/run.sh does."""
    req = urllib.request.Request(
        f"{url}/api/admin/users",
        data=json.dumps({"name": "local"}).encode(),
        headers={"Authorization": f"Bearer {admin_key}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)["api_key"]


def numbered(text):
    return "\n".join(f"  {n:3} | {l}" for n, l in enumerate(text.rstrip("\n").split("\n"), 1))


def indent(text):
    text = text.rstrip("\n")
    return "\n".join("  " + l for l in text.split("\n")) if text else "  (nothing)"


# Every block started: each runs in a session of its own (so that stopping it stops what it
# started), which a Ctrl-C of the run does not reach; they are stopped when the run ends, however.
LIVE = []


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def http_errors(log):
    """The calls of a block whose answer was an HTTP error, from the curl shim's log."""
    bad = []
    if os.path.exists(log):
        with open(log, encoding="utf-8", errors="replace") as f:
            for entry in f.read().splitlines():
                code, _, command = entry.partition("\t")
                if code.isdigit() and int(code) >= 400:
                    bad.append(f"HTTP {code} from: {command}")
    return bad


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def cmd_run(args):
    blocks = collect(args.files)
    work = os.path.abspath(args.work)
    shim = os.path.join(work, "shim")
    os.makedirs(work, mode=0o700, exist_ok=True)  # the blocks' variables hold the keys
    os.makedirs(shim, exist_ok=True)
    real_curl = shutil.which("curl")
    if not real_curl:
        print("docs-test: curl is not installed", file=sys.stderr)
        return 1
    with open(os.path.join(shim, "curl"), "w") as f:
        f.write(CURL_SHIM)
    os.chmod(os.path.join(shim, "curl"), 0o755)
    prelude = os.path.join(work, "prelude.sh")
    with open(prelude, "w") as f:
        f.write(PRELUDE)

    bin_dir = os.path.abspath(args.bin)
    base_env = {
        k: v for k, v in os.environ.items() if k in ("USER", "LOGNAME", "TMPDIR", "TZ")
    }
    base_env.update(
        LANG="C.UTF-8",
        DOCS_TEST_REAL_CURL=real_curl,
        # What run.sh's export line sets (the CLI first on the PATH), and the curl shim before it.
        QUICKACT_URL=args.url,
        QUICKACT_ADMIN_KEY=args.admin_key,
        PATH=f"{shim}:{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
    )

    ran = skipped = background = 0
    failures = []
    started = time.monotonic()
    by_file = {}
    for b in blocks:
        by_file.setdefault(b.path, []).append(b)

    for path, file_blocks in by_file.items():
        runnable = [b for b in file_blocks if b.action != "skip"]
        skipped += len(file_blocks) - len(runnable)
        if not runnable:
            continue
        slug = re.sub(r"[^A-Za-z0-9]+", "-", path).strip("-")
        fdir = os.path.join(work, slug)
        home = os.path.join(fdir, "home")
        os.makedirs(home, exist_ok=True)
        state = os.path.join(fdir, "state.sh")
        env = dict(base_env, HOME=home, QUICKACT_KEY=new_user(args.url, args.admin_key), DOCS_TEST_STATE=state)
        companions = []  # (block, process, output file)
        failed = None
        for b in runnable:
            script = os.path.join(fdir, f"block-{b.line}.sh")
            with open(script, "w", encoding="utf-8") as f:
                f.write(b.text)
            http = os.path.join(fdir, f"http-{b.line}")
            os.makedirs(http, exist_ok=True)
            benv = dict(env, BASH_ENV=prelude, DOCS_TEST_HTTP=http)
            out_path = os.path.join(fdir, f"output-{b.line}.txt")
            out = open(out_path, "w+b")
            t0 = time.monotonic()
            proc = subprocess.Popen(
                ["bash", "-euo", "pipefail", script],
                env=benv, cwd=home, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            LIVE.append(proc)
            if b.action == "background":
                background += 1
                companions.append((b, proc, out_path, out))
                # Time to start listening before the next block talks to it.
                time.sleep(1.5)
                if proc.poll() is not None:
                    failed = (b, f"the background block exited (status {proc.returncode}) before the next block", read(out_path), [])
                    break
                print(f"  {b.where}: started in the background ({b.reason})", flush=True)
                continue
            ran += 1
            why = None
            try:
                proc.wait(args.timeout)
            except subprocess.TimeoutExpired:
                kill_group(proc)
                why = f"still running after {args.timeout} s (DOCS_TEST_TIMEOUT), stopped"
            else:
                kill_group(proc)  # anything it left running in the background
            out.close()
            output = read(out_path)
            errors = http_errors(os.path.join(http, "log"))
            if why is None and proc.returncode != 0:
                why = f"exit status {proc.returncode}"
            if why is None and errors:
                why = "curl got an HTTP error from the service"
            secs = time.monotonic() - t0
            if why:
                failed = (b, why, output, errors)
                break
            print(f"  {b.where}: ok ({secs:.1f} s)", flush=True)
            if args.verbose:
                print(indent(output), flush=True)
            if os.path.exists(state + ".next"):
                os.replace(state + ".next", state)

        # The companions: each must still run, and have printed something (what the docs say it
        # prints), by the end of its file's blocks; then it is stopped.
        for b, proc, out_path, out in companions:
            if failed is None:
                deadline = time.monotonic() + 10
                while proc.poll() is None and os.path.getsize(out_path) == 0 and time.monotonic() < deadline:
                    time.sleep(0.2)
            alive = proc.poll() is None
            kill_group(proc)
            out.close()
            output = read(out_path)
            if alive:  # bash's word for the command it ran being stopped
                output = re.sub(r"(^|\n)Terminated\n?$", r"\1", output)
            if failed is None:
                if not alive:
                    failed = (b, f"the background block exited (status {proc.returncode}) before its file's blocks ended", output, [])
                elif not output.strip():
                    failed = (b, "the background block printed nothing by the end of its file's blocks (waited 10 s)", output, [])
                else:
                    print(f"  {b.where}: background block stopped; it printed:\n{indent(output[:2000])}", flush=True)
        if failed:
            b, why, output, errors = failed
            failures.append(b)
            later = len(runnable) - runnable.index(b) - 1
            print(f"\nFAILED {b.where} ({b.lang} block): {why}", flush=True)
            print(f"--- the block, run in bash -euo pipefail (its line 1 is {b.path}:{b.line + 1}):\n{numbered(b.text)}")
            print(f"--- its output:\n{indent(output)}")
            if errors:
                print("--- HTTP errors:\n" + indent("\n".join(errors)))
            if later:
                print(f"--- the {later} later block(s) of {path} were not run (they may use what this one sets)")
            print(flush=True)

    secs = time.monotonic() - started
    summary = f"{ran} blocks run, {background} in the background, {skipped} skipped, in {secs:.0f} s"
    if failures:
        print(f"docs-test: FAILED: {', '.join(b.where for b in failures)} ({summary})")
        return 1
    print(f"docs-test: every block passed ({summary})")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    pl = sub.add_parser("list")
    pl.add_argument("files", nargs="+")
    pr = sub.add_parser("run")
    pr.add_argument("--url", required=True)
    pr.add_argument("--admin-key", required=True)
    pr.add_argument("--bin", required=True, help="the directory of the quickact CLI")
    pr.add_argument("--work", required=True, help="a scratch directory")
    pr.add_argument("--timeout", type=int, default=int(os.environ.get("DOCS_TEST_TIMEOUT", "60")))
    pr.add_argument("--verbose", action="store_true", help="print every block's output, not only a failed one's")
    pr.add_argument("files", nargs="+")
    args = p.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        return cmd_list(args) if args.cmd == "list" else cmd_run(args)
    except DocError as e:
        print(f"docs-test: bad markers:\n{e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("docs-test: interrupted", file=sys.stderr)
        return 130
    finally:
        for proc in LIVE:
            if proc.poll() is None:
                kill_group(proc)


if __name__ == "__main__":
    sys.exit(main())
