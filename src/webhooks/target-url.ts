import { invalidField } from '../shared/errors'
import { resolveTarget, type TargetPolicy, TargetRefused, targetPolicy } from '../shared/outbound'

/**
 * Checks a target URL at create and update (422 with a reason). A name that does not resolve yet
 * is accepted: DNS may lag a new receiver, and every delivery checks the address again anyway.
 */
export async function checkTargetUrl(raw: string, policy: TargetPolicy = targetPolicy()): Promise<void> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw invalidField('url', 'must be an absolute URL')
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.development))
    throw invalidField(
      'url',
      policy.development ? 'must use https:// or http://' : 'must use https:// (http:// only in development)',
    )
  if (url.username || url.password) throw invalidField('url', 'must not carry a user name or password')
  try {
    await resolveTarget(url, policy)
  } catch (err) {
    if (!(err instanceof TargetRefused)) throw err
    if (err.kind === 'refused') throw invalidField('url', `is refused: ${err.message}`)
  }
}
