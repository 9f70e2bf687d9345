# syntax=docker/dockerfile:1
# Herald image. Choose the runtime with --build-arg RUNTIME=node|bun|deno (default node).
#   docker build -t herald .                      # Node
#   docker build -t herald:bun --build-arg RUNTIME=bun .
# The image expects DATABASE_URL (PostgreSQL 14+) or MONGODB_URI (MongoDB 7+, FerretDB); see the README's
# Production section. The embedded PostgreSQL (neither set) is for local development only.
ARG RUNTIME=node
ARG NODE_VERSION=22

FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Dependencies only; bun and deno binaries come from their npm packages (devDependencies).
RUN npm ci --no-audit --no-fund --loglevel=warn

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
