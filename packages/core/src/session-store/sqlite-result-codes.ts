/** SQLite's primary result codes, by number (sqlite3.h), without the `SQLITE_` prefix. */
const PRIMARY_CODES = [
  "OK",
  "ERROR",
  "INTERNAL",
  "PERM",
  "ABORT",
  "BUSY",
  "LOCKED",
  "NOMEM",
  "READONLY",
  "INTERRUPT",
  "IOERR",
  "CORRUPT",
  "NOTFOUND",
  "FULL",
  "CANTOPEN",
  "PROTOCOL",
  "EMPTY",
  "SCHEMA",
  "TOOBIG",
  "CONSTRAINT",
  "MISMATCH",
  "MISUSE",
  "NOLFS",
  "AUTH",
  "FORMAT",
  "RANGE",
  "NOTADB",
  "NOTICE",
  "WARNING",
] as const;

/**
 * SQLite's extended result codes (sqlite3.h, SQLite 3.53): for each primary code, the suffixes of `primary | (n << 8)`
 * for n = 1, 2, …; an empty suffix is a number SQLite does not use.
 */
const EXTENDED_CODES: Partial<Record<(typeof PRIMARY_CODES)[number], readonly string[]>> = {
  OK: ["LOAD_PERMANENTLY", "SYMLINK"],
  ERROR: ["MISSING_COLLSEQ", "RETRY", "SNAPSHOT", "RESERVESIZE", "KEY", "UNABLE"],
  IOERR: [
    "READ",
    "SHORT_READ",
    "WRITE",
    "FSYNC",
    "DIR_FSYNC",
    "TRUNCATE",
    "FSTAT",
    "UNLOCK",
    "RDLOCK",
    "DELETE",
    "BLOCKED",
    "NOMEM",
    "ACCESS",
    "CHECKRESERVEDLOCK",
    "LOCK",
    "CLOSE",
    "DIR_CLOSE",
    "SHMOPEN",
    "SHMSIZE",
    "SHMLOCK",
    "SHMMAP",
    "SEEK",
    "DELETE_NOENT",
    "MMAP",
    "GETTEMPPATH",
    "CONVPATH",
    "VNODE",
    "AUTH",
    "BEGIN_ATOMIC",
    "COMMIT_ATOMIC",
    "ROLLBACK_ATOMIC",
    "DATA",
    "CORRUPTFS",
    "IN_PAGE",
    "BADKEY",
    "CODEC",
  ],
  LOCKED: ["SHAREDCACHE", "VTAB"],
  BUSY: ["RECOVERY", "SNAPSHOT", "TIMEOUT"],
  CANTOPEN: ["NOTEMPDIR", "ISDIR", "FULLPATH", "CONVPATH", "DIRTYWAL", "SYMLINK"],
  CORRUPT: ["VTAB", "SEQUENCE", "INDEX"],
  READONLY: ["RECOVERY", "CANTLOCK", "ROLLBACK", "DBMOVED", "CANTINIT", "DIRECTORY"],
  ABORT: ["", "ROLLBACK"],
  CONSTRAINT: ["CHECK", "COMMITHOOK", "FOREIGNKEY", "FUNCTION", "NOTNULL", "PRIMARYKEY", "TRIGGER", "UNIQUE", "VTAB", "ROWID", "PINNED", "DATATYPE"],
  NOTICE: ["RECOVER_WAL", "RECOVER_ROLLBACK", "RBU"],
  WARNING: ["AUTOINDEX"],
  AUTH: ["USER"],
};

/**
 * The name of a SQLite result code as better-sqlite3 spells it in an error's `code`: `SQLITE_BUSY` for 5,
 * `SQLITE_CONSTRAINT_PRIMARYKEY` for 1555. An extended code this table does not know is named by its primary code.
 *
 * @example
 * ```ts
 * sqliteResultCodeName(26); // "SQLITE_NOTADB"
 * ```
 */
export function sqliteResultCodeName(resultCode: number): string {
  const primary = PRIMARY_CODES[resultCode & 0xff];
  if (primary === undefined) return `UNKNOWN_SQLITE_ERROR_${resultCode}`;
  const extended = resultCode >> 8 === 0 ? undefined : EXTENDED_CODES[primary]?.[(resultCode >> 8) - 1];
  return extended ? `SQLITE_${primary}_${extended}` : `SQLITE_${primary}`;
}
