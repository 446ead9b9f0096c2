#!/usr/bin/env bash
# Installs what the real-browser test (tests/web/test_browser.py) needs: Debian's Chromium and its
# driver (~25 s), and the playwright Python package. Playwright's own browser download is not used:
# the test launches /usr/bin/chromium with executable_path.
set -euo pipefail
if [ ! -x /usr/bin/chromium ]; then
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y chromium chromium-driver
fi
python -c "import playwright" 2>/dev/null || python -m pip install playwright
/usr/bin/chromium --version
