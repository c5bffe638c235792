"""nvcregen: compile GPU cluster Site specs into validated NVCRE readiness manifests."""

__version__ = "0.1.0"
