// The shape of a table description (tables.ts, tables-sign-in.ts) and the helpers that write one.

export type ColType =
  | 'id'
  | 'bigint'
  | 'bool'
  | 'text'
  | 'json'
  | 'float'
  | 'datetime'
  | `varchar(${number})`
  | `char(${number})`
  | `decimal(${number},${number})`;

export interface ColumnSpec {
  name: string;
  type: ColType;
  notNull?: boolean;
  default?: string | number | boolean;
}

export interface IndexSpec {
  name: string;
  columns: string[];
  unique?: boolean;
}

export interface TableSpec {
  name: string;
  columns: ColumnSpec[];
  primaryKey?: string[];
  indexes: IndexSpec[];
  /** SQLite: the rows are stored in the primary key's B-tree (no rowid table beside it) */
  withoutRowid?: boolean;
}

export const c = (
  name: string,
  type: ColType,
  def?: string | number | boolean,
  notNull = def !== undefined,
): ColumnSpec => ({
  name,
  type,
  default: def,
  notNull,
});
export const id = c('id', 'id');
export const softDelete = c('deleted_at', 'datetime');
export const ix = (table: string, ...columns: string[]): IndexSpec => ({
  name: `idx_${table}_${columns.join('_')}`,
  columns,
});
export const ux = (table: string, ...columns: string[]): IndexSpec => ({
  name: `uidx_${table}_${columns.join('_')}`,
  columns,
  unique: true,
});
