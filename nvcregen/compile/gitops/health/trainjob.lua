-- Argo CD health of a Kubeflow Trainer TrainJob (nvcregen).
-- Runs in Argo CD's gopher-lua (Lua 5.1) with only the base, package, table and a safe os
-- library, so no string functions: `obj` is the live object.
-- Trainer 2.2 sets Complete or Failed (also for DeadlineExceeded) at the end, and
-- Suspended True while spec.suspend holds it (Kueue queues a TrainJob that way) and False
-- (Resumed) once it runs. Argo CD has no built-in check for this kind: without this one a
-- TrainJob is done the moment it is created.
-- condition_of, is_true and describe follow: prelude.lua, shared by every check.

local failed = condition_of("Failed")
if is_true(failed) then
  return {status = "Degraded", message = describe(failed)}
end
local complete = condition_of("Complete")
if is_true(complete) then
  return {status = "Healthy", message = describe(complete)}
end
local suspended = condition_of("Suspended")
if is_true(suspended) then
  return {status = "Suspended", message = "queued: " .. describe(suspended)}
end
if obj.spec ~= nil and obj.spec.suspend == true then
  return {status = "Suspended", message = "queued: spec.suspend is true"}
end
if suspended ~= nil then
  return {status = "Progressing", message = "running: " .. describe(suspended)}
end
return {status = "Progressing", message = "waiting for Trainer to report Complete or Failed"}
