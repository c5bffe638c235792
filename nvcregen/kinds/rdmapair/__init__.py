"""The RDMA pair kind: RDMA rails between two nodes, a server on one and its client on the other."""
