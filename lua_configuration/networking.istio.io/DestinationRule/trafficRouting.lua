-- Traffic routing for Istio DestinationRule (networking.istio.io).
--
-- Mirrors the OpenKruise Rollout controller's built-in DestinationRule script: it declares the
-- "canary" subset that the VirtualService script routes to when the canary and stable service
-- names are equal. Like the controller it ignores weights and matches, and appends the subset
-- even when one named "canary" already exists, so the output matches the controller's exactly.
-- The canary pods must carry the label istio.service.tag=gray (e.g. through the rollout's
-- patchPodTemplateMetadata); the controller hard-codes that label too.
-- Deliberate difference: where the controller's script errors on a DestinationRule without
-- spec.subsets, this one creates the list.
--
-- Input: the global obj (data = {spec, labels, annotations}, ...). Output: obj.data.

local data = obj.data

if data.spec == nil then
  data.spec = {}
end
if data.spec.subsets == nil then
  data.spec.subsets = {}
end

table.insert(data.spec.subsets, {
  name = "canary",
  labels = { ["istio.service.tag"] = "gray" },
})

return obj.data
