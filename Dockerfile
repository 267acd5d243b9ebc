# syntax=docker/dockerfile:1
# kubesched's container image: the `kubesched` console script on python:3.11-slim.
#
#   docker build -t kubesched:0.1.0 .
#   docker run --rm kubesched:0.1.0 --help
#
# Two stages: the first builds wheels for kubesched and every dependency; the second
# installs them from that local directory (no index, no compilers, no build tools) and
# runs as an unprivileged numeric user, so `runAsNonRoot` can verify it.

ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY kubesched ./kubesched
# Dependencies all publish manylinux wheels for CPython 3.11 (numpy, orjson, aiohttp,
# ...); `pip wheel` only downloads them, and builds kubesched's own pure-Python wheel.
RUN pip wheel --wheel-dir /wheels .

FROM ${PYTHON_IMAGE} AS runtime
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HOME=/tmp \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
# The wheels are bind-mounted from the build stage, so they never land in a layer.
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-index --find-links=/wheels kubesched \
    && groupadd --gid 65532 kubesched \
    && useradd --uid 65532 --gid 65532 --no-create-home --home-dir /tmp \
         --shell /usr/sbin/nologin kubesched
# Numeric, so the kubelet can check runAsNonRoot without reading /etc/passwd.
USER 65532:65532
WORKDIR /tmp
# 10251: /healthz /livez /readyz /metrics over plain HTTP (--port).
EXPOSE 10251
ENTRYPOINT ["kubesched"]
# In a pod: in-cluster configuration, leader election on, endpoints on :10251.
# The manifests in deploy/ replace these arguments with --config and their own flags.
CMD ["run", "--bind-address=0.0.0.0", "--port=10251"]
