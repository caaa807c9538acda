/** A progress bar on a terminal; plain "<verb> n/total" lines (every 10%) otherwise. */
export async function progressReporter(total: number, verb: string) {
  if (process.stderr.isTTY) {
    const { SingleBar, Presets } = await import('cli-progress')
    const bar = new SingleBar(
      { format: `${verb} [{bar}] {percentage}% | {value}/{total} | ETA {eta}s`, stream: process.stderr },
      Presets.shades_classic,
    )
    bar.start(total, 0)
    return { update: (n: number) => bar.update(n), stop: () => bar.stop() }
  }
  let shown = -1
  return {
    update: (n: number) => {
      const tenth = Math.floor((n / total) * 10)
      if (tenth > shown) {
        shown = tenth
        console.error(`${verb} ${n}/${total}`)
      }
    },
    stop: () => {},
  }
}
