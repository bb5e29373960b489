-- wrk script for benchmarks/bench_resolver.py.
-- Usage: wrk ... -s pick.lua http://127.0.0.1:PORT -- PATHS_FILE
-- Every request asks for a random path from PATHS_FILE (one path per line, e.g. /ark:99999/fk4...), so the
-- whole bound set is hit, not one cached row.  At the end it prints one JSON line prefixed with "RESULT "
-- (latencies in microseconds) that the benchmark parses.

local paths = {}
local count = 0
local thread_id = 0
local next_id = 0

function setup(thread)
  next_id = next_id + 1
  thread:set("thread_id", next_id)
end

function init(args)
  local file = args[1]
  if file == nil then
    error("pick.lua: give the paths file after --")
  end
  for line in io.lines(file) do
    if #line > 0 then
      count = count + 1
      paths[count] = line
    end
  end
  if count == 0 then
    error("pick.lua: no paths in " .. file)
  end
  math.randomseed(os.time() * 1000 + (thread_id or 0) * 7919 + math.floor(os.clock() * 1000000))
end

function request()
  return wrk.format("GET", paths[math.random(count)])
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'RESULT {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,' ..
    '"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
