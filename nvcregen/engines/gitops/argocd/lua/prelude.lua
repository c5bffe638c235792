-- Shared by every readiness health check nvcregen gives Argo CD (nvcregen).
local function condition_of(wanted)
  if obj.status == nil or obj.status.conditions == nil then
    return nil
  end
  for _, condition in ipairs(obj.status.conditions) do
    if condition.type == wanted then
      return condition
    end
  end
  return nil
end

local function is_true(condition)
  return condition ~= nil and condition.status == "True"
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

-- Degraded when `Failed` is True, Healthy when `success` is True; nil while neither is.
local function ended(success)
  local failed = condition_of("Failed")
  if is_true(failed) then
    return {status = "Degraded", message = describe(failed)}
  end
  local done = condition_of(success)
  if is_true(done) then
    return {status = "Healthy", message = describe(done)}
  end
  return nil
end

-- Suspended while Kueue holds the object (Suspended True, or spec.suspend); nil otherwise.
local function queued()
  local suspended = condition_of("Suspended")
  if is_true(suspended) then
    return {status = "Suspended", message = "queued: " .. describe(suspended)}
  end
  if obj.spec ~= nil and obj.spec.suspend == true then
    return {status = "Suspended", message = "queued: spec.suspend is true"}
  end
  return nil
end
