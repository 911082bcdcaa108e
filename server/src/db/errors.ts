// Database errors the services tell apart, the same on every database kind.

/** A unique index refused the write (SQLite, PostgreSQL, MySQL/MariaDB). */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: unknown; errno?: unknown } | null;
  return e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === '23505' || e?.errno === 1062;
}
