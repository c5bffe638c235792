-- Argo CD health of an Application (nvcregen): what lets a parent's sync waves wait for a
-- layer. Argo CD 1.8 removed its built-in Application check, so without this key a parent
-- applies every wave of child Applications at once, healthy or not.
-- Runs in Argo CD's gopher-lua (Lua 5.1), no string functions: `obj` is the live child.
-- Degraded when the child's last sync failed for good (its retries are spent: phase Failed
-- or Error), Progressing until it is synced, else the health the child reports.

local status = obj.status or {}
local operation = status.operationState
if operation ~= nil and (operation.phase == "Failed" or operation.phase == "Error") then
  return {status = "Degraded", message = "sync " .. operation.phase .. ": " .. tostring(operation.message or "")}
end
local health = status.health or {}
if health.status == nil then
  return {status = "Progressing", message = "waiting for the Application to report its health"}
end
local sync = status.sync or {}
if health.status == "Healthy" and sync.status ~= "Synced" then
  return {status = "Progressing", message = "healthy, not synced yet: " .. tostring(sync.status or "Unknown")}
end
return {status = health.status, message = tostring(health.message or "")}
