# One image for both processes; docker-compose.yml picks the role with ROLE=api|worker.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# batch exports are written here; docker-compose.yml shares it between api and worker
RUN mkdir -p /data/batches && chown -R node:node /data
USER node
EXPOSE 3000
CMD ["./node_modules/.bin/bun", "src/index.ts"]
