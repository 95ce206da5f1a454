-- Argo CD health check for tensorlane.io/InferenceDeployment.
-- Argo CD runs it with gopher-lua (Lua 5.1): keep to Lua 5.1. `obj` is the live object.
--   Progressing: no status yet, the current metadata.generation not yet observed, or rolling out.
--   Degraded:    RolledBack, Failed, DoesNotFit, Unschedulable or InvalidSpec (condition True or phase).
--   Healthy:     Ready=True for the current generation.
local hs = {}

local function current(cond, generation)
  -- a condition counts only when it was written for the current generation (or does not say)
  return cond.observedGeneration == nil or generation == nil or cond.observedGeneration >= generation
end

local function findCondition(conditions, condType, generation)
  if conditions == nil then
    return nil
  end
  for _, c in ipairs(conditions) do
    if c.type == condType and current(c, generation) then
      return c
    end
  end
  return nil
end

local function describe(c, fallback)
  local text = fallback
  if c ~= nil then
    if c.message ~= nil and c.message ~= "" then
      text = c.message
    elseif c.reason ~= nil and c.reason ~= "" then
      text = c.reason
    end
  end
  return text
end

local generation = nil
if obj.metadata ~= nil then
  generation = obj.metadata.generation
end
local status = obj.status

if status == nil or status.observedGeneration == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to observe the spec"
  return hs
end
if generation ~= nil and status.observedGeneration < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to observe generation " .. tostring(generation)
    .. " (observed " .. tostring(status.observedGeneration) .. ")"
  return hs
end

local conditions = status.conditions
-- Degrading conditions first: a rollback leaves Ready=True on the previous spec, which must not look Healthy.
local degrading = { "InvalidSpec", "DoesNotFit", "Unschedulable", "RolledBack", "Failed" }
for _, t in ipairs(degrading) do
  local c = findCondition(conditions, t, generation)
  if c ~= nil and c.status == "True" then
    hs.status = "Degraded"
    hs.message = t .. ": " .. describe(c, t)
    return hs
  end
end
local degradingPhases = { Invalid = "InvalidSpec", DoesNotFit = "DoesNotFit", Unschedulable = "Unschedulable",
  RolledBack = "RolledBack", Failed = "Failed" }
if status.phase ~= nil and degradingPhases[status.phase] ~= nil then
  local c = findCondition(conditions, degradingPhases[status.phase], generation)
  if c == nil then
    c = findCondition(conditions, "Degraded", generation)
  end
  hs.status = "Degraded"
  hs.message = status.phase .. ": " .. describe(c, "phase " .. status.phase)
  return hs
end

local ready = findCondition(conditions, "Ready", generation)
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = describe(ready, "Ready")
  return hs
end

local progressing = findCondition(conditions, "Progressing", generation)
hs.status = "Progressing"
if progressing ~= nil and progressing.status == "True" then
  hs.message = describe(progressing, "Rolling out")
elseif ready ~= nil then
  hs.message = describe(ready, "Not ready")
elseif status.phase ~= nil then
  hs.message = "Phase " .. status.phase
else
  hs.message = "Rolling out"
end
return hs
