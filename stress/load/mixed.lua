-- wrk script for stress/test_load.py: mixed resolver traffic.
-- Usage: wrk ... -s mixed.lua http://127.0.0.1:PORT -- PATHS_FILE API_KEY
-- 80% resolve (GET a random bound ARK: 302), 10% ?info (200), 10% mint one id (POST /api/v1/mint: 201).
-- At the end it prints one line "RESULT {json}": counts by status (302/200/201, anything else is
-- "unexpected"), wrk's socket errors and latencies (µs).

local paths = {}
local count = 0
local key = ""
local mint_body = '{"naan":"99999","shoulder":"fk4","count":1}'
unexpected = 0
bad_status = 0
n302, n200, n201 = 0, 0, 0
local threads = {}
local next_id = 0

function setup(thread)
  next_id = next_id + 1
  thread:set("thread_id", next_id)
  table.insert(threads, thread)
end

function init(args)
  for line in io.lines(args[1]) do
    if #line > 0 then
      count = count + 1
      paths[count] = line
    end
  end
  key = args[2]
  math.randomseed(os.time() * 1000 + (thread_id or 0) * 7919)
end

function request()
  local r = math.random(100)
  if r <= 80 then
    return wrk.format("GET", paths[math.random(count)])
  elseif r <= 90 then
    return wrk.format("GET", paths[math.random(count)] .. "?info")
  end
  return wrk.format("POST", "/api/v1/mint",
    {["Authorization"] = "Bearer " .. key, ["Content-Type"] = "application/json"}, mint_body)
end

-- a response is expected if it is 302 (resolve), 200 (?info) or 201 (mint); the connections of a wrk
-- thread interleave, so responses are counted by status, not matched to their requests.
function response(status, headers, body)
  if status == 302 then
    n302 = n302 + 1
  elseif status == 200 then
    n200 = n200 + 1
  elseif status == 201 then
    n201 = n201 + 1
  else
    unexpected = unexpected + 1
    bad_status = status
  end
end

function done(summary, latency, requests)
  local unexp, res, inf, mnt, bad = 0, 0, 0, 0, 0
  for _, t in ipairs(threads) do
    unexp = unexp + t:get("unexpected")
    if t:get("bad_status") ~= 0 then bad = t:get("bad_status") end
    res = res + t:get("n302")
    inf = inf + t:get("n200")
    mnt = mnt + t:get("n201")
  end
  local e = summary.errors
  io.write(string.format(
    'RESULT {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,' ..
    '"unexpected":%d,"last_unexpected_status":%d,"resolve":%d,"info":%d,"mint":%d,"p50_us":%d,"p99_us":%d,"max_us":%d}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    unexp, bad, res, inf, mnt,
    latency:percentile(50), latency:percentile(99), latency.max))
end
