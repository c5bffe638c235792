"""The platform layer: namespaces, collector RBAC, the NVCRE and Trainer installs."""
