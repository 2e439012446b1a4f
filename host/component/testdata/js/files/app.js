// File access through wasi:filesystem, built by the tests with
// ComponentizeJS. Errors come back as the error-code's name.
import { getDirectories } from 'wasi:filesystem/preopens@0.2.12';

function mount() {
  const dirs = getDirectories();
  if (dirs.length === 0) throw 'no mount';
  return dirs[0][0];
}

function reason(e) {
  if (e && e.payload !== undefined) {
    return typeof e.payload === 'string' ? e.payload : JSON.stringify(e.payload);
  }
  return String(e);
}

export function mounts() {
  return getDirectories().map(([, name]) => name);
}

export function readFile(path) {
  try {
    const f = mount().openAt({ symlinkFollow: true }, path, {}, { read: true });
    const s = f.readViaStream(0n);
    const chunks = [];
    let n = 0;
    for (;;) {
      let c;
      try {
        c = s.blockingRead(65536n);
      } catch (e) {
        if (e.payload && e.payload.tag === 'closed') break;
        throw e;
      }
      chunks.push(c);
      n += c.length;
    }
    const all = new Uint8Array(n);
    let off = 0;
    for (const c of chunks) {
      all.set(c, off);
      off += c.length;
    }
    return new TextDecoder().decode(all);
  } catch (e) {
    throw reason(e);
  }
}

export function writeFile(path, contents) {
  try {
    const f = mount().openAt({ symlinkFollow: true }, path, { create: true, truncate: true }, { write: true });
    const s = f.writeViaStream(0n);
    const bytes = new TextEncoder().encode(contents);
    for (let off = 0; off < bytes.length; off += 4096) {
      s.blockingWriteAndFlush(bytes.subarray(off, off + 4096));
    }
    return BigInt(bytes.length);
  } catch (e) {
    throw reason(e);
  }
}

export function listDir(path) {
  try {
    const d = path === '' || path === '.' ? mount() : mount().openAt({ symlinkFollow: true }, path, { directory: true }, { read: true });
    const entries = d.readDirectory();
    const names = [];
    for (;;) {
      const e = entries.readDirectoryEntry();
      if (e === undefined) break;
      names.push(e.name);
    }
    return names.sort();
  } catch (e) {
    throw reason(e);
  }
}
