# One image, three binaries (lms, lms-core, lms-gateway); compose picks the command.
# Protobuf is compiled by protox at build time: no protoc needed.
#
# Layers: the dependencies are built from the manifests alone (cargo-chef's recipe), so a
# change to the project's own code rebuilds only the project, not every dependency; one
# `cargo build` makes all three binaries; symbols are stripped (release profile, below).

FROM rust:1.95-bookworm AS chef
RUN cargo install cargo-chef --version 0.1.78 --locked
# Stripped binaries: a third of the size, and nothing in the image needs the symbols. Set
# for the recipe and the build alike, so the cached dependencies match the final build.
ENV CARGO_PROFILE_RELEASE_STRIP=symbols
WORKDIR /src

FROM chef AS planner
COPY . .
RUN cargo chef prepare --recipe-path recipe.json

FROM chef AS build
COPY --from=planner /src/recipe.json recipe.json
RUN cargo chef cook --release --locked --recipe-path recipe.json \
      -p lms -p lms-core -p lms-gateway
COPY . .
RUN cargo build --release --locked -p lms -p lms-core -p lms-gateway \
 && mkdir -p /out \
 && cp target/release/lms target/release/lms-core target/release/lms-gateway /out/

FROM debian:bookworm-slim
# ca-certificates only (TLS to a managed PostgreSQL or a trace collector). Not pinned to a
# version: bookworm's mirrors keep only the current one, so a pin breaks the build at its
# next security update, which is exactly the update this image should pick up.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 lms \
 && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/lms --create-home lms
COPY --from=build /out/ /usr/local/bin/
# Numeric, so Kubernetes' runAsNonRoot can verify it without reading /etc/passwd.
USER 10001:10001
WORKDIR /var/lib/lms
# 8080: the XML interface; 50051: the core's gRPC; 9464: Prometheus metrics.
EXPOSE 8080 50051 9464
# The default command runs both halves; its gateway is ready when the core and the database
# answer. Compose sets the check of each service to match its command.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["lms", "healthcheck", "http://127.0.0.1:8080/readyz"]
# `lms up` restarts its serving process after a crash (SIGBUS from a broken SQLite WAL index)
# and exits non-zero after repeated ones: run the container with `--restart unless-stopped`
# (compose sets it for every service) so that exit is followed by a fresh start.
CMD ["lms", "up", "--http-addr", "0.0.0.0:8080", "--grpc-addr", "0.0.0.0:50051"]
