-- wrk script: POST /api/quick-action with a distinct to-do each time. KEYS (from the environment)
-- holds one API key per user, comma-separated; requests take them in turn, so concurrent requests
-- mostly belong to different users (one user's submissions are serialised by a per-user lock).
local keys = {}
for k in string.gmatch(os.getenv("KEYS") or "", "[^,]+") do keys[#keys + 1] = k end
local n = 0
init = function(args)
  n = math.random(0, #keys - 1)
end
request = function()
  n = n + 1
  local key = keys[(n % #keys) + 1]
  local body = string.format('{"text": "add todo call office %d%d", "timeout": 120}', math.random(1, 1e9), n)
  return wrk.format("POST", "/api/quick-action", {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. key}, body)
end
done = function(summary, latency, requests)
  -- One machine-readable line for bench.sh (latencies in microseconds).
  io.write(string.format('WRK_JSON {"requests": %d, "duration_us": %d, "rps": %.1f, "p50_us": %d, "p90_us": %d, "p99_us": %d, "non2xx": %d, "errors": %d}\n',
    summary.requests, summary.duration, summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
