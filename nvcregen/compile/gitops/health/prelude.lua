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
