// Operator CLI: `npm run -s cli -- <command> <subcommand> [options]`. Calls src/ directly, never
// HTTP. Commands are declared with commander, which writes `--help` from the declarations.
import './env'
import { Command } from 'commander'
import pkg from '../../package.json' with { type: 'json' }
import { barcodeCommands } from './barcode'
import { everyCommand, markRequired, runProgram } from './command'
import { eventsCommands } from './events'
import { feedsCommands } from './feeds'
import { orgCommands } from './org'
import { revenueShareCommands } from './revenue-share'
import { searchCommands } from './search'

const program = new Command('cli')
  .description(
    "Operator commands. They use the server's database: DATABASE_URL, or the embedded cluster of DATA_DIR (joined when the server runs, started for the command otherwise).",
  )
  .usage('<command> <subcommand> [options]')
  .version(pkg.version, '-V, --version', "print the service's version (package.json)")
  .exitOverride()
  .showHelpAfterError('(cli --help lists every command and its options)')
markRequired(program)
for (const add of [orgCommands, barcodeCommands, feedsCommands, searchCommands, revenueShareCommands, eventsCommands])
  add(program)
program.addHelpText('after', () => everyCommand(program))

const code = await runProgram(program, process.argv.slice(2))
const { flushLogs } = await import('../../src/shared/logger')
flushLogs()
process.exit(code)
