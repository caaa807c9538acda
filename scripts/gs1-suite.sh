#!/usr/bin/env bash
# GS1's resolver test suite against this service behind a local TLS proxy (issue 46).
#
#   scripts/gs1-suite.sh SUITE_DIR [SCHEMA_DIR]
#
# SUITE_DIR: a copy of gs1/GS1DL-resolver-testsuite (GS1's code: kept outside this repository,
#   run unmodified). SCHEMA_DIR (default SUITE_DIR/../gs1-schemas): the two JSON schemas the suite
#   loads from GS1's sites, as files: gs1-linkset-schema.json (gs1/linkset) and
#   description-file-schema.json (the resolver description file schema, 1.2.0).
# Output: each test of each URI and a count line per URI; exit 0 only with no failure and no
#   warning. Run as root on Debian (it installs nginx, php-cli and php-curl when missing).
#
# What it sets up, in a temporary folder, all on loopback:
#   - a self-signed certificate for 127.0.0.1;
#   - nginx on 127.0.0.1:${GS1_TLS_PORT:-443} terminating TLS and proxying to the service with
#     X-Forwarded-Proto: https (the service runs with TRUST_PROXY=127.0.0.1);
#   - the service (bin/serve, an embedded PostgreSQL in the folder), seeded by scripts/gs1-suite.ts
#     with GTIN 09506000134352 and its rules;
#   - the suite's PHP helper (tester.php) under php -S, trusting the certificate;
#   - the suite's page in headless Chromium (scripts/gs1-suite.ts), its requests to GS1's hosts
#     answered from local copies.
set -euo pipefail

SUITE_DIR=$(realpath "${1:?usage: scripts/gs1-suite.sh SUITE_DIR [SCHEMA_DIR]}")
SCHEMA_DIR=$(realpath "${2:-$SUITE_DIR/../gs1-schemas}")
REPO=$(cd "$(dirname "$0")/.." && pwd)
TLS_PORT=${GS1_TLS_PORT:-443}
for f in GS1DigitalLinkResolverTestSuite.js GS1DigitalLinkToolkit.js tester.php; do
  [ -f "$SUITE_DIR/$f" ] || { echo "no $f in $SUITE_DIR: not the GS1 resolver test suite" >&2; exit 2; }
done
for f in gs1-linkset-schema.json description-file-schema.json; do
  [ -f "$SCHEMA_DIR/$f" ] || { echo "no $f in $SCHEMA_DIR" >&2; exit 2; }
done

need=()
command -v nginx >/dev/null || need+=(nginx-light)
command -v php >/dev/null || need+=(php-cli)
php -m 2>/dev/null | grep -qx curl || need+=(php-curl)
command -v chromium >/dev/null || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

WORK=$(mktemp -d /tmp/gs1-suite-run.XXXXXX)
# the embedded PostgreSQL runs as the user postgres (it refuses root): it must enter this folder
chmod o+x "$WORK"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { bun -e 'const s=Bun.listen({hostname:"127.0.0.1",port:0,socket:{data(){}}});console.log(s.port);s.stop()'; }
PATH="$REPO/node_modules/.bin:$PATH"

# the browser bundle of Ajv the suite's page expects as window.ajv7 (GS1's page loads it from a CDN)
npm install --prefix "$WORK/deps" --no-save --no-audit --no-fund --silent ajv-dist@8 >/dev/null

openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
  -addext subjectAltName=IP:127.0.0.1,DNS:localhost \
  -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null

SERVICE_PORT=$(free_port)
PHP_PORT=$(free_port)
ADMIN_TOKEN=$(openssl rand -hex 16)

mkdir -p "$WORK/nginx"
cat >"$WORK/nginx.conf" <<EOF
daemon off;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log;
events {}
http {
  access_log $WORK/nginx/access.log;
  client_body_temp_path $WORK/nginx/body;
  proxy_temp_path $WORK/nginx/proxy;
  server {
    listen 127.0.0.1:$TLS_PORT ssl;
    ssl_certificate $WORK/cert.pem;
    ssl_certificate_key $WORK/key.pem;
    location / {
      proxy_pass http://127.0.0.1:$SERVICE_PORT;
      proxy_set_header Host \$http_host;
      proxy_set_header X-Forwarded-Host \$http_host;
      proxy_set_header X-Forwarded-Proto https;
      proxy_set_header X-Forwarded-For \$remote_addr;
    }
  }
}
EOF
nginx -c "$WORK/nginx.conf" -p "$WORK/nginx" &
pids+=($!)

(cd "$REPO" && DATA_DIR="$WORK/data" PORT=$SERVICE_PORT HOST=127.0.0.1 TRUST_PROXY=127.0.0.1 \
  ADMIN_TOKEN=$ADMIN_TOKEN NODE_ENV=development LOG_LEVEL=warn RESOLVER_ANONYMOUS_PER_MINUTE=100000 \
  exec sh bin/serve) >"$WORK/service.log" 2>&1 &
pids+=($!)

# tester.php fetches the resolver over HTTPS: it trusts the proxy's certificate
(cd "$SUITE_DIR" && exec php -d curl.cainfo="$WORK/cert.pem" -d openssl.cafile="$WORK/cert.pem" \
  -S 127.0.0.1:$PHP_PORT) >"$WORK/php.log" 2>&1 &
pids+=($!)

root=https://127.0.0.1$([ "$TLS_PORT" = 443 ] || echo ":$TLS_PORT")
for _ in $(seq 1 240); do
  curl -sf --cacert "$WORK/cert.pem" "$root/readyz" >/dev/null && break
  sleep 0.5
done
curl -sf --cacert "$WORK/cert.pem" "$root/readyz" >/dev/null || { echo "the service did not start:" >&2; tail -20 "$WORK/service.log" >&2; exit 1; }

cd "$REPO"
GS1_SUITE_DIR=$SUITE_DIR GS1_SCHEMA_DIR=$SCHEMA_DIR GS1_AJV_BUNDLE="$WORK/deps/node_modules/ajv-dist/dist/ajv7.bundle.js" \
  GS1_PHP_URL=http://127.0.0.1:$PHP_PORT GS1_RESOLVER_ROOT=$root GS1_SERVICE_URL=http://127.0.0.1:$SERVICE_PORT \
  GS1_ADMIN_TOKEN=$ADMIN_TOKEN bun scripts/gs1-suite.ts
