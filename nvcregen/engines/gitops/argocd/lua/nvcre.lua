-- Argo CD health of an NVCRE Certification or WorkloadRun (nvcregen).
-- Runs in Argo CD's gopher-lua (Lua 5.1) with only the base, package, table and a safe os
-- library, so no string functions: `obj` is the live object.
-- NVCRE keeps exactly one of InProgress, Succeeded and Failed True; a run that failed
-- validation or timed out ends Failed. Failed is checked first, so a run is never Healthy
-- while any Failed condition is True.
-- condition_of, is_true, describe, ended and queued follow: prelude.lua, shared by every check.

local result = ended("Succeeded")
if result ~= nil then
  return result
end
local running = condition_of("InProgress")
if is_true(running) then
  return {status = "Progressing", message = describe(running)}
end
return {status = "Progressing", message = "waiting for NVCRE to report InProgress, Succeeded or Failed"}
