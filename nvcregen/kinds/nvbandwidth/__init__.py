"""nvbandwidth: host<->device and device<->device copy bandwidth, once on each node."""
