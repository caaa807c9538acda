// Operator CLI: `npm run -s cli -- <command> …`. Calls src/ directly, never HTTP.
process.env.LOG_LEVEL ??= 'warn'
process.env.LOG_TARGET ??= 'stderr' // stdout is for the command's own output

import { barcodeCommand, barcodeUsage } from './barcode'
import { feedsCommand, feedsUsage } from './feeds'
import { orgCommand, orgUsage } from './org'
import { searchCommand, searchUsage } from './search'

const USAGE = `commands:\n  ${orgUsage}\n  ${barcodeUsage}\n  ${feedsUsage}\n  ${searchUsage}`

const commands: Record<string, (argv: string[]) => Promise<number>> = {
  org: orgCommand,
  barcode: barcodeCommand,
  feeds: feedsCommand,
  search: searchCommand,
}

const [name, ...argv] = process.argv.slice(2)
const command = name ? commands[name] : undefined
if (!command) {
  console.error(USAGE)
  process.exit(name === '--help' || name === 'help' ? 0 : 2)
}
const { flushLogs } = await import('../../src/shared/logger')
let code = 1
try {
  code = await command(argv)
} catch (err) {
  console.error(`error: ${err instanceof Error ? err.message : String(err)}`)
}
flushLogs()
process.exit(code)
