"""`nvcregen retest`: a Site file that isolates the suspect nodes of an archived run."""
