"""The GitOps engines: Argo CD and Flux, one package each."""
