-- Alibaba Cloud ALB canary annotations for the canary Ingress, as the Kruise Rollout
-- controller's built-in aliyun-alb script writes them. obj: annotations (the canary Ingress's
-- current ones, or nil), weight (a string, "-1" without traffic), matches, canaryService,
-- requestHeaderModifier.
local annotations = obj.annotations or {}
annotations["alb.ingress.kubernetes.io/canary"] = "true"
-- Cleared once, here: keys written by earlier matches of this step are not cleared again.
annotations["alb.ingress.kubernetes.io/canary-by-cookie"] = nil
annotations["alb.ingress.kubernetes.io/canary-by-header"] = nil
annotations["alb.ingress.kubernetes.io/canary-by-header-pattern"] = nil
annotations["alb.ingress.kubernetes.io/canary-by-header-value"] = nil
annotations["alb.ingress.kubernetes.io/canary-weight"] = nil
-- Always "1": the canary's forwarding rules come first. ALB wants every order unique, so two
-- canary Ingresses on one ALB clash (openkruise/rollouts#128).
annotations["alb.ingress.kubernetes.io/order"] = "1"
if obj.weight ~= "-1" then
    annotations["alb.ingress.kubernetes.io/canary-weight"] = obj.weight
end
if obj.matches then
    -- Later matches overwrite earlier ones and only a match's first header counts. As in the
    -- controller's script, a match without headers is an error (indexing a nil headers list).
    for _, match in ipairs(obj.matches) do
        local header = match.headers[1]
        if header.name == "canary-by-cookie" then
            annotations["alb.ingress.kubernetes.io/canary-by-cookie"] = header.value
        else
            annotations["alb.ingress.kubernetes.io/canary-by-header"] = header.name
            if header.type == "RegularExpression" then
                annotations["alb.ingress.kubernetes.io/canary-by-header-pattern"] = header.value
            else
                annotations["alb.ingress.kubernetes.io/canary-by-header-value"] = header.value
            end
        end
    end
end
return annotations
