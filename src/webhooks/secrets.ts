import { randomBytes } from 'node:crypto'

/** Signing secrets look like `whsec_` + 43 base64url characters (256 random bits). */
export const newSigningSecret = () => `whsec_${randomBytes(32).toString('base64url')}`
