import { accessSync, constants, statSync } from 'node:fs'
import { type Command, CommanderError, Help, type Option } from 'commander'

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
        lines.push(`      ${help.optionTerm(option).padEnd(28)} ${help.optionDescription(option)}`)
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

/**
 * Help that marks mandatory options "(required)", in each command's own `--help` as in the root's
 * list: commander enforces `requiredOption` but its help does not say so. Set on the root before
 * the commands are added, which copy it.
 */
export function markRequired(program: Command): Command {
  return program.configureHelp({
    optionDescription(this: Help, option: Option) {
      const described = Help.prototype.optionDescription.call(this, option)
      return option.mandatory ? `${described} (required)` : described
    },
  })
}

/** `1 row`, `2 rows`: a count with its noun in the right number (nouns here take an s). */
export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`
}

/** A file system error in words, without the code and the system call (`ENOENT … stat`). */
export function fileErrorWords(err: unknown): string {
  const e = err as NodeJS.ErrnoException
  switch (e?.code) {
    case 'ENOENT':
      return 'no such file'
    case 'EACCES':
    case 'EPERM':
      return 'permission denied'
    case 'EISDIR':
      return 'it is a folder, not a file'
    case 'ENOTDIR':
      return 'a part of the path is not a folder'
    default:
      return e?.message ?? String(err)
  }
}

/**
 * Why a file named on the command line cannot be read, as a sentence naming it as it was typed
 * (`cannot read gtins.csv: no such file`), or null when it can. Checked before a command opens the
 * database, so a typo costs nothing and never surfaces as a raw ENOENT from deeper code.
 */
export function unreadable(path: string, folderToo = false): string | null {
  try {
    if (!folderToo && statSync(path).isDirectory()) return `cannot read ${path}: it is a folder, not a file`
    accessSync(path, constants.R_OK)
    return null
  } catch (err) {
    return `cannot read ${path}: ${fileErrorWords(err)}`
  }
}
