"""RDMA rails: perftest (`ib_write_bw`/`ib_read_bw`) on each HCA, from GPU memory."""
