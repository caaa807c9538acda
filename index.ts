// What the package offers callers (import from 'gtin-catalog'): the webhook receiver helper. It
// imports nothing of the server, so a receiver pulls in no database or HTTP framework.
export { ROTATION_GRACE_MS, type VerifyOptions, verifyWebhookSignature } from './src/webhooks/signature'
