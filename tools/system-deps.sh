#!/usr/bin/env bash
# The system programs `make test` needs beyond Python: promtool (tests/test_promtool.py
# checks and unit-tests the recording rules) and Chromium (tests/test_report_browser.py
# renders the report page). Installs them with apt when it can (root, or sudo without a
# password); otherwise stops with the one command to run.
set -euo pipefail

need=()
command -v promtool >/dev/null || need+=(prometheus)
command -v chromium >/dev/null || need+=(chromium)
((${#need[@]})) || exit 0

if ! command -v apt-get >/dev/null; then
  echo "make: missing ${need[*]}: install promtool (Prometheus 2.x or 3.x) and Chromium with your package manager" >&2
  exit 1
fi
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  if sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    echo "make: missing ${need[*]}; run once: sudo apt-get install -y --no-install-recommends ${need[*]}" >&2
    exit 1
  fi
fi
echo "make: installing ${need[*]} with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
