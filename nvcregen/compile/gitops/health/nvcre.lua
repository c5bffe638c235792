-- Argo CD health of an NVCRE Certification or WorkloadRun (nvcregen).
-- Runs in Argo CD's gopher-lua (Lua 5.1) with only the base, package, table and a safe os
-- library, so no string functions: `obj` is the live object.
-- NVCRE keeps exactly one of InProgress, Succeeded and Failed True; a run that failed
-- validation or timed out ends Failed. Failed is checked first, so a run is never Healthy
-- while any Failed condition is True.

local function true_condition(wanted)
  if obj.status == nil or obj.status.conditions == nil then
    return nil
  end
  for _, condition in ipairs(obj.status.conditions) do
    if condition.type == wanted and condition.status == "True" then
      return condition
    end
  end
  return nil
end

local function describe(condition)
  local text = condition.type
  if condition.reason ~= nil and condition.reason ~= "" then
    text = text .. " (" .. condition.reason .. ")"
  end
  if condition.message ~= nil and condition.message ~= "" then
    text = text .. ": " .. condition.message
  end
  return text
end

local failed = true_condition("Failed")
if failed ~= nil then
  return {status = "Degraded", message = describe(failed)}
end
local succeeded = true_condition("Succeeded")
if succeeded ~= nil then
  return {status = "Healthy", message = describe(succeeded)}
end
local running = true_condition("InProgress")
if running ~= nil then
  return {status = "Progressing", message = describe(running)}
end
return {status = "Progressing", message = "waiting for NVCRE to report InProgress, Succeeded or Failed"}
