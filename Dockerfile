# Harvester sidecar image.
#   docker build -t harvester .
#   docker run --rm -p 127.0.0.1:9464:9464 -p 127.0.0.1:50051:50051 harvester
# The default settings (/etc/harvester/harvester.yaml, from deploy/docker/harvester.yaml) serve
# the embedded cluster; mount your own file there to advise a real ResourceManager
# (docker-compose.yml does). tests/deploy/test_dockerfile.py checks this file against the settings
# schema's defaults, the Makefile, pyproject.toml and .dockerignore.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# --- builder: generate the gRPC code and install the project into a venv -------------------
FROM ${PYTHON_IMAGE} AS builder

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:${PATH}
WORKDIR /src

# Dependencies first, from pyproject.toml, so code changes reuse this (large) layer.
# grpcio-tools uses the same range as pyproject's `test` extra; pip resolves it together with
# the runtime protobuf, so the generated code and the protobuf runtime agree.
# README.m[d]: pyproject names the README; the glob keeps the build working without one.
COPY pyproject.toml README.m[d] ./
RUN python -c "import tomllib; deps = tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']; open('/tmp/requirements.txt', 'w').write('\n'.join(deps) + '\n')" \
 && pip install -r /tmp/requirements.txt 'grpcio-tools>=1.66,<2'

COPY proto ./proto
COPY harvester ./harvester
COPY rm_client ./rm_client
COPY hdfs_placement ./hdfs_placement

# Exactly what `make proto` runs; the output lands in harvester/v1/ (never committed).
RUN python -m grpc_tools.protoc -Iproto --python_out=. --pyi_out=. --grpc_python_out=. proto/harvester/v1/*.proto \
 && ls harvester/v1/*_pb2.py harvester/v1/*_pb2_grpc.py >/dev/null

# A regular (not editable) install: the venv alone is the application. The code generator is
# only needed at build time.
RUN pip install --no-deps . \
 && pip uninstall -y grpcio-tools \
 && harvester version

# --- final: the venv, the default settings, a non-root user --------------------------------
FROM ${PYTHON_IMAGE}

ARG HARVESTER_UID=10001
RUN groupadd --system --gid ${HARVESTER_UID} harvester \
 && useradd --system --uid ${HARVESTER_UID} --gid harvester --home-dir /srv/harvester --shell /usr/sbin/nologin harvester \
 && mkdir -p /srv/harvester/var /etc/harvester \
 && chown -R harvester:harvester /srv/harvester

COPY --from=builder /opt/venv /opt/venv
COPY deploy/docker/harvester.yaml /etc/harvester/harvester.yaml

ENV PATH=/opt/venv/bin:${PATH} \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

# The bundled settings keep the store in /srv/harvester/var (store.path); a named volume on it
# inherits the harvester user's ownership from the image.
WORKDIR /srv/harvester
VOLUME ["/srv/harvester/var"]
USER harvester

# gRPC advice, admin HTTP (/healthz /readyz /metrics /status): the settings' default ports.
EXPOSE 50051 9464

# Liveness of the admin server (slim images have no curl). /readyz would flap while the RM is
# unreachable, which is a cluster problem, not a reason to restart the sidecar.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:9464/healthz', timeout=3).status == 200 else 1)"]

ENTRYPOINT ["harvester"]
CMD ["serve", "--config", "/etc/harvester/harvester.yaml"]
