# Builds the service binaries and the CLI; the compose file runs the API and the workers from this one image.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
# Queries are checked against the committed .sqlx/ data: no database at build time.
ENV SQLX_OFFLINE=true
RUN cargo build --release --locked --bin quickact-api --bin quickact-worker --bin quickact

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/release/quickact-api /src/target/release/quickact-worker /src/target/release/quickact /usr/local/bin/
USER nobody
CMD ["quickact-api"]
