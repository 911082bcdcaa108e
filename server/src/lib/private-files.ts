// The embedded database, its WAL files and the persisted session secret hold password hashes, access tokens, channel
// keys and the key that signs sessions: only the account running the gateway may read them.
// A directory is made 0700 when the gateway creates it; an existing one keeps its mode (it may be the working
// directory or a mount point shared with other things). Files are 0600: created so, and tightened when they already
// exist with wider permissions (as new-api, and earlier versions of this gateway, left them).
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';

const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/** Creates `dir` (and missing parents) readable by the owner only; an existing directory is left as it is. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: DIR_MODE });
}

/** Makes an existing file owner-only; a file that does not exist, or that another account owns, is left alone. */
export function tightenFile(path: string): void {
  try {
    if ((statSync(path).mode & 0o777 & ~FILE_MODE) !== 0) chmodSync(path, FILE_MODE);
  } catch {
    // absent, or not ours to change: the database still opens as before
  }
}

/** Creates `path` empty with mode 0600 if it does not exist, else tightens it. */
export function ensurePrivateFile(path: string): void {
  if (existsSync(path)) return tightenFile(path);
  try {
    closeSync(openSync(path, 'a', FILE_MODE));
  } catch {
    // created meanwhile by another process, or not creatable: the open that follows reports the real problem
  }
  tightenFile(path);
}

/**
 * An SQLite database file and its companions. SQLite gives the -wal and -shm files it creates the main file's mode,
 * so creating that one 0600 covers them; existing ones are tightened too.
 */
export function ensurePrivateSqliteFiles(dbPath: string): void {
  ensurePrivateFile(dbPath);
  for (const suffix of ['-wal', '-shm', '-journal']) tightenFile(dbPath + suffix);
}
