"""nccl-tests collectives: a sweep of message sizes across ranks, bus bandwidth measured."""
