/**
 * Progress of long work in items (rows, labels, documents): done/total, items/s and an ETA. On a
 * terminal a bar (cli-progress); otherwise a plain line at every tenth. The total may grow while the
 * work runs (a feed's row count is known only once its file is read); shown progress never goes
 * back. The rate is measured from the first item, so the ETA shows `--` until there is one, never ∞.
 */
export async function progressReporter(total: number, verb: string, unit = 'rows') {
  const started = performance.now()
  let shownDone = 0
  let shownTotal = Math.max(total, 1)
  const figures = (done: number) => {
    const seconds = (performance.now() - started) / 1000
    const rate = seconds > 0 ? done / seconds : 0
    const eta = rate > 0 ? `${Math.ceil((shownTotal - done) / rate)} s` : '--'
    return { rate: Math.round(rate).toLocaleString('en-US'), eta }
  }
  const advance = (done: number, newTotal?: number) => {
    shownTotal = Math.max(shownTotal, newTotal ?? 0, done, 1)
    shownDone = Math.max(shownDone, Math.min(done, shownTotal))
  }

  if (process.stderr.isTTY) {
    const { SingleBar, Presets } = await import('cli-progress')
    const bar = new SingleBar(
      {
        format: `${verb} [{bar}] {percentage}% | {value}/{total} ${unit} | {rate} ${unit}/s | ETA {etaText}`,
        stream: process.stderr,
      },
      Presets.shades_classic,
    )
    bar.start(shownTotal, 0, { rate: '0', etaText: '--' })
    return {
      update: (done: number, newTotal?: number) => {
        advance(done, newTotal)
        bar.setTotal(shownTotal)
        const { rate, eta } = figures(shownDone)
        bar.update(shownDone, { rate, etaText: eta })
      },
      stop: () => bar.stop(),
    }
  }
  let shownTenth = -1
  return {
    update: (done: number, newTotal?: number) => {
      advance(done, newTotal)
      const tenth = Math.floor((shownDone / shownTotal) * 10)
      if (tenth > shownTenth) {
        shownTenth = tenth
        const { rate, eta } = figures(shownDone)
        console.error(
          `${verb} ${shownDone}/${shownTotal} ${unit} (${tenth * 10}%), ${rate} ${unit}/s, ETA ${tenth === 10 ? '0 s' : eta}`,
        )
      }
    },
    stop: () => {},
  }
}
