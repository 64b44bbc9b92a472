-- Higress canary annotations (Higress reads ingress-nginx's keys) for the canary Ingress, as
-- the Kruise Rollout controller's built-in higress script writes them. obj: annotations (the
-- canary Ingress's current ones, or nil), weight (a string, "-1" without traffic), matches,
-- canaryService, requestHeaderModifier.
local annotations = obj.annotations or {}
annotations["nginx.ingress.kubernetes.io/canary"] = "true"
-- Cleared once, here: keys written by earlier matches of this step are not cleared again.
annotations["nginx.ingress.kubernetes.io/canary-by-cookie"] = nil
annotations["nginx.ingress.kubernetes.io/canary-by-header"] = nil
annotations["nginx.ingress.kubernetes.io/canary-by-header-pattern"] = nil
annotations["nginx.ingress.kubernetes.io/canary-by-header-value"] = nil
annotations["nginx.ingress.kubernetes.io/canary-weight"] = nil
if obj.weight ~= "-1" then
    annotations["nginx.ingress.kubernetes.io/canary-weight"] = obj.weight
end
if obj.matches then
    -- Later matches overwrite earlier ones and only a match's first header counts. As in the
    -- controller's script, a match without headers is an error (indexing a nil headers list).
    for _, match in ipairs(obj.matches) do
        local header = match.headers[1]
        if header.name == "canary-by-cookie" then
            annotations["nginx.ingress.kubernetes.io/canary-by-cookie"] = header.value
        else
            annotations["nginx.ingress.kubernetes.io/canary-by-header"] = header.name
            if header.type == "RegularExpression" then
                annotations["nginx.ingress.kubernetes.io/canary-by-header-pattern"] = header.value
            else
                annotations["nginx.ingress.kubernetes.io/canary-by-header-value"] = header.value
            end
        end
    end
end
return annotations
