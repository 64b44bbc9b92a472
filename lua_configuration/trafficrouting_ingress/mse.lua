-- MSE (Alibaba Cloud Microservices Engine) canary annotations for the canary Ingress, as the
-- Kruise Rollout controller's built-in mse script writes them. obj: annotations (the canary
-- Ingress's current ones, or nil), weight (a string, "-1" without traffic), matches,
-- canaryService, requestHeaderModifier.
-- As in the controller's script, there is no fallback for an Ingress without annotations:
-- indexing nil is an error (openkruise/rollouts#228).
local annotations = obj.annotations
annotations["nginx.ingress.kubernetes.io/canary"] = "true"
-- Cleared once, here: keys written by earlier matches of this step are not cleared again.
annotations["nginx.ingress.kubernetes.io/canary-by-cookie"] = nil
annotations["nginx.ingress.kubernetes.io/canary-by-header"] = nil
annotations["nginx.ingress.kubernetes.io/canary-by-header-pattern"] = nil
annotations["nginx.ingress.kubernetes.io/canary-by-header-value"] = nil
annotations["nginx.ingress.kubernetes.io/canary-weight"] = nil
-- The controller's script clears the mse-prefixed query keys but writes nginx-prefixed ones
-- below, so query keys written by one step survive every later step.
annotations["mse.ingress.kubernetes.io/canary-by-query"] = nil
annotations["mse.ingress.kubernetes.io/canary-by-query-pattern"] = nil
annotations["mse.ingress.kubernetes.io/canary-by-query-value"] = nil
-- A subset routing already set up (any value) points at the "gray" subset.
if annotations["mse.ingress.kubernetes.io/service-subset"] then
    annotations["mse.ingress.kubernetes.io/service-subset"] = "gray"
end
if obj.weight ~= "-1" then
    annotations["nginx.ingress.kubernetes.io/canary-weight"] = obj.weight
end
if obj.requestHeaderModifier then
    -- "<name> <value>" per set header, joined without a separator; add and remove are ignored,
    -- and a modifier without set is an error. Without a modifier the key is left as it is.
    local update = ""
    for _, header in ipairs(obj.requestHeaderModifier.set) do
        update = update .. header.name .. " " .. header.value
    end
    annotations["mse.ingress.kubernetes.io/request-header-control-update"] = update
end
if obj.matches then
    -- Later matches overwrite earlier ones; only a match's first header and first query
    -- parameter count.
    for _, match in ipairs(obj.matches) do
        local header = match.headers and match.headers[1]
        if header then
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
        local query = match.queryParams and match.queryParams[1]
        if query then
            annotations["nginx.ingress.kubernetes.io/canary-by-query"] = query.name
            if query.type == "RegularExpression" then
                annotations["nginx.ingress.kubernetes.io/canary-by-query-pattern"] = query.value
            else
                annotations["nginx.ingress.kubernetes.io/canary-by-query-value"] = query.value
            end
        end
    end
end
return annotations
