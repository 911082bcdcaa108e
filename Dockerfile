# The gateway with its console built in. The build steps and the start command are the README's ("Production" →
# "Docker and compose"); server/test/ops/dockerfile.test.ts checks that the two stay in step, and that the Node major
# here is the LTS of the CI's second pass (.ci/node-lts.sh).
#
#   docker build -t ai-gateway .
#   docker run -p 3000:3000 -v gateway-data:/data ai-gateway

# ---- build: compile better-sqlite3, build the console and the server, then keep only the server's runtime packages
FROM node:26-trixie-slim AS build
# better-sqlite3 is compiled when no prebuilt binary matches this Node and libc
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# the manifests first, so the package layer is cached until they change
COPY package.json package-lock.json ./
COPY server/package.json server/
COPY web/package.json web/
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build
# node_modules again without the console's and the dev packages: the console is static files by now
RUN npm ci --omit=dev --workspace server --no-audit --no-fund

# ---- runtime: Node, the server's runtime packages, the built server and the built console; no compiler, no sources
FROM node:26-trixie-slim
ENV NODE_ENV=production \
  PORT=3000 \
  SQLITE_PATH=/data/one-api.db \
  MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json ./
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/server/package.json ./server/
COPY --from=build --chown=root:root /app/server/dist ./server/dist
COPY --from=build --chown=root:root /app/web/dist ./web/dist
# the code stays root's and read-only to the server; only the SQLite directory (and its session_secret) is its own
RUN mkdir -p /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 3000
# SHUTDOWN_TIMEOUT (8 s) fits Docker's default 10-s stop grace period: requests in flight finish and are billed
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# the V8 flags of `npm start` (scripts/server-flags.mjs); its --single-threaded-gc is for Node 20 only
CMD ["node", "--max-semi-space-size=8", "--heap-growing-percent=50", "--no-allocation-site-pretenuring", "server/dist/index.js"]
