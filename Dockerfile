# syntax=docker/dockerfile:1
# Herald image. Choose the runtime with --build-arg RUNTIME=node|bun|deno (default node).
#   docker build -t herald .                      # Node
#   docker build -t herald:bun --build-arg RUNTIME=bun .
# The image expects DATABASE_URL (PostgreSQL 14+) or MONGODB_URI (MongoDB 7+, FerretDB); see the README's
# Production section. The embedded PostgreSQL (neither set) is for local development only.
# Each runtime's image starts from that runtime's official image and holds Herald's sources and its
# production dependencies only; the runtime runs the TypeScript itself (no compiler, no tsx), as a user
# that is not root. test/install/dockerfile.test.ts checks what can be checked without a container engine.
ARG RUNTIME=node
# The line package.json carries for the npm scripts (ADR 23); 22, the oldest maintained line, also works.
ARG NODE_VERSION=26
# The versions runtimes/bun-deno pins for the tests.
ARG BUN_VERSION=1.4.5
ARG DENO_VERSION=2.9.6

# Production dependencies as `npm ci --omit=dev` installs them, less the carried Node (optional: the base
# images bring their runtime), and the /docs bundle the postinstall fetches. Used by every runtime: they
# are JavaScript and WebAssembly, the same on each.
FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY assets/api-reference/bundle.json ./assets/api-reference/
COPY scripts/install-api-reference.mjs ./scripts/
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund --loglevel=warn

# What Herald runs: its sources, the CLI's typed client, and the dependencies above.
FROM scratch AS app
COPY package.json /app/
COPY src /app/src
COPY bin /app/bin
COPY clients/typescript /app/clients/typescript
COPY --from=deps /app/node_modules /app/node_modules
COPY --from=deps /app/assets /app/assets

FROM node:${NODE_VERSION}-bookworm-slim AS runtime-node
WORKDIR /app
# NODE_COMPILE_CACHE: Node keeps what it compiled (the TypeScript after type stripping too) for the next
# start, in the data directory, the one place the user may write (ADR 25).
ENV NODE_ENV=production PORT=8080 HOST=0.0.0.0 HERALD_DATA_DIR=/var/lib/herald \
  NODE_COMPILE_CACHE=/var/lib/herald/node-compile-cache
RUN mkdir -p /var/lib/herald && chown node:node /var/lib/herald
COPY --from=app /app /app
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "src/main/main.node.ts"]

FROM oven/bun:${BUN_VERSION}-slim AS runtime-bun
WORKDIR /app
ENV NODE_ENV=production PORT=8080 HOST=0.0.0.0 HERALD_DATA_DIR=/var/lib/herald
RUN mkdir -p /var/lib/herald && chown bun:bun /var/lib/herald
COPY --from=app /app /app
USER bun
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["bun", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["bun", "src/main/main.bun.ts"]

FROM denoland/deno:${DENO_VERSION} AS runtime-deno
WORKDIR /app
ENV NODE_ENV=production PORT=8080 HOST=0.0.0.0 HERALD_DATA_DIR=/var/lib/herald \
  DENO_DIR=/var/lib/herald/deno DENO_NO_UPDATE_CHECK=1
RUN mkdir -p /var/lib/herald && chown deno:deno /var/lib/herald
COPY --from=app /app /app
USER deno
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["deno", "eval", "fetch('http://127.0.0.1:'+(Deno.env.get('PORT')||8080)+'/healthz').then(r=>Deno.exit(r.ok?0:1),()=>Deno.exit(1))"]
CMD ["deno", "run", "--allow-all", "--node-modules-dir=manual", "src/main/main.deno.ts"]

FROM runtime-${RUNTIME}
