"""The GitOps layer: Argo CD AppProjects and Applications, or Flux sources and Kustomizations."""
