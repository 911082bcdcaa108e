// LIKE filters over text the caller typed. Every `%`, `_` and `\` of it matches itself: searching `a_c` does not
// find `abc`, and a trailing backslash is not a dangling escape (PostgreSQL refused those with an error). The escape
// character is given explicitly, as a bound value, so the statement reads the same on all three databases: SQLite
// has no escape character without the clause, and a `'\'` literal would need MySQL's quoting rules.
import { sql, type RawBuilder } from 'kysely';

const ESCAPE = '\\';

export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => ESCAPE + c);
}

function like(column: string, pattern: string): RawBuilder<boolean> {
  return sql<boolean>`${sql.ref(column)} like ${pattern} escape ${ESCAPE}`;
}

/** the column contains `text` */
export function likeContains(column: string, text: string): RawBuilder<boolean> {
  return like(column, `%${escapeLike(text)}%`);
}

/** the column starts with `text` */
export function likePrefix(column: string, text: string): RawBuilder<boolean> {
  return like(column, `${escapeLike(text)}%`);
}

/** the column is `text`, compared as LIKE compares (case-insensitively where the database's LIKE is) */
export function likeExactly(column: string, text: string): RawBuilder<boolean> {
  return like(column, escapeLike(text));
}
