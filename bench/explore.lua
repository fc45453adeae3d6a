-- bench/explore.sh's requests for wrk (wrk -s bench/explore.lua URL -- KIND): explore as anyone sees it, anonymous,
-- one new query per request drawn from the words the bench's repositories are made of, some misspelt (fuzzy names).
--   search:   GET /api/explore/repos?q=  a quarter each: one word, two words, adjective-word, adjective-word misspelt
--   suggest:  GET /api/explore/suggest?q=  two thirds a prefix of 2-7 characters of adjective-word, a third misspelt
--   trending: GET /api/explore/repos/trending?offset=0..80
-- done() prints one line: p50, p99, requests/s and answers that were not 2xx.

local words = {}
for w in ([[parser lexer compiler router server client proxy cache queue stream logger tracer metrics graph vector
  matrix tensor image audio video codec crypto hash token auth oauth session template render widget layout canvas chart
  table grid editor terminal shell script build deploy docker cloud storage bucket file sync backup mirror search index
  query filter merge diff patch release package module plugin kernel driver sensor robot game engine physics shader
  sound music calendar clock timer email chat bot agent model dataset loader crawl http socket json yaml]]):gmatch("%S+") do
  words[#words + 1] = w
end
local adjectives = {}
for w in ([[fast tiny simple smart lazy async safe secure light micro mini super hyper open free easy quick solid
  clean]]):gmatch("%S+") do
  adjectives[#adjectives + 1] = w
end

local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("number", threads)
end

local kind = "search"
local n = 0
function init(args)
  kind = args[1] or "search"
  -- each thread its own stream of queries, the same from run to run
  math.randomseed(1000 * (number or 1) + #kind)
end

local function pick(list)
  return list[math.random(#list)]
end

-- two neighbouring letters swapped, as a typing slip
local function misspell(s)
  local at = 2 + math.random(0, math.max(1, #s - 2) - 1)
  return s:sub(1, at - 2) .. s:sub(at, at) .. s:sub(at - 1, at - 1) .. s:sub(at + 1)
end

local function encode(s)
  return (s:gsub("[^%w%-_%.~]", function(c) return string.format("%%%02X", string.byte(c)) end))
end

function request()
  n = n + 1
  local path
  if kind == "search" then
    local k = n % 4
    local q
    if k == 0 then
      q = pick(words)
    elseif k == 1 then
      q = pick(words) .. " " .. pick(words)
    elseif k == 2 then
      q = pick(adjectives) .. "-" .. pick(words)
    else
      q = misspell(pick(adjectives) .. "-" .. pick(words))
    end
    path = "/api/explore/repos?q=" .. encode(q)
  elseif kind == "suggest" then
    local full = pick(adjectives) .. "-" .. pick(words)
    local q
    if n % 3 == 2 then
      q = misspell(full)
    else
      q = full:sub(1, math.min(#full, 2 + math.random(0, 5)))
    end
    path = "/api/explore/suggest?q=" .. encode(q)
  else
    path = "/api/explore/repos/trending?offset=" .. ((n % 5) * 20)
  end
  return wrk.format("GET", path)
end

function done(summary, latency, requests)
  io.write(string.format("p50 %.1f ms, p99 %.1f ms, %.0f requests/s, %d requests, %d not 2xx, %d errors\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.requests / (summary.duration / 1e6),
    summary.requests, summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write
      + summary.errors.timeout))
end
