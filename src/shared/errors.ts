/** The closed set of machine codes of contract §3, with their HTTP status. */
export const STATUS = {
  malformed_json: 400,
  invalid_digital_link: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  gtin_exists: 409,
  already_claimed: 409,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  uri_too_long: 414,
  validation_error: 422,
  invalid_gtin: 422,
  date_label_violation: 422,
  rate_limited: 429,
  headers_too_large: 431,
  internal_error: 500,
  service_unavailable: 503,
} as const

export type ErrorCode = keyof typeof STATUS
export type FieldError = { field: string; message: string }

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    detail: string,
    readonly errors?: FieldError[],
    readonly headers?: Record<string, string>,
  ) {
    super(detail)
  }
  get status(): number {
    return STATUS[this.code]
  }
}

export const notFound = (what: string) => new AppError('not_found', `${what} not found`)
export const invalidField = (field: string, message: string) =>
  new AppError('validation_error', `${field} ${message}`, [{ field, message }])
