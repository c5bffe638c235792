-- Argo CD health of a Kubeflow Trainer TrainJob (nvcregen).
-- Runs in Argo CD's gopher-lua (Lua 5.1) with only the base, package, table and a safe os
-- library, so no string functions: `obj` is the live object.
-- Trainer 2.2 sets Complete or Failed (also for DeadlineExceeded) at the end, and
-- Suspended True while spec.suspend holds it (Kueue queues a TrainJob that way) and False
-- (Resumed) once it runs. Argo CD has no built-in check for this kind: without this one a
-- TrainJob is done the moment it is created.
-- condition_of, is_true, describe, ended and queued follow: prelude.lua, shared by every check.

local result = ended("Complete") or queued()
if result ~= nil then
  return result
end
local suspended = condition_of("Suspended")
if suspended ~= nil then
  return {status = "Progressing", message = "running: " .. describe(suspended)}
end
return {status = "Progressing", message = "waiting for Trainer to report Complete or Failed"}
