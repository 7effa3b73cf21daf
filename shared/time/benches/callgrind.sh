#!/usr/bin/env bash
# Instructions per input of the time resolver: the bench binary under valgrind's callgrind, one
# round, and the inclusive instruction count of `find_all` divided by its calls. Exact and
# independent of the machine's load, unlike the bench's wall-clock figure.
#
#   shared/time/benches/callgrind.sh            (builds the bench, then measures it)
#
# Needs valgrind. Uses $CARGO_TARGET_DIR (default target/).
set -euo pipefail
cd "$(dirname "$0")/../../.."
target="${CARGO_TARGET_DIR:-target}"
cargo bench -p quickact-time --bench time_resolver --no-run >/dev/null 2>&1
bin=$(ls -t "$target"/release/deps/time_resolver-* | grep -v '\.d$' | head -1)
out=$(mktemp -d)
TIME_BENCH_ROUNDS=1 valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" "$bin" >/dev/null 2>"$out/log"
# inclusive Ir and calls of quickact_time::find_all, from the callers' call lines
python3 - "$out/cg.out" <<'PY'
import re, sys
calls = ir = 0
fn_names = {}
cur_cfn = None
lines = open(sys.argv[1]).read().splitlines()
i = 0
def name(tok):
    m = re.match(r"\((\d+)\)(?: (.*))?", tok)
    if not m:
        return tok
    if m.group(2):
        fn_names[m.group(1)] = m.group(2)
    return fn_names.get(m.group(1), "")
while i < len(lines):
    l = lines[i]
    if l.startswith("fn=") :
        name(l[3:])
    elif l.startswith("cfn="):
        cur_cfn = name(l[4:])
    elif l.startswith("calls=") and cur_cfn is not None:
        n = int(l[6:].split()[0])
        cost = lines[i + 1].split()
        if re.search(r"quickact_time::find_all", cur_cfn) and not re.search(r"closure", cur_cfn):
            calls += n
            ir += int(cost[1])
        i += 1
    i += 1
print(f"find_all: {calls} calls, {ir} instructions, {ir / max(calls, 1):.0f} instructions per input")
PY
rm -rf "$out"
