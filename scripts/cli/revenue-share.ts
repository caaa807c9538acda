import { Value } from '@sinclair/typebox/value'
import type { Command } from 'commander'
import { CalculateBody } from '../../src/advertising/schemas'
import { fieldErrors } from '../../src/http/validation'
import { exits, plural } from './command'
import { withDatabase } from './database'

type CalculateOptions = { period?: string; rate?: string; json?: boolean }

export function revenueShareCommands(program: Command) {
  program
    .command('revenue-share')
    .description('revenue shares')
    .command('calculate')
    .description("compute a month's revenue shares now, in this process (as the monthly job does), and list them")
    .option('--period <YYYY-MM>', 'the calendar month (UTC); default: the month before this one')
    .option('--rate <decimal>', 'platform fee rate, 0 to 1 (default PLATFORM_FEE_RATE)')
    .option('--json', 'print the new or changed shares as JSON lines')
    .action(exits(calculate))
}

/**
 * `revenue-share calculate`: runs `calculateRevenueShares`, each retailer in its own transaction.
 * Shares already APPROVED, PAID or DISPUTED keep their figures; only new or changed shares are
 * printed. A retailer that could not be calculated is named on stderr and the exit status is 1.
 */
async function calculate(values: CalculateOptions): Promise<number> {
  const { previousPeriod, calculateRevenueShares } = await import('../../src/advertising/revenue-shares')
  const body = {
    period: values.period ?? previousPeriod(new Date()),
    ...(values.rate !== undefined ? { platform_fee_rate: values.rate } : {}),
  }
  if (!Value.Check(CalculateBody, body)) {
    for (const e of fieldErrors([...Value.Errors(CalculateBody, body)] as never))
      console.error(`${e.field}: ${e.message}`)
    return 2
  }
  return withDatabase(2, 'send', async ({ db }) => {
    const { shares, failures } = await calculateRevenueShares(db, body.period, body.platform_fee_rate)
    for (const s of shares) {
      if (values.json) console.log(JSON.stringify(s))
      else
        console.log(
          `retailer ${s.retailer_id}: gross ${s.gross_revenue}, platform fee ${s.platform_fee}, retailer share ${s.retailer_share}`,
        )
    }
    // the other retailers' shares are written; the failed ones are named, and the exit status says so
    for (const f of failures) console.error(`retailer ${f.retailer_id}: not calculated: ${f.reason}`)
    if (!values.json) console.log(`${body.period}: ${plural(shares.length, 'share')} calculated or changed`)
    return failures.length > 0 ? 1 : 0
  })
}
