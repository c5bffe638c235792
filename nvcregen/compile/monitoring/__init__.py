"""The monitoring layer: ServiceMonitor, recording rules, alerts and the Grafana dashboard."""
