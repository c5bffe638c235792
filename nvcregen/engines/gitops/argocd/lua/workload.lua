-- Argo CD health of a Kueue Workload nvcregen applies for a run (a prebuilt workload; nvcregen).
-- Runs in Argo CD's gopher-lua (Lua 5.1) with only the base, package, table and a safe os
-- library, so no string functions: `obj` is the live object.
-- Kueue v0.19.2 gives up on a run in three ways, and the run itself only stays suspended:
-- after requeuingStrategy.backoffLimitCount evictions it sets spec.active false and evicts
-- the Workload (Evicted, reason Deactivated, only ever while spec.active is false); a
-- Workload that does not match its run is Finished with reason OutOfSync; one whose run
-- could not be started is Finished with reason FailedToStart. Each is Degraded, naming the
-- reason. A Workload someone reactivated (spec.active true again) keeps its stale Evicted
-- condition until it is admitted: not Degraded. Anything else is Healthy: the run's own
-- check holds the wave, this one never does.
-- condition_of, is_true, describe, ended and queued follow: prelude.lua, shared by every check.

local evicted = condition_of("Evicted")
local finished = condition_of("Finished")
if obj.spec ~= nil and obj.spec.active == false then
  local message = "Kueue deactivated the run's Workload (spec.active is false)"
  if is_true(evicted) then
    message = message .. ": " .. describe(evicted)
  end
  return {status = "Degraded", message = message}
end
if is_true(finished) and (finished.reason == "OutOfSync" or finished.reason == "FailedToStart") then
  return {status = "Degraded", message = "Kueue will not start the run: " .. describe(finished)}
end
return {status = "Healthy", message = "the run's own health decides (Kueue has not given up on it)"}
