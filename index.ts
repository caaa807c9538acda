// What the package offers callers (import from 'gtin-catalog'): a typed client of the API and the
// webhook receiver helper. Neither imports the server at run time (the client takes only the app's
// type), so a caller pulls in no database or HTTP framework.
export { type Client, type ClientOptions, createClient } from './src/client/client'
export { ROTATION_GRACE_MS, type VerifyOptions, verifyWebhookSignature } from './src/webhooks/signature'
