# amodb-proxy container image.
#
# Build (Docker host):   docker build -t amodb-proxy .
# Build (offline, kit):  bash ../shared/container/build.sh -t localhost/amodb-proxy:test .
# Try it without a key:  docker run --rm -p 8080:8080 amodb-proxy --sandbox
#
# Run with the real amodb: pass the API key as a file, not on the command line or
# in a plain -e (both show up in `ps`, `docker inspect` and shell history). The
# proxy reads AMODB_KEY_FILE and drops the trailing newline. The file must be
# readable by uid 10001 (the image's `app` user), e.g. mode 0444 or owned by 10001.
#
#   docker run -d --name amodb-proxy -p 8080:8080 \
#     -v "$PWD/amodb_key:/run/secrets/amodb_key:ro" \
#     -e AMODB_KEY_FILE=/run/secrets/amodb_key \
#     amodb-proxy
#
#   # docker compose:
#   #   services:
#   #     proxy:
#   #       image: amodb-proxy
#   #       ports: ["8080:8080"]
#   #       environment: { AMODB_KEY_FILE: /run/secrets/amodb_key }
#   #       secrets: [amodb_key]
#   #   secrets:
#   #     amodb_key: { file: ./amodb_key }
#
# AMODB_KEY=... also works but is visible to anyone who can inspect the container.
#
# Warm restarts (cache saved on shutdown and every AMODB_SNAPSHOT_INTERVAL s):
#   -e AMODB_CACHE_SNAPSHOT=/var/lib/amodb-proxy/cache.json \
#   -v amodb-proxy-cache:/var/lib/amodb-proxy
# (a named volume starts out owned by the image's `app` user; a bind-mounted host
# directory must be writable by uid 10001).
# Other settings come from the environment (see `docker run amodb-proxy --help`)
# or from /app/config/amodb-proxy.conf, the file the image names with AMODB_CONFIG
# (NAME=value lines; replace the directory with a volume:
# -v "$PWD/config:/app/config:ro"). Flags win over the environment, which wins
# over the file.

# Base images are build arguments, declared before the first FROM: a Docker host
# pulls the public defaults; the offline container kit (shared/container/build.sh)
# passes local ones (localhost/swift-builder:bookworm, localhost/debian:bookworm-slim)
# and bind-mounts its host toolchain into every RUN of the build stage.
# The package needs Swift 6.0 or later (tools-version 6.0, Swift 6 language
# mode). The kit compiles with the host's toolchain whatever tag is named here,
# so an offline build does not prove that the swift:6.1 image compiles the code.
ARG BUILDER_IMAGE=swift:6.1-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

# ================================ build ======================================
FROM ${BUILDER_IMAGE} AS build
WORKDIR /build

# Nothing to install: gzip links the system's zlib (CZlib; the swift images carry
# zlib1g-dev, as the toolchain needs it), and libcrypto and brotli are loaded at run
# time (dlopen), so building needs neither libssl-dev nor libbrotli-dev.

# Manifest first: resolving dependencies stays cached while only sources change.
# .build is a cache mount (kept by the build host between builds; needs BuildKit
# on Docker, works with podman/buildah), so an edit recompiles incrementally
# instead of from scratch; sharing=locked serializes concurrent builds using it.
COPY ./Package.* ./
RUN --mount=type=cache,id=amodb-proxy-build,target=/build/.build,sharing=locked \
    swift package resolve \
      $([ -f ./Package.resolved ] && echo --force-resolved-versions || true)

COPY ./Sources ./Sources
# The one release build (its compiler and linker flags are not in Package.swift).
COPY ./scripts ./scripts
# SwiftPM refuses to load the manifest when a declared test target's directory is
# missing, so the test sources come along (they are not compiled for the product).
COPY ./Tests ./Tests

# --static (--static-swift-stdlib): the Swift runtime and Foundation are linked in,
# so the binary links only libc, libstdc++, libgcc_s, libz and libcurl
# (FoundationNetworking) from the runtime image, and loads libcrypto and libbrotli
# with glibc's dlopen when it starts, from the system's directories only: its run path
# holds no $ORIGIN (checked here), so nothing is loaded from beside it. The binary is copied
# out of the cache mount, and out of the toolchain (swift-backtrace-static),
# inside the RUN: neither exists for a later COPY --from. (The script's standard
# output is the binary's path alone, and its failure fails the RUN.) The link lays out
# the functions listed in scripts/hot-text.order first (it comes with ./scripts); names
# another toolchain spells differently (a swift:6.1 image on a Docker host) are skipped
# without a warning, which costs resident memory, not behaviour. The order is checked
# against the host toolchain's static binary in CI (scripts/check-hot-text.sh), not here.
RUN --mount=type=cache,id=amodb-proxy-build,target=/build/.build,sharing=locked \
    binary=$(scripts/build-release.sh --static) \
 && scripts/check-run-path.sh "$binary" \
 && mkdir -p /staging \
 && cp "$binary" /staging/ \
 && strip /staging/amodb-proxy \
 && cp /usr/libexec/swift/linux/swift-backtrace-static /staging/

