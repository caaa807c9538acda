import yauzl from 'yauzl'

/** The entries of a zip file in order (duplicates kept), read with yauzl: an independent reader, not our writer. */
export function readZip(bytes: Uint8Array): Promise<{ name: string; bytes: Buffer }[]> {
  return new Promise((done, fail) => {
    yauzl.fromBuffer(Buffer.from(bytes), { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return fail(err)
      const entries: { name: string; bytes: Buffer }[] = []
      zip.on('error', fail)
      zip.on('end', () => done(entries))
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return fail(e)
          const chunks: Buffer[] = []
          stream.on('data', (c: Buffer) => chunks.push(c))
          stream.on('end', () => {
            entries.push({ name: entry.fileName, bytes: Buffer.concat(chunks) })
            zip.readEntry()
          })
        })
      })
      zip.readEntry()
    })
  })
}
