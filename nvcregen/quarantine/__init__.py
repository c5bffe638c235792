"""`nvcregen quarantine`: hand the failed nodes of a verified archive to the scheduler."""