# =============================== runtime =====================================
FROM ${RUNTIME_IMAGE}

# What the binary still loads: libcurl4 (FoundationNetworking, the upstream
# client and --healthcheck), ca-certificates (TLS to amodb), tzdata. The public
# debian:bookworm-slim has none of them. libssl3 (libcrypto.so.3: HMAC-SHA256 and
# the RS256/ES256 signatures of users' ID tokens; the proxy does not start without
# it) and libbrotli1 (libbrotlienc.so.1, libbrotlidec.so.1: br answers, left out
# without it) are opened with dlopen, which no package dependency records, so they
# are named here even though libcurl4 depends on both today. zlib1g (libz, gzip)
# comes with every Debian image.
RUN export DEBIAN_FRONTEND=noninteractive DEBCONF_NONINTERACTIVE_SEEN=true \
 && apt-get -q update \
 && apt-get -q install -y --no-install-recommends ca-certificates libcurl4 libssl3 libbrotli1 tzdata \
 && rm -rf /var/lib/apt/lists/*

# Fixed uid/gid so mounted secrets and volumes can be granted to it. No login
# shell; /app (made by WORKDIR, owned by root) is not writable by it. The one
# writable place is /var/lib/amodb-proxy, for the optional cache snapshot
# (AMODB_CACHE_SNAPSHOT=/var/lib/amodb-proxy/cache.json, as in the example
# config), and for the calls to amodb of the last minute (AMODB_STATE_DIR, below), so
# a restarted container does not spend the key's window again. It is a volume: a
# restart of the same container keeps it; mount a named one to keep it across containers.
RUN groupadd --gid 10001 app \
 && useradd --uid 10001 --gid app --home-dir /app --no-create-home --no-log-init \
      --shell /usr/sbin/nologin app \
 && install -d -o app -g app -m 0750 /var/lib/amodb-proxy
WORKDIR /app

# Binaries and configuration stay owned by root: the proxy cannot rewrite them.
COPY --from=build /staging/ /app/
# A settings file is read only when named: the image names its own (every line of
# the copy shipped is a comment), in a directory the proxy cannot write to.
COPY ./config/ /app/config/
ENV AMODB_CONFIG=/app/config/amodb-proxy.conf

# Symbolicated crash reports on stderr (as in Vapor's template).
ENV SWIFT_BACKTRACE=enable=yes,sanitize=yes,threads=all,images=all,interactive=no,swift-backtrace=/app/swift-backtrace-static
ENV HOST=0.0.0.0 PORT=8080 AMODB_STATE_DIR=/var/lib/amodb-proxy
# The operator's pages (/metrics, /status, /status.json: what the budget has left, which
# titles users ask for) are not on the published port: on 9090, on the container's
# loopback. For a scraper beside it, AMODB_OPERATOR_HOST=0.0.0.0 and publish 9090 to a
# private network only (the compose example does).
ENV AMODB_OPERATOR_PORT=9090 AMODB_OPERATOR_HOST=127.0.0.1
VOLUME /var/lib/amodb-proxy
EXPOSE 8080

# SIGTERM: stop accepting, let in-flight requests finish (AMODB_SHUTDOWN_GRACE,
# default 10 s), exit 0. Give `docker stop` a longer timeout than the grace.
STOPSIGNAL SIGTERM
# --healthcheck asks GET /healthz on HOST/PORT (0.0.0.0 -> 127.0.0.1); the slim
# image has no curl.
HEALTHCHECK --interval=30s --timeout=3s --start-period=5s --retries=3 \
  CMD ["/app/amodb-proxy", "--healthcheck"]

USER 10001:10001
# ENTRYPOINT, so arguments are flags: `docker run amodb-proxy --sandbox`.
ENTRYPOINT ["/app/amodb-proxy"]
