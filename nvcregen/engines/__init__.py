"""Each readiness and GitOps engine as one package, above every layer it implements.

`readiness/nvcre/`, `readiness/trainer/` (`spec.readiness.engine`) and `gitops/argocd/`,
`gitops/flux/` (`spec.gitops.engine`) each hold the engine's traits (`engine.py`) and its
own behaviour at every layer. Nothing below imports them: the layers find an engine
through `nvcregen.engineapi.registry` and ask for a part through a protocol they define.
"""
