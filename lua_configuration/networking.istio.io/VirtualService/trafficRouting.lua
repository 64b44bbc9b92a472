-- Traffic routing for Istio VirtualService (networking.istio.io), one rollout step at a time.
--
-- Mirrors the OpenKruise Rollout controller's built-in VirtualService script, so that what this
-- project predicts is what the controller writes, quirks included:
--   * with matches, every match becomes a new http rule routed to the canary, inserted at the
--     front of spec.http (several matches therefore end up in reverse order);
--   * otherwise, every http/tcp/tls rule without a match that routes to the stable service has
--     its weights scaled down to stableWeight (floored) and a canary route appended.
-- Deliberate differences, only where the controller's script errors or reuses stale state:
--   * a header/queryParam without type is Exact, a path without type is PathPrefix, a path
--     without value is "/" (the CRD defaults);
--   * everything is local, so no match kind leaks from one entry into the next;
--   * malformed entries (no destination host, no header name) are skipped instead of crashing,
--     and spec.http is created when a match has to be added to a VirtualService without one.
--
-- Input: the global obj (data, canaryWeight, stableWeight, matches, canaryService,
-- stableService, requestHeaderModifier). Output: obj.data with its spec changed in place.
-- Lists are only ever built from lists, never from pairs(), so the output is deterministic.

local data = obj.data
local stableService = obj.stableService
local canaryService = obj.canaryService
local canaryWeight = obj.canaryWeight
local stableWeight = obj.stableWeight

-- A step without traffic arrives as -1 (stable 101); the controller reads it as "all to canary".
if canaryWeight == -1 then
  canaryWeight = 100
  stableWeight = 0
end

-- Gateway API match types to Istio StringMatch keys. Path and header tables differ because
-- Gateway API calls a path prefix "PathPrefix" but a header/query prefix "Prefix".
local PATH_KIND = { Exact = "exact", PathPrefix = "prefix", RegularExpression = "regex" }
local VALUE_KIND = { Exact = "exact", Prefix = "prefix", RegularExpression = "regex" }
-- The CRD defaults, for objects read from files that never went through the API server.
local DEFAULT_PATH_KIND = "prefix"
local DEFAULT_VALUE_KIND = "exact"
local DEFAULT_PATH = "/"

local function canaryDestination()
  -- Same name means no canary Service was generated, so Istio tells versions apart by subset.
  if canaryService == stableService then
    return { host = stableService, subset = "canary" }
  end
  return { host = canaryService }
end

-- Destinations may use an FQDN (svc.ns.svc.cluster.local) while stableService is a bare name.
local function serviceName(host)
  local dot = string.find(host, ".", 1, true)
  if dot then
    return string.sub(host, 1, dot - 1)
  end
  return host
end

local function isStableRoute(route)
  if type(route) ~= "table" or type(route.destination) ~= "table" then
    return false
  end
  local host = route.destination.host
  return type(host) == "string" and serviceName(host) == stableService
end

-- {type, name, value} list -> {name: {kind: value}}; entries of one list are ANDed by Istio.
local function stringMatches(list)
  local byName = {}
  for _, entry in ipairs(list) do
    if type(entry) == "table" and entry.name ~= nil then
      local kind = VALUE_KIND[entry.type] or DEFAULT_VALUE_KIND
      byName[entry.name] = { [kind] = entry.value }
    end
  end
  return byName
end

local function istioMatch(match)
  local result = {}
  if type(match.path) == "table" then
    local kind = PATH_KIND[match.path.type] or DEFAULT_PATH_KIND
    local value = match.path.value
    if value == nil then
      value = DEFAULT_PATH
    end
    result.uri = { [kind] = value }
  end
  if type(match.headers) == "table" then
    result.headers = stringMatches(match.headers)
  end
  if type(match.queryParams) == "table" then
    result.queryParams = stringMatches(match.queryParams)
  end
  return result
end

-- Gateway API HTTPHeaderFilter -> Istio headers.request: set/add become maps, remove stays a list.
local function requestHeaders(modifier)
  local request = {}
  for _, action in ipairs({ "set", "add" }) do
    if type(modifier[action]) == "table" then
      local byName = {}
      for _, header in ipairs(modifier[action]) do
        if type(header) == "table" and header.name ~= nil then
          byName[header.name] = header.value
        end
      end
      request[action] = byName
    end
  end
  if type(modifier.remove) == "table" then
    local names = {}
    for _, name in ipairs(modifier.remove) do
      table.insert(names, name)
    end
    request.remove = names
  end
  return request
end

local function addMatchRules(spec, matches, modifier)
  if spec.http == nil then
    spec.http = {}
  end
  for _, match in ipairs(matches) do
    local rule = {
      match = { istioMatch(match) },
      route = { { destination = canaryDestination() } },
    }
    if modifier ~= nil then
      rule.headers = { request = requestHeaders(modifier) }
    end
    -- Front of the list so the match is tried before the catch-all stable rule.
    table.insert(spec.http, 1, rule)
  end
end

local function rulesToPatch(rules)
  local selected = {}
  for _, rule in ipairs(rules) do
    -- Rules with a match belong to someone else's routing decision; leave them alone.
    if type(rule) == "table" and rule.match == nil and type(rule.route) == "table" then
      for _, route in ipairs(rule.route) do
        -- No break on purpose: the controller selects a rule once per stable route, so a rule
        -- with two stable routes is rescaled twice and gets two canary routes.
        if isStableRoute(route) then
          table.insert(selected, rule)
        end
      end
    end
  end
  return selected
end

local function shiftWeights(rules)
  for _, rule in ipairs(rulesToPatch(rules)) do
    local n = #rule.route
    for _, route in ipairs(rule.route) do
      -- floor() like the controller, even though the sum can then fall short of 100.
      if route.weight ~= nil then
        route.weight = math.floor(route.weight * stableWeight / 100)
      else
        route.weight = math.floor(stableWeight / n)
      end
    end
    table.insert(rule.route, { destination = canaryDestination(), weight = canaryWeight })
  end
end

-- Matches take precedence over traffic; an empty list counts as no matches.
if type(obj.matches) == "table" and next(obj.matches) ~= nil then
  if data.spec == nil then
    data.spec = {}
  end
  addMatchRules(data.spec, obj.matches, obj.requestHeaderModifier)
elseif type(data.spec) == "table" then
  for _, protocol in ipairs({ "http", "tcp", "tls" }) do
    if type(data.spec[protocol]) == "table" then
      shiftWeights(data.spec[protocol])
    end
  end
end

return obj.data
