# Memory of held waits in one API process: N REST long-polls (POST /api/quick-action, wait: true)
# or N MCP quick_action calls (POST /mcp tools/call), in a fresh API process with no worker (every
# wait stays held), after a warm-up on the same path. Prints the API's RSS before and while they are
# held (all N counted by quickact_long_polls_open), and the difference per wait.
#
#   python3 scripts/bench/mcp_held_waits.py <N> rest|mcp <DATABASE_URL> <path of quickact-api>
#
# Alternate the two kinds (rest, mcp, rest, mcp) on one database for an A/B (docs/performance.md).
import json, os, subprocess, sys, threading, time, urllib.request, uuid

N = int(sys.argv[1]); KIND = sys.argv[2]; DB = sys.argv[3]; BIN = sys.argv[4]
PORT = 18089; BASE = f"http://127.0.0.1:{PORT}"; ADMIN = "qa_bench_admin_key_0123456789abcdef0123456789"
env = dict(os.environ, DATABASE_URL=DB, QUICKACT_ADMIN_KEY=ADMIN, QUICKACT_BIND=f"127.0.0.1:{PORT}",
           QUICKACT_MAX_ACTIVE_TASKS_PER_USER="1000000", QUICKACT_MAX_LONG_POLLS_PER_USER="1000000",
           QUICKACT_SUBMIT_RATE_PER_MINUTE="0", RUST_LOG="warn")
api = subprocess.Popen([BIN], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

def req(method, path, key, body=None, headers=None):
    data = json.dumps(body).encode() if body is not None else None
    r = urllib.request.Request(BASE + path, data=data, method=method)
    r.add_header("authorization", f"Bearer {key}")
    if data is not None: r.add_header("content-type", "application/json")
    for k, v in (headers or {}).items(): r.add_header(k, v)
    with urllib.request.urlopen(r, timeout=300) as resp: return resp.status, resp.read()

def rss_kib():
    for line in open(f"/proc/{api.pid}/status"):
        if line.startswith("VmRSS:"): return int(line.split()[1])

for _ in range(200):
    try:
        urllib.request.urlopen(BASE + "/health", timeout=1); break
    except Exception: time.sleep(0.1)
_, body = req("POST", "/api/admin/users", ADMIN, {"name": f"bench-{uuid.uuid4().hex[:8]}"})
key = json.loads(body)["api_key"]
MCP_HEADERS = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}
def one(i):
    try:
        if KIND == "rest":
            req("POST", "/api/quick-action", key, {"text": f"held {i}", "wait": True, "timeout": 60})
        else:
            req("POST", "/mcp", key, {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                "params": {"name": "quick_action", "arguments": {"text": f"held {i}", "timeout": 60}}}, MCP_HEADERS)
    except Exception: pass
# Warm up: the same path, answered (a wait of 1 s), so the first-use allocations are in the baseline.
for i in range(20):
    if KIND == "rest": req("POST", "/api/quick-action", key, {"text": f"warm {i}", "wait": True, "timeout": 1})
    else: req("POST", "/mcp", key, {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "quick_action", "arguments": {"text": f"warm {i}", "timeout": 1}}}, MCP_HEADERS)
time.sleep(1); base = rss_kib()
threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(N)]
for t in threads: t.start()
def open_waits():
    _, m = req("GET", "/metrics", key)
    for line in m.decode().splitlines():
        if line.startswith("quickact_long_polls_open"): return float(line.split()[-1])
    return 0
deadline = time.time() + 50
while open_waits() < N and time.time() < deadline: time.sleep(0.2)
held = open_waits(); time.sleep(1); rss = rss_kib()
print(json.dumps({"kind": KIND, "n": N, "held": held, "rss_base_kib": base, "rss_held_kib": rss, "kib_per_wait": round((rss - base) / max(held, 1), 2)}))
api.kill(); api.wait()
