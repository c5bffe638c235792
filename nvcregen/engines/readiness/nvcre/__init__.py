"""NVCRE: installed on the cluster, it expands the plan's Certifications and WorkloadRuns."""
