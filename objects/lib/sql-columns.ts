/**
 * Adds a column a table made by an earlier version lacks: `CREATE TABLE IF NOT EXISTS`
 * leaves an existing table as it was, and SQLite has no `ADD COLUMN IF NOT EXISTS`.
 */
export function addMissingColumn(sql: SqlStorage, table: string, column: string, type = "TEXT"): void {
  const columns = sql.exec<{ name: string }>(`SELECT name FROM pragma_table_info('${table}')`).toArray();
  if (!columns.some((c) => c.name === column)) sql.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
}
