/** Whether a database error (possibly wrapped by drizzle) is a unique-constraint violation (SQLSTATE 23505). */
export const isUniqueViolation = (err: unknown) =>
  (err as { code?: string })?.code === '23505' || (err as { cause?: { code?: string } })?.cause?.code === '23505'
