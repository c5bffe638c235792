"""Link health counters: every HCA port's counters read before and after RDMA traffic."""
