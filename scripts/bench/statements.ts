// Where a benchmark's PostgreSQL time goes, statement by statement, when the embedded cluster runs
// pg_stat_statements: `EMBEDDED_POSTGRES_SETTINGS=shared_preload_libraries=pg_stat_statements`.
// Without it, nothing is measured or printed. A statement's time includes its waits for locks: its
// least and longest call (in parentheses) show them (a chunk waiting for another's uncommitted rows).
import type { Pool } from 'pg'

/**
 * Starts counting (the counts so far are reset) and returns the report to print once the measured
 * work is done: the `top` statements by total execution time, each per unit of work (a row, a
 * delivery), or null when pg_stat_statements is not loaded.
 */
export async function statementProfile(pool: Pool) {
  if (!/\bpg_stat_statements\b/.test(process.env.EMBEDDED_POSTGRES_SETTINGS ?? '')) return null
  await pool.query('create extension if not exists pg_stat_statements')
  await pool.query('select pg_stat_statements_reset()')
  return async (units: number, unit: string, top = 15) => {
    const { rows } = await pool.query<{
      calls: string
      total: number
      mean: number
      min: number
      max: number
      rows: string
      query: string
    }>(
      `select calls, total_exec_time as total, mean_exec_time as mean, min_exec_time as min, max_exec_time as max, rows,
         left(regexp_replace(query, '\\s+', ' ', 'g'), 150) as query
       from pg_stat_statements order by total_exec_time desc limit $1`,
      [top],
    )
    const all = await pool.query<{ total: number }>(
      'select coalesce(sum(total_exec_time), 0) as total from pg_stat_statements',
    )
    console.log(
      `\nPostgreSQL execution time by statement (pg_stat_statements; ${(all.rows[0]!.total / 1000).toFixed(1)} s in all, µs per ${unit}):`,
    )
    for (const r of rows)
      console.log(
        `${((r.total * 1000) / units).toFixed(1).padStart(8)} µs  ${String(r.calls).padStart(8)} calls  ${r.mean.toFixed(2).padStart(8)} ms mean ${`(${r.min.toFixed(1)}-${r.max.toFixed(0)})`.padStart(12)}  ${r.query}`,
      )
  }
}
