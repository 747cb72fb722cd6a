# One image, three binaries (lms, lms-core, lms-gateway); compose picks the command.
# Protobuf is compiled by protox at build time: no protoc needed.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p lms -p lms-core -p lms-gateway \
 && mkdir -p /out \
 && cp target/release/lms target/release/lms-core target/release/lms-gateway /out/

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /var/lib/lms --create-home lms
COPY --from=build /out/ /usr/local/bin/
USER lms
WORKDIR /var/lib/lms
EXPOSE 8080 50051
CMD ["lms", "up", "--http-addr", "0.0.0.0:8080", "--grpc-addr", "0.0.0.0:50051"]
