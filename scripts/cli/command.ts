import { type Command, CommanderError } from 'commander'

/** What a command's action answers: the process exit status (2 = bad usage, as commander's errors). */
export type Action<A extends unknown[]> = (...args: A) => Promise<number>

let status = 0

/** Wraps a command's action so its exit status reaches `runProgram`. */
export function exits<A extends unknown[]>(action: Action<A>) {
  return async (...args: A) => {
    status = await action(...args)
  }
}

/** Runs the parsed command; commander's own refusals (unknown option, missing value) exit 2, help exits 0. */
export async function runProgram(program: Command, argv: string[]): Promise<number> {
  try {
    await program.parseAsync(argv, { from: 'user' })
    return status
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2
    console.error(`error: ${err instanceof Error ? err.message : String(err)}`)
    return 1
  }
}

/** The root help's appendix: every command with its options, generated from the command tree. */
export function everyCommand(program: Command): string {
  const help = program.createHelp()
  const lines: string[] = ['', 'Every command and its options:']
  const walk = (cmd: Command, path: string[]) => {
    const subs = help.visibleCommands(cmd).filter((c) => c.name() !== 'help')
    if (subs.length === 0) {
      lines.push('', `  ${[...path, cmd.name()].join(' ')} ${cmd.usage()}`.trimEnd(), `      ${cmd.description()}`)
      for (const option of help.visibleOptions(cmd)) {
        if (option.long === '--help') continue
        const required = option.mandatory ? ' (required)' : ''
        lines.push(`      ${help.optionTerm(option).padEnd(28)} ${help.optionDescription(option)}${required}`)
      }
      return
    }
    for (const sub of subs) walk(sub, cmd === program ? [program.name()] : [...path, cmd.name()])
  }
  walk(program, [])
  return `${lines.join('\n')}\n`
}

/** Collects a repeatable option's values. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value]
}
