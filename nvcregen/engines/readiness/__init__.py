"""The readiness engines: NVCRE and trainer mode, one package each."""
