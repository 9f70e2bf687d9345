# syntax=docker/dockerfile:1
# Herald image. Choose the runtime with --build-arg RUNTIME=node|bun|deno (default node).
#   docker build -t herald .                      # Node
#   docker build -t herald:bun --build-arg RUNTIME=bun .
# The image expects DATABASE_URL (PostgreSQL 14+) or MONGODB_URI (MongoDB 7+, FerretDB); see the README's
# Production section. The embedded PostgreSQL (neither set) is for local development only.
ARG RUNTIME=node
# The line package.json carries for the npm scripts (ADR 23); 22, the oldest maintained line, also works.
ARG NODE_VERSION=26

FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY runtimes/node22/package.json ./runtimes/node22/
COPY assets/api-reference/package.json assets/api-reference/package-lock.json ./assets/api-reference/
COPY scripts/install-api-reference.mjs ./scripts/
# Dependencies only; bun and deno binaries come from their npm packages (devDependencies). The image's
# own Node is the line Herald runs on, so the Node 22 workspace (CI's runtime matrix) is left out; the
# postinstall installs Scalar's browser bundle into assets/api-reference.
RUN npm ci --workspaces=false --no-audit --no-fund --loglevel=warn

FROM deps AS build
COPY tsconfig.json biome.json ./
COPY src ./src
COPY openapi ./openapi
COPY clients ./clients
COPY bin ./bin
RUN npx tsc --noEmit -p . || (echo "type errors" && exit 1)

FROM node:${NODE_VERSION}-bookworm-slim AS base
WORKDIR /app
ENV NODE_ENV=production PORT=8080 HOST=0.0.0.0 HERALD_DATA_DIR=/var/lib/herald
RUN mkdir -p /var/lib/herald && chown node:node /var/lib/herald
COPY --from=build --chown=node:node /app /app
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"

FROM base AS runtime-node
CMD ["node", "--import", "tsx", "src/main/main.node.ts"]

FROM base AS runtime-bun
CMD ["node_modules/.bin/bun", "src/main/main.bun.ts"]

FROM base AS runtime-deno
ENV DENO_DIR=/var/lib/herald/deno DENO_NO_UPDATE_CHECK=1
CMD ["node_modules/.bin/deno", "run", "--allow-all", "--node-modules-dir=manual", "src/main/main.deno.ts"]

FROM runtime-${RUNTIME}
