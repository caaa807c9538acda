import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT, run } from '../support/process'

// bin/check-node, run by npm before install, start and test: an older Node.js is named in words
// (npm's own EBADENGINE warning is easily missed), and the command goes on (Bun runs the code).
const check = (version: string) => run(['sh', 'bin/check-node', version], {})

test('a Node.js older than 22.12 gets a warning in words; 22.12 and later get none', async () => {
  for (const old of ['20.19.2', 'v22.11.0', '18.0.0']) {
    const r = await check(old)
    expect(r.code).toBe(0)
    expect(r.output).toContain(`warning: Node.js ${old.replace(/^v/, '')} is older than 22.12`)
    expect(r.output).toContain('nvm install')
    expect(r.output).not.toMatch(/^\s+at /m) // words, not a stack trace
  }
  for (const fine of ['22.12.0', 'v24.1.0', '23.0.0']) {
    const r = await check(fine)
    expect({ fine, code: r.code, output: r.output }).toEqual({ fine, code: 0, output: '' })
  }
})

test('npm runs the check before install, start and test', () => {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>
  }
  for (const hook of ['preinstall', 'prestart', 'pretest']) expect(scripts[hook]).toBe('sh bin/check-node')
})
