#!/usr/bin/env bash
# The image under Docker's defaults (no --privileged, no --security-opt; the default seccomp profile), by hand:
# needs a Docker engine, which CI does not have. Builds the Dockerfile, then checks from outside the container:
#   1. `doctor` names the namespace-free wall;
#   2. README's first question answers setosa 1.462 / versicolor 4.26 / virginica 5.552 (state in the image's
#      volume, written by the image's ordinary user);
#   3. the containment suite's server side (containment_driver.py, 58 programs) run inside the container as that
#      user, judged here by test_containment_modes._check for the namespace-free tier.
# usage: bash tests/execution/docker_check.sh   (from the repository's root)
set -euo pipefail
cd "$(dirname "$0")/../.."
docker build ${DOCKER_BUILD_ARGS:-} -t auto-analyst-check . >/dev/null  # e.g. DOCKER_BUILD_ARGS="--network host"
docker run --rm auto-analyst-check auto-analyst doctor | grep -q "wall in force: namespace-free"
echo "doctor: namespace-free wall"
answer="$(docker run --rm -v "$PWD/datasets:/data:ro" auto-analyst-check auto-analyst ask /data/iris.csv \
  "What is the average petal length by species?" --json)"
python - "$answer" <<'PY'
import json, sys
text = json.dumps(json.loads(sys.argv[1]))
assert all(v in text for v in ("1.462", "4.26", "5.552")), text[:2000]
print("ask: setosa 1.462, versicolor 4.26, virginica 5.552")
PY
report="$(mktemp)"
docker run --rm -v "$PWD/tests:/tests:ro" auto-analyst-check sh -c \
  'mkdir -p "$HOME/ct" && cd "$HOME/ct" && python /tests/execution/containment_driver.py "$HOME/ct"' > "$report"
python - "$report" <<'PY'
import sys, types
sys.path.insert(0, "tests/execution")
import test_containment_modes as suite
proc = types.SimpleNamespace(stdout=open(sys.argv[1]).read(), stderr="", returncode=0)
report = suite._report(proc)
suite._check(report, "namespace-free")
print(f"containment: {len(report['results'])} programs, tier {report['tier']}, uid {report['uid']}: passed")
PY
