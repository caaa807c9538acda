# One image for both processes; docker-compose.yml picks the role with ROLE=api|worker.
# Bun is a runtime dependency (package.json "dependencies"), so the production install, which
# leaves devDependencies out, still has ./node_modules/.bin/bun. test/e2e/image-install.test.ts
# replays this file's install step and command without a Docker engine.
FROM node:22-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production DATA_DIR=/data
COPY package.json package-lock.json ./
# the preinstall script (a Node.js version check) runs in npm ci
COPY bin/check-node bin/
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
# batch exports (and an embedded database, when DATABASE_URL is unset) live here, owned by the
# unprivileged user the process runs as; docker-compose.yml shares /data/batches between api and worker
RUN mkdir -p /data/batches && chown -R node:node /data
USER node
EXPOSE 3000
# bun main.ts with the service's runtime settings (bin/serve says which and why)
CMD ["sh", "bin/serve"]
