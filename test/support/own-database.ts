import { sql } from './fixtures'
import { databaseUrl } from './server'

/**
 * A database of a test file's own on the test cluster, for service processes whose background
 * work must see only that file's data: `url` for DATABASE_URL; create before, drop after.
 */
export function ownDatabase(prefix: string) {
  const name = `${prefix}_${Date.now()}`
  const url = new URL(databaseUrl)
  url.pathname = `/${name}`
  return {
    name,
    url: url.href,
    create: () => sql(`create database ${name}`),
    drop: () => sql(`drop database if exists ${name} with (force)`),
  }
}
