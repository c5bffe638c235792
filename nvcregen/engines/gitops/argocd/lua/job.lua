-- Argo CD health of a batch/v1 Job (nvcregen), replacing Argo CD's built-in check.
-- Runs in Argo CD's gopher-lua (Lua 5.1) with only the base, package, table and a safe os
-- library, so no string functions: `obj` is the live object.
-- The built-in check takes any Suspended condition as final: a Job Kueue resumed carries
-- Suspended=False (JobResumed) and would be Healthy while it still runs, so a later sync
-- wave would start early. Here only Complete is Healthy and only Failed is Degraded
-- (DeadlineExceeded and BackoffLimitExceeded included); a queued Job is Suspended.
-- condition_of, is_true, describe, ended and queued follow: prelude.lua, shared by every check.

local function pods()
  local status = obj.status or {}
  return "active " .. tostring(status.active or 0) .. ", succeeded " ..
    tostring(status.succeeded or 0) .. ", failed " .. tostring(status.failed or 0)
end

local result = ended("Complete") or queued()
if result ~= nil then
  return result
end
return {status = "Progressing", message = "running: pods " .. pods()}
