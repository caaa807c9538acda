// What the package offers callers (import from 'gtin-catalog'): a typed client of the API, the SDK
// of named methods, and the webhook receiver helper. None imports the server at run time (the
// client takes only the app's type), so a caller pulls in no database or HTTP framework.
export { type Client, type ClientOptions, createClient } from './src/client/client'
// the SDK's named methods also come alone from 'gtin-catalog/sdk', whose types check in seconds
export { ApiError, createSdk, type Page, Pages, type Sdk, type SdkOptions } from './src/client/sdk'
export { ROTATION_GRACE_MS, type VerifyOptions, verifyWebhookSignature } from './src/webhooks/signature'
