/**
 * How long a timed-out attempt still counts against its endpoint's and organization's shares after
 * its failure is recorded (its lease is kept that long). Bun's fetch closes the connection it gave up
 * on from its own HTTP thread, after the timeout's rejection has reached this thread: on a busy
 * machine the next claim could open a connection before that one was closed. fetch alone shows it:
 * 5 requests in flight at most, each started as soon as the previous one timed out, and a receiver
 * that never answers counted 9 sockets open at once; started 2 ms later, 5. The fair-shares test saw
 * those 9 when the claim became fast enough to start the next attempt within that moment. The close
 * takes a millisecond or so; a second covers a starved thread and costs a timed-out endpoint little.
 */
export const TIMED_OUT_GRACE_MS = 1000

/** The lease a failed attempt leaves: none, or the grace above after a timeout. */
export const leaseAfterFailure = (result: { timedOut: boolean }, at: Date): Date | null =>
  result.timedOut ? new Date(at.getTime() + TIMED_OUT_GRACE_MS) : null
